/* common/grow.c: the one growth rule of every appended array.  One case per
 * row: the capacity it starts from, what is needed, what it must become. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "grow.h"

typedef struct grow_case {
    size_t cap, need, first, want_cap;
    int want_rc;
} grow_case;

ParameterizedTestParameters(grow, row)
{
    static grow_case rows[] = {
        { 0, 1, 16, 16, 0 },          /* empty: starts at `first` */
        { 0, 0, 16, 0, 0 },           /* nothing needed: nothing allocated */
        { 16, 16, 16, 16, 0 },        /* fits: unchanged */
        { 16, 17, 16, 32, 0 },        /* one more: doubles */
        { 16, 100, 16, 128, 0 },      /* far more: doubles until it fits */
        { 0, 70000, 1 << 16, 1 << 17, 0 },   /* the journal's byte buffer */
        { 0, 3, 0, 4, 0 },            /* no `first`: from 1 */
        { 8, SIZE_MAX, 8, 8, -ENOMEM },      /* past what doubling can reach: refused, unchanged */
    };
    return cr_make_param_array(grow_case, rows, sizeof(rows) / sizeof(rows[0]));
}

ParameterizedTest(grow_case *c, grow, row)
{
    uint32_t *v = c->cap ? calloc(c->cap, sizeof(*v)) : NULL;
    uint32_t *before = v;
    size_t cap = c->cap;

    cr_assert(c->cap == 0 || v);
    cr_assert_eq(tdm_grow(&v, &cap, c->need, sizeof(*v), c->first), c->want_rc, "cap %zu need %zu", c->cap, c->need);
    cr_assert_eq(cap, c->want_cap, "cap %zu need %zu: capacity %zu", c->cap, c->need, cap);
    if (c->want_rc)
        cr_assert_eq(v, before, "a refused growth keeps the array");
    else if (c->need)
        v[c->need - 1] = 7;           /* the room is really there (ASan checks) */
    free(v);
}

/* Elements survive the move. */
Test(grow, keeps_the_elements)
{
    uint64_t *v = NULL;
    size_t cap = 0;

    for (uint64_t i = 0; i < 1000; i++) {
        cr_assert_eq(tdm_grow(&v, &cap, i + 1, sizeof(*v), 4), 0);
        v[i] = i * 3;
    }
    for (uint64_t i = 0; i < 1000; i++)
        cr_assert_eq(v[i], i * 3);
    cr_assert_eq(cap, 1024);
    free(v);
}
