/* The fault triggers of tests/faults/ through the guest library against sim
 * servers, and the sim MPS domain (docs/faults.md, docs/sim-backend.md).
 * Sim backend only: on a GPU, tests/faults/run-faults-gpu.sh is the check. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"

static const char *fault_bin(const char *name)
{
    static _Thread_local char buf[4][1024];
    static _Thread_local int i;
    char *p = buf[i++ % 4];

    snprintf(p, 1024, "%s/faults/%s", th_build_dir(), name);
    return p;
}

static void require_sim(void)
{
    if (!th_simulated())
        cr_skip_test("sim backend only (the GPU check is tests/faults/run-faults-gpu.sh)");
}

/* ---- one trigger alone ---- */

typedef struct expect {
    const char *trigger;
    int status;          /* its documented exit status (fault_common.h) */
    const char *error;   /* the error name it must print */
} expect;

static void run_trigger(const expect *e)
{
    th_server srv;
    th_result r;
    const char *argv[] = { fault_bin(e->trigger), NULL };
    const char *victim[] = { fault_bin("victim"), "20", "1024", NULL };

    require_sim();
    th_server_start(&srv, NULL);
    th_run_guest(srv.endpoint, argv, 30, &r);
    cr_expect_eq(r.status, e->status, "%s: exit status %d, expected %d\nstdout:\n%s\nstderr:\n%s", e->trigger,
                 r.status, e->status, r.out, r.err);
    cr_expect(strstr(r.out, e->error) != NULL, "%s: expected %s in:\n%s", e->trigger, e->error, r.out);
    /* The server keeps serving new sessions after a fault. */
    th_run_guest(srv.endpoint, victim, 30, &r);
    cr_expect_eq(r.status, 0, "a new session after %s failed:\n%s\n%s", e->trigger, r.out, r.err);
    cr_expect_eq(th_server_stop(&srv), 0, "server did not stop cleanly; see %s", srv.log);
}

#define TRIGGER_TEST(name, st, err)                                                                     \
    Test(fault_triggers, name, .timeout = 120)                                                          \
    {                                                                                                   \
        const expect e = { #name, st, err };                                                            \
        run_trigger(&e);                                                                                \
    }

/* MMU faults.  The sim models the outcome of managed/VMM setups the guest
 * library cannot make (docs/faults.md); CE OOB is refused by Tandem's
 * pointer checks before any copy runs; CE AM and PBDMA OOB need managed
 * memory and the Driver API, which Tandem does not remote. */
TRIGGER_TEST(sm_oob, 10, "cudaErrorIllegalAddress")
TRIGGER_TEST(am_cpu, 11, "cudaErrorIllegalAddress")
TRIGGER_TEST(am_gpu, 12, "cudaErrorIllegalAddress")
TRIGGER_TEST(am_vmm, 13, "cudaErrorIllegalAddress")
TRIGGER_TEST(zombie, 14, "cudaErrorIllegalAddress")
TRIGGER_TEST(non_migratable, 15, "cudaErrorIllegalAddress")
TRIGGER_TEST(ce_oob, 5, "cudaErrorInvalidValue")
TRIGGER_TEST(ce_am, 3, "observed cudaSuccess")
TRIGGER_TEST(pbdma_oob, 3, "observed cudaSuccess")
/* SM exceptions, with the errors the H100 reports (docs/faults.md). */
TRIGGER_TEST(stack_overflow, 20, "cudaErrorIllegalAddress")
TRIGGER_TEST(illegal_instruction, 21, "cudaErrorIllegalInstruction")
TRIGGER_TEST(shared_local_oob, 22, "cudaErrorIllegalInstruction")
TRIGGER_TEST(misaligned, 23, "cudaErrorMisalignedAddress")
TRIGGER_TEST(invalid_address_space, 24, "cudaErrorInvalidAddressSpace")

/* ---- a victim next to a trigger ---- */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

typedef struct bg {
    pid_t pid;
    char out[256];       /* stdout file */
} bg;

/* Starts the victim through the guest library with stdout to a file and
 * waits until it completed its first iteration. */
static void victim_start(bg *v, const char *endpoint, const char *iters)
{
    const char *argv[] = { fault_bin("victim"), iters, "1024", NULL };

    snprintf(v->out, sizeof(v->out), "/tmp/tandem-victim-%d-%ld.out", (int)getpid(), (long)random());
    v->pid = fork();
    cr_assert_neq(v->pid, -1);
    if (v->pid == 0) {
        char ldpath[4096];
        const char *old = getenv("LD_LIBRARY_PATH");
        int fd = open(v->out, O_WRONLY | O_CREAT | O_TRUNC, 0644);

        snprintf(ldpath, sizeof(ldpath), "%s/lib%s%s", th_build_dir(), old ? ":" : "", old ? old : "");
        setenv("LD_LIBRARY_PATH", ldpath, 1);
        setenv("TANDEM_SERVER", endpoint, 1);
        setenv("TANDEM_QUIET", "1", 1);
#ifdef TANDEM_SANITIZER_PRELOAD
        setenv("LD_PRELOAD", TANDEM_SANITIZER_PRELOAD, 1);
        setenv("ASAN_OPTIONS", "detect_leaks=0", 1);
#endif
        dup2(fd, 1);
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    for (double end = now() + 20; now() < end; usleep(10000)) {
        char buf[4096] = { 0 };
        FILE *f = fopen(v->out, "r");
        if (f) {
            size_t n = fread(buf, 1, sizeof(buf) - 1, f);
            buf[n] = 0;
            fclose(f);
        }
        if (strstr(buf, "victim: running"))
            return;
        cr_assert_eq(waitpid(v->pid, NULL, WNOHANG), 0, "the victim exited before running:\n%s", buf);
    }
    cr_assert_fail("the victim did not start");
}

static bool victim_alive(const bg *v)
{
    return waitpid(v->pid, NULL, WNOHANG) == 0 && kill(v->pid, 0) == 0;
}

/* Waits for the victim (killing it after timeout_s); its status and stdout. */
static int victim_wait(bg *v, int timeout_s, char *out, size_t cap)
{
    int st = 0;
    double end = now() + timeout_s;
    pid_t done;

    while ((done = waitpid(v->pid, &st, WNOHANG)) == 0 && now() < end)
        usleep(10000);
    if (done == 0) {
        kill(v->pid, SIGKILL);
        waitpid(v->pid, &st, 0);
        st = -1;
    }
    FILE *f = fopen(v->out, "r");
    size_t n = f ? fread(out, 1, cap - 1, f) : 0;
    out[n] = 0;
    if (f)
        fclose(f);
    unlink(v->out);
    return st == -1 ? -1 : WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void domain_name(char *buf, size_t cap)
{
    snprintf(buf, cap, "test-%d-%ld", (int)getpid(), (long)random());
}

/* Two servers in one domain: a fatal fault through one kills the victim's
 * session on the other with the faulting error, as MPS does; new sessions
 * are served afterwards. */
static void domain_kills_victim(const char *trigger, int trigger_status, const char *error)
{
    char domain[64], out[4096];
    th_server a, b;
    th_result r;
    bg v;

    require_sim();
    domain_name(domain, sizeof(domain));
    const char *args[] = { "--sim-mps-domain", domain, NULL };
    th_server_start(&a, args);
    th_server_start(&b, args);
    victim_start(&v, b.endpoint, "100000000"); /* runs until it dies */
    const char *argv[] = { fault_bin(trigger), NULL };
    th_run_guest(a.endpoint, argv, 30, &r);
    cr_expect_eq(r.status, trigger_status, "%s: status %d\n%s\n%s", trigger, r.status, r.out, r.err);
    int st = victim_wait(&v, 20, out, sizeof(out));
    cr_expect_eq(st, 1, "the victim in the domain did not die (status %d):\n%s", st, out);
    cr_expect(strstr(out, "victim: died") && strstr(out, error), "expected the victim to die with %s:\n%s", error, out);
    cr_expect(th_server_log_has(&b, "a client of the MPS domain faulted"), "see %s", b.log);
    /* A new session on the victim's server starts on a fresh context. */
    const char *va[] = { th_example("vector_add"), NULL };
    th_run_guest(b.endpoint, va, 60, &r);
    cr_expect_eq(r.status, 0, "a new session after the domain fault failed:\n%s\n%s", r.out, r.err);
    cr_expect_eq(th_server_stop(&a), 0);
    cr_expect_eq(th_server_stop(&b), 0);
    cr_expect_neq(access("/dev/shm/tandem-sim-mps-test", F_OK), 0);
}

Test(sim_mps_domain, sm_oob_kills_victim_on_other_server, .timeout = 120)
{
    domain_kills_victim("sm_oob", 10, "cudaErrorIllegalAddress");
}

Test(sim_mps_domain, stack_overflow_kills_victim_on_other_server, .timeout = 120)
{
    domain_kills_victim("stack_overflow", 20, "cudaErrorIllegalAddress");
}

/* The victim's server outside the trigger's domain (first_args: the
 * trigger's server; NULL: no domain at all): the victim completes with the
 * checksum of a fault-free run. */
static void victim_survives(bool trigger_in_domain)
{
    char domain[64], out[4096], ref[16384];
    th_server a, b;
    th_result r;
    bg v;

    require_sim();
    domain_name(domain, sizeof(domain));
    const char *args[] = { "--sim-mps-domain", domain, NULL };
    th_server_start(&a, trigger_in_domain ? args : NULL);
    th_server_start(&b, NULL);
    const char *ref_argv[] = { fault_bin("victim"), "20000", "1024", NULL };
    th_run_guest(b.endpoint, ref_argv, 120, &r);
    cr_assert_eq(r.status, 0, "fault-free victim run failed:\n%s\n%s", r.out, r.err);
    const char *ref_line = strstr(r.out, "victim iterations=");
    cr_assert(ref_line, "%s", r.out);
    snprintf(ref, sizeof(ref), "%s", ref_line);

    victim_start(&v, b.endpoint, "20000");
    const char *argv[] = { fault_bin("sm_oob"), NULL };
    th_run_guest(a.endpoint, argv, 30, &r);
    cr_expect_eq(r.status, 10, "sm_oob: status %d\n%s\n%s", r.status, r.out, r.err);
    /* Otherwise the test proves nothing: the fault must land while the
     * victim runs. */
    cr_expect(victim_alive(&v), "the victim finished before the fault; give it more iterations");
    int st = victim_wait(&v, 120, out, sizeof(out));
    cr_expect_eq(st, 0, "the victim outside the domain died (status %d):\n%s", st, out);
    const char *line = strstr(out, "victim iterations=");
    cr_expect(line && strcmp(line, ref) == 0, "checksum differs from the fault-free run:\n%s\nvs\n%s", out, ref);
    cr_expect_eq(th_server_stop(&a), 0);
    cr_expect_eq(th_server_stop(&b), 0);
}

Test(sim_mps_domain, victim_outside_domain_survives, .timeout = 240)
{
    victim_survives(true);
}

Test(sim_mps_domain, victim_without_domain_survives, .timeout = 240)
{
    victim_survives(false);
}
