#include <criterion/criterion.h>

#include "handle_table.h"

Test(handles, ids_resolve_to_their_objects)
{
    tdm_handle_table t;
    int a, b;

    tdm_handles_init(&t, 0x53);
    uint64_t ia = tdm_handles_add(&t, &a), ib = tdm_handles_add(&t, &b);
    cr_assert_neq(ia, 0);
    cr_assert_neq(ib, 0);
    cr_expect_neq(ia, ib);
    cr_expect_eq(tdm_handles_get(&t, ia), &a);
    cr_expect_eq(tdm_handles_get(&t, ib), &b);
    tdm_handles_release(&t);
}

Test(handles, stale_ids_are_refused_after_slot_reuse)
{
    tdm_handle_table t;
    int a, b;

    tdm_handles_init(&t, 0x45);
    uint64_t ia = tdm_handles_add(&t, &a);
    cr_assert_eq(tdm_handles_remove(&t, ia), &a);
    uint64_t ib = tdm_handles_add(&t, &b);
    cr_expect_eq((uint32_t)ia, (uint32_t)ib, "the slot is reused");
    cr_expect_null(tdm_handles_get(&t, ia), "but the old id no longer names it");
    cr_expect_null(tdm_handles_remove(&t, ia));
    cr_expect_eq(tdm_handles_get(&t, ib), &b);
    tdm_handles_release(&t);
}

Test(handles, forged_and_wrong_typed_ids_are_refused)
{
    tdm_handle_table streams, events;
    int a;

    tdm_handles_init(&streams, 0x53);
    tdm_handles_init(&events, 0x45);
    uint64_t is = tdm_handles_add(&streams, &a);
    cr_expect_null(tdm_handles_get(&events, is), "a stream id is not an event id");
    cr_expect_null(tdm_handles_get(&streams, 0));
    cr_expect_null(tdm_handles_get(&streams, is + 1));
    cr_expect_null(tdm_handles_get(&streams, is ^ (1ull << 40)));
    cr_expect_null(tdm_handles_get(&streams, UINT64_MAX));
    cr_expect_null(tdm_handles_get(&streams, (uintptr_t)&a), "a raw pointer is not an id");
    tdm_handles_release(&streams);
    tdm_handles_release(&events);
}

static void count(void *obj, uint64_t id, void *arg)
{
    (*(int *)arg)++;
}

Test(handles, iteration_and_pop_drain_everything)
{
    tdm_handle_table t;
    int objs[100], n = 0;

    tdm_handles_init(&t, 1);
    for (int i = 0; i < 100; i++)
        cr_assert_neq(tdm_handles_add(&t, &objs[i]), 0);
    tdm_handles_each(&t, count, &n);
    cr_expect_eq(n, 100);
    n = 0;
    while (tdm_handles_pop(&t, NULL))
        n++;
    cr_expect_eq(n, 100);
    cr_expect_eq(t.live, 0);
    tdm_handles_release(&t);
}

Test(handles, add_at_reproduces_another_tables_ids)
{
    tdm_handle_table a, b;
    int x[6];
    uint64_t ids[6];

    tdm_handles_init(&a, 0x53);
    tdm_handles_init(&b, 0x53);
    for (int i = 0; i < 6; i++)
        ids[i] = tdm_handles_add(&a, &x[i]);
    tdm_handles_remove(&a, ids[1]);
    tdm_handles_remove(&a, ids[4]);
    ids[1] = tdm_handles_add(&a, &x[1]);   /* reused slot, new generation */
    /* b gets a's live handles, out of order and with a hole. */
    int order[] = { 5, 0, 1, 3, 2 };
    for (int k = 0; k < 5; k++)
        cr_assert_eq(tdm_handles_add_at(&b, ids[order[k]], &x[order[k]]), 0);
    for (int k = 0; k < 5; k++)
        cr_assert_eq(tdm_handles_get(&b, ids[order[k]]), &x[order[k]]);
    cr_assert_null(tdm_handles_get(&b, ids[4]));
    cr_assert_eq(tdm_handles_add_at(&b, ids[0], &x[4]), -1, "a taken slot is refused");
    cr_assert_eq(tdm_handles_add_at(&b, ids[0] ^ (1ull << 56), &x[4]), -1, "a wrong tag is refused");
    /* The hole is handed out by a later add, and nothing is handed twice. */
    uint64_t n = tdm_handles_add(&b, &x[4]);
    for (int k = 0; k < 5; k++)
        cr_assert_neq((uint32_t)n, (uint32_t)ids[order[k]]);
    cr_assert_leq((uint32_t)n, 6u);
    cr_assert_eq(tdm_handles_get(&b, n), &x[4]);
    uint64_t m = tdm_handles_add(&b, &x[4]);
    cr_assert_eq((uint32_t)m, 7u);
    tdm_handles_release(&a);
    tdm_handles_release(&b);
}
