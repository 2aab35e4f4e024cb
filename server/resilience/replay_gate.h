/* One session at a time replays its journal on a server that took sessions
 * over (docs/takeover.md, "The faulting session").  When a fault killed the
 * active's context, the session whose kernel faulted is among those that
 * resume, and its replay faults again.  Replays taken one by one make that
 * fault name its session: the guest that held the gate when this server
 * died is the culprit and gives up; the others resume on this server's own
 * standby. */
#ifndef TANDEM_RESILIENCE_REPLAY_GATE_H
#define TANDEM_RESILIENCE_REPLAY_GATE_H

#include <pthread.h>

/* A holder past this no longer blocks the others.  10 s, not 2: under ASan on a loaded 2-core CI
 * machine a faulting session's replay took over 2 s, the victim went in beside it, and when the
 * standby died the victim blamed itself (after_takeover_shm::the_faulting_session_is_told_apart,
 * 2026-11-25).  A stuck guest still stalls the others for 10 s at most. */
#define TDM_REPLAY_GATE_MAX_S 10.0

typedef struct tdm_replay_gate {
    pthread_mutex_t lock;
    pthread_cond_t freed;
    const void *owner;              /* the session replaying, or NULL */
    double since;
} tdm_replay_gate;

void tdm_replay_gate_init(tdm_replay_gate *g);
/* Waits until no other session replays (or the one that does has held the
 * gate too long: a guest that never finishes must not stall the rest). */
void tdm_replay_gate_enter(tdm_replay_gate *g, const void *session);
/* Leaves it if this session holds it; nothing otherwise. */
void tdm_replay_gate_leave(tdm_replay_gate *g, const void *session);

#endif
