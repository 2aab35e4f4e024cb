/* The health of the server's device context (docs/health.md).
 *
 * Some CUDA errors are sticky: the context that saw them is lost, and every
 * later call in it fails with the same error.  Every session of a server
 * shares its one context, so one session's illegal address loses every
 * session's device state.  A server must then never serve from that
 * context again:
 *
 *   HEALTHY --lost, standby connected--> HANDING_OFF --> EXITED (status
 *       TDM_EXIT_HANDED_OFF, at once: every guest resumes on the standby,
 *       which has its own context)
 *   HEALTHY --lost, no standby--> DRAINING: the sessions of the lost
 *       context keep their sticky error (their device state is gone, as
 *       natively) until they end; new sessions wait
 *   DRAINING --the last of them ended--> REBUILDING: a fresh context
 *   REBUILDING --rebuilt--> HEALTHY (next generation; new sessions go on)
 *   REBUILDING --rebuild failed--> EXITED (status TDM_EXIT_CONTEXT_LOST,
 *       for the supervisor)
 *
 * The transitions are a pure function (tdm_health_next) so they are tested
 * as a table; tdm_health holds one server's state under a lock. */
#ifndef TANDEM_SERVER_HEALTH_H
#define TANDEM_SERVER_HEALTH_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

/* Exit statuses a supervisor can tell apart. */
#define TDM_EXIT_HANDED_OFF 75    /* context lost, sessions handed to the standby */
#define TDM_EXIT_CONTEXT_LOST 76  /* context lost and could not be rebuilt */

/* What an error means for the context that returned it. */
typedef enum tdm_err_class {
    TDM_ERR_NONE,           /* success */
    TDM_ERR_CALL,           /* this call failed; the context is fine (bad launch config, ...) */
    TDM_ERR_CONTEXT_FATAL,  /* sticky: the context is lost for every session in it */
} tdm_err_class;

tdm_err_class tdm_health_classify(int cuda_err);
/* Sticky in CUDA's sense: the error stays set for the session (every later
 * synchronizing call returns it).  Every sticky error is context-fatal;
 * context-fatal also covers the MPS server's loss. */
bool tdm_health_is_sticky(int cuda_err);

typedef enum tdm_health_state {
    TDM_HEALTH_HEALTHY,
    TDM_HEALTH_HANDING_OFF,
    TDM_HEALTH_DRAINING,
    TDM_HEALTH_REBUILDING,
    TDM_HEALTH_EXITED,
} tdm_health_state;

typedef enum tdm_health_event {
    TDM_HEV_LOST,          /* a session saw a context-fatal error */
    TDM_HEV_DRAINED,       /* no session of the lost context is left */
    TDM_HEV_REBUILT,
    TDM_HEV_REBUILD_FAILED,
} tdm_health_event;

typedef enum tdm_health_action {
    TDM_HACT_NONE,
    TDM_HACT_LOG_CULPRIT,      /* first loss: name the session in one log line */
    TDM_HACT_EXIT_HANDED_OFF,  /* log, then _exit(TDM_EXIT_HANDED_OFF) */
    TDM_HACT_REBUILD,
    TDM_HACT_EXIT_LOST,        /* exit(TDM_EXIT_CONTEXT_LOST) */
} tdm_health_action;

typedef struct tdm_health_step {
    tdm_health_state state;
    tdm_health_action action;
} tdm_health_step;

/* The transition from `state` on `ev`; `standby` says whether a standby is
 * there to take the sessions. */
tdm_health_step tdm_health_next(tdm_health_state state, tdm_health_event ev, bool standby);
const char *tdm_health_state_name(tdm_health_state state);

/* One server's context health. */
typedef struct tdm_health {
    pthread_mutex_t lock;
    pthread_cond_t changed;
    tdm_health_state state;
    uint64_t generation;       /* contexts so far; sessions remember theirs */
    int lost_err;              /* the error that lost the current context */
    uint64_t culprit;          /* the session that first saw it */
    int old_sessions;          /* live sessions of the current generation */
} tdm_health;

void tdm_health_init(tdm_health *h);
void tdm_health_destroy(tdm_health *h);

#endif
