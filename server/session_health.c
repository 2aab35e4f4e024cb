/* The sessions' side of the context's health (health.h, docs/health.md):
 * admitting a session into a usable context, reporting a loss, and
 * rebuilding the context once the last session of the lost one ends. */
#include "session.h"

#include <errno.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <driver_types.h>

#include "log.h"

/* How long a new session waits for the old sessions of a lost context to
 * end and the context to be rebuilt before it is refused. */
#define ADMIT_WAIT_S 60

static const char *err_name(int err)
{
    switch (err) {
    case cudaErrorIllegalAddress: return "cudaErrorIllegalAddress";
    case cudaErrorLaunchFailure: return "cudaErrorLaunchFailure";
    case cudaErrorAssert: return "cudaErrorAssert";
    case cudaErrorHardwareStackError: return "cudaErrorHardwareStackError";
    case cudaErrorIllegalInstruction: return "cudaErrorIllegalInstruction";
    case cudaErrorMisalignedAddress: return "cudaErrorMisalignedAddress";
    case cudaErrorInvalidAddressSpace: return "cudaErrorInvalidAddressSpace";
    case cudaErrorInvalidPc: return "cudaErrorInvalidPc";
    case cudaErrorLaunchTimeout: return "cudaErrorLaunchTimeout";
    case cudaErrorECCUncorrectable: return "cudaErrorECCUncorrectable";
    default: return "a context-fatal error";
    }
}

int tdm_session_health_admit(tdm_session *s)
{
    tdm_health *h = &s->srv->health;
    struct timespec until;
    int err = 0;

    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += ADMIT_WAIT_S;
    pthread_mutex_lock(&h->lock);
    while (h->state == TDM_HEALTH_DRAINING || h->state == TDM_HEALTH_REBUILDING) {
        if (pthread_cond_timedwait(&h->changed, &h->lock, &until) == ETIMEDOUT)
            break;
    }
    if (h->state != TDM_HEALTH_HEALTHY)
        err = cudaErrorDevicesUnavailable;   /* what a GPU that cannot take a context says */
    else {
        s->ctx_generation = h->generation;
        h->old_sessions++;
    }
    pthread_mutex_unlock(&h->lock);
    return err;
}

int tdm_session_health_err(tdm_session *s)
{
    tdm_health *h = &s->srv->health;
    int err = 0;

    pthread_mutex_lock(&h->lock);
    if (h->state != TDM_HEALTH_HEALTHY && s->ctx_generation == h->generation)
        err = h->lost_err;
    pthread_mutex_unlock(&h->lock);
    return err;
}

static void origin_in(void *obj, uint64_t id, void *arg)
{
    const tdm_stream_state *st = obj;
    tdm_session *s = ((void **)arg)[0];
    bool *found = ((void **)arg)[1];

    (void)id;
    if (!*found && s->srv->ops->stream_lost_context(s->srv->be, st->bs))
        *found = true;
}

/* Whether one of the session's streams ran the work that lost the context
 * (false where the backend cannot tell). */
static bool lost_it(tdm_session *s)
{
    bool found = s->srv->ops->stream_lost_context(s->srv->be, s->null_stream.bs);
    void *arg[2] = { s, &found };

    if (!found)
        tdm_handles_each(&s->streams, origin_in, arg);
    return found;
}

/* The culprit's line, once per lost context. h->lock held. */
static bool name_culprit_locked(tdm_health *h, tdm_session *s)
{
    if (h->culprit || s->ctx_generation != h->generation || h->state == TDM_HEALTH_HEALTHY || !lost_it(s))
        return false;
    h->culprit = s->id;
    return true;
}

static void log_culprit(tdm_session *s, int err)
{
    tdm_log_session(s->id, "this session (pid %d) lost the device context: its work got %s (cudaError %d)", s->pid,
                    err_name(err), err);
}

void tdm_session_health_lost(tdm_session *s, int err)
{
    tdm_health *h = &s->srv->health;
    tdm_health_step st;
    bool culprit;

    pthread_mutex_lock(&h->lock);
    if (s->ctx_generation != h->generation) {
        pthread_mutex_unlock(&h->lock);
        return;   /* an error of a context already replaced */
    }
    st = tdm_health_next(h->state, TDM_HEV_LOST, false);
    h->state = st.state;
    if (st.action == TDM_HACT_LOG_CULPRIT)
        h->lost_err = err;
    culprit = name_culprit_locked(h, s);
    err = h->lost_err;
    pthread_mutex_unlock(&h->lock);
    if (st.action == TDM_HACT_LOG_CULPRIT)
        tdm_log_session(s->id,
                        "the device context is lost (%s, cudaError %d; first seen by this session, pid %d): the "
                        "sessions of that context get the error until they end, then it is rebuilt for new "
                        "sessions",
                        err_name(err), err, s->pid);
    if (culprit)
        log_culprit(s, err);
}

void tdm_session_health_closing(tdm_session *s)
{
    tdm_health *h = &s->srv->health;
    bool culprit;
    int err;

    pthread_mutex_lock(&h->lock);
    culprit = name_culprit_locked(h, s);
    err = h->lost_err;
    pthread_mutex_unlock(&h->lock);
    if (culprit)
        log_culprit(s, err);
}

void tdm_session_health_ended(tdm_session *s)
{
    tdm_server *srv = s->srv;
    tdm_health *h = &srv->health;
    tdm_health_step st = { TDM_HEALTH_HEALTHY, TDM_HACT_NONE };
    uint64_t culprit_id;
    int err;

    pthread_mutex_lock(&h->lock);
    if (s->ctx_generation == h->generation && --h->old_sessions == 0 && h->state == TDM_HEALTH_DRAINING) {
        st = tdm_health_next(h->state, TDM_HEV_DRAINED, false);
        h->state = st.state;
    }
    culprit_id = h->culprit;
    pthread_mutex_unlock(&h->lock);
    if (st.action != TDM_HACT_REBUILD)
        return;
    /* No session of the lost context is left and new ones wait in admit:
     * nothing else touches the backend while it is replaced. */
    err = tdm_server_rebuild_context(srv);
    pthread_mutex_lock(&h->lock);
    st = tdm_health_next(h->state, err ? TDM_HEV_REBUILD_FAILED : TDM_HEV_REBUILT, false);
    h->state = st.state;
    if (!err) {
        h->generation++;
        h->old_sessions = 0;
        h->lost_err = 0;
        h->culprit = 0;
    }
    pthread_cond_broadcast(&h->changed);
    pthread_mutex_unlock(&h->lock);
    if (!err) {
        if (culprit_id)
            tdm_log("the device context lost by session %llu is rebuilt: serving new sessions",
                    (unsigned long long)culprit_id);
        else
            tdm_log("the lost device context is rebuilt: serving new sessions");
        return;
    }
    tdm_log("the lost device context cannot be rebuilt (cudaError %d): exiting with status %d for the supervisor",
            err, TDM_EXIT_CONTEXT_LOST);
    _exit(TDM_EXIT_CONTEXT_LOST);
}
