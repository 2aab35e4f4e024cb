/* The reservation table (server/control/reservations.c): bounded in count and in age, each
 * reservation taken once.  Rows of operations at given times, each with the result it must get;
 * the table's clock is the test's. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "reservations.h"

typedef struct step {
    char op;                     /* 'p' put, 't' take, 'c' count */
    uint64_t at_ms;              /* the clock when it runs */
    const char *key;
    int want;                    /* put/take: its return; count: the count */
    int sm;                      /* put: the share stored; take: the share it must find */
} step;

static uint64_t test_clock(void *ctx)
{
    return *(uint64_t *)ctx;
}

static void run_steps(const char *name, size_t cap, uint64_t age_ms, const step *steps, size_t n)
{
    tdm_reservations t;
    uint64_t now = 0;

    cr_assert_eq(tdm_reservations_init(&t, cap, age_ms), 0);
    tdm_reservations_set_clock(&t, test_clock, &now);
    for (size_t i = 0; i < n; i++) {
        const step *s = &steps[i];
        now = s->at_ms;
        if (s->op == 'p') {
            tdm_reservation r = { .sm = s->sm, .memory_mib = 64 };
            snprintf(r.placement, sizeof(r.placement), "%s", s->key);
            snprintf(r.tenant, sizeof(r.tenant), "alice");
            cr_expect_eq(tdm_reservations_put(&t, &r), s->want, "%s, step %zu: put %s", name, i, s->key);
        } else if (s->op == 't') {
            tdm_reservation out = { 0 };
            int rc = tdm_reservations_take(&t, s->key, &out);
            cr_expect_eq(rc, s->want, "%s, step %zu: take %s", name, i, s->key);
            if (rc == 0) {
                cr_expect_eq(out.sm, s->sm, "%s, step %zu: take %s got sm %d", name, i, s->key, out.sm);
                cr_expect_str_eq(out.placement, s->key);
                cr_expect_str_eq(out.tenant, "alice");
            }
        } else {
            cr_expect_eq((int)tdm_reservations_count(&t), s->want, "%s, step %zu: count", name, i);
        }
    }
    tdm_reservations_destroy(&t);
}

#define RUN(name, cap, age, ...)                                                        \
    do {                                                                                \
        static const step steps_[] = { __VA_ARGS__ };                                  \
        run_steps(name, cap, age, steps_, sizeof(steps_) / sizeof(steps_[0]));          \
    } while (0)

Test(reservations, a_reservation_is_taken_once)
{
    RUN("take once", 4, 1000,
        { 'p', 0, "a", 0, 8 }, { 't', 10, "a", 0, 8 }, { 't', 20, "a", -ENOENT, 0 }, { 'c', 30, NULL, 0, 0 });
}

Test(reservations, an_unknown_key_takes_nothing)
{
    RUN("unknown", 4, 1000, { 'p', 0, "a", 0, 8 }, { 't', 1, "b", -ENOENT, 0 }, { 'c', 2, NULL, 1, 0 });
}

Test(reservations, the_count_is_bounded)
{
    RUN("bound", 2, 1000,
        { 'p', 0, "a", 0, 1 }, { 'p', 1, "b", 0, 2 }, { 'p', 2, "c", -ENOSPC, 3 }, { 'c', 3, NULL, 2, 0 },
        /* a taken one frees its slot */
        { 't', 4, "a", 0, 1 }, { 'p', 5, "c", 0, 3 }, { 't', 6, "c", 0, 3 });
}

Test(reservations, the_same_key_replaces_even_when_full)
{
    RUN("replace", 2, 1000,
        { 'p', 0, "a", 0, 1 }, { 'p', 1, "b", 0, 2 }, { 'p', 2, "a", 0, 9 }, { 'c', 3, NULL, 2, 0 },
        { 't', 4, "a", 0, 9 });
}

Test(reservations, an_old_reservation_expires)
{
    RUN("expiry", 4, 1000,
        { 'p', 0, "a", 0, 1 }, { 'c', 999, NULL, 1, 0 }, { 't', 1000, "a", -ENOENT, 0 }, { 'c', 1001, NULL, 0, 0 });
}

Test(reservations, a_replaced_reservation_ages_from_its_replacement)
{
    RUN("re-put", 4, 1000, { 'p', 0, "a", 0, 1 }, { 'p', 800, "a", 0, 2 }, { 't', 1500, "a", 0, 2 });
}

Test(reservations, expired_slots_make_room_for_new_ones)
{
    RUN("room", 1, 1000, { 'p', 0, "a", 0, 1 }, { 'p', 500, "b", -ENOSPC, 2 }, { 'p', 1000, "b", 0, 2 },
        { 't', 1001, "b", 0, 2 });
}
