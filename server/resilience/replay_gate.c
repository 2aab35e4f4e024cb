#include "replay_gate.h"

#include <errno.h>
#include <time.h>

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

void tdm_replay_gate_init(tdm_replay_gate *g)
{
    pthread_condattr_t ca;

    pthread_mutex_init(&g->lock, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&g->freed, &ca);
    pthread_condattr_destroy(&ca);
    g->owner = NULL;
}

void tdm_replay_gate_enter(tdm_replay_gate *g, const void *session)
{
    pthread_mutex_lock(&g->lock);
    while (g->owner && g->owner != session && now_s() - g->since < TDM_REPLAY_GATE_MAX_S) {
        struct timespec until;
        double t = g->since + TDM_REPLAY_GATE_MAX_S;
        until.tv_sec = (time_t)t;
        until.tv_nsec = (long)((t - (double)until.tv_sec) * 1e9);
        pthread_cond_timedwait(&g->freed, &g->lock, &until);
    }
    g->owner = session;
    g->since = now_s();
    pthread_mutex_unlock(&g->lock);
}

void tdm_replay_gate_leave(tdm_replay_gate *g, const void *session)
{
    pthread_mutex_lock(&g->lock);
    if (g->owner == session) {
        g->owner = NULL;
        pthread_cond_broadcast(&g->freed);
    }
    pthread_mutex_unlock(&g->lock);
}
