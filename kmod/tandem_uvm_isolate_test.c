// SPDX-License-Identifier: GPL-2.0
/*
 * tandem_uvm_isolate_test.c - TEST ONLY.  A synthetic stand-in for UVM's VA
 * space so the isolator can be driven without a GPU: user space creates
 * fake managed/external ranges, registers itself as the owner of a fake
 * channel instance pointer, and injects fault records.  The mechanisms act
 * on the fake ranges exactly as the UVM glue acts on real ones (create a
 * range, substitute a chunk, convert a range), with the real dummy pool.
 *
 * Present only with test_iface=1; never load it like that on a GPU host.
 *
 * /sys/kernel/debug/tandem_uvm_isolate/test/ctl: write one command, read the
 * result of the last command written on the same open file:
 *   register <inst>            current process owns channel <inst>
 *   unregister                 drop current process's channels
 *   range <start> <len> <managed|external|internal> <none|cpu|gpu> [zombie] [nonmig]
 *   fault <inst> <addr> <sm|ce|pbdma> <prefetch|read|write|atomic>
 *         <fatal|benign> <service|parse>
 *   probe <addr>               what backs <addr>
 *   scribble <addr>            dirty the page backing <addr> (a dying client)
 *   flush                      wait for queued kills
 *   reset                      drop all ranges (pool references returned)
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include "tandem_uvm_isolate.h"

#define SYN_MAX_RANGES 32
#define SYN_MAX_PAGES 16	/* per managed range: 64 KiB is plenty for tests */
#define SYN_OUT 256

enum syn_backing { SYN_EMPTY = 0, SYN_ORIGINAL, SYN_DUMMY };

struct syn_range {
	bool used;
	u64 start, len;
	u8 kind;		/* enum tandem_range */
	u8 residency;
	bool zombie, non_migratable;
	void *page[SYN_MAX_PAGES];
	u8 backing[SYN_MAX_PAGES];
	void *block_chunk;	/* 2 MiB dummy installed by M3 */
	u64 block_base;
};

static DEFINE_MUTEX(syn_lock);	/* taken before tandem_iso.lock */
static struct syn_range syn[SYN_MAX_RANGES];
static u64 syn_chunks_freed;

struct syn_file {
	char out[SYN_OUT];
	size_t len;
};

static struct syn_range *syn_find(u64 addr)
{
	int i;

	for (i = 0; i < SYN_MAX_RANGES; i++)
		if (syn[i].used && addr >= syn[i].start && addr - syn[i].start < syn[i].len)
			return &syn[i];
	return NULL;
}

static struct syn_range *syn_alloc_slot(void)
{
	int i;

	for (i = 0; i < SYN_MAX_RANGES; i++)
		if (!syn[i].used)
			return &syn[i];
	return NULL;
}

/* Release one range.  Caller holds syn_lock and tandem_iso.lock. */
static void syn_drop(struct syn_range *r)
{
	int i;

	for (i = 0; i < SYN_MAX_PAGES; i++) {
		if (r->backing[i] == SYN_ORIGINAL)
			free_page((unsigned long)r->page[i]);
		else if (r->backing[i] == SYN_DUMMY)
			tandem_pool_put(&tandem_iso.pool, TANDEM_POOL_4K, r->page[i]);
	}
	if (r->block_chunk)
		tandem_pool_put(&tandem_iso.pool, TANDEM_POOL_2M, r->block_chunk);
	memset(r, 0, sizeof(*r));
}

static void syn_reset(void)
{
	int i;

	mutex_lock(&syn_lock);
	mutex_lock(&tandem_iso.lock);
	for (i = 0; i < SYN_MAX_RANGES; i++)
		if (syn[i].used)
			syn_drop(&syn[i]);
	mutex_unlock(&tandem_iso.lock);
	mutex_unlock(&syn_lock);
}

/* M1: no range at the address; create a one-page managed range over it. */
static int syn_m1(const struct tandem_decision *d, void *dummy)
{
	struct syn_range *r = syn_alloc_slot();

	if (!r)
		return -ENOSPC;
	memset(r, 0, sizeof(*r));
	r->used = true;
	r->start = d->dummy_va;
	r->len = d->dummy_size;
	r->kind = TANDEM_RANGE_MANAGED;
	r->residency = TANDEM_RES_GPU;
	r->page[0] = dummy;
	r->backing[0] = SYN_DUMMY;
	return 0;
}

/*
 * M2: swap the faulting page's chunk for the dummy.  A GPU-resident original
 * is freed in the same pass, so the footprint stays one chunk per page.
 */
static int syn_m2(struct syn_range *r, const struct tandem_decision *d, void *dummy)
{
	u64 idx = (d->dummy_va - r->start) / TANDEM_SZ_4K;

	if (idx >= SYN_MAX_PAGES)
		return -ERANGE;
	if (r->backing[idx] == SYN_ORIGINAL) {
		free_page((unsigned long)r->page[idx]);
		syn_chunks_freed++;
	} else if (r->backing[idx] == SYN_DUMMY) {
		tandem_pool_put(&tandem_iso.pool, TANDEM_POOL_4K, r->page[idx]);
	}
	r->page[idx] = dummy;
	r->backing[idx] = SYN_DUMMY;
	r->residency = TANDEM_RES_GPU;
	r->zombie = false;
	r->non_migratable = false;
	return 0;
}

/* M3: the external range becomes a managed one over the same span. */
static int syn_m3(struct syn_range *r, const struct tandem_decision *d, void *dummy)
{
	u64 start = r->start, len = r->len;

	memset(r, 0, sizeof(*r));
	r->used = true;
	r->start = start;
	r->len = len;
	r->kind = TANDEM_RANGE_MANAGED;
	r->residency = TANDEM_RES_GPU;
	r->block_chunk = dummy;
	r->block_base = d->dummy_va;
	return 0;
}

static int syn_install(void *ctx, const struct tandem_fault_record *rec,
		       const struct tandem_decision *d, void *dummy)
{
	struct syn_range *r = syn_find(rec->address);

	switch (d->action) {
	case TANDEM_ACT_M1:
		return r ? -EEXIST : syn_m1(d, dummy);
	case TANDEM_ACT_M2:
		return r && r->kind == TANDEM_RANGE_MANAGED ? syn_m2(r, d, dummy) : -ENOENT;
	case TANDEM_ACT_M3:
		return r && r->kind == TANDEM_RANGE_EXTERNAL ? syn_m3(r, d, dummy) : -ENOENT;
	default:
		return -EINVAL;
	}
}

static const struct tandem_mech_ops syn_ops = { .install = syn_install };

static int parse_word(const char *w, const char *const *names, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (!strcmp(w, names[i]))
			return i;
	return -1;
}

static const char *const range_words[] = { "none", "managed", "external", "internal" };
static const char *const res_words[] = { "none", "cpu", "gpu" };
static const char *const engine_words[] = { "sm", "pbdma", "ce" };
static const char *const access_words[] = { "prefetch", "read", "write", "atomic" };
static const char *const stage_words[] = { "service", "parse" };

static int cmd_range(struct syn_file *f, const char *args)
{
	char kind[16], res[16], x1[16] = "", x2[16] = "";
	struct syn_range *r;
	u64 start, len;
	int k, rs, i, n, err = 0;

	n = sscanf(args, "%llx %llx %15s %15s %15s %15s", &start, &len, kind, res, x1, x2);
	if (n < 4)
		return -EINVAL;
	k = parse_word(kind, range_words, ARRAY_SIZE(range_words));
	rs = parse_word(res, res_words, ARRAY_SIZE(res_words));
	if (k <= 0 || rs < 0 || !len || (start | len) & (TANDEM_SZ_4K - 1))
		return -EINVAL;
	if (k == TANDEM_RANGE_MANAGED && len > SYN_MAX_PAGES * TANDEM_SZ_4K)
		return -E2BIG;

	mutex_lock(&syn_lock);
	if (syn_find(start) || syn_find(start + len - 1)) {
		err = -EEXIST;
		goto out;
	}
	r = syn_alloc_slot();
	if (!r) {
		err = -ENOSPC;
		goto out;
	}
	memset(r, 0, sizeof(*r));
	r->start = start;
	r->len = len;
	r->kind = k;
	r->residency = rs;
	r->zombie = !strcmp(x1, "zombie") || !strcmp(x2, "zombie");
	r->non_migratable = !strcmp(x1, "nonmig") || !strcmp(x2, "nonmig");
	/* GPU-resident pages own a real chunk holding client data. */
	if (k == TANDEM_RANGE_MANAGED && rs == TANDEM_RES_GPU) {
		for (i = 0; i < len / TANDEM_SZ_4K; i++) {
			void *p = (void *)__get_free_page(GFP_KERNEL);

			if (!p) {
				mutex_lock(&tandem_iso.lock);
				syn_drop(r);
				mutex_unlock(&tandem_iso.lock);
				err = -ENOMEM;
				goto out;
			}
			memset(p, 0xa5, PAGE_SIZE);
			r->page[i] = p;
			r->backing[i] = SYN_ORIGINAL;
		}
	}
	r->used = true;
out:
	mutex_unlock(&syn_lock);
	f->len = scnprintf(f->out, SYN_OUT, "range err=%d\n", err);
	return err;
}

static int cmd_fault(struct syn_file *f, const char *args)
{
	char eng[16], acc[16], fat[16], stg[16];
	struct tandem_fault_record rec = { 0 };
	struct tandem_decision d;
	struct syn_range *r;
	int e, a, s, err;

	if (sscanf(args, "%llx %llx %15s %15s %15s %15s", &rec.instance_ptr,
		   &rec.address, eng, acc, fat, stg) != 6)
		return -EINVAL;
	e = parse_word(eng, engine_words, ARRAY_SIZE(engine_words));
	a = parse_word(acc, access_words, ARRAY_SIZE(access_words));
	s = parse_word(stg, stage_words, ARRAY_SIZE(stage_words));
	if (e < 0 || a < 0 || s < 0)
		return -EINVAL;
	rec.engine = e;
	rec.access = a;
	rec.stage = s;
	rec.fatal = !strcmp(fat, "fatal");
	rec.replayable = e == TANDEM_ENGINE_SM;

	mutex_lock(&syn_lock);
	/* What UVM would know about the address, from the synthetic VA space. */
	r = syn_find(rec.address);
	if (r) {
		rec.range = r->kind;
		rec.residency = r->residency;
		rec.zombie = r->zombie;
		rec.non_migratable = r->non_migratable;
	}
	err = tandem_iso_handle(&rec, 0, &syn_ops, NULL, &d);
	mutex_unlock(&syn_lock);

	f->len = scnprintf(f->out, SYN_OUT,
			   "action=%s scenario=%s reason=%s kill=%d dummy_size=%llu dummy_va=0x%llx err=%d\n",
			   tandem_action_name(d.action), tandem_scenario_name(d.scenario),
			   tandem_stock_reason_name(d.stock_reason), d.kill_client,
			   d.dummy_size, d.dummy_va, err);
	return 0;
}

static int cmd_probe(struct syn_file *f, const char *args, bool scribble)
{
	static const char *const bname[] = { "empty", "original", "dummy" };
	const char *backing = "none", *kind = "none";
	struct syn_range *r;
	void *page = NULL;
	u64 addr, nonzero = 0;
	unsigned long pfn = 0;
	bool pooled = false;

	if (sscanf(args, "%llx", &addr) != 1)
		return -EINVAL;
	mutex_lock(&syn_lock);
	mutex_lock(&tandem_iso.lock);
	r = syn_find(addr);
	if (r) {
		kind = range_words[r->kind];
		if (r->block_chunk && addr - r->block_base < TANDEM_SZ_2M) {
			page = r->block_chunk + ((addr - r->block_base) & ~(TANDEM_SZ_4K - 1));
			backing = "dummy2m";
			pooled = tandem_pool_owns(&tandem_iso.pool, r->block_chunk);
		} else if ((addr - r->start) / TANDEM_SZ_4K < SYN_MAX_PAGES) {
			u64 idx = (addr - r->start) / TANDEM_SZ_4K;

			page = r->page[idx];
			backing = bname[r->backing[idx]];
			pooled = page && tandem_pool_owns(&tandem_iso.pool, page);
		}
	}
	if (page) {
		if (scribble)
			memset(page, 0xee, 64);
		nonzero = tandem_pool_nonzero_bytes(page, TANDEM_SZ_4K);
		pfn = page_to_pfn(virt_to_page(page));
	}
	mutex_unlock(&tandem_iso.lock);
	mutex_unlock(&syn_lock);

	f->len = scnprintf(f->out, SYN_OUT,
			   "range=%s backing=%s pfn=0x%lx nonzero=%llu pool=%d chunks_freed=%llu\n",
			   kind, backing, pfn, nonzero, pooled, syn_chunks_freed);
	return 0;
}

static int run_cmd(struct syn_file *f, char *cmd)
{
	char *args = strim(cmd);
	char *verb = strsep(&args, " ");
	int err;

	if (!args)
		args = "";
	f->len = 0;
	if (!strcmp(verb, "register")) {
		u64 inst;

		if (sscanf(args, "%llx", &inst) != 1)
			return -EINVAL;
		err = tandem_iso_register_client(inst, task_tgid_nr(current));
		f->len = scnprintf(f->out, SYN_OUT, "register pid=%d err=%d\n",
				   task_tgid_nr(current), err);
		return err;
	}
	if (!strcmp(verb, "unregister")) {
		mutex_lock(&tandem_iso.lock);
		tandem_clients_remove_pid(&tandem_iso.clients, task_tgid_nr(current));
		mutex_unlock(&tandem_iso.lock);
		return 0;
	}
	if (!strcmp(verb, "range"))
		return cmd_range(f, args);
	if (!strcmp(verb, "fault"))
		return cmd_fault(f, args);
	if (!strcmp(verb, "probe"))
		return cmd_probe(f, args, false);
	if (!strcmp(verb, "scribble"))
		return cmd_probe(f, args, true);
	if (!strcmp(verb, "flush")) {
		tandem_iso_flush_kills();
		return 0;
	}
	if (!strcmp(verb, "reset")) {
		syn_reset();
		return 0;
	}
	return -EINVAL;
}

static int ctl_open(struct inode *inode, struct file *file)
{
	file->private_data = kzalloc(sizeof(struct syn_file), GFP_KERNEL);
	return file->private_data ? 0 : -ENOMEM;
}

static int ctl_release(struct inode *inode, struct file *file)
{
	kfree(file->private_data);
	return 0;
}

static ssize_t ctl_write(struct file *file, const char __user *ubuf, size_t n, loff_t *ppos)
{
	char cmd[SYN_OUT];
	int err;

	if (n == 0 || n >= sizeof(cmd))
		return -EINVAL;
	if (copy_from_user(cmd, ubuf, n))
		return -EFAULT;
	cmd[n] = '\0';
	err = run_cmd(file->private_data, cmd);
	return err ? err : n;
}

static ssize_t ctl_read(struct file *file, char __user *ubuf, size_t n, loff_t *ppos)
{
	struct syn_file *f = file->private_data;

	return simple_read_from_buffer(ubuf, n, ppos, f->out, f->len);
}

static const struct file_operations ctl_fops = {
	.owner = THIS_MODULE,
	.open = ctl_open,
	.release = ctl_release,
	.read = ctl_read,
	.write = ctl_write,
	.llseek = default_llseek,
};

int tandem_iso_test_init(struct dentry *dir)
{
	struct dentry *t = debugfs_create_dir("test", dir);

	if (IS_ERR(t))
		return PTR_ERR(t);
	debugfs_create_file("ctl", 0600, t, NULL, &ctl_fops);
	pr_warn("TEST-ONLY fault injection interface enabled\n");
	return 0;
}

void tandem_iso_test_exit(void)
{
	syn_reset();
}
