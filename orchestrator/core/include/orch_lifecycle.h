/* A placement's lifecycle (docs/orchestrator.md, "Lifecycle"): reserved when made, live once its
 * node reports a session with its key, released when that session ends or when its guest never
 * connects.  Without a release a placement would hold its SMs, memory and its VM's budget
 * forever.  No I/O: the daemon classifies what it saw into an event and carries out a release. */
#ifndef TANDEM_ORCH_LIFECYCLE_H
#define TANDEM_ORCH_LIFECYCLE_H

#include <stdbool.h>

#include "orch_model.h"

/* The servers' own reservation age (server/control/include/reservations.h, TDM_RESERVATION_AGE_MS):
 * past it a server refuses the key anyway, so the orchestrator waits as long and no longer. */
#define ORCH_RESERVED_TIMEOUT_MS_DEFAULT 120000

typedef enum {
    ORCH_LIFE_LISTED,        /* a report of its node lists a session with its key */
    ORCH_LIFE_GONE,          /* a full report of its node (every server answered) does not list it */
    ORCH_LIFE_UNSURE,        /* a partial report (a server did not answer) does not list it */
    ORCH_LIFE_EXPIRED,       /* reserved past the bound, its node up or drained (it reports) */
    ORCH_LIFE_EXPIRED_LOST,  /* reserved past the bound, its node lost: nobody can say */
    ORCH_LIFE_ENDED,         /* a server of its node says its session ended (a guest that left
                              * between two reports, never listed, is known gone at once) */
    ORCH_LIFE_EVENT_COUNT
} orch_life_event;

typedef struct orch_life_step {
    orch_life state;
    bool released;           /* this step released it: the caller removes it and records why */
} orch_life_step;

const char *orch_life_name(orch_life s);
const char *orch_life_event_name(orch_life_event e);

/* The transition table: (state, event) -> new state, and whether this step releases it. */
orch_life_step orch_life_next(orch_life s, orch_life_event e);
/* The event a report of the placement's node makes: listed, else gone (full) or unsure (partial). */
orch_life_event orch_life_report_event(bool listed, bool full_report);
/* The timer's event for a placement reserved since reserved_ms: true with *e once the bound has
 * passed (expired, or expired-lost on a lost node), false while it has not. */
bool orch_life_timer_event(orch_node_state node, double reserved_ms, double now_ms, int bound_ms,
                           orch_life_event *e);
/* Applies e to p (p->life); true when it released p. */
bool orch_life_apply(orch_placement *p, orch_life_event e);

#endif
