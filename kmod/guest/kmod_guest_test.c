// SPDX-License-Identifier: MIT
/*
 * kmod_guest_test.c - runs as part of /init inside the QEMU guest, with
 * tandem_uvm_isolate.ko loaded with test_iface=1.  Drives the test-only
 * debugfs interface and checks decisions, dummy pages, counters, and that a
 * faulting client - and only it - is SIGKILLed while a bystander keeps
 * running.  Prints "RESULT PASS|FAIL <name>", "LATENCY ..." and "SUMMARY"
 * lines that the host script parses.  Built static by kmod-qemu-test.sh.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define DBG "/sys/kernel/debug/tandem_uvm_isolate"
#define CTL DBG "/test/ctl"
#define SYS "/sys/module/tandem_uvm_isolate"
#define REPS 8 /* victims per reachable scenario */

static int npass, nfail;

static void result(int ok, const char *fmt, ...)
{
	va_list ap;

	printf("RESULT %s ", ok ? "PASS" : "FAIL");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (ok)
		npass++;
	else
		nfail++;
}

static int read_file(const char *path, char *buf, size_t n)
{
	int fd = open(path, O_RDONLY);
	size_t got = 0;
	ssize_t r;

	if (fd < 0)
		return -errno;
	while (got + 1 < n && (r = read(fd, buf + got, n - 1 - got)) > 0)
		got += (size_t)r;
	buf[got] = '\0';
	close(fd);
	return (int)got;
}

static int write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY);
	ssize_t r;

	if (fd < 0)
		return -errno;
	r = write(fd, s, strlen(s));
	close(fd);
	return r < 0 ? -errno : 0;
}

/* One command on the test ctl file; out gets the module's reply. */
static int ctl(const char *cmd, char *out, size_t n)
{
	int fd = open(CTL, O_RDWR);
	ssize_t r;
	int err = 0;

	if (out && n)
		out[0] = '\0';
	if (fd < 0)
		return -errno;
	if (write(fd, cmd, strlen(cmd)) < 0)
		err = -errno;
	if (out && n) {
		r = pread(fd, out, n - 1, 0);
		out[r > 0 ? r : 0] = '\0';
	}
	close(fd);
	return err;
}

static int ctlf(char *out, size_t n, const char *fmt, ...)
{
	char cmd[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return ctl(cmd, out, n);
}

static int has(const char *s, const char *needle)
{
	return strstr(s, needle) != NULL;
}

static unsigned long long field(const char *s, const char *key)
{
	const char *p = strstr(s, key);

	return p ? strtoull(p + strlen(key), NULL, 0) : ~0ULL;
}

struct pool_info {
	unsigned long long pfn4k, pfn2m, nz4k, nz2m, refs4k, scrubs4k, inst4k, inst2m;
};

static int read_pool(struct pool_info *pi)
{
	char buf[2048], *line, *save = NULL;
	int cls = -1;

	memset(pi, 0, sizeof(*pi));
	if (read_file(DBG "/pool", buf, sizeof(buf)) <= 0)
		return -1;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		unsigned long long size, a, b, c, d;

		if (sscanf(line, "class %llu installs %llu releases %llu scrubs %llu exhausted %llu",
			   &size, &a, &b, &c, &d) == 5) {
			cls = size == 4096 ? 0 : 1;
			if (cls == 0) {
				pi->inst4k = a;
				pi->scrubs4k = c;
			} else {
				pi->inst2m = a;
			}
		} else if (sscanf(line, "page %llu pfn %llx refs %llu nonzero %llu", &size, &a, &b, &c) == 4) {
			if (size == 4096 && !pi->pfn4k) {
				pi->pfn4k = a;
				pi->refs4k = b;
				pi->nz4k = c;
			} else if (size != 4096 && !pi->pfn2m) {
				pi->pfn2m = a;
				pi->nz2m = c;
			}
		}
	}
	return cls < 0 ? -1 : 0;
}

struct decision {
	unsigned long long seq, addr, inst, lat;
	int pid;
	char engine[16], scenario[32], mech[16], reason[32];
};

static int last_decision(struct decision *d)
{
	static char buf[65536];
	char *line, *save = NULL;
	int found = 0;

	if (read_file(DBG "/decisions", buf, sizeof(buf)) <= 0)
		return -1;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		struct decision t;
		unsigned long long when;

		if (line[0] == '#')
			continue;
		if (sscanf(line, "%llu %llu %llx %llx %15s %31s %15s %d %llu %31s", &t.seq, &when,
			   &t.addr, &t.inst, t.engine, t.scenario, t.mech, &t.pid, &t.lat,
			   t.reason) == 10) {
			*d = t;
			found = 1;
		}
	}
	return found ? 0 : -1;
}

static unsigned long long stat_value(const char *key)
{
	char buf[4096], pat[64];
	const char *p;

	if (read_file(DBG "/stats", buf, sizeof(buf)) <= 0)
		return ~0ULL;
	snprintf(pat, sizeof(pat), "\n%s ", key);
	p = strstr(buf, pat);
	return p ? strtoull(p + strlen(pat), NULL, 10) : ~0ULL;
}

static unsigned long long sysfs_counter(const char *name)
{
	char path[128], buf[64];

	snprintf(path, sizeof(path), SYS "/stats/%s", name);
	return read_file(path, buf, sizeof(buf)) > 0 ? strtoull(buf, NULL, 10) : ~0ULL;
}

/* A registered client that does nothing until killed. */
static pid_t spawn_client(unsigned long long inst)
{
	int p[2];
	pid_t pid;
	char c;

	if (pipe(p))
		return -1;
	pid = fork();
	if (pid == 0) {
		char out[128];
		int err;

		close(p[0]);
		err = ctlf(out, sizeof(out), "register 0x%llx", inst);
		c = err ? 'e' : 'r';
		if (write(p[1], &c, 1) != 1)
			_exit(2);
		for (;;)
			pause();
	}
	close(p[1]);
	if (pid < 0 || read(p[0], &c, 1) != 1 || c != 'r') {
		if (pid > 0) {
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
		}
		pid = -1;
	}
	close(p[0]);
	return pid;
}

/* Wait up to 5 s for pid to die; returns its status or -1 if still alive. */
static int reap(pid_t pid)
{
	int st, i;

	for (i = 0; i < 500; i++) {
		pid_t r = waitpid(pid, &st, WNOHANG);

		if (r == pid)
			return st;
		usleep(10000);
	}
	return -1;
}

static int alive(pid_t pid)
{
	return kill(pid, 0) == 0 && waitpid(pid, NULL, WNOHANG) == 0;
}

/* The bystander: a second client that keeps counting while others die. */
static volatile unsigned long long *heartbeat;
static pid_t bystander;

static void start_bystander(void)
{
	heartbeat = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	bystander = fork();
	if (bystander == 0) {
		char out[128];

		if (ctl("register 0xb0000", out, sizeof(out)))
			_exit(3);
		for (;;) {
			(*heartbeat)++;
			usleep(2000);
		}
	}
}

struct lat {
	const char *mech;
	unsigned long long v[64];
	int n;
};
static struct lat lats[3] = { { .mech = "M1" }, { .mech = "M2" }, { .mech = "M3" } };

static void add_lat(const char *mech, unsigned long long ns)
{
	int i;

	for (i = 0; i < 3; i++)
		if (!strcmp(lats[i].mech, mech) && lats[i].n < 64)
			lats[i].v[lats[i].n++] = ns;
}

static int cmp_ull(const void *a, const void *b)
{
	unsigned long long x = *(const unsigned long long *)a, y = *(const unsigned long long *)b;

	return x < y ? -1 : x > y;
}

struct scenario {
	const char *name;
	const char *range;	/* "range ..." args or NULL for none */
	const char *engine, *access;
	unsigned long long addr;
	const char *want_mech, *want_scn;
	const char *want_backing;
};

/*
 * A reachable, propagating Table 2 row: fresh victim, inject, expect the
 * mechanism, the dummy at the address, the victim SIGKILLed and nobody else.
 */
static void run_victim(const struct scenario *s, int rep, unsigned long long inst)
{
	unsigned long long freed_before = 0, hb;
	struct pool_info pi;
	struct decision d;
	char out[256], probe[256];
	pid_t v;
	int st, ok;

	ctl("reset", NULL, 0);
	if (s->range && ctlf(out, sizeof(out), "range %s", s->range)) {
		result(0, "%s[%d] range setup: %s", s->name, rep, out);
		return;
	}
	ctlf(probe, sizeof(probe), "probe 0x%llx", s->addr);
	freed_before = field(probe, "chunks_freed=");

	v = spawn_client(inst);
	if (v < 0) {
		result(0, "%s[%d] spawn victim", s->name, rep);
		return;
	}
	hb = *heartbeat;
	ctlf(out, sizeof(out), "fault 0x%llx 0x%llx %s %s fatal service", inst, s->addr,
	     s->engine, s->access);
	ctl("flush", NULL, 0);
	st = reap(v);
	ok = has(out, s->want_mech) && has(out, s->want_scn) && has(out, "kill=1") &&
	     has(out, "err=0");
	ok = ok && st != -1 && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL;
	if (st == -1) {
		kill(v, SIGKILL);
		waitpid(v, NULL, 0);
	}
	ok = ok && last_decision(&d) == 0 && d.pid == v && d.addr == s->addr &&
	     !strcmp(d.mech, s->want_mech + strlen("action="));
	if (ok)
		add_lat(d.mech, d.lat);

	/* The dummy really backs the address now, zeroed, from the shared pool. */
	ctlf(probe, sizeof(probe), "probe 0x%llx", s->addr);
	read_pool(&pi);
	ok = ok && has(probe, s->want_backing) && has(probe, "pool=1") && has(probe, "nonzero=0") &&
	     has(probe, "range=managed");
	if (!strcmp(s->want_backing, "backing=dummy2m"))
		ok = ok && field(probe, "pfn=") - pi.pfn2m < 512;
	else
		ok = ok && field(probe, "pfn=") == pi.pfn4k;
	if (!strcmp(s->want_scn, "scenario=#3-sm-am-gpu"))
		ok = ok && field(probe, "chunks_freed=") == freed_before + 1;

	/* The bystander survived and is still making progress. */
	usleep(20000);
	ok = ok && alive(bystander) && *heartbeat > hb;
	result(ok, "%s[%d] victim=%d decision={%s} probe={%s} status=0x%x", s->name, rep, v,
	       strtok(out, "\n"), strtok(probe, "\n"), st);
}

/* A fatal row the isolator must leave to stock handling, or a benign one. */
static void run_passive(const char *name, const char *range, unsigned long long inst,
			unsigned long long addr, const char *fault_tail, const char *want_action,
			const char *want)
{
	unsigned long long kills = stat_value("kills_queued");
	char out[256];
	pid_t v;
	int ok;

	ctl("reset", NULL, 0);
	if (range)
		ctlf(out, sizeof(out), "range %s", range);
	v = spawn_client(inst);
	ctlf(out, sizeof(out), "fault 0x%llx 0x%llx %s", inst, addr, fault_tail);
	ctl("flush", NULL, 0);
	usleep(20000);
	ok = v > 0 && has(out, want_action) && has(out, want) && has(out, "kill=0") &&
	     alive(v) && alive(bystander) && stat_value("kills_queued") == kills;
	result(ok, "%s decision={%s}", name, strtok(out, "\n"));
	if (v > 0) {
		kill(v, SIGKILL);
		waitpid(v, NULL, 0);
		ctl("unregister", NULL, 0);
	}
}

int main(void)
{
	static const struct scenario reach[] = {
		{ "#1-sm-oob", NULL, "sm", "write", 0x7f0000001234ULL,
		  "action=M1", "scenario=#1-sm-oob", "backing=dummy" },
		{ "#11-pbdma-oob", NULL, "pbdma", "read", 0x7f0000005000ULL,
		  "action=M1", "scenario=#11-pbdma-oob", "backing=dummy" },
		{ "#2-sm-am-cpu", "0x7f1000000000 0x10000 managed cpu", "sm", "write",
		  0x7f1000003010ULL, "action=M2", "scenario=#2-sm-am-cpu", "backing=dummy" },
		{ "#3-sm-am-gpu", "0x7f1000000000 0x10000 managed gpu", "sm", "write",
		  0x7f1000004000ULL, "action=M2", "scenario=#3-sm-am-gpu", "backing=dummy" },
		{ "#5-sm-zombie", "0x7f1000000000 0x10000 managed gpu zombie", "sm", "read",
		  0x7f1000002000ULL, "action=M2", "scenario=#5-sm-zombie", "backing=dummy" },
		{ "#6-sm-nonmig", "0x7f1000000000 0x10000 managed cpu nonmig", "sm", "atomic",
		  0x7f1000001000ULL, "action=M2", "scenario=#6-sm-nonmig", "backing=dummy" },
		{ "#4-sm-am-vmm", "0x7f2000000000 0x200000 external none", "sm", "write",
		  0x7f2000012345ULL, "action=M3", "scenario=#4-sm-am-vmm", "backing=dummy2m" },
	};
	unsigned long long m[3];
	struct pool_info pi, pj;
	char buf[256], out[256];
	pid_t a, b;
	int i, r, ok;

	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("GUEST-TEST start\n");

	ok = read_file(SYS "/parameters/enabled", buf, sizeof(buf)) > 0 && buf[0] == 'Y';
	result(ok, "module loaded, isolation enabled by default");
	ok = read_pool(&pi) == 0 && pi.pfn4k && pi.pfn2m && pi.nz4k == 0 && pi.nz2m == 0 &&
	     pi.inst4k == 0;
	result(ok, "dummy pool: 4K pfn 0x%llx, 2M pfn 0x%llx, zeroed", pi.pfn4k, pi.pfn2m);
	result(pi.pfn2m % 512 == 0, "2M dummy chunk is 2M-aligned (pfn 0x%llx)", pi.pfn2m);

	start_bystander();
	usleep(50000);
	result(bystander > 0 && alive(bystander) && *heartbeat > 0, "bystander client running");

	/* Table 2 rows that must not lead to any action or kill. */
	run_passive("benign demand paging (SM)", "0x7f1000000000 0x10000 managed cpu", 0xa0000,
		    0x7f1000000000ULL, "sm read benign service", "action=ignore",
		    "scenario=benign-paging");
	run_passive("benign invalid prefetch (SM)", NULL, 0xa0000, 0x7f0000009000ULL,
		    "sm prefetch benign service", "action=ignore", "scenario=benign-prefetch");
	run_passive("benign page fault (CE)", "0x7f1000000000 0x10000 managed gpu", 0xa0000,
		    0x7f1000000000ULL, "ce write benign service", "action=ignore",
		    "scenario=benign-paging");
	run_passive("benign page fault (PBDMA)", "0x7f1000000000 0x10000 managed gpu", 0xa0000,
		    0x7f1000000000ULL, "pbdma read benign service", "action=ignore",
		    "scenario=benign-paging");
	run_passive("parse-time HW error (SM)", NULL, 0xa0000, 0x7f0000001000ULL,
		    "sm write fatal parse", "action=stock", "reason=parse-time");
	run_passive("parse-time HW error (CE)", NULL, 0xa0000, 0x7f0000001000ULL,
		    "ce write fatal parse", "action=stock", "reason=parse-time");
	run_passive("#7 CE OOB contained", NULL, 0xa0000, 0x7f0000001000ULL,
		    "ce write fatal service", "action=stock", "reason=contained");
	run_passive("#8 CE AM contained", "0x7f1000000000 0x10000 managed cpu", 0xa0000,
		    0x7f1000000000ULL, "ce write fatal service", "action=stock", "reason=contained");
	run_passive("#9 CE zombie unreachable", "0x7f1000000000 0x10000 managed gpu zombie",
		    0xa0000, 0x7f1000000000ULL, "ce write fatal service", "action=stock",
		    "reason=unreachable");
	run_passive("#10 CE non-migratable unreachable", "0x7f1000000000 0x10000 managed cpu nonmig",
		    0xa0000, 0x7f1000000000ULL, "ce write fatal service", "action=stock",
		    "reason=unreachable");
	run_passive("#12 PBDMA AM unreachable", "0x7f1000000000 0x10000 managed gpu", 0xa0000,
		    0x7f1000000000ULL, "pbdma write fatal service", "action=stock",
		    "reason=unreachable");
	run_passive("#13 PBDMA zombie unreachable", "0x7f1000000000 0x10000 managed gpu zombie",
		    0xa0000, 0x7f1000000000ULL, "pbdma write fatal service", "action=stock",
		    "reason=unreachable");
	run_passive("#14 PBDMA non-migratable unreachable",
		    "0x7f1000000000 0x10000 managed cpu nonmig", 0xa0000, 0x7f1000000000ULL,
		    "pbdma write fatal service", "action=stock", "reason=unreachable");
	run_passive("driver-internal range left alone", "0x7f3000000000 0x1000 internal none",
		    0xa0000, 0x7f3000000000ULL, "pbdma write fatal service", "action=stock",
		    "reason=internal-range");
	{
		char o2[256];

		ctl("reset", NULL, 0);
		ctlf(o2, sizeof(o2), "fault 0xc0000 0x7f0000001000 sm write fatal service");
		result(has(o2, "action=stock") && has(o2, "reason=no-client") && has(o2, "kill=0"),
		       "unregistered instance pointer -> stock, nobody killed {%s}", strtok(o2, "\n"));
	}

	/* Off switch: stock behaviour at run time, nobody killed by us. */
	write_file(SYS "/parameters/enabled", "0");
	run_passive("switched off: #1 SM OOB -> stock", NULL, 0xa0000, 0x7f0000001000ULL,
		    "sm write fatal service", "action=stock", "reason=disabled");
	write_file(SYS "/parameters/enabled", "1");
	read_file(SYS "/parameters/enabled", buf, sizeof(buf));
	result(buf[0] == 'Y', "switched back on");

	for (i = 0; i < 3; i++)
		m[i] = stat_value(i == 0 ? "action M1 count" : i == 1 ? "action M2 count" : "action M3 count");

	/* The seven propagating rows: each kills only its victim. */
	for (r = 0; r < REPS; r++)
		for (i = 0; i < (int)(sizeof(reach) / sizeof(reach[0])); i++)
			run_victim(&reach[i], r, 0xa0000 + ((unsigned long long)(r * 16 + i + 1) << 12));

	/* Sharing: two M1 faults at different addresses map the same page. */
	ctl("reset", NULL, 0);
	a = spawn_client(0xd0000);
	b = spawn_client(0xe0000);
	ctl("fault 0xd0000 0x7f0000100000 sm write fatal service", out, sizeof(out));
	ctl("fault 0xe0000 0x7f0000200000 pbdma read fatal service", out, sizeof(out));
	ctl("flush", NULL, 0);
	reap(a);
	reap(b);
	{
		char p1[256], p2[256];

		ctl("probe 0x7f0000100000", p1, sizeof(p1));
		ctl("probe 0x7f0000200000", p2, sizeof(p2));
		read_pool(&pi);
		ok = field(p1, "pfn=") == pi.pfn4k && field(p2, "pfn=") == pi.pfn4k &&
		     pi.refs4k == 2;
		result(ok, "two M1 faults share one pool page (refs %llu) {%s} {%s}", pi.refs4k,
		       strtok(p1, "\n"), strtok(p2, "\n"));

		/* A dying client dirties the shared page; the next hand-out is zero. */
		ctl("scribble 0x7f0000100000", p1, sizeof(p1));
		ok = field(p1, "nonzero=") > 0;
		a = spawn_client(0xf0000);
		ctl("fault 0xf0000 0x7f0000300000 sm write fatal service", out, sizeof(out));
		ctl("flush", NULL, 0);
		reap(a);
		ctl("probe 0x7f0000300000", p2, sizeof(p2));
		read_pool(&pj);
		ok = ok && has(out, "action=M1") && field(p2, "nonzero=") == 0 &&
		     pj.scrubs4k == pi.scrubs4k + 1;
		result(ok, "dirty dummy page scrubbed before reuse (scrubs %llu->%llu)",
		       pi.scrubs4k, pj.scrubs4k);
	}
	ctl("reset", NULL, 0);
	read_pool(&pi);
	result(pi.refs4k == 0, "pool references returned after ranges drop (refs %llu)", pi.refs4k);

	/* Counters, in debugfs and sysfs, add up. */
	{
		unsigned long long m1 = stat_value("action M1 count") - m[0];
		unsigned long long m2 = stat_value("action M2 count") - m[1];
		unsigned long long m3 = stat_value("action M3 count") - m[2];

		ok = m1 == 2 * REPS + 3 && m2 == 4 * REPS && m3 == REPS;
		result(ok, "mechanism counters M1 +%llu M2 +%llu M3 +%llu", m1, m2, m3);
		ok = sysfs_counter("m1") == stat_value("action M1 count") &&
		     sysfs_counter("m2") == stat_value("action M2 count") &&
		     sysfs_counter("m3") == stat_value("action M3 count") &&
		     sysfs_counter("faults_seen") == stat_value("faults_seen") &&
		     sysfs_counter("kills_done") == stat_value("kills_done");
		result(ok, "sysfs counters match debugfs (faults_seen %llu, kills_done %llu)",
		       sysfs_counter("faults_seen"), sysfs_counter("kills_done"));
		ok = stat_value("kills_done") == 7 * REPS + 3 && stat_value("kills_failed") == 0;
		result(ok, "exactly the faulting clients were killed (%llu)", stat_value("kills_done"));
	}

	ok = alive(bystander) && *heartbeat > 0;
	result(ok, "bystander still alive after %d kills (heartbeat %llu)", 7 * REPS + 3,
	       (unsigned long long)*heartbeat);
	kill(bystander, SIGKILL);
	waitpid(bystander, NULL, 0);

	for (i = 0; i < 3; i++) {
		struct lat *l = &lats[i];

		if (!l->n) {
			result(0, "latency samples for %s", l->mech);
			continue;
		}
		qsort(l->v, l->n, sizeof(l->v[0]), cmp_ull);
		printf("LATENCY %s n=%d min_us=%.1f median_us=%.1f max_us=%.1f\n", l->mech, l->n,
		       l->v[0] / 1000.0, l->v[l->n / 2] / 1000.0, l->v[l->n - 1] / 1000.0);
	}
	printf("SUMMARY pass=%d fail=%d\n", npass, nfail);
	fflush(stdout);
	return nfail ? 1 : 0;
}
