#include <criterion/criterion.h>

#include "range_map.h"

static tdm_range R(uint64_t addr, uint64_t size)
{
    return (tdm_range){ .addr = addr, .size = size, .mapped = size, .kind = TDM_RANGE_ALLOC };
}

Test(range_map, translates_logical_addresses)
{
    tdm_range_map m;
    tdm_range a = R(0x1000, 0x100), b = R(0x3000, 0x1000);
    int tag_a = 1, tag_b = 2;

    a.backing = &tag_a;
    b.backing = &tag_b;
    tdm_range_map_init(&m);
    cr_assert_eq(tdm_range_map_insert(&m, &b), 0);
    cr_assert_eq(tdm_range_map_insert(&m, &a), 0);
    cr_expect_eq(tdm_range_map_find(&m, 0x1000)->backing, &tag_a);
    cr_expect_eq(tdm_range_map_find(&m, 0x10ff)->backing, &tag_a);
    cr_expect_null(tdm_range_map_find(&m, 0x1100), "one past the end");
    cr_expect_null(tdm_range_map_find(&m, 0xfff));
    cr_expect_eq(tdm_range_map_find(&m, 0x3fff)->backing, &tag_b);
    tdm_range_map_release(&m);
}

Test(range_map, covers_checks_the_whole_span)
{
    tdm_range_map m;
    tdm_range a = R(0x1000, 0x100), b = R(0x1100, 0x100);

    tdm_range_map_init(&m);
    cr_assert_eq(tdm_range_map_insert(&m, &a), 0);
    cr_assert_eq(tdm_range_map_insert(&m, &b), 0);
    cr_expect(tdm_range_map_covers(&m, 0x1000, 0x100));
    cr_expect(tdm_range_map_covers(&m, 0x10f0, 0x10));
    cr_expect_not(tdm_range_map_covers(&m, 0x10f0, 0x11), "spans two allocations");
    cr_expect_not(tdm_range_map_covers(&m, 0x1000, UINT64_MAX), "length that wraps");
    cr_expect_not(tdm_range_map_covers(&m, UINT64_MAX, 2));
    cr_expect(tdm_range_map_covers(&m, 0x1050, 0));
    tdm_range_map_release(&m);
}

Test(range_map, refuses_overlaps_and_wraps)
{
    tdm_range_map m;
    tdm_range a = R(0x1000, 0x100), c;

    tdm_range_map_init(&m);
    cr_assert_eq(tdm_range_map_insert(&m, &a), 0);
    c = R(0x10ff, 0x10);
    cr_expect_neq(tdm_range_map_insert(&m, &c), 0);
    c = R(0xff0, 0x20);
    cr_expect_neq(tdm_range_map_insert(&m, &c), 0);
    c = R(UINT64_MAX - 4, 0x10);
    cr_expect_neq(tdm_range_map_insert(&m, &c), 0);
    c = R(0x5000, 0);
    cr_expect_neq(tdm_range_map_insert(&m, &c), 0);
    cr_expect_eq(m.n, 1);
    tdm_range_map_release(&m);
}

Test(range_map, remove_needs_the_exact_start)
{
    tdm_range_map m;
    tdm_range a = R(0x1000, 0x100), out;

    tdm_range_map_init(&m);
    cr_assert_eq(tdm_range_map_insert(&m, &a), 0);
    cr_expect_neq(tdm_range_map_remove(&m, 0x1001, &out), 0);
    cr_expect_eq(tdm_range_map_remove(&m, 0x1000, &out), 0);
    cr_expect_eq(out.size, 0x100);
    cr_expect_null(tdm_range_map_find(&m, 0x1000));
    cr_expect_neq(tdm_range_map_remove(&m, 0x1000, &out), 0);
    tdm_range_map_release(&m);
}

Test(range_map, thousands_of_ranges_stay_sorted)
{
    tdm_range_map m;

    tdm_range_map_init(&m);
    for (uint64_t i = 0; i < 4000; i++) {
        uint64_t k = (i * 7919) % 4000;  /* scrambled insertion order */
        tdm_range r = R(0x100000 + k * 0x1000, 0x800);
        cr_assert_eq(tdm_range_map_insert(&m, &r), 0);
    }
    for (size_t i = 1; i < m.n; i++)
        cr_assert_lt(m.v[i - 1].addr, m.v[i].addr);
    cr_expect_not_null(tdm_range_map_find(&m, 0x100000 + 1234 * 0x1000 + 0x7ff));
    cr_expect_null(tdm_range_map_find(&m, 0x100000 + 1234 * 0x1000 + 0x800));
    tdm_range_map_release(&m);
}
