/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tandem_uvm_isolate.h - what the parts of the module share: the core entry
 * point a fault source (the UVM glue, or the test interface) calls at UVM's
 * fatality decision, and the state debugfs/sysfs read.
 */
#ifndef TANDEM_UVM_ISOLATE_H
#define TANDEM_UVM_ISOLATE_H

#include <linux/mutex.h>
#include <linux/dcache.h>
#include "fault_policy.h"
#include "dummy_pool.h"
#include "client_table.h"
#include "decision_log.h"

/*
 * How a fault source performs a mechanism.  install() runs with the core's
 * lock held, after the decision and the client lookup, and must leave the
 * dummy page mapped at d->dummy_va so the fault services normally.  Returns
 * 0 or a negative errno (the core then falls back to stock handling).
 */
struct tandem_mech_ops {
	int (*install)(void *ctx, const struct tandem_fault_record *rec,
		       const struct tandem_decision *d, void *dummy_page);
};

struct tandem_iso {
	struct mutex lock;	/* clients, log, pool */
	struct tandem_pool pool;
	struct tandem_client_table clients;
	struct tandem_log log;
	struct dentry *dbg_dir;
};

extern struct tandem_iso tandem_iso;
extern bool tandem_iso_enabled;
extern bool tandem_iso_test_iface;

/*
 * Handle one fault record at the fatality point.  owner_pid is the owner the
 * caller already knows (UVM's channel registration) or 0 to look the
 * instance pointer up in the module's client table.  Fills *out with what
 * was done; out->action is ACT_M1..M3 only if the dummy is installed and the
 * owner's SIGKILL is queued, so the caller may then treat the fault as
 * serviceable.  Sleeps; call from process context.
 */
int tandem_iso_handle(const struct tandem_fault_record *rec, s32 owner_pid,
		      const struct tandem_mech_ops *ops, void *ctx,
		      struct tandem_decision *out);

/*
 * Record tgid as the owner of a channel.  A pointer still held by an exited
 * process is taken over (instance blocks are reused).  0 or -errno.
 */
int tandem_iso_register_client(u64 instance_ptr, s32 tgid);

/* Wait until every queued kill has been delivered (tests, unload). */
void tandem_iso_flush_kills(void);

int tandem_iso_fs_init(void);
void tandem_iso_fs_exit(void);

int tandem_iso_test_init(struct dentry *dir);
void tandem_iso_test_exit(void);

#ifdef TANDEM_WITH_UVM
int tandem_uvm_glue_init(void);
void tandem_uvm_glue_exit(void);
#endif

#endif /* TANDEM_UVM_ISOLATE_H */
