/* See session_stats.h. */
#include "session_stats.h"
#include "latency_hist.h"

#include <driver_types.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "session.h"

static uint64_t now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void tdm_session_stats_call_begins(tdm_session *s)
{
    s->stats.call_began_ns = now_ns();
}

void tdm_session_stats_call_ends(tdm_session *s)
{
    tdm_session_stats *st = &s->stats;

    atomic_fetch_add_explicit(&st->latency[tdm_latency_bucket(now_ns() - st->call_began_ns)], 1,
                              memory_order_relaxed);
    atomic_fetch_add_explicit(&st->calls, 1, memory_order_relaxed);
}

/* The sampler's probe: the session's backend's events (timing on). */
static int kp_create(void *ctx, void **ev)
{
    tdm_session *s = ctx;
    return s->srv->ops->event_create(s->srv->be, 0, (tdm_bevent **)ev);
}

static int kp_record(void *ctx, void *ev, void *stream)
{
    tdm_session *s = ctx;
    return s->srv->ops->event_record(s->srv->be, ev, stream);
}

static int kp_query(void *ctx, void *ev)
{
    tdm_session *s = ctx;
    int err = s->srv->ops->event_query(s->srv->be, ev);
    return err == cudaErrorNotReady ? 1 : err;
}

static int kp_elapsed_ns(void *ctx, void *begin, void *end, uint64_t *ns)
{
    tdm_session *s = ctx;
    float ms = 0;
    int err = s->srv->ops->event_elapsed_ms(s->srv->be, begin, end, &ms);

    if (!err)
        *ns = ms > 0 ? (uint64_t)((double)ms * 1e6) : 0;
    return err;
}

static void kp_destroy(void *ctx, void *ev)
{
    tdm_session *s = ctx;
    s->srv->ops->event_destroy(s->srv->be, ev);
}

static tdm_kprobe probe_of(tdm_session *s)
{
    return (tdm_kprobe){ .ctx = s, .create = kp_create, .record = kp_record, .query = kp_query,
                         .elapsed_ns = kp_elapsed_ns, .destroy = kp_destroy };
}

int tdm_session_kernel_sample_begin(tdm_session *s, tdm_bstream *bs, bool capturing)
{
    tdm_ksampler *k = &s->stats.kernels;
    tdm_kprobe p = probe_of(s);

    if (capturing)
        return -1;
    /* Slots armed earlier are read every few launches: their kernels are long done by then
     * unless the GPU is busy, and a query never waits. */
    if (k->narmed && k->launches % 8 == 0)
        tdm_ksampler_poll(k, &p);
    return tdm_ksampler_before(k, &p, bs);
}

void tdm_session_kernel_sample_end(tdm_session *s, int slot, tdm_bstream *bs, int launch_err)
{
    tdm_kprobe p = probe_of(s);

    tdm_ksampler_after(&s->stats.kernels, &p, slot, bs, launch_err == 0);
}

void tdm_session_kernel_samples_release(tdm_session *s)
{
    tdm_kprobe p = probe_of(s);

    tdm_ksampler_release(&s->stats.kernels, &p);
}

void tdm_server_sessions_init(tdm_server *srv)
{
    pthread_mutex_init(&srv->sessions_lock, NULL);
    srv->sessions = NULL;
    srv->ended.n = 0;
}

void tdm_session_stats_ended(tdm_session *s)
{
    tdm_ended_keys *e = &s->srv->ended;

    if (!s->placement[0])
        return;
    pthread_mutex_lock(&s->srv->sessions_lock);
    if (e->n == TDM_ENDED_KEYS_MAX) {   /* the oldest goes: its placement ends by the bound */
        memmove(e->key[0], e->key[1], sizeof(e->key[0]) * (TDM_ENDED_KEYS_MAX - 1));
        e->n--;
    }
    snprintf(e->key[e->n++], sizeof(e->key[0]), "%s", s->placement);
    pthread_mutex_unlock(&s->srv->sessions_lock);
}

void tdm_server_ended_keys_drain_locked(tdm_server *srv, void (*fn)(void *ctx, const char *key), void *ctx)
{
    for (unsigned i = 0; i < srv->ended.n; i++)
        fn(ctx, srv->ended.key[i]);
    srv->ended.n = 0;
}

void tdm_session_stats_join(tdm_session *s)
{
    tdm_server *srv = s->srv;

    pthread_mutex_lock(&srv->sessions_lock);
    s->stats.prev = NULL;
    s->stats.next = srv->sessions;
    if (srv->sessions)
        srv->sessions->stats.prev = s;
    srv->sessions = s;
    pthread_mutex_unlock(&srv->sessions_lock);
}

void tdm_session_stats_leave(tdm_session *s)
{
    tdm_server *srv = s->srv;

    pthread_mutex_lock(&srv->sessions_lock);
    if (s->stats.prev)
        s->stats.prev->stats.next = s->stats.next;
    else if (srv->sessions == s)
        srv->sessions = s->stats.next;
    if (s->stats.next)
        s->stats.next->stats.prev = s->stats.prev;
    s->stats.prev = s->stats.next = NULL;
    pthread_mutex_unlock(&srv->sessions_lock);
}

void tdm_session_stats_swap(tdm_session *a, tdm_session *b)
{
    tdm_session_stats st;

    memcpy(&st, &a->stats, sizeof(st));
    memcpy(&a->stats, &b->stats, sizeof(st));
    memcpy(&b->stats, &st, sizeof(st));
}

void tdm_session_set_placement(tdm_session *s, const char *key)
{
    pthread_mutex_lock(&s->srv->sessions_lock);
    snprintf(s->placement, sizeof(s->placement), "%s", key ? key : "");
    pthread_mutex_unlock(&s->srv->sessions_lock);
}
