// SPDX-License-Identifier: GPL-2.0
/*
 * tandem_uvm_glue.c - connects the isolator to a patched nvidia-uvm
 * (kmod/patches/nvidia-uvm-580-fatal-fault-hook.patch).  Built only when
 * NVIDIA_UVM_SRC names the patched kernel-open/ tree; it needs just the
 * patch's uvm_tandem_hook.h and the symbols nvidia-uvm exports with it.
 *
 * - fatal_fault: translate UVM's fault description into a tandem record and
 *   run the core handler; report "resolved" only if a mechanism installed a
 *   mapping and the owner's kill is queued.
 * - channel (un)registered: keep the instance pointer -> tgid table, the
 *   attribution the paper takes from UVM's channel registration.
 *
 * The mechanisms themselves (M1/M2/M3 on UVM's va_range/va_block/PMM state)
 * are not implemented against real UVM yet: uvm_install() returns
 * -EOPNOTSUPP, so the core logs the decision and falls back to stock
 * handling (the fault is cancelled/reported exactly as without the module).
 * See docs/kmod.md, "What is left out".
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include "uvm_tandem_hook.h"
#include "tandem_uvm_isolate.h"

static u8 engine_of(u32 mmu_engine_type)
{
	switch (mmu_engine_type) {
	case 0:
		return TANDEM_ENGINE_SM;	/* UVM_MMU_ENGINE_TYPE_GRAPHICS */
	case 1:
		return TANDEM_ENGINE_PBDMA;	/* UVM_MMU_ENGINE_TYPE_HOST */
	case 2:
		return TANDEM_ENGINE_CE;	/* UVM_MMU_ENGINE_TYPE_CE */
	default:
		return TANDEM_ENGINE_COUNT;	/* makes the record invalid -> stock */
	}
}

static u8 access_of(u32 uvm_access)
{
	/* PREFETCH, READ, WRITE, ATOMIC_WEAK, ATOMIC_STRONG */
	return uvm_access >= 3 ? TANDEM_ACCESS_ATOMIC : (u8)uvm_access;
}

static u8 range_of(u32 range_type)
{
	switch (range_type) {
	case UVM_TANDEM_RANGE_NONE:
		return TANDEM_RANGE_NONE;
	case UVM_TANDEM_RANGE_MANAGED:
		return TANDEM_RANGE_MANAGED;
	case UVM_TANDEM_RANGE_EXTERNAL:
		return TANDEM_RANGE_EXTERNAL;
	default:
		return TANDEM_RANGE_INTERNAL;
	}
}

static int uvm_install(void *ctx, const struct tandem_fault_record *rec,
		       const struct tandem_decision *d, void *dummy_page)
{
	/* See the file comment: no mechanism on real UVM state yet. */
	return -EOPNOTSUPP;
}

static const struct tandem_mech_ops uvm_mech_ops = { .install = uvm_install };

static bool glue_fatal_fault(const struct uvm_tandem_fault_info *info)
{
	struct tandem_fault_record rec = {
		.address = info->fault_address,
		.instance_ptr = info->instance_ptr,
		.engine = engine_of(info->mmu_engine_type),
		.access = access_of(info->access_type),
		.stage = info->parse_time ? TANDEM_STAGE_PARSE : TANDEM_STAGE_SERVICE,
		.range = range_of(info->range_type),
		.residency = TANDEM_RES_NONE,	/* not needed: #2/#3 both map to M2 */
		.replayable = info->replayable,
		.fatal = true,
		.zombie = info->zombie,
		.non_migratable = info->non_migratable,
	};
	struct tandem_decision d;

	tandem_iso_handle(&rec, 0, &uvm_mech_ops, (void *)info, &d);
	return d.action >= TANDEM_ACT_M1;
}

static void glue_channel_registered(u64 instance_ptr, pid_t tgid)
{
	int err = tandem_iso_register_client(instance_ptr, tgid);

	if (err)
		pr_warn("channel 0x%llx of %d not attributable (%d)\n", instance_ptr, tgid, err);
}

static void glue_channel_unregistered(u64 instance_ptr)
{
	mutex_lock(&tandem_iso.lock);
	tandem_clients_remove_inst(&tandem_iso.clients, instance_ptr);
	mutex_unlock(&tandem_iso.lock);
}

static const struct uvm_tandem_hook_ops glue_ops = {
	.abi = UVM_TANDEM_HOOK_ABI,
	.fatal_fault = glue_fatal_fault,
	.channel_registered = glue_channel_registered,
	.channel_unregistered = glue_channel_unregistered,
};

int tandem_uvm_glue_init(void)
{
	int err = uvm_tandem_register_hook(&glue_ops);

	if (err)
		pr_err("cannot hook nvidia-uvm (%d): is the hook patch applied?\n", err);
	return err;
}

void tandem_uvm_glue_exit(void)
{
	uvm_tandem_unregister_hook(&glue_ops);
}
