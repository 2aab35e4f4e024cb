// SPDX-License-Identifier: MIT
/*
 * Every row of the paper's Table 2 (MMU category), reachable or not, as a
 * fault record, and what the isolator must do with it.
 */
#include <criterion/criterion.h>
#include "fault_policy.h"

struct row {
	const char *name;
	struct tandem_fault_record rec;
	enum tandem_scenario scn;
	enum tandem_action act;
	enum tandem_stock_reason why;
	u64 dummy;
};

#define SM TANDEM_ENGINE_SM
#define CE TANDEM_ENGINE_CE
#define PB TANDEM_ENGINE_PBDMA
#define ADDR 0x7f0000123456ULL

#define FATAL(eng, rng, res, z, nm) \
	{ .address = ADDR, .instance_ptr = 0x1000, .engine = (eng), \
	  .access = TANDEM_ACCESS_WRITE, .stage = TANDEM_STAGE_SERVICE, \
	  .range = (rng), .residency = (res), .replayable = (eng) == SM, \
	  .fatal = true, .zombie = (z), .non_migratable = (nm) }

static const struct row table2[] = {
	{ "SM parse-time HW error",
	  { .address = ADDR, .instance_ptr = 0x1000, .engine = SM, .access = TANDEM_ACCESS_READ,
	    .stage = TANDEM_STAGE_PARSE, .replayable = true, .fatal = true },
	  TANDEM_SCN_PARSE_TIME, TANDEM_ACT_STOCK, TANDEM_STOCK_PARSE_TIME, 0 },
	{ "#1 SM OOB", FATAL(SM, TANDEM_RANGE_NONE, 0, 0, 0),
	  TANDEM_SCN_1_SM_OOB, TANDEM_ACT_M1, TANDEM_STOCK_NONE, TANDEM_SZ_4K },
	{ "#2 SM AM CPU-resident", FATAL(SM, TANDEM_RANGE_MANAGED, TANDEM_RES_CPU, 0, 0),
	  TANDEM_SCN_2_SM_AM_CPU, TANDEM_ACT_M2, TANDEM_STOCK_NONE, TANDEM_SZ_4K },
	{ "#3 SM AM GPU-resident", FATAL(SM, TANDEM_RANGE_MANAGED, TANDEM_RES_GPU, 0, 0),
	  TANDEM_SCN_3_SM_AM_GPU, TANDEM_ACT_M2, TANDEM_STOCK_NONE, TANDEM_SZ_4K },
	{ "#4 SM AM VMM", FATAL(SM, TANDEM_RANGE_EXTERNAL, 0, 0, 0),
	  TANDEM_SCN_4_SM_AM_VMM, TANDEM_ACT_M3, TANDEM_STOCK_NONE, TANDEM_SZ_2M },
	{ "#5 SM zombie", FATAL(SM, TANDEM_RANGE_MANAGED, TANDEM_RES_GPU, 1, 0),
	  TANDEM_SCN_5_SM_ZOMBIE, TANDEM_ACT_M2, TANDEM_STOCK_NONE, TANDEM_SZ_4K },
	{ "#6 SM non-migratable", FATAL(SM, TANDEM_RANGE_MANAGED, TANDEM_RES_CPU, 0, 1),
	  TANDEM_SCN_6_SM_NONMIG, TANDEM_ACT_M2, TANDEM_STOCK_NONE, TANDEM_SZ_4K },
	{ "SM benign demand paging",
	  { .address = ADDR, .engine = SM, .access = TANDEM_ACCESS_READ,
	    .range = TANDEM_RANGE_MANAGED, .replayable = true, .fatal = false },
	  TANDEM_SCN_BENIGN_PAGING, TANDEM_ACT_IGNORE, TANDEM_STOCK_NONE, 0 },
	{ "SM benign invalid prefetch",
	  { .address = ADDR, .engine = SM, .access = TANDEM_ACCESS_PREFETCH,
	    .range = TANDEM_RANGE_NONE, .replayable = true, .fatal = false },
	  TANDEM_SCN_BENIGN_PREFETCH, TANDEM_ACT_IGNORE, TANDEM_STOCK_NONE, 0 },
	{ "CE parse-time HW error",
	  { .address = ADDR, .instance_ptr = 0x1000, .engine = CE, .access = TANDEM_ACCESS_WRITE,
	    .stage = TANDEM_STAGE_PARSE, .fatal = true },
	  TANDEM_SCN_PARSE_TIME, TANDEM_ACT_STOCK, TANDEM_STOCK_PARSE_TIME, 0 },
	{ "#7 CE OOB (contained)", FATAL(CE, TANDEM_RANGE_NONE, 0, 0, 0),
	  TANDEM_SCN_7_CE_OOB, TANDEM_ACT_STOCK, TANDEM_STOCK_CONTAINED, 0 },
	{ "#8 CE AM (contained)", FATAL(CE, TANDEM_RANGE_MANAGED, TANDEM_RES_CPU, 0, 0),
	  TANDEM_SCN_8_CE_AM, TANDEM_ACT_STOCK, TANDEM_STOCK_CONTAINED, 0 },
	{ "#9 CE zombie (unreachable)", FATAL(CE, TANDEM_RANGE_MANAGED, TANDEM_RES_GPU, 1, 0),
	  TANDEM_SCN_9_CE_ZOMBIE, TANDEM_ACT_STOCK, TANDEM_STOCK_UNREACHABLE, 0 },
	{ "#10 CE non-migratable (unreachable)", FATAL(CE, TANDEM_RANGE_MANAGED, TANDEM_RES_CPU, 0, 1),
	  TANDEM_SCN_10_CE_NONMIG, TANDEM_ACT_STOCK, TANDEM_STOCK_UNREACHABLE, 0 },
	{ "#11 PBDMA OOB", FATAL(PB, TANDEM_RANGE_NONE, 0, 0, 0),
	  TANDEM_SCN_11_PBDMA_OOB, TANDEM_ACT_M1, TANDEM_STOCK_NONE, TANDEM_SZ_4K },
	{ "#12 PBDMA AM (unreachable)", FATAL(PB, TANDEM_RANGE_MANAGED, TANDEM_RES_GPU, 0, 0),
	  TANDEM_SCN_12_PBDMA_AM, TANDEM_ACT_STOCK, TANDEM_STOCK_UNREACHABLE, 0 },
	{ "#13 PBDMA zombie (unreachable)", FATAL(PB, TANDEM_RANGE_MANAGED, TANDEM_RES_GPU, 1, 0),
	  TANDEM_SCN_13_PBDMA_ZOMBIE, TANDEM_ACT_STOCK, TANDEM_STOCK_UNREACHABLE, 0 },
	{ "#14 PBDMA non-migratable (unreachable)", FATAL(PB, TANDEM_RANGE_MANAGED, TANDEM_RES_CPU, 0, 1),
	  TANDEM_SCN_14_PBDMA_NONMIG, TANDEM_ACT_STOCK, TANDEM_STOCK_UNREACHABLE, 0 },
	{ "CE benign page fault",
	  { .address = ADDR, .engine = CE, .access = TANDEM_ACCESS_WRITE,
	    .range = TANDEM_RANGE_MANAGED, .fatal = false },
	  TANDEM_SCN_BENIGN_PAGING, TANDEM_ACT_IGNORE, TANDEM_STOCK_NONE, 0 },
	{ "PBDMA benign page fault",
	  { .address = ADDR, .engine = PB, .access = TANDEM_ACCESS_READ,
	    .range = TANDEM_RANGE_MANAGED, .fatal = false },
	  TANDEM_SCN_BENIGN_PAGING, TANDEM_ACT_IGNORE, TANDEM_STOCK_NONE, 0 },
};

Test(table2, every_row_is_classified_and_decided)
{
	size_t i;

	for (i = 0; i < sizeof(table2) / sizeof(table2[0]); i++) {
		const struct row *r = &table2[i];
		struct tandem_decision d;
		int err = tandem_fault_decide(&r->rec, true, &d);

		cr_assert_eq(err, 0, "%s: err %d", r->name, err);
		cr_expect_eq(tandem_fault_scenario(&r->rec), r->scn, "%s: scenario %s", r->name,
			     tandem_scenario_name(tandem_fault_scenario(&r->rec)));
		cr_expect_eq(d.scenario, r->scn, "%s", r->name);
		cr_expect_eq(d.action, r->act, "%s: action %s, want %s", r->name,
			     tandem_action_name(d.action), tandem_action_name(r->act));
		cr_expect_eq(d.stock_reason, r->why, "%s: reason %s", r->name,
			     tandem_stock_reason_name(d.stock_reason));
		cr_expect_eq(d.dummy_size, r->dummy, "%s: dummy size", r->name);
		cr_expect_eq(d.kill_client, r->act >= TANDEM_ACT_M1, "%s: kill", r->name);
	}
}

Test(table2, all_nine_reachable_fatal_rows_are_handled)
{
	/* Seven propagate and get a mechanism; #7/#8 are contained by design. */
	size_t i, mech = 0, contained = 0;

	for (i = 0; i < sizeof(table2) / sizeof(table2[0]); i++) {
		struct tandem_decision d;

		tandem_fault_decide(&table2[i].rec, true, &d);
		if (d.action >= TANDEM_ACT_M1)
			mech++;
		if (d.stock_reason == TANDEM_STOCK_CONTAINED)
			contained++;
	}
	cr_assert_eq(mech, 7);
	cr_assert_eq(contained, 2);
}

Test(table2, dummy_va_is_aligned_to_the_dummy)
{
	struct tandem_decision d;

	tandem_fault_decide(&table2[1].rec, true, &d); /* #1 */
	cr_assert_eq(d.dummy_va, ADDR & ~0xfffULL);
	tandem_fault_decide(&table2[4].rec, true, &d); /* #4 */
	cr_assert_eq(d.dummy_va, ADDR & ~0x1fffffULL);
}

Test(policy, switch_off_is_stock_for_every_fatal_row)
{
	size_t i;

	for (i = 0; i < sizeof(table2) / sizeof(table2[0]); i++) {
		struct tandem_decision d;

		tandem_fault_decide(&table2[i].rec, false, &d);
		if (table2[i].rec.fatal && table2[i].act != TANDEM_ACT_IGNORE) {
			cr_expect_eq(d.action, TANDEM_ACT_STOCK, "%s", table2[i].name);
			cr_expect_eq(d.stock_reason, TANDEM_STOCK_DISABLED, "%s", table2[i].name);
		} else {
			cr_expect_eq(d.action, TANDEM_ACT_IGNORE, "%s", table2[i].name);
		}
		cr_expect_not(d.kill_client, "%s", table2[i].name);
	}
}

Test(policy, never_acts_on_benign_faults_whatever_the_range)
{
	unsigned int eng, rng, acc;

	for (eng = 0; eng < TANDEM_ENGINE_COUNT; eng++)
		for (rng = 0; rng < TANDEM_RANGE_COUNT; rng++)
			for (acc = 0; acc < TANDEM_ACCESS_COUNT; acc++) {
				struct tandem_fault_record rec = {
					.address = ADDR, .instance_ptr = 0x1000, .engine = eng,
					.range = rng, .access = acc, .fatal = false,
				};
				struct tandem_decision d;

				cr_assert_eq(tandem_fault_decide(&rec, true, &d), 0);
				cr_assert_eq(d.action, TANDEM_ACT_IGNORE);
				cr_assert_not(d.kill_client);
			}
}

Test(policy, fatal_prefetch_is_treated_as_invalid_prefetch)
{
	struct tandem_fault_record rec = FATAL(SM, TANDEM_RANGE_NONE, 0, 0, 0);
	struct tandem_decision d;

	rec.access = TANDEM_ACCESS_PREFETCH;
	tandem_fault_decide(&rec, true, &d);
	cr_assert_eq(d.scenario, TANDEM_SCN_BENIGN_PREFETCH);
	cr_assert_eq(d.action, TANDEM_ACT_IGNORE);
}

Test(policy, internal_driver_ranges_are_left_alone)
{
	struct tandem_fault_record rec = FATAL(PB, TANDEM_RANGE_INTERNAL, 0, 0, 0);
	struct tandem_decision d;

	tandem_fault_decide(&rec, true, &d);
	cr_assert_eq(d.scenario, TANDEM_SCN_INTERNAL_RANGE);
	cr_assert_eq(d.action, TANDEM_ACT_STOCK);
	cr_assert_eq(d.stock_reason, TANDEM_STOCK_INTERNAL);
}

Test(policy, malformed_record_falls_back_to_stock)
{
	struct tandem_fault_record rec = FATAL(SM, TANDEM_RANGE_NONE, 0, 0, 0);
	struct tandem_decision d;

	rec.engine = 7;
	cr_assert_eq(tandem_fault_decide(&rec, true, &d), -EINVAL);
	cr_assert_eq(d.action, TANDEM_ACT_STOCK);
	cr_assert_not(d.kill_client);
	cr_assert_eq(tandem_fault_decide(NULL, true, &d), -EINVAL);
}

Test(client_policy, unattributable_or_protected_owner_means_stock)
{
	struct tandem_fault_record rec = FATAL(SM, TANDEM_RANGE_NONE, 0, 0, 0);
	struct tandem_decision d;

	tandem_fault_decide(&rec, true, &d);
	tandem_decision_bind_client(&d, 0);
	cr_assert_eq(d.action, TANDEM_ACT_STOCK);
	cr_assert_eq(d.stock_reason, TANDEM_STOCK_NO_CLIENT);

	tandem_fault_decide(&rec, true, &d);
	tandem_decision_bind_client(&d, 1);
	cr_assert_eq(d.stock_reason, TANDEM_STOCK_PROTECTED);

	tandem_fault_decide(&rec, true, &d);
	tandem_decision_bind_client(&d, 4242);
	cr_assert_eq(d.action, TANDEM_ACT_M1);
	cr_assert(d.kill_client);
}

Test(names, every_enum_value_has_a_name)
{
	unsigned int i;

	for (i = 0; i < TANDEM_SCN_COUNT; i++)
		cr_assert_str_neq(tandem_scenario_name(i), "?");
	for (i = 0; i < TANDEM_ACT_COUNT; i++)
		cr_assert_str_neq(tandem_action_name(i), "?");
	for (i = 0; i < TANDEM_STOCK_COUNT; i++)
		cr_assert_str_neq(tandem_stock_reason_name(i), "?");
	cr_assert_str_eq(tandem_scenario_name(TANDEM_SCN_COUNT), "?");
}
