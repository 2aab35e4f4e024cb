/* A session's SM share (issue 17, docs/sm-shares.md).
 *
 * Any thread (the control socket's set_share, the reservation applied at
 * HELLO) asks for a share with tdm_session_set_sm_share: the backend makes
 * the share ready there (cuda: a green context, the slow part) and leaves
 * it pending.  The session's own thread takes it at its next piece of work
 * (tdm_session_share_apply, called where every launch and copy picks its
 * stream) and moves each of the session's streams to a new backend stream
 * in the new share, ordered after everything queued on the old one: work
 * already queued finishes at the old share, later work runs at the new
 * one, device memory stays where it is and the guest's stream handles
 * stay the same (they name tdm_stream_state, whose bs changes).  The old
 * streams are retired and destroyed once their work is done; a share is
 * given back once no stream of it is left. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <driver_types.h>

#include "clock.h"
#include "log.h"
#include "session.h"

/* Retired streams kept at once; past it the oldest is destroyed, waiting
 * for its work (a guest resized thousands of times between two calls). */
#define SHARE_MAX_RETIRED 4096

/* A retired stream (bs), or with bs NULL the reference to sh that the
 * session held while sh was its share: given back once no retired stream
 * of sh is left. */
typedef struct share_retired {
    tdm_bstream *bs;
    tdm_bshare *sh;          /* NULL: the whole device (no share) */
} share_retired;

struct tdm_session_share {
    pthread_mutex_t lock;    /* pending: set by any thread, taken by the session's */
    tdm_bshare *pending;     /* asked for and not yet taken, or NULL */
    unsigned pending_sms;
    uint64_t asked_ns;       /* when pending was asked for (the log's "after") */
    double asked_wall_ms;    /* the same on the wall clock: the log's stamp, which the hops of a
                              * share change (orchestrator, node agent, guest) are compared with */
    double ready_wall_ms;    /* when the backend had made the share (cuda: its green context) */
    atomic_bool has_pending; /* the session thread's cheap check */
    atomic_uint shown;       /* the SMs of its latest share, asked or in force (0: the device's) */
    /* The session thread's alone: */
    tdm_bshare *cur;         /* its streams' share; NULL: the whole device */
    share_retired *retired;
    size_t nretired, cap;
    uint64_t work;           /* pieces of work queued, for --test-share-at-work */
};

static void apply_pending(tdm_session *s);

static uint64_t now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static unsigned device_sms(const tdm_session *s)
{
    int32_t n = s->srv->info.attrs[cudaDevAttrMultiProcessorCount];

    return n > 0 ? (unsigned)n : 0;
}

int tdm_session_share_init(tdm_session *s)
{
    struct tdm_session_share *sh = calloc(1, sizeof(*sh));

    if (!sh)
        return cudaErrorMemoryAllocation;
    pthread_mutex_init(&sh->lock, NULL);
    atomic_init(&sh->has_pending, false);
    atomic_init(&sh->shown, 0);
    s->share = sh;
    /* The server's default (--session-sms), in force before the null stream
     * is made: every stream of the session starts in it, none has to move. */
    if (s->srv->cfg.session_sms) {
        unsigned granted = 0;
        int err = s->srv->ops->share_get ? s->srv->ops->share_get(s->srv->be, s->srv->cfg.session_sms, &sh->cur,
                                                                 &granted)
                                         : cudaErrorNotSupported;

        if (err) {
            tdm_log_session(s->id, "the default SM share of %u could not be made (error %d)", s->srv->cfg.session_sms,
                            err);
            return err;
        }
        atomic_store(&sh->shown, granted);
    }
    return 0;
}

int tdm_session_set_sm_share(tdm_session *s, unsigned sms, uint64_t *applied_ns)
{
    const tdm_backend_ops *o = s->srv->ops;
    struct tdm_session_share *st = s->share;
    uint64_t t0 = now_ns();
    double asked_wall = tdm_wall_ms();
    unsigned dev = device_sms(s), granted = 0;
    tdm_bshare *sh = NULL, *old;
    int err;

    *applied_ns = 0;
    if (!o->share_get) {
        tdm_log_session(s->id, "SM share of %u refused: the %s backend cannot confine a session's work to part of "
                        "the device", sms, o->name);
        return cudaErrorNotSupported;
    }
    if (sms < 1 || sms > dev) {
        tdm_log_session(s->id, "SM share of %u refused: a share is 1 to %u SMs (the device's)", sms, dev);
        return cudaErrorInvalidValue;
    }
    err = o->share_get(s->srv->be, sms, &sh, &granted);
    if (err) {
        tdm_log_session(s->id, "SM share of %u refused: the backend could not make it (error %d)", sms, err);
        return err;
    }
    pthread_mutex_lock(&st->lock);
    old = st->pending;       /* asked for before and never taken: this one wins */
    st->pending = sh;
    st->pending_sms = granted;
    st->asked_ns = t0;
    st->asked_wall_ms = asked_wall;
    st->ready_wall_ms = tdm_wall_ms();
    atomic_store(&st->shown, granted);
    atomic_store(&st->has_pending, true);
    pthread_mutex_unlock(&st->lock);
    if (old)
        o->share_put(s->srv->be, old);
    *applied_ns = now_ns() - t0;
    return 0;
}

unsigned tdm_session_sm_share(tdm_session *s)
{
    unsigned n = atomic_load(&s->share->shown);

    return n ? n : device_sms(s);
}

/* A stream in sh (NULL: the whole device), as the session's streams are made. */
static int stream_in(tdm_session *s, tdm_bshare *sh, unsigned flags, int priority, tdm_bstream **out)
{
    const tdm_backend_ops *o = s->srv->ops;

    if (!sh)
        return o->stream_create(s->srv->be, flags, priority, s->space, out);
    return o->share_stream_create(s->srv->be, sh, flags, priority, s->space, out);
}

static int retire(tdm_session *s, tdm_bstream *bs, tdm_bshare *sh)
{
    struct tdm_session_share *st = s->share;

    if (st->nretired == st->cap) {
        size_t cap = st->cap ? st->cap * 2 : 16;
        share_retired *v = realloc(st->retired, cap * sizeof(*v));

        if (!v)
            return cudaErrorMemoryAllocation;
        st->retired = v;
        st->cap = cap;
    }
    st->retired[st->nretired++] = (share_retired){ .bs = bs, .sh = sh };
    return 0;
}

static bool share_has_streams(const struct tdm_session_share *st, const tdm_bshare *sh)
{
    for (size_t i = 0; i < st->nretired; i++)
        if (st->retired[i].bs && st->retired[i].sh == sh)
            return true;
    return false;
}

/* Destroys the retired streams whose work is done (all of them with wait),
 * then gives back the shares no stream is left of. */
static void reap(tdm_session *s, bool wait)
{
    const tdm_backend_ops *o = s->srv->ops;
    struct tdm_session_share *st = s->share;
    size_t keep = 0;

    for (size_t i = 0; i < st->nretired; i++) {
        share_retired *r = &st->retired[i];
        bool over = keep + (st->nretired - i) > SHARE_MAX_RETIRED;

        if (r->bs && (wait || over || o->stream_query(s->srv->be, r->bs) != cudaErrorNotReady)) {
            if (wait || over)
                o->stream_synchronize(s->srv->be, r->bs);
            o->stream_destroy(s->srv->be, r->bs);
            continue;        /* its share's reference is the marker's (bs NULL) */
        }
        st->retired[keep++] = *r;
    }
    st->nretired = keep;
    keep = 0;
    for (size_t i = 0; i < st->nretired; i++) {
        share_retired *r = &st->retired[i];

        if (!r->bs && r->sh && !share_has_streams(st, r->sh)) {
            o->share_put(s->srv->be, r->sh);
            continue;
        }
        st->retired[keep++] = *r;
    }
    st->nretired = keep;
}

/* What the guest set on the old stream (cudaStreamSetAttribute: the ids
 * session_stream_attr.c accepts) holds on the new one.  Only what differs from
 * the new stream's own value is set: a default carried over is no change, and
 * the driver refuses some defaults when set (an access-policy window of 0
 * bytes: the H100 run of 2026-11-25 logged 84 refusals for streams nobody had
 * set anything on).  Best effort: an attribute the new stream refuses only
 * changes a hint. */
static void carry_attributes(tdm_session *s, tdm_bstream *from, tdm_bstream *to)
{
    static const int ids[] = { cudaLaunchAttributeAccessPolicyWindow, cudaLaunchAttributeSynchronizationPolicy,
                               cudaLaunchAttributeMemSyncDomain, cudaLaunchAttributeMemSyncDomainMap };
    const tdm_backend_ops *o = s->srv->ops;

    if (!o->stream_get_attribute || !o->stream_set_attribute)
        return;
    for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
        tdm_bstream_attr a, now;

        memset(&a, 0, sizeof(a));
        memset(&now, 0, sizeof(now));
        a.id = now.id = ids[i];
        if (o->stream_get_attribute(s->srv->be, from, &a) != 0)
            continue;
        if (o->stream_get_attribute(s->srv->be, to, &now) == 0 && memcmp(&a, &now, sizeof(a)) == 0)
            continue;
        o->stream_set_attribute(s->srv->be, to, &a);
    }
}

/* Moves stream st to a new backend stream in `to`, after what is queued on
 * its old one.  On failure st stays where it is (the guest sees nothing). */
static int move_stream(tdm_session *s, tdm_stream_state *ss, tdm_bshare *from, tdm_bshare *to)
{
    const tdm_backend_ops *o = s->srv->ops;
    tdm_bstream *nb = NULL;
    tdm_bevent *ev = NULL;
    int err;

    err = stream_in(s, to, ss->flags, ss->priority, &nb);
    if (err)
        return err;
    carry_attributes(s, ss->bs, nb);
    err = o->event_create(s->srv->be, cudaEventDisableTiming, &ev);
    if (!err)
        err = o->event_record(s->srv->be, ev, ss->bs);
    if (!err)
        err = o->stream_wait_event(s->srv->be, nb, ev);
    if (!err)
        err = retire(s, ss->bs, from);
    if (ev)
        o->event_destroy(s->srv->be, ev);
    if (err) {
        o->stream_destroy(s->srv->be, nb);
        return err;
    }
    ss->bs = nb;
    return 0;
}

typedef struct move_ctx {
    tdm_session *s;
    tdm_bshare *from, *to;
    unsigned moved, failed;
    int first_err;
} move_ctx;

static void move_one(void *obj, uint64_t id, void *arg)
{
    move_ctx *m = arg;
    tdm_stream_state *ss = obj;
    int err;

    (void)id;
    if (!ss->bs)             /* not made yet (the session being created): it will be made in m->to */
        return;
    err = move_stream(m->s, ss, m->from, m->to);
    if (err && !m->failed++)
        m->first_err = err;
    else if (!err)
        m->moved++;
}

/* --test-share-at-work N:SMS: the session's share becomes SMS as its Nth
 * piece of work is queued, standing in for the control socket's set_share
 * in tests of a guest whose share changes mid-run (tests/integration/test_shares.c). */
static void test_share_at_work(tdm_session *s)
{
    uint64_t ignored;

    if (++s->share->work == s->srv->cfg.test_share_work)
        tdm_session_set_sm_share(s, s->srv->cfg.test_share_sms, &ignored);
}

void tdm_session_share_apply(tdm_session *s)
{
    if (s->share && s->srv->cfg.test_share_work)
        test_share_at_work(s);
    apply_pending(s);
}

static void apply_pending(tdm_session *s)
{
    struct tdm_session_share *st = s->share;
    tdm_bshare *to;
    unsigned sms;
    uint64_t asked;
    double asked_wall, ready_wall, taken_wall;

    if (!st || !atomic_load_explicit(&st->has_pending, memory_order_acquire))
        return;
    /* A stream being captured records work into a graph instead of running
     * it: it keeps its stream until the capture ends (docs/sm-shares.md). */
    if (s->ncaptures)
        return;
    pthread_mutex_lock(&st->lock);
    to = st->pending;
    sms = st->pending_sms;
    asked = st->asked_ns;
    asked_wall = st->asked_wall_ms;
    ready_wall = st->ready_wall_ms;
    taken_wall = tdm_wall_ms();
    st->pending = NULL;
    atomic_store(&st->has_pending, false);
    pthread_mutex_unlock(&st->lock);
    if (!to)
        return;

    move_ctx m = { .s = s, .from = st->cur, .to = to };
    move_one(&s->null_stream, 0, &m);
    tdm_handles_each(&s->streams, move_one, &m);
    /* The session's reference to its old share goes once its streams are done. */
    if (st->cur && retire(s, NULL, st->cur) != 0) {
        reap(s, true);       /* no room to remember it: wait, then give it back now */
        s->srv->ops->share_put(s->srv->be, st->cur);
    }
    st->cur = to;
    reap(s, false);
    if (m.failed)
        tdm_log_session(s->id, "SM share of %u: %u of its streams stay on their old share (error %d)", sms,
                        m.failed, m.first_err);
    /* The wall-clock stamps split the server's part of a share change (asked; ready: the backend
     * made the share; taken: the session's next work came; moved: its streams are in the share)
     * and let a script put it beside the orchestrator's decision and the node agent's forward
     * (tests/gpu/run-control-plane-gpu.sh); the text before them is what earlier scripts match. */
    tdm_log_session(s->id, "runs on %u SMs from its next work, %.3f ms after the request (%u streams moved); "
                    "wall-clock ms: asked %.3f, ready %.3f, taken %.3f, moved %.3f; placement %s", sms,
                    (double)(now_ns() - asked) / 1e6, m.moved, asked_wall, ready_wall, taken_wall, tdm_wall_ms(),
                    s->placement[0] ? s->placement : "-");
}

int tdm_session_share_stream_create(tdm_session *s, unsigned flags, int priority, tdm_bstream **out)
{
    apply_pending(s);
    return stream_in(s, s->share ? s->share->cur : NULL, flags, priority, out);
}

void tdm_session_share_release(tdm_session *s)
{
    struct tdm_session_share *st = s->share;
    const tdm_backend_ops *o = s->srv->ops;

    if (!st)
        return;
    reap(s, true);
    if (st->cur)
        o->share_put(s->srv->be, st->cur);
    if (st->pending)
        o->share_put(s->srv->be, st->pending);
    free(st->retired);
    pthread_mutex_destroy(&st->lock);
    free(st);
    s->share = NULL;
}
