/* The marker table's rules (server/resilience/shadow_markers.c), one case
 * per row: which slot a new shadow takes and when a slot is reused, when a
 * write must copy its allocation first (the `taken` epoch), and which
 * shadows a restore at epoch E puts back, from which copy. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include <stdlib.h>
#include <string.h>

#include "shadow.h"

/* ---- slot allocation and reuse ---- */

enum { TAKE, GIVE, IN_USE, END };

typedef struct slot_step {
    int op;
    uint32_t slot;      /* GIVE, IN_USE: the slot; TAKE: the slot expected */
    int rc;             /* TAKE: the return expected (-1: the table is full) */
} slot_step;

typedef struct slot_case {
    const char *what;
    uint32_t nslots;
    slot_step steps[10];
} slot_case;

static const slot_case slot_cases[] = {
    { "a fresh table hands out slots in order", 8,
      { { TAKE, 0, 0 }, { TAKE, 1, 0 }, { TAKE, 2, 0 }, { END, 0, 0 } } },
    { "a slot given back is reused before a new one", 8,
      { { TAKE, 0, 0 }, { TAKE, 1, 0 }, { GIVE, 0, 0 }, { TAKE, 0, 0 }, { TAKE, 2, 0 }, { END, 0, 0 } } },
    { "the slot given back last is reused first", 8,
      { { TAKE, 0, 0 }, { TAKE, 1, 0 }, { TAKE, 2, 0 }, { GIVE, 0, 0 }, { GIVE, 2, 0 }, { TAKE, 2, 0 },
        { TAKE, 0, 0 }, { TAKE, 3, 0 }, { END, 0, 0 } } },
    { "a full table refuses", 2, { { TAKE, 0, 0 }, { TAKE, 1, 0 }, { TAKE, 0, -1 }, { END, 0, 0 } } },
    { "a full table reuses a slot given back", 2,
      { { TAKE, 0, 0 }, { TAKE, 1, 0 }, { GIVE, 1, 0 }, { TAKE, 1, 0 }, { TAKE, 0, -1 }, { END, 0, 0 } } },
    /* Regression: a standby that takes a session over must not hand out a
     * slot an imported shadow (the active's) already uses. */
    { "slots a standby imported are never handed out again", 16,
      { { IN_USE, 5, 0 }, { TAKE, 6, 0 }, { IN_USE, 2, 0 }, { TAKE, 7, 0 }, { END, 0, 0 } } },
    { "an empty table refuses at once", 0, { { TAKE, 0, -1 }, { END, 0, 0 } } },
};

ParameterizedTestParameters(shadow_markers, slots)
{
    return cr_make_param_array(slot_case, slot_cases, sizeof(slot_cases) / sizeof(slot_cases[0]));
}

ParameterizedTest(const slot_case *c, shadow_markers, slots)
{
    tdm_shadow_markers mk;

    memset(&mk, 0, sizeof(mk));
    mk.nslots = c->nslots;
    for (int i = 0; c->steps[i].op != END; i++) {
        const slot_step *st = &c->steps[i];
        uint32_t got = UINT32_MAX;
        switch (st->op) {
        case TAKE:
            cr_assert_eq(tdm_markers_slot_take(&mk, &got), st->rc, "%s: step %d", c->what, i);
            if (st->rc == 0)
                cr_assert_eq(got, st->slot, "%s: step %d took slot %u", c->what, i, got);
            break;
        case GIVE:
            tdm_markers_slot_give(&mk, st->slot);
            break;
        case IN_USE:
            tdm_markers_slot_in_use(&mk, st->slot);
            break;
        }
    }
    free(mk.free_slots);
}

/* ---- the `taken` epoch: when a write copies first ---- */

typedef struct due_case {
    const char *what;
    uint64_t taken;     /* the shadow's bookkeeping before the write */
    uint64_t epoch;     /* the session's acknowledged epoch at the write */
    bool due;
} due_case;

static const due_case due_cases[] = {
    { "never copied: the first write copies", 0, 0, true },
    { "never copied, in a later epoch", 0, 7, true },
    { "copied in this epoch: later writes do not copy again", 8, 7, false },
    { "copied in the previous epoch: the new epoch copies", 7, 7, true },
    /* Regression: epoch 0's copy must be told from "never copied". */
    { "copied in epoch 0 is not 'never copied'", 1, 0, false },
};

ParameterizedTestParameters(shadow_markers, taken)
{
    return cr_make_param_array(due_case, due_cases, sizeof(due_cases) / sizeof(due_cases[0]));
}

ParameterizedTest(const due_case *c, shadow_markers, taken)
{
    tdm_shadow sh = { .taken = c->taken };

    cr_assert_eq(tdm_shadow_due(&sh, c->epoch), c->due, "%s", c->what);
    if (c->due) {
        cr_assert_eq(tdm_shadow_mark(&sh, c->epoch), c->epoch + 1, "%s: the marker written", c->what);
        cr_assert_not(tdm_shadow_due(&sh, c->epoch), "%s: copied once per epoch", c->what);
    }
}

/* ---- which shadows a restore at epoch E puts back ---- */

#define NMARKS 8

typedef struct restore_case {
    const char *what;
    bool global;
    uint32_t slot, slot_odd;
    uint64_t marks[NMARKS];   /* the marker table as the standby reads it */
    uint32_t nmarks;
    uint64_t epoch;
    bool restored;
    bool from_odd;            /* restored from the second copy (addr + mapped) */
} restore_case;

static const restore_case restore_cases[] = {
    { "an allocation written after E comes back", false, 2, 0, { [2] = 6 }, NMARKS, 5, true, false },
    { "an allocation last copied before E stays: it was not written since", false, 2, 0, { [2] = 5 }, NMARKS, 5,
      false, false },
    { "an allocation never copied stays", false, 2, 0, { 0 }, NMARKS, 5, false, false },
    /* Regression: the marker is written after the copy in stream order;
     * one never written means the write never ran either. */
    { "a marker that never got written restores nothing", false, 0, 0, { 0 }, NMARKS, 0, false, false },
    { "an allocation's unused odd slot is never read", false, 2, 3, { [3] = 6 }, NMARKS, 5, false, false },
    { "a variable's even copy names E", true, 4, 5, { [4] = 6, [5] = 5 }, NMARKS, 5, true, false },
    { "a variable's odd copy names E", true, 4, 5, { [4] = 5, [5] = 6 }, NMARKS, 5, true, true },
    { "a variable whose copies are both older stays", true, 4, 5, { [4] = 4, [5] = 5 }, NMARKS, 5, false, false },
    { "a slot past the table read is not restored", false, 7, 0, { [7] = 6 }, 4, 5, false, false },
};

ParameterizedTestParameters(shadow_markers, restore)
{
    return cr_make_param_array(restore_case, restore_cases, sizeof(restore_cases) / sizeof(restore_cases[0]));
}

ParameterizedTest(const restore_case *c, shadow_markers, restore)
{
    tdm_shadow sh = { .addr = 0x7000, .mapped = 0x100, .slot = c->slot, .slot_odd = c->slot_odd,
                      .global = c->global };
    uint64_t from = 0;

    cr_assert_eq(tdm_shadow_restore_from(&sh, c->marks, c->nmarks, c->epoch, &from), c->restored, "%s", c->what);
    if (c->restored)
        cr_assert_eq(from, c->from_odd ? sh.addr + sh.mapped : sh.addr, "%s: restored from %#llx", c->what,
                     (unsigned long long)from);
}

/* The restore reads the marker table up to the highest slot in use: a
 * variable's odd copy counts, an allocation's unused odd slot does not. */
Test(shadow_markers, top_slot_counts_what_is_used)
{
    tdm_shadow alloc = { .slot = 3, .slot_odd = 9 }, var = { .slot = 3, .slot_odd = 9, .global = true };

    cr_expect_eq(tdm_shadow_top_slot(&alloc), 4);
    cr_expect_eq(tdm_shadow_top_slot(&var), 10);
}
