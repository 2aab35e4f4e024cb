// SPDX-License-Identifier: MIT
/* Dummy pool, client lookup table and decision ring, in user space. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include "dummy_pool.h"
#include "client_table.h"
#include "decision_log.h"

struct fake_mem {
	int allocs, frees, fail_after;
};

static void *fake_alloc(void *ctx, u64 size)
{
	struct fake_mem *m = ctx;

	if (m->fail_after >= 0 && m->allocs >= m->fail_after)
		return NULL;
	m->allocs++;
	return calloc(1, size);
}

static void fake_free(void *ctx, void *page, u64 size)
{
	struct fake_mem *m = ctx;

	(void)size;
	m->frees++;
	free(page);
}

static const struct tandem_pool_ops fake_ops = { fake_alloc, fake_free };

Test(pool, pages_are_zeroed_shared_and_counted)
{
	struct fake_mem m = { .fail_after = -1 };
	struct tandem_pool p;
	void *a, *b, *big;

	cr_assert_eq(tandem_pool_init(&p, &fake_ops, &m, 1, 1), 0);
	cr_assert_eq(m.allocs, 2);
	a = tandem_pool_get(&p, TANDEM_POOL_4K);
	b = tandem_pool_get(&p, TANDEM_POOL_4K);
	cr_assert_not_null(a);
	cr_assert_eq(a, b, "one 4K slot: every fault shares the page");
	cr_assert_eq(tandem_pool_nonzero_bytes(a, TANDEM_SZ_4K), 0);
	big = tandem_pool_get(&p, TANDEM_POOL_2M);
	cr_assert_not_null(big);
	cr_assert_neq(big, a);
	cr_assert_eq(tandem_pool_nonzero_bytes(big, TANDEM_SZ_2M), 0);
	cr_assert(tandem_pool_owns(&p, a));
	cr_assert(tandem_pool_owns(&p, big));
	cr_assert_eq(p.stats.installs[TANDEM_POOL_4K], 2);
	cr_assert_eq(p.stats.installs[TANDEM_POOL_2M], 1);
	cr_assert_eq(p.slot[TANDEM_POOL_4K][0].refs, 2);
	cr_assert_eq(tandem_pool_put(&p, TANDEM_POOL_4K, a), 0);
	cr_assert_eq(tandem_pool_put(&p, TANDEM_POOL_4K, b), 0);
	cr_assert_eq(tandem_pool_put(&p, TANDEM_POOL_4K, a), -EINVAL, "refs underflow");
	cr_assert_eq(tandem_pool_put(&p, TANDEM_POOL_2M, a), -ENOENT);
	tandem_pool_destroy(&p);
	cr_assert_eq(m.frees, 2);
}

Test(pool, dirty_page_is_scrubbed_before_reuse)
{
	struct fake_mem m = { .fail_after = -1 };
	struct tandem_pool p;
	unsigned char *a;

	cr_assert_eq(tandem_pool_init(&p, &fake_ops, &m, 1, 1), 0);
	a = tandem_pool_get(&p, TANDEM_POOL_4K);
	a[100] = 0x42; /* the killed client wrote through the dummy mapping */
	cr_assert_eq(tandem_pool_nonzero_bytes(a, TANDEM_SZ_4K), 1);
	cr_assert_eq(tandem_pool_get(&p, TANDEM_POOL_4K), a);
	cr_assert_eq(tandem_pool_nonzero_bytes(a, TANDEM_SZ_4K), 0);
	cr_assert_eq(p.stats.scrubs[TANDEM_POOL_4K], 1);
	tandem_pool_destroy(&p);
}

Test(pool, least_used_slot_is_preferred)
{
	struct fake_mem m = { .fail_after = -1 };
	struct tandem_pool p;
	void *a, *b, *c;

	cr_assert_eq(tandem_pool_init(&p, &fake_ops, &m, 2, 1), 0);
	a = tandem_pool_get(&p, TANDEM_POOL_4K);
	b = tandem_pool_get(&p, TANDEM_POOL_4K);
	cr_assert_neq(a, b);
	tandem_pool_put(&p, TANDEM_POOL_4K, b);
	c = tandem_pool_get(&p, TANDEM_POOL_4K);
	cr_assert_eq(c, b);
	tandem_pool_destroy(&p);
}

Test(pool, init_failure_leaves_nothing_allocated)
{
	struct fake_mem m = { .fail_after = 1 };
	struct tandem_pool p;

	cr_assert_eq(tandem_pool_init(&p, &fake_ops, &m, 1, 1), -ENOMEM);
	cr_assert_eq(m.allocs, m.frees);
	cr_assert_null(tandem_pool_get(&p, TANDEM_POOL_4K));
	cr_assert_eq(p.stats.exhausted[TANDEM_POOL_4K], 1);
	m.fail_after = -1;
	cr_assert_eq(tandem_pool_init(&p, &fake_ops, &m, 0, 1), -EINVAL);
	cr_assert_eq(tandem_pool_init(&p, &fake_ops, &m, 1, TANDEM_POOL_MAX_SLOTS + 1), -EINVAL);
	cr_assert_eq(m.allocs, m.frees);
}

Test(pool, size_classes)
{
	cr_assert_eq(tandem_pool_class_of(TANDEM_SZ_4K), TANDEM_POOL_4K);
	cr_assert_eq(tandem_pool_class_of(TANDEM_SZ_2M), TANDEM_POOL_2M);
	cr_assert_eq(tandem_pool_class_of(65536), -EINVAL);
}

Test(clients, exact_instance_block_match_only)
{
	struct tandem_client_table t;

	tandem_clients_init(&t);
	cr_assert_eq(tandem_clients_add(&t, 0x10000, 100), 0);
	cr_assert_eq(tandem_clients_add(&t, 0x20000, 200), 0);
	cr_assert_eq(tandem_clients_add(&t, 0x21000, 100), 0);
	cr_assert_eq(tandem_clients_lookup(&t, 0x10000), 100);
	cr_assert_eq(tandem_clients_lookup(&t, 0x10abc), 100, "low bits are not identity");
	cr_assert_eq(tandem_clients_lookup(&t, 0x20000), 200);
	cr_assert_eq(tandem_clients_lookup(&t, 0x11000), 0, "neighbour block is not a match");
	cr_assert_eq(tandem_clients_lookup(&t, 0), 0);
	cr_assert_eq(tandem_clients_add(&t, 0x20000, 300), -EEXIST, "one owner per channel");
	cr_assert_eq(tandem_clients_add(&t, 0x20000, 200), 0, "idempotent");
	cr_assert_eq(tandem_clients_add(&t, 0x30000, 0), -EINVAL);
	cr_assert_eq(tandem_clients_add(&t, 0x0, 5), -EINVAL);
	cr_assert_eq(tandem_clients_remove_inst(&t, 0x21abc), 0);
	cr_assert_eq(tandem_clients_lookup(&t, 0x21000), 0);
	cr_assert_eq(tandem_clients_remove_inst(&t, 0x21000), -ENOENT);
	cr_assert_eq(tandem_clients_lookup(&t, 0x20000), 200, "others untouched");
	cr_assert_eq(tandem_clients_remove_pid(&t, 100), 1);
	cr_assert_eq(tandem_clients_lookup(&t, 0x10000), 0);
	cr_assert_eq(tandem_clients_lookup(&t, 0x20000), 200);
}

Test(clients, table_full)
{
	struct tandem_client_table t;
	u64 i;

	tandem_clients_init(&t);
	for (i = 0; i < TANDEM_CLIENT_MAX; i++)
		cr_assert_eq(tandem_clients_add(&t, (i + 1) << 12, (s32)(i + 2)), 0);
	cr_assert_eq(tandem_clients_add(&t, 0xfff000, 9999), -ENOSPC);
}

Test(log, ring_keeps_newest_and_counts_everything)
{
	static struct tandem_log log;
	u64 i;

	tandem_log_init(&log);
	cr_assert_eq(tandem_log_count(&log), 0);
	cr_assert_null(tandem_log_at(&log, 0));
	for (i = 0; i < TANDEM_RING_SIZE + 10; i++) {
		struct tandem_log_entry e = {
			.address = i, .action = (u8)(i % 2 ? TANDEM_ACT_M1 : TANDEM_ACT_STOCK),
			.scenario = TANDEM_SCN_1_SM_OOB, .stock_reason = TANDEM_STOCK_NO_CLIENT,
			.latency_ns = i * 10,
		};
		cr_assert_eq(tandem_log_add(&log, &e), i + 1);
	}
	cr_assert_eq(tandem_log_count(&log), TANDEM_RING_SIZE);
	cr_assert_eq(tandem_log_at(&log, 0)->address, 10, "oldest kept");
	cr_assert_eq(tandem_log_at(&log, TANDEM_RING_SIZE - 1)->address, TANDEM_RING_SIZE + 9);
	cr_assert_eq(tandem_log_at(&log, TANDEM_RING_SIZE - 1)->seq, TANDEM_RING_SIZE + 10);
	cr_assert_eq(log.c.faults_seen, TANDEM_RING_SIZE + 10);
	cr_assert_eq(log.c.actions[TANDEM_ACT_M1], (TANDEM_RING_SIZE + 10) / 2);
	cr_assert_eq(log.c.stock_reasons[TANDEM_STOCK_NO_CLIENT], (TANDEM_RING_SIZE + 10) / 2,
		     "stock reasons only counted for stock decisions");
	cr_assert_eq(log.c.latency_max_ns[TANDEM_ACT_M1], (TANDEM_RING_SIZE + 9) * 10);
}
