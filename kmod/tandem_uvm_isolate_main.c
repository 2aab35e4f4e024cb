// SPDX-License-Identifier: GPL-2.0
/*
 * tandem_uvm_isolate_main.c - module lifetime, the run-time switch, the core
 * fault handler and the deferred client kill.
 *
 * The handler is entered only for faults UVM has already classified fatal
 * (the hook sits after UVM's own check), so fault-free execution never runs
 * any of this.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/gfp.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/pid.h>
#include <linux/sched/signal.h>
#include <linux/workqueue.h>
#include <linux/ktime.h>
#include <linux/rcupdate.h>
#include "tandem_uvm_isolate.h"

struct tandem_iso tandem_iso;

bool tandem_iso_enabled = true;
module_param_named(enabled, tandem_iso_enabled, bool, 0644);
MODULE_PARM_DESC(enabled, "Isolate fatal MMU faults (0 = stock UVM behaviour)");

bool tandem_iso_test_iface;
module_param_named(test_iface, tandem_iso_test_iface, bool, 0444);
MODULE_PARM_DESC(test_iface, "Expose the test-only fault injection interface in debugfs");

static unsigned int pool_4k = 1;
module_param(pool_4k, uint, 0444);
MODULE_PARM_DESC(pool_4k, "Shared 4 KiB dummy pages in the pool (1-4)");

static unsigned int pool_2m = 1;
module_param(pool_2m, uint, 0444);
MODULE_PARM_DESC(pool_2m, "Shared 2 MiB dummy chunks in the pool (1-4)");

static struct workqueue_struct *kill_wq;

struct kill_work {
	struct work_struct work;
	struct pid *pid;
	s32 nr;
};

/* Pool memory: physically contiguous, zeroed, never mapped by user space here. */
static void *pool_alloc(void *ctx, u64 size)
{
	struct page *pg = alloc_pages(GFP_KERNEL | __GFP_ZERO | __GFP_NOWARN,
				      get_order(size));

	return pg ? page_address(pg) : NULL;
}

static void pool_free(void *ctx, void *page, u64 size)
{
	free_pages((unsigned long)page, get_order(size));
}

static const struct tandem_pool_ops pool_ops = {
	.alloc = pool_alloc,
	.free = pool_free,
};

/*
 * The SIGKILL is sent from a worker, not from the fault path: there UVM still
 * holds the VA space lock and has not replayed the faulting channel yet.  By
 * the time the worker runs, the fault has been serviced against the dummy
 * page, so the client dies without an executing kernel or a pending fault
 * that could trigger RC on the shared TSG.
 */
static void kill_work_fn(struct work_struct *w)
{
	struct kill_work *kw = container_of(w, struct kill_work, work);
	int err = kill_pid(kw->pid, SIGKILL, 1);

	mutex_lock(&tandem_iso.lock);
	if (err)
		tandem_iso.log.c.kills_failed++;
	else
		tandem_iso.log.c.kills_done++;
	/* Its channels die with it; forget them so the pointers can be reused. */
	tandem_clients_remove_pid(&tandem_iso.clients, kw->nr);
	mutex_unlock(&tandem_iso.lock);

	if (err)
		pr_info("client %d already gone (%d)\n", kw->nr, err);
	else
		pr_info("killed faulting client %d\n", kw->nr);
	put_pid(kw->pid);
	kfree(kw);
}

static int queue_kill(s32 nr)
{
	struct kill_work *kw = kzalloc(sizeof(*kw), GFP_KERNEL);

	if (!kw)
		return -ENOMEM;
	kw->pid = find_get_pid(nr);
	if (!kw->pid) {
		kfree(kw);
		return -ESRCH;
	}
	kw->nr = nr;
	INIT_WORK(&kw->work, kill_work_fn);
	queue_work(kill_wq, &kw->work);
	return 0;
}

static bool owner_alive(s32 nr)
{
	bool alive;

	rcu_read_lock();
	alive = pid_task(find_vpid(nr), PIDTYPE_TGID) != NULL;
	rcu_read_unlock();
	return alive;
}

int tandem_iso_register_client(u64 instance_ptr, s32 tgid)
{
	int err;

	mutex_lock(&tandem_iso.lock);
	err = tandem_clients_add(&tandem_iso.clients, instance_ptr, tgid);
	if (err == -EEXIST) {
		s32 old = tandem_clients_lookup(&tandem_iso.clients, instance_ptr);

		if (!owner_alive(old)) {
			tandem_clients_remove_pid(&tandem_iso.clients, old);
			err = tandem_clients_add(&tandem_iso.clients, instance_ptr, tgid);
		}
	}
	mutex_unlock(&tandem_iso.lock);
	return err;
}

void tandem_iso_flush_kills(void)
{
	flush_workqueue(kill_wq);
}

int tandem_iso_handle(const struct tandem_fault_record *rec, s32 owner_pid,
		      const struct tandem_mech_ops *ops, void *ctx,
		      struct tandem_decision *out)
{
	struct tandem_log_entry e = { 0 };
	u64 t0 = ktime_get_ns();
	void *page = NULL;
	int cls = -EINVAL;
	int err;

	err = tandem_fault_decide(rec, READ_ONCE(tandem_iso_enabled), out);

	mutex_lock(&tandem_iso.lock);
	if (out->action >= TANDEM_ACT_M1) {
		s32 pid = owner_pid > 0 ? owner_pid :
			  tandem_clients_lookup(&tandem_iso.clients, rec->instance_ptr);

		tandem_decision_bind_client(out, pid);
		e.pid = pid;
	}
	if (out->action >= TANDEM_ACT_M1) {
		cls = tandem_pool_class_of(out->dummy_size);
		page = cls < 0 ? NULL : tandem_pool_get(&tandem_iso.pool, cls);
		if (!page) {
			out->action = TANDEM_ACT_STOCK;
			out->stock_reason = TANDEM_STOCK_NO_DUMMY;
			out->kill_client = false;
		}
	}
	if (out->action >= TANDEM_ACT_M1) {
		int ierr = ops && ops->install ? ops->install(ctx, rec, out, page) : -EOPNOTSUPP;

		if (!ierr)
			ierr = queue_kill(e.pid);
		if (ierr) {
			/*
			 * Without both the mapping and the kill the fault is not
			 * isolated; hand it back so UVM cancels it as stock does.
			 */
			tandem_pool_put(&tandem_iso.pool, cls, page);
			out->action = TANDEM_ACT_STOCK;
			out->stock_reason = TANDEM_STOCK_MECH_FAILED;
			out->kill_client = false;
			err = ierr;
		} else {
			tandem_iso.log.c.kills_queued++;
		}
	}
	if (out->action < TANDEM_ACT_M1)
		e.pid = 0;

	e.time_ns = ktime_get_real_ns();
	e.address = rec->address;
	e.instance_ptr = rec->instance_ptr;
	e.action = out->action;
	e.scenario = out->scenario;
	e.stock_reason = out->stock_reason;
	e.engine = rec->engine;
	e.latency_ns = ktime_get_ns() - t0;
	tandem_log_add(&tandem_iso.log, &e);
	mutex_unlock(&tandem_iso.lock);
	return err;
}
EXPORT_SYMBOL_GPL(tandem_iso_handle);

static int __init tandem_iso_init(void)
{
	int err;

	mutex_init(&tandem_iso.lock);
	tandem_clients_init(&tandem_iso.clients);
	tandem_log_init(&tandem_iso.log);

	err = tandem_pool_init(&tandem_iso.pool, &pool_ops, NULL, pool_4k, pool_2m);
	if (err) {
		pr_err("dummy pool allocation failed (%d)\n", err);
		return err;
	}
	kill_wq = alloc_workqueue("tandem_iso_kill", WQ_UNBOUND, 1);
	if (!kill_wq) {
		err = -ENOMEM;
		goto out_pool;
	}
	err = tandem_iso_fs_init();
	if (err)
		goto out_wq;
#ifdef TANDEM_WITH_UVM
	err = tandem_uvm_glue_init();
	if (err)
		goto out_fs;
#endif
	pr_info("loaded: isolation %s, pool %u x 4K + %u x 2M%s\n",
		tandem_iso_enabled ? "on" : "off", pool_4k, pool_2m,
		tandem_iso_test_iface ? ", test interface ON" : "");
	return 0;

#ifdef TANDEM_WITH_UVM
out_fs:
	tandem_iso_fs_exit();
#endif
out_wq:
	destroy_workqueue(kill_wq);
out_pool:
	tandem_pool_destroy(&tandem_iso.pool);
	return err;
}

static void __exit tandem_iso_exit(void)
{
#ifdef TANDEM_WITH_UVM
	/* Unhook first: after this no fault can reach the pool. */
	tandem_uvm_glue_exit();
#endif
	tandem_iso_fs_exit();
	flush_workqueue(kill_wq);
	destroy_workqueue(kill_wq);
	tandem_pool_destroy(&tandem_iso.pool);
}

module_init(tandem_iso_init);
module_exit(tandem_iso_exit);

MODULE_LICENSE("GPL");
MODULE_AUTHOR("Tandem");
MODULE_DESCRIPTION("Isolate fatal UVM MMU faults to the faulting MPS client");
