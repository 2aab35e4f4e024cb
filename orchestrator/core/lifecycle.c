/* A placement's lifecycle as a table (orch_lifecycle.h). */
#include "orch_lifecycle.h"

static const char *const life_names[] = { "reserved", "live", "released" };
static const char *const event_names[ORCH_LIFE_EVENT_COUNT] = { "listed", "gone", "unsure", "expired",
                                                                "expired-lost", "ended" };

#define R ORCH_LIFE_RESERVED
#define L ORCH_LIFE_LIVE
#define X ORCH_LIFE_RELEASED
/* Rows: states; columns: events in orch_life_event's order.  Why each cell:
 *  - a reserved placement's guest may not have connected yet: gone and unsure keep it reserved;
 *  - a live placement is timed by its session, not the reservation bound: expiry does nothing;
 *  - unsure (a server did not answer, a session may be resuming on the standby) never releases;
 *  - on a lost node nothing is known: its sessions may still run (the agent keeps them);
 *  - a server's word that the session ended ends it, whether a report listed it or not. */
static const orch_life_step table[3][ORCH_LIFE_EVENT_COUNT] = {
    /*        listed        gone          unsure        expired       expired-lost  ended */
    [R] = { { L, false }, { R, false }, { R, false }, { X, true }, { R, false }, { X, true } },
    [L] = { { L, false }, { X, true }, { L, false }, { L, false }, { L, false }, { X, true } },
    [X] = { { X, false }, { X, false }, { X, false }, { X, false }, { X, false }, { X, false } },
};
#undef R
#undef L
#undef X

const char *orch_life_name(orch_life s) { return life_names[s]; }
const char *orch_life_event_name(orch_life_event e) { return event_names[e]; }

orch_life_step orch_life_next(orch_life s, orch_life_event e) { return table[s][e]; }

orch_life_event orch_life_report_event(bool listed, bool full_report)
{
    if (listed)
        return ORCH_LIFE_LISTED;
    return full_report ? ORCH_LIFE_GONE : ORCH_LIFE_UNSURE;
}

bool orch_life_timer_event(orch_node_state node, double reserved_ms, double now_ms, int bound_ms,
                           orch_life_event *e)
{
    if (now_ms - reserved_ms < bound_ms)
        return false;
    *e = node == ORCH_NODE_LOST ? ORCH_LIFE_EXPIRED_LOST : ORCH_LIFE_EXPIRED;
    return true;
}

bool orch_life_apply(orch_placement *p, orch_life_event e)
{
    orch_life_step st = orch_life_next(p->life, e);
    p->life = st.state;
    return st.released;
}
