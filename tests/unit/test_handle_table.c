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
