// SPDX-License-Identifier: MIT
/*
 * fault_policy.c - Table 2 of the paper as code.  Kept free of any kernel or
 * UVM dependency so the same file is compiled into the module and into the
 * Criterion tests.
 */
#include "fault_policy.h"

static bool record_is_valid(const struct tandem_fault_record *rec)
{
	return rec->engine < TANDEM_ENGINE_COUNT &&
	       rec->access < TANDEM_ACCESS_COUNT &&
	       rec->stage < TANDEM_STAGE_COUNT &&
	       rec->range < TANDEM_RANGE_COUNT &&
	       rec->residency < TANDEM_RES_COUNT;
}

/* Access mismatch on a managed range, split the way Table 2 splits it. */
static enum tandem_scenario managed_scenario(const struct tandem_fault_record *rec)
{
	switch (rec->engine) {
	case TANDEM_ENGINE_SM:
		/* Zombie and pinned state explain the mismatch before residency. */
		if (rec->zombie)
			return TANDEM_SCN_5_SM_ZOMBIE;
		if (rec->non_migratable)
			return TANDEM_SCN_6_SM_NONMIG;
		/* An unpopulated page has an empty chunk slot, like CPU-resident. */
		if (rec->residency == TANDEM_RES_GPU)
			return TANDEM_SCN_3_SM_AM_GPU;
		return TANDEM_SCN_2_SM_AM_CPU;
	case TANDEM_ENGINE_CE:
		if (rec->zombie)
			return TANDEM_SCN_9_CE_ZOMBIE;
		if (rec->non_migratable)
			return TANDEM_SCN_10_CE_NONMIG;
		return TANDEM_SCN_8_CE_AM;
	default:
		if (rec->zombie)
			return TANDEM_SCN_13_PBDMA_ZOMBIE;
		if (rec->non_migratable)
			return TANDEM_SCN_14_PBDMA_NONMIG;
		return TANDEM_SCN_12_PBDMA_AM;
	}
}

enum tandem_scenario tandem_fault_scenario(const struct tandem_fault_record *rec)
{
	if (!rec || !record_is_valid(rec))
		return TANDEM_SCN_UNKNOWN;

	if (!rec->fatal) {
		/* Serviceable rows: UVM resolves them, they never reach us as fatal. */
		if (rec->access == TANDEM_ACCESS_PREFETCH)
			return TANDEM_SCN_BENIGN_PREFETCH;
		return TANDEM_SCN_BENIGN_PAGING;
	}
	if (rec->stage == TANDEM_STAGE_PARSE)
		return TANDEM_SCN_PARSE_TIME;
	/*
	 * UVM marks a prefetch it cannot satisfy as an invalid prefetch, never
	 * as fatal; treat a fatal-flagged one the same way rather than kill.
	 */
	if (rec->access == TANDEM_ACCESS_PREFETCH)
		return TANDEM_SCN_BENIGN_PREFETCH;

	switch (rec->range) {
	case TANDEM_RANGE_NONE:
		if (rec->engine == TANDEM_ENGINE_SM)
			return TANDEM_SCN_1_SM_OOB;
		if (rec->engine == TANDEM_ENGINE_CE)
			return TANDEM_SCN_7_CE_OOB;
		return TANDEM_SCN_11_PBDMA_OOB;
	case TANDEM_RANGE_MANAGED:
		return managed_scenario(rec);
	case TANDEM_RANGE_EXTERNAL:
		if (rec->engine == TANDEM_ENGINE_SM)
			return TANDEM_SCN_4_SM_AM_VMM;
		if (rec->engine == TANDEM_ENGINE_CE)
			return TANDEM_SCN_8_CE_AM;
		return TANDEM_SCN_12_PBDMA_AM;
	default:
		return TANDEM_SCN_INTERNAL_RANGE;
	}
}

static void set_stock(struct tandem_decision *d, enum tandem_stock_reason why)
{
	d->action = TANDEM_ACT_STOCK;
	d->stock_reason = why;
	d->kill_client = false;
	d->dummy_size = 0;
	d->dummy_va = 0;
}

static void set_mech(struct tandem_decision *d, enum tandem_action act, u64 addr)
{
	d->action = act;
	d->stock_reason = TANDEM_STOCK_NONE;
	d->kill_client = true;
	/* M3 installs a whole 2 MiB block chunk; M1/M2 a single 4 KiB page. */
	d->dummy_size = act == TANDEM_ACT_M3 ? TANDEM_SZ_2M : TANDEM_SZ_4K;
	d->dummy_va = addr & ~(d->dummy_size - 1);
}

int tandem_fault_decide(const struct tandem_fault_record *rec, bool enabled,
			struct tandem_decision *out)
{
	enum tandem_scenario scn;

	memset(out, 0, sizeof(*out));
	if (!rec || !record_is_valid(rec)) {
		set_stock(out, TANDEM_STOCK_UNREACHABLE);
		return -EINVAL;
	}

	scn = tandem_fault_scenario(rec);
	out->scenario = (u8)scn;

	switch (scn) {
	case TANDEM_SCN_BENIGN_PAGING:
	case TANDEM_SCN_BENIGN_PREFETCH:
		/* Benign faults are never touched, switch or no switch. */
		out->action = TANDEM_ACT_IGNORE;
		return 0;
	default:
		break;
	}

	if (!enabled) {
		set_stock(out, TANDEM_STOCK_DISABLED);
		return 0;
	}

	switch (scn) {
	case TANDEM_SCN_1_SM_OOB:
	case TANDEM_SCN_11_PBDMA_OOB:
		set_mech(out, TANDEM_ACT_M1, rec->address);
		break;
	case TANDEM_SCN_2_SM_AM_CPU:
	case TANDEM_SCN_3_SM_AM_GPU:
	case TANDEM_SCN_5_SM_ZOMBIE:
	case TANDEM_SCN_6_SM_NONMIG:
		set_mech(out, TANDEM_ACT_M2, rec->address);
		break;
	case TANDEM_SCN_4_SM_AM_VMM:
		set_mech(out, TANDEM_ACT_M3, rec->address);
		break;
	case TANDEM_SCN_7_CE_OOB:
	case TANDEM_SCN_8_CE_AM:
		/* The CE TSG is per client: RC already kills only the culprit. */
		set_stock(out, TANDEM_STOCK_CONTAINED);
		break;
	case TANDEM_SCN_PARSE_TIME:
		set_stock(out, TANDEM_STOCK_PARSE_TIME);
		break;
	case TANDEM_SCN_INTERNAL_RANGE:
		set_stock(out, TANDEM_STOCK_INTERNAL);
		break;
	default:
		/* #9, #10, #12-#14: if one ever shows up, do not guess. */
		set_stock(out, TANDEM_STOCK_UNREACHABLE);
		break;
	}
	return 0;
}

void tandem_decision_bind_client(struct tandem_decision *d, s32 pid)
{
	if (d->action < TANDEM_ACT_M1)
		return;
	/*
	 * Resolving a fault without killing its owner would let a broken
	 * program run on against a dummy page; without an owner, stock
	 * handling (tear down the context) is the honest answer.
	 */
	if (pid <= 0) {
		set_stock(d, TANDEM_STOCK_NO_CLIENT);
		return;
	}
	if (pid == 1) {
		set_stock(d, TANDEM_STOCK_PROTECTED);
		return;
	}
}

static const char *const action_names[TANDEM_ACT_COUNT] = {
	"ignore", "stock", "M1", "M2", "M3",
};

static const char *const scenario_names[TANDEM_SCN_COUNT] = {
	"unknown", "#1-sm-oob", "#2-sm-am-cpu", "#3-sm-am-gpu", "#4-sm-am-vmm",
	"#5-sm-zombie", "#6-sm-nonmig", "#7-ce-oob", "#8-ce-am",
	"#9-ce-zombie", "#10-ce-nonmig", "#11-pbdma-oob", "#12-pbdma-am",
	"#13-pbdma-zombie", "#14-pbdma-nonmig", "parse-time",
	"benign-paging", "benign-prefetch", "internal-range",
};

static const char *const stock_names[TANDEM_STOCK_COUNT] = {
	"none", "disabled", "parse-time", "contained", "unreachable",
	"internal-range", "no-client", "protected", "no-dummy", "mech-failed",
};

static const char *const engine_names[TANDEM_ENGINE_COUNT] = {
	"sm", "pbdma", "ce",
};

const char *tandem_action_name(unsigned int action)
{
	return action < TANDEM_ACT_COUNT ? action_names[action] : "?";
}

const char *tandem_scenario_name(unsigned int scenario)
{
	return scenario < TANDEM_SCN_COUNT ? scenario_names[scenario] : "?";
}

const char *tandem_stock_reason_name(unsigned int reason)
{
	return reason < TANDEM_STOCK_COUNT ? stock_names[reason] : "?";
}

const char *tandem_engine_name(unsigned int engine)
{
	return engine < TANDEM_ENGINE_COUNT ? engine_names[engine] : "?";
}
