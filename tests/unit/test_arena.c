#include <criterion/criterion.h>

#include "arena.h"

#define G (2ull << 20)
#define BASE 0x200000000000ull

Test(arena, refuses_misaligned_setup)
{
    tdm_arena *a = NULL;
    cr_expect_neq(tdm_arena_create(&a, BASE + 4096, 16 * G, G), 0);
    cr_expect_neq(tdm_arena_create(&a, BASE, 16 * G + 1, G), 0);
    cr_expect_neq(tdm_arena_create(&a, BASE, 16 * G, 3 * 4096), 0);
    cr_expect_neq(tdm_arena_create(&a, BASE, 0, G), 0);
}

Test(arena, rounds_to_granularity_and_is_first_fit)
{
    tdm_arena *a;
    uint64_t x, y, rx, ry;

    cr_assert_eq(tdm_arena_create(&a, BASE, 16 * G, G), 0);
    cr_assert_eq(tdm_arena_alloc(a, 1, &x, &rx), 0);
    cr_expect_eq(x, BASE);
    cr_expect_eq(rx, G);
    cr_assert_eq(tdm_arena_alloc(a, G + 1, &y, &ry), 0);
    cr_expect_eq(y, BASE + G);
    cr_expect_eq(ry, 2 * G);
    cr_expect_eq(tdm_arena_free_bytes(a), 13 * G);
    tdm_arena_destroy(a);
}

Test(arena, free_merges_and_space_is_reused)
{
    tdm_arena *a;
    uint64_t p[4], r, big;

    cr_assert_eq(tdm_arena_create(&a, BASE, 4 * G, G), 0);
    for (int i = 0; i < 4; i++)
        cr_assert_eq(tdm_arena_alloc(a, G, &p[i], &r), 0);
    cr_expect_neq(tdm_arena_alloc(a, G, &big, &r), 0, "arena is full");
    cr_assert_eq(tdm_arena_free(a, p[1], G), 0);
    cr_assert_eq(tdm_arena_free(a, p[2], G), 0);
    cr_assert_eq(tdm_arena_alloc(a, 2 * G, &big, &r), 0, "two freed neighbours merge");
    cr_expect_eq(big, p[1]);
    cr_assert_eq(tdm_arena_free(a, p[0], G), 0);
    cr_assert_eq(tdm_arena_free(a, p[3], G), 0);
    cr_assert_eq(tdm_arena_free(a, big, 2 * G), 0);
    cr_expect_eq(tdm_arena_free_bytes(a), 4 * G);
    cr_assert_eq(tdm_arena_alloc(a, 4 * G, &big, &r), 0, "everything merged back into one extent");
    tdm_arena_destroy(a);
}

Test(arena, rejects_double_free_and_foreign_ranges)
{
    tdm_arena *a;
    uint64_t x, r;

    cr_assert_eq(tdm_arena_create(&a, BASE, 8 * G, G), 0);
    cr_assert_eq(tdm_arena_alloc(a, G, &x, &r), 0);
    cr_expect_eq(tdm_arena_free(a, x, G), 0);
    cr_expect_neq(tdm_arena_free(a, x, G), 0, "double free");
    cr_expect_neq(tdm_arena_free(a, BASE - G, G), 0, "below the arena");
    cr_expect_neq(tdm_arena_free(a, BASE + 8 * G, G), 0, "above the arena");
    cr_expect_neq(tdm_arena_free(a, BASE + 7 * G, 2 * G), 0, "runs past the end");
    cr_expect_neq(tdm_arena_free(a, BASE + 1, G), 0, "misaligned");
    cr_expect_eq(tdm_arena_free_bytes(a), 8 * G);
    tdm_arena_destroy(a);
}

Test(arena, many_allocations_interleaved)
{
    tdm_arena *a;
    uint64_t p[256], r;

    cr_assert_eq(tdm_arena_create(&a, BASE, 256 * G, G), 0);
    for (int i = 0; i < 256; i++)
        cr_assert_eq(tdm_arena_alloc(a, G, &p[i], &r), 0);
    for (int i = 0; i < 256; i += 2)
        cr_assert_eq(tdm_arena_free(a, p[i], G), 0);
    cr_expect_eq(tdm_arena_free_bytes(a), 128 * G);
    for (int i = 1; i < 256; i += 2)
        cr_assert_eq(tdm_arena_free(a, p[i], G), 0);
    cr_assert_eq(tdm_arena_alloc(a, 256 * G, &p[0], &r), 0);
    cr_expect_eq(p[0], BASE);
    tdm_arena_destroy(a);
}

Test(arena, claim_takes_exact_ranges_and_alloc_avoids_them)
{
    const uint64_t g = 1 << 20, base = 64 * g;
    tdm_arena *a = NULL;
    uint64_t addr = 0, rounded = 0;

    cr_assert_eq(tdm_arena_create(&a, base, 16 * g, g), 0);
    cr_assert_eq(tdm_arena_claim(a, base + 4 * g, 2 * g), 0);     /* middle: splits */
    cr_assert_eq(tdm_arena_claim(a, base + 5 * g, g), -1);        /* already taken */
    cr_assert_eq(tdm_arena_claim(a, base + 15 * g, 2 * g), -1);   /* past the end */
    cr_assert_eq(tdm_arena_claim(a, base + g / 2, g), -1);        /* misaligned */
    cr_assert_eq(tdm_arena_claim(a, base, g), 0);                 /* head of an extent */
    cr_assert_eq(tdm_arena_free_bytes(a), 13 * g);
    cr_assert_eq(tdm_arena_alloc(a, 3 * g, &addr, &rounded), 0);
    cr_assert_eq(addr, base + g, "first fit lands between the claims");
    cr_assert_eq(tdm_arena_alloc(a, 2 * g, &addr, &rounded), 0);
    cr_assert_eq(addr, base + 6 * g, "never inside a claimed range");
    cr_assert_eq(tdm_arena_free(a, base + 4 * g, 2 * g), 0);      /* claims free like allocations */
    cr_assert_eq(tdm_arena_free_bytes(a), 10 * g);
    tdm_arena_destroy(a);
}
