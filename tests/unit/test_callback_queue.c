/* The due/done state machine of host callbacks (server/callback_queue.h),
 * table-driven: each case is a sequence of steps on one queue, each step
 * with the outcome it must have. */
#include <criterion/criterion.h>
#include <driver_types.h>

#include "callback_queue.h"

typedef enum { ADD, DUE, TAKE, DONE, REMOVE } op_kind;

typedef struct step {
    op_kind op;
    uint64_t seq;        /* DUE, DONE, REMOVE: the instance; ADD: the seq it must get */
    int want;            /* DUE: 0 or -1; DONE: 0 or a cudaError; TAKE: how many */
    uint64_t first;      /* TAKE: the first instance taken (0: none) */
} step;

typedef struct qcase {
    const char *name;
    step steps[12];
    size_t nsteps;
    size_t left;         /* instances still in the queue at the end */
} qcase;

#define N(...) .steps = { __VA_ARGS__ }, .nsteps = sizeof((step[]){ __VA_ARGS__ }) / sizeof(step)

static const qcase cases[] = {
    { "the whole path", N({ ADD, 1, 0, 0 }, { DUE, 1, 0, 0 }, { TAKE, 0, 1, 1 }, { DONE, 1, 0, 0 }), 0 },
    { "done before due is refused", N({ ADD, 1, 0, 0 }, { DONE, 1, cudaErrorInvalidValue, 0 }), 1 },
    { "done before taken is refused", N({ ADD, 1, 0, 0 }, { DUE, 1, 0, 0 }, { DONE, 1, cudaErrorInvalidValue, 0 }), 1 },
    { "done twice is refused", N({ ADD, 1, 0, 0 }, { DUE, 1, 0, 0 }, { TAKE, 0, 1, 1 }, { DONE, 1, 0, 0 },
                                 { DONE, 1, cudaErrorInvalidValue, 0 }), 0 },
    { "done for an unknown instance is refused", N({ ADD, 1, 0, 0 }, { DONE, 7, cudaErrorInvalidValue, 0 }), 1 },
    { "due twice is refused", N({ ADD, 1, 0, 0 }, { DUE, 1, 0, 0 }, { DUE, 1, -1, 0 }), 1 },
    { "due for an unknown instance is ignored", N({ DUE, 3, -1, 0 }, { TAKE, 0, 0, 0 }), 0 },
    { "a taken instance is handed out once", N({ ADD, 1, 0, 0 }, { DUE, 1, 0, 0 }, { TAKE, 0, 1, 1 }, { TAKE, 0, 0, 0 }), 1 },
    { "only due instances are taken", N({ ADD, 1, 0, 0 }, { ADD, 2, 0, 0 }, { DUE, 2, 0, 0 }, { TAKE, 0, 1, 2 }), 2 },
    { "oldest due first", N({ ADD, 1, 0, 0 }, { ADD, 2, 0, 0 }, { ADD, 3, 0, 0 }, { DUE, 3, 0, 0 }, { DUE, 1, 0, 0 }, { TAKE, 0, 2, 1 }), 3 },
    { "a removed instance is unknown", N({ ADD, 1, 0, 0 }, { REMOVE, 1, 0, 0 }, { DUE, 1, -1, 0 }, { DONE, 1, cudaErrorInvalidValue, 0 }),
      0 },
    { "numbers are not reused", N({ ADD, 1, 0, 0 }, { DUE, 1, 0, 0 }, { TAKE, 0, 1, 1 }, { DONE, 1, 0, 0 }, { ADD, 2, 0, 0 },
                                  { DONE, 1, cudaErrorInvalidValue, 0 }), 1 },
};

Test(callback_queue, transitions_follow_the_table)
{
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        const qcase *k = &cases[c];
        tdm_cbq q;

        tdm_cbq_init(&q);
        for (size_t i = 0; i < k->nsteps; i++) {
            const step *s = &k->steps[i];
            uint64_t seq = 0;
            void *hold = NULL;
            tdm_cb_inst out[8];
            size_t n;

            switch (s->op) {
            case ADD:
                cr_assert_eq(tdm_cbq_add(&q, 100 + s->seq, &seq), 0, "%s: step %zu", k->name, i);
                cr_expect_eq(seq, s->seq, "%s: step %zu numbered %llu", k->name, i, (unsigned long long)seq);
                tdm_cbq_find(&q, seq)->hold = (void *)(uintptr_t)(0x1000 + seq);
                break;
            case DUE:
                cr_expect_eq(tdm_cbq_due(&q, s->seq, 700), s->want, "%s: step %zu", k->name, i);
                break;
            case TAKE:
                n = tdm_cbq_take_due(&q, out, 8);
                cr_expect_eq(n, (size_t)s->want, "%s: step %zu took %zu", k->name, i, n);
                if (n && s->first) {
                    cr_expect_eq(out[0].seq, s->first, "%s: step %zu", k->name, i);
                    cr_expect_eq(out[0].fn, 100 + s->first, "%s: the guest's key comes back", k->name);
                    cr_expect_eq(out[0].status, 700, "%s: the stream's error comes with it", k->name);
                }
                break;
            case DONE:
                cr_expect_eq(tdm_cbq_done(&q, s->seq, &hold), s->want, "%s: step %zu", k->name, i);
                if (!s->want)
                    cr_expect_eq(hold, (void *)(uintptr_t)(0x1000 + s->seq), "%s: done gives the hold", k->name);
                break;
            case REMOVE:
                tdm_cbq_remove(&q, s->seq);
                break;
            }
        }
        cr_expect_eq(q.n, k->left, "%s: %zu left", k->name, q.n);
        tdm_cbq_release(&q);
    }
}

Test(callback_queue, is_bounded)
{
    tdm_cbq q;
    uint64_t seq;

    tdm_cbq_init(&q);
    for (int i = 0; i < TDM_CBQ_MAX; i++)
        cr_assert_eq(tdm_cbq_add(&q, 1, &seq), 0);
    cr_expect_eq(tdm_cbq_add(&q, 1, &seq), cudaErrorLaunchOutOfResources);
    tdm_cbq_release(&q);
}
