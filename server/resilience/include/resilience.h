/* Resilience: what keeps a session alive when its server dies (docs/
 * takeover.md).  Takeover today (an active server mirrors every session to
 * a standby, which resumes them; fail-back moves them to a new active);
 * live migration and checkpoints next.  This header is the module's one
 * entry point:
 *
 *  - tdm_resilience_start sets up what the server's configuration asks for
 *    and installs the session hooks (session_hooks.h), through which the
 *    session core tells resilience what happens to every session;
 *  - the RPC front (dispatch.c) hands it the guest requests that are about
 *    protection: hello, resume, protect, epoch, replay, and every call's
 *    arrival.
 *
 * Everything else of the module (the mirror feed, the standby, shadows) is
 * private to server/resilience/. */
#ifndef TANDEM_RESILIENCE_H
#define TANDEM_RESILIENCE_H

#include <stdbool.h>
#include <stdint.h>

#include "server.h"
#include "session.h"

typedef struct tdm_resilience tdm_resilience;

/* Mirrors to a standby (--standby), serves as one (--standby-listen), asks
 * for a fail-back (--failback-from), as srv's configuration says, and
 * installs the session hooks; before the first session.  cudaSuccess, or
 * a cudaError_t after logging why. */
int tdm_resilience_start(tdm_resilience **out, tdm_server *srv);
/* After every session ended. */
void tdm_resilience_stop(tdm_resilience *r);

/* Where a session resumes if this server dies: standby "" when nowhere
 * (then token 0 and policy TDM_RESUME_NONE). */
typedef struct tdm_protection {
    char standby[256];
    uint64_t token;
    int policy;
} tdm_protection;

/* TDM_HELLO: the guest asks for protection with `policy`. */
void tdm_resilience_hello(tdm_session *s, int policy);
void tdm_resilience_describe(tdm_session *s, tdm_protection *p);
/* TDM_RESUME: the connection's fresh session s becomes the mirrored
 * session `id` at the epoch its active reached (*resumed), protected at
 * once where this server has a standby of its own.  cudaSuccess, or an
 * error after logging why. */
int tdm_resilience_resume(tdm_session *s, uint64_t id, uint64_t token, uint64_t epoch, uint64_t epoch_sent,
                          uint64_t *resumed);
/* TDM_PROTECT: the guest, whose calls up to seq are complete, asks now and
 * then whether its session is protected.  Protects it where it can.  On a
 * fail-back the session moves: *moved, `to` says where, and this server has
 * let go of it.  A cudaError_t. */
int tdm_resilience_check(tdm_session *s, uint64_t seq, int policy, bool *moved, tdm_protection *to);
/* TDM_EPOCH: the guest saw all its work up to call number `epoch` complete.
 * A cudaError_t, for the session's deferred error. */
int tdm_resilience_epoch(tdm_session *s, uint64_t epoch);
/* TDM_REPLAY_BEGIN and the TDM_QUIESCE that ends a replay: resumed
 * sessions replay one at a time (replay_gate.h). */
void tdm_resilience_replay_begin(tdm_session *s);
void tdm_resilience_replay_end(tdm_session *s);
/* The session was served `call`, a MIRROR_UNPROTECT row of calls.def: it
 * now holds state no standby can have, so it is unprotected for good (no
 * later standby sync or hand-off takes it), and the log names the call. */
void tdm_resilience_unmirrorable(tdm_session *s, const char *call);
/* A call came from the session's guest: if it was resumed here, it has its
 * RESUME reply, and the standby side is told. */
void tdm_resilience_heard(tdm_session *s);

#endif
