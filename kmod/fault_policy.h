/* SPDX-License-Identifier: MIT */
/*
 * fault_policy.h - classify one UVM fault record into what the isolator does
 * with it: nothing (benign or not ours), hand it back to stock UVM, or resolve
 * it with M1 (range creation), M2 (chunk substitution) or M3 (range
 * conversion) and kill only the faulting client.
 *
 * The record is a driver-independent summary of a uvm_fault_buffer_entry_t
 * plus what UVM knows about the VA range at the faulting address; the UVM
 * glue fills it in, and so does the test-only debugfs interface.
 */
#ifndef TANDEM_FAULT_POLICY_H
#define TANDEM_FAULT_POLICY_H

#include "tandem_compat.h"

/* Faulting engine, as UVM's uvm_mmu_engine_type_t reports it. */
enum tandem_engine {
	TANDEM_ENGINE_SM = 0,	/* UVM_MMU_ENGINE_TYPE_GRAPHICS */
	TANDEM_ENGINE_PBDMA,	/* UVM_MMU_ENGINE_TYPE_HOST */
	TANDEM_ENGINE_CE,	/* UVM_MMU_ENGINE_TYPE_CE */
	TANDEM_ENGINE_COUNT
};

enum tandem_access {
	TANDEM_ACCESS_PREFETCH = 0,
	TANDEM_ACCESS_READ,
	TANDEM_ACCESS_WRITE,
	TANDEM_ACCESS_ATOMIC,
	TANDEM_ACCESS_COUNT
};

/* When UVM decided the fault was fatal (Table 2, "Fatality Stage"). */
enum tandem_stage {
	TANDEM_STAGE_SERVICE = 0, /* deferred to servicing */
	TANDEM_STAGE_PARSE,	  /* fault_type >= UVM_FAULT_TYPE_FATAL */
	TANDEM_STAGE_COUNT
};

/* What UVM has at the faulting address. */
enum tandem_range {
	TANDEM_RANGE_NONE = 0,	/* no VA range: out of bounds */
	TANDEM_RANGE_MANAGED,	/* UVM managed range (cudaMallocManaged) */
	TANDEM_RANGE_EXTERNAL,	/* external/VMM range (cuMemMap) */
	TANDEM_RANGE_INTERNAL,	/* driver-internal: semaphore pool, channel, sked */
	TANDEM_RANGE_COUNT
};

enum tandem_residency {
	TANDEM_RES_NONE = 0,	/* never populated */
	TANDEM_RES_CPU,
	TANDEM_RES_GPU,
	TANDEM_RES_COUNT
};

struct tandem_fault_record {
	u64 address;
	u64 instance_ptr;	/* channel instance block: identifies the client */
	u8 engine;		/* enum tandem_engine */
	u8 access;		/* enum tandem_access */
	u8 stage;		/* enum tandem_stage */
	u8 range;		/* enum tandem_range */
	u8 residency;		/* enum tandem_residency, managed ranges only */
	bool replayable;
	bool fatal;		/* UVM's own verdict; we never act on !fatal */
	bool zombie;		/* managed range whose allocation was freed */
	bool non_migratable;	/* managed range pinned elsewhere */
};

enum tandem_action {
	TANDEM_ACT_IGNORE = 0,	/* benign: UVM services it, we do nothing */
	TANDEM_ACT_STOCK,	/* fatal, but left to stock UVM/RM handling */
	TANDEM_ACT_M1,		/* create a managed range, map 4 KiB dummy */
	TANDEM_ACT_M2,		/* substitute the page's chunk with a dummy */
	TANDEM_ACT_M3,		/* external -> managed, install 2 MiB dummy */
	TANDEM_ACT_COUNT
};

/*
 * Table 2 scenario the record was recognised as.  Numbers 1..14 are the
 * paper's rows; the rest are the unnumbered rows.
 */
enum tandem_scenario {
	TANDEM_SCN_UNKNOWN = 0,
	TANDEM_SCN_1_SM_OOB = 1,
	TANDEM_SCN_2_SM_AM_CPU,
	TANDEM_SCN_3_SM_AM_GPU,
	TANDEM_SCN_4_SM_AM_VMM,
	TANDEM_SCN_5_SM_ZOMBIE,
	TANDEM_SCN_6_SM_NONMIG,
	TANDEM_SCN_7_CE_OOB,
	TANDEM_SCN_8_CE_AM,
	TANDEM_SCN_9_CE_ZOMBIE,
	TANDEM_SCN_10_CE_NONMIG,
	TANDEM_SCN_11_PBDMA_OOB,
	TANDEM_SCN_12_PBDMA_AM,
	TANDEM_SCN_13_PBDMA_ZOMBIE,
	TANDEM_SCN_14_PBDMA_NONMIG,
	TANDEM_SCN_PARSE_TIME,		/* HW error conditions, any engine */
	TANDEM_SCN_BENIGN_PAGING,	/* demand paging, any engine */
	TANDEM_SCN_BENIGN_PREFETCH,	/* invalid prefetch (SM) */
	TANDEM_SCN_INTERNAL_RANGE,	/* driver-internal range: not ours */
	TANDEM_SCN_COUNT
};

/* Why a fatal fault was left to stock handling. */
enum tandem_stock_reason {
	TANDEM_STOCK_NONE = 0,
	TANDEM_STOCK_DISABLED,		/* run-time switch is off */
	TANDEM_STOCK_PARSE_TIME,	/* unrecoverable HW condition */
	TANDEM_STOCK_CONTAINED,		/* CE TSG is per client already */
	TANDEM_STOCK_UNREACHABLE,	/* combination Table 2 rules out */
	TANDEM_STOCK_INTERNAL,		/* driver-internal range */
	TANDEM_STOCK_NO_CLIENT,		/* instance pointer not attributable */
	TANDEM_STOCK_PROTECTED,		/* owner is init or a kernel thread */
	TANDEM_STOCK_NO_DUMMY,		/* pool could not supply a page */
	TANDEM_STOCK_MECH_FAILED,	/* mechanism returned an error */
	TANDEM_STOCK_COUNT
};

struct tandem_decision {
	u8 action;		/* enum tandem_action */
	u8 scenario;		/* enum tandem_scenario */
	u8 stock_reason;	/* enum tandem_stock_reason, for ACT_STOCK */
	bool kill_client;	/* SIGKILL the owner at the safe point */
	u64 dummy_size;		/* 0, TANDEM_SZ_4K or TANDEM_SZ_2M */
	u64 dummy_va;		/* address the dummy gets installed at */
};

/*
 * Map a record onto its Table 2 scenario.  Pure function of the record; says
 * nothing about what to do.
 */
enum tandem_scenario tandem_fault_scenario(const struct tandem_fault_record *rec);

/*
 * Decide what to do with a record.  enabled is the run-time switch.  Never
 * returns an M* action for a non-fatal record.  Returns 0, or -EINVAL for a
 * malformed record (then *out is ACT_STOCK with reason UNREACHABLE, so the
 * caller can still fall back safely).
 */
int tandem_fault_decide(const struct tandem_fault_record *rec, bool enabled,
			struct tandem_decision *out);

/*
 * Second step: the client lookup found owner pid (0 if none).  Downgrades an
 * M* decision to ACT_STOCK when the fault cannot be attributed to a single
 * killable user process.
 */
void tandem_decision_bind_client(struct tandem_decision *d, s32 pid);

const char *tandem_action_name(unsigned int action);
const char *tandem_scenario_name(unsigned int scenario);
const char *tandem_stock_reason_name(unsigned int reason);
const char *tandem_engine_name(unsigned int engine);

#endif /* TANDEM_FAULT_POLICY_H */
