/* A placement's lifecycle (orchestrator/core/lifecycle.c): every (state, event) cell of the table,
 * and the events a report and the timer make.  A placement never released fills its GPU, its VM's
 * budget and the placement table; one released too early loses a running session's share. */
#include <criterion/criterion.h>

#include <stdio.h>

#include "orch_lifecycle.h"

typedef struct row {
    orch_life from;
    orch_life_event event;
    orch_life to;
    bool released;
} row;

static const row rows[] = {
    /* reserved: live at its first listing, released only by the bound while its node reports */
    { ORCH_LIFE_RESERVED, ORCH_LIFE_LISTED, ORCH_LIFE_LIVE, false },
    { ORCH_LIFE_RESERVED, ORCH_LIFE_GONE, ORCH_LIFE_RESERVED, false },
    { ORCH_LIFE_RESERVED, ORCH_LIFE_UNSURE, ORCH_LIFE_RESERVED, false },
    { ORCH_LIFE_RESERVED, ORCH_LIFE_EXPIRED, ORCH_LIFE_RELEASED, true },
    { ORCH_LIFE_RESERVED, ORCH_LIFE_EXPIRED_LOST, ORCH_LIFE_RESERVED, false },
    /* guards the H100 run of 2026-11-25: a guest that ended between two reports held its SMs
     * for the whole reservation bound; its server's word now releases it at once */
    { ORCH_LIFE_RESERVED, ORCH_LIFE_ENDED, ORCH_LIFE_RELEASED, true },
    /* live: released when a full report no longer lists its session, by nothing else */
    { ORCH_LIFE_LIVE, ORCH_LIFE_LISTED, ORCH_LIFE_LIVE, false },
    { ORCH_LIFE_LIVE, ORCH_LIFE_GONE, ORCH_LIFE_RELEASED, true },
    { ORCH_LIFE_LIVE, ORCH_LIFE_UNSURE, ORCH_LIFE_LIVE, false },
    { ORCH_LIFE_LIVE, ORCH_LIFE_EXPIRED, ORCH_LIFE_LIVE, false },
    { ORCH_LIFE_LIVE, ORCH_LIFE_EXPIRED_LOST, ORCH_LIFE_LIVE, false },
    { ORCH_LIFE_LIVE, ORCH_LIFE_ENDED, ORCH_LIFE_RELEASED, true },
    /* released: final, and never released twice (one decision, one store delete) */
    { ORCH_LIFE_RELEASED, ORCH_LIFE_LISTED, ORCH_LIFE_RELEASED, false },
    { ORCH_LIFE_RELEASED, ORCH_LIFE_GONE, ORCH_LIFE_RELEASED, false },
    { ORCH_LIFE_RELEASED, ORCH_LIFE_UNSURE, ORCH_LIFE_RELEASED, false },
    { ORCH_LIFE_RELEASED, ORCH_LIFE_EXPIRED, ORCH_LIFE_RELEASED, false },
    { ORCH_LIFE_RELEASED, ORCH_LIFE_EXPIRED_LOST, ORCH_LIFE_RELEASED, false },
    { ORCH_LIFE_RELEASED, ORCH_LIFE_ENDED, ORCH_LIFE_RELEASED, false },
};

Test(orch_lifecycle, every_state_event_cell_gives_its_state_and_release)
{
    int seen[3][ORCH_LIFE_EVENT_COUNT] = { { 0 } };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        const row *r = &rows[i];
        orch_life_step st = orch_life_next(r->from, r->event);
        cr_expect_eq(st.state, r->to, "(%s, %s) -> %s, want %s", orch_life_name(r->from),
                     orch_life_event_name(r->event), orch_life_name(st.state), orch_life_name(r->to));
        cr_expect_eq(st.released, r->released, "(%s, %s) released %d, want %d", orch_life_name(r->from),
                     orch_life_event_name(r->event), st.released, r->released);
        seen[r->from][r->event]++;
    }
    for (int s = 0; s < 3; s++)
        for (int e = 0; e < ORCH_LIFE_EVENT_COUNT; e++)
            cr_expect_eq(seen[s][e], 1, "cell (%s, %s) is not covered exactly once", orch_life_name((orch_life)s),
                         orch_life_event_name((orch_life_event)e));
}

Test(orch_lifecycle, a_report_lists_or_says_gone_only_when_full)
{
    static const struct { bool listed, full; orch_life_event want; } r[] = {
        { true, true, ORCH_LIFE_LISTED },
        { true, false, ORCH_LIFE_LISTED },   /* a partial report that lists it still proves it runs */
        { false, true, ORCH_LIFE_GONE },
        { false, false, ORCH_LIFE_UNSURE },  /* a server that did not answer may hold it */
    };
    for (size_t i = 0; i < sizeof(r) / sizeof(r[0]); i++)
        cr_expect_eq(orch_life_report_event(r[i].listed, r[i].full), r[i].want, "row %zu", i);
}

Test(orch_lifecycle, the_timer_fires_at_the_bound_and_says_lost_on_a_lost_node)
{
    static const struct { orch_node_state node; double at, now; int bound; bool fires; orch_life_event want; } r[] = {
        { ORCH_NODE_UP, 1000, 1000 + 119999, 120000, false, 0 },
        { ORCH_NODE_UP, 1000, 1000 + 120000, 120000, true, ORCH_LIFE_EXPIRED },
        { ORCH_NODE_DRAINED, 1000, 1000 + 120000, 120000, true, ORCH_LIFE_EXPIRED },   /* drained still reports */
        { ORCH_NODE_LOST, 1000, 1000 + 120000, 120000, true, ORCH_LIFE_EXPIRED_LOST },
        { ORCH_NODE_LOST, 1000, 1500, 120000, false, 0 },
    };
    for (size_t i = 0; i < sizeof(r) / sizeof(r[0]); i++) {
        orch_life_event e = ORCH_LIFE_EVENT_COUNT;
        bool fires = orch_life_timer_event(r[i].node, r[i].at, r[i].now, r[i].bound, &e);
        cr_expect_eq(fires, r[i].fires, "row %zu", i);
        if (r[i].fires)
            cr_expect_eq(e, r[i].want, "row %zu: %s", i, orch_life_event_name(e));
    }
}

Test(orch_lifecycle, a_placement_seen_then_gone_is_released_once)
{
    orch_placement p = { .life = ORCH_LIFE_RESERVED };
    cr_assert_not(orch_life_apply(&p, ORCH_LIFE_GONE), "a guest not yet connected is not released by a report");
    cr_assert_not(orch_life_apply(&p, ORCH_LIFE_LISTED));
    cr_assert_eq(p.life, ORCH_LIFE_LIVE);
    cr_assert_not(orch_life_apply(&p, ORCH_LIFE_UNSURE));
    cr_assert(orch_life_apply(&p, ORCH_LIFE_GONE));
    cr_assert_eq(p.life, ORCH_LIFE_RELEASED);
    cr_assert_not(orch_life_apply(&p, ORCH_LIFE_GONE), "released twice");
}

Test(orch_lifecycle, removing_a_placement_keeps_the_others_in_order)
{
    static orch_cluster c;
    for (int i = 0; i < 3; i++)
        snprintf(c.placements[i].key, sizeof(c.placements[i].key), "pl-%d", i);
    c.nplacements = 3;
    orch_remove_placement(&c, 1);
    cr_assert_eq(c.nplacements, 2);
    cr_assert_str_eq(c.placements[0].key, "pl-0");
    cr_assert_str_eq(c.placements[1].key, "pl-2");
    orch_remove_placement(&c, 5);   /* out of range: nothing */
    cr_assert_eq(c.nplacements, 2);
}
