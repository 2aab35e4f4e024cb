/* A session's host callbacks (issue 14, docs/runtime-api.md "Host
 * callbacks"): cudaLaunchHostFunc and cudaStreamAddCallback run the
 * program's function in the guest, in stream order.  The backend holds the
 * stream at the function's place and says when its earlier work is done
 * (due); the guest's callback thread takes due callbacks and reports them
 * run through CALLBACK_POLL, which releases the stream.
 *
 * due comes from a backend thread while the session thread serves calls,
 * so the state has its own lock, and a reference per callback the backend
 * may still announce: the session can end before a stream reaches one. */
#include "session.h"

#include <pthread.h>
#include <stdlib.h>

#include <driver_types.h>

#include "callback_queue.h"
#include "grow.h"
#include "log.h"
#include "tandem_rpc.h"

typedef struct tdm_session_callbacks {
    pthread_mutex_t lock;
    int refs;                /* the session's, plus one per announcement to come */
    bool closed;             /* the session ended: announcements are dropped */
    tdm_cbq q;
} tdm_session_callbacks;

/* What the backend hands back to due. */
typedef struct due_arg {
    tdm_session_callbacks *cb;
    uint64_t seq;
} due_arg;

/* cb->lock held; unlocks it.  Frees cb once the last reference goes. */
static void unref_unlock(tdm_session_callbacks *cb)
{
    bool last = --cb->refs == 0;

    pthread_mutex_unlock(&cb->lock);
    if (!last)
        return;
    tdm_cbq_release(&cb->q);
    pthread_mutex_destroy(&cb->lock);
    free(cb);
}

static void on_due(void *arg, int status)
{
    due_arg *a = arg;
    tdm_session_callbacks *cb = a->cb;

    pthread_mutex_lock(&cb->lock);
    if (!cb->closed)
        tdm_cbq_due(&cb->q, a->seq, status);
    free(a);
    unref_unlock(cb);
}

static tdm_session_callbacks *callbacks_of(tdm_session *s)
{
    tdm_session_callbacks *cb = s->callbacks;

    if (cb)
        return cb;
    cb = calloc(1, sizeof(*cb));
    if (!cb || pthread_mutex_init(&cb->lock, NULL) != 0) {
        free(cb);
        return NULL;
    }
    cb->refs = 1;
    tdm_cbq_init(&cb->q);
    s->callbacks = cb;
    return cb;
}

int tdm_session_callback_enqueue(tdm_session *s, uint64_t stream, uint64_t fn)
{
    tdm_session_callbacks *cb = callbacks_of(s);
    tdm_stream_state *st = tdm_session_stream_state(s, stream);
    due_arg *a = NULL;
    tdm_bhold *hold = NULL;
    uint64_t seq = 0;
    int err;

    if (!cb)
        return cudaErrorMemoryAllocation;
    if (!st)
        return cudaErrorInvalidResourceHandle;
    if (tdm_session_capturing(s, st)) {
        /* It becomes a host node of the capture's graph, run at each
         * launch (docs/graphs.md "Host nodes"). */
        if (!s->srv->ops->stream_capture_host) {
            tdm_log_session(s->id, "a host function on a capturing stream: this backend has no host nodes");
            return cudaErrorStreamCaptureUnsupported;
        }
        err = s->srv->ops->stream_capture_host(s->srv->be, st->bs, fn);
        return err ? err : TDM_ERR_CAPTURED_HOST;
    }
    /* An earlier asynchronous error is this call's, as natively; the
     * function is not queued then. */
    err = tdm_session_sync_result(s, 0);
    if (err)
        return err;
    if (!tdm_session_stream_for_work(s, stream, &err))
        return err;
    a = malloc(sizeof(*a));
    if (!a)
        return cudaErrorMemoryAllocation;
    pthread_mutex_lock(&cb->lock);
    err = tdm_cbq_add(&cb->q, fn, &seq);
    if (!err)
        cb->refs++;   /* the announcement's */
    pthread_mutex_unlock(&cb->lock);
    if (err) {
        free(a);
        if (err == cudaErrorLaunchOutOfResources)
            tdm_log_session(s->id, "more than %d host callbacks pending: refused", TDM_CBQ_MAX);
        return err;
    }
    *a = (due_arg){ cb, seq };
    /* Not under cb->lock: due may come at once, from the stream's thread.
     * Nothing else changes the instance meanwhile: polls and the session's
     * end are served by this thread. */
    err = s->srv->ops->host_func_enqueue(s->srv->be, st->bs, on_due, a, &hold);
    pthread_mutex_lock(&cb->lock);
    if (err) {
        tdm_cbq_remove(&cb->q, seq);
        free(a);
        unref_unlock(cb);
        return err;
    }
    tdm_cbq_find(&cb->q, seq)->hold = hold;
    pthread_mutex_unlock(&cb->lock);
    return 0;
}

int tdm_session_callback_poll(tdm_session *s, const uint64_t *done, size_t ndone, tdm_cb_due_out *due,
                              size_t max, size_t *ndue, uint32_t *pending)
{
    tdm_session_callbacks *cb = s->callbacks;
    void *holds[TDM_CB_POLL_MAX];
    size_t nholds = 0;
    tdm_cb_inst taken[TDM_CB_POLL_MAX];
    int err = 0;

    *ndue = 0;
    *pending = 0;
    if (ndone > TDM_CB_POLL_MAX || max > TDM_CB_POLL_MAX)
        return cudaErrorInvalidValue;
    if (!cb) {
        if (ndone)
            tdm_log_session(s->id, "host callback %llu reported done, but the session has none",
                            (unsigned long long)done[0]);
        return ndone ? cudaErrorInvalidValue : 0;
    }
    pthread_mutex_lock(&cb->lock);
    for (size_t i = 0; i < ndone; i++) {
        void *h = NULL;
        int e = tdm_cbq_done(&cb->q, done[i], &h);

        if (e) {
            if (!err)
                tdm_log_session(s->id, "host callback %llu reported done, but it is not one the guest was given",
                                (unsigned long long)done[i]);
            err = err ? err : e;
            continue;
        }
        holds[nholds++] = h;
    }
    *ndue = tdm_cbq_take_due(&cb->q, taken, max);
    for (size_t i = 0; i < *ndue; i++)
        due[i] = (tdm_cb_due_out){ taken[i].seq, taken[i].fn, taken[i].status };
    *pending = (uint32_t)cb->q.n;
    pthread_mutex_unlock(&cb->lock);
    for (size_t i = 0; i < nholds; i++)
        s->srv->ops->host_func_release(s->srv->be, holds[i]);
    return err;
}

void tdm_session_callbacks_close(tdm_session *s)
{
    tdm_session_callbacks *cb = s->callbacks;

    if (!cb)
        return;
    s->callbacks = NULL;
    pthread_mutex_lock(&cb->lock);
    cb->closed = true;
    /* Every held stream goes on: nobody will run those functions now. */
    for (size_t i = 0; i < cb->q.n; i++)
        if (cb->q.v[i].hold)
            s->srv->ops->host_func_release(s->srv->be, cb->q.v[i].hold);
    if (cb->q.n)
        tdm_log_session(s->id, "ended with %zu host callback(s) not run: their streams are released",
                        cb->q.n);
    cb->q.n = 0;
    unref_unlock(cb);
}

/* ---- graph host nodes (issue 14, docs/graphs.md "Host nodes") ---- */

/* One launch's host nodes: each becomes an instance, as an enqueue's. */
typedef struct launch_bind {
    tdm_session_callbacks *cb;
    due_arg **bound;     /* the instances made so far, to undo on failure */
    size_t n, cap;
} launch_bind;

static int bind_host(void *ctx, uint64_t key, tdm_bhold *hold, void **arg)
{
    launch_bind *lb = ctx;
    tdm_session_callbacks *cb = lb->cb;
    due_arg *a;
    uint64_t seq = 0;
    int err;

    if (tdm_grow(&lb->bound, &lb->cap, lb->n + 1, sizeof(*lb->bound), 8) != 0 || !(a = malloc(sizeof(*a))))
        return cudaErrorMemoryAllocation;
    pthread_mutex_lock(&cb->lock);
    err = tdm_cbq_add(&cb->q, key, &seq);
    if (!err) {
        cb->refs++;   /* the announcement's */
        tdm_cbq_find(&cb->q, seq)->hold = hold;
    }
    pthread_mutex_unlock(&cb->lock);
    if (err) {
        free(a);
        return err;
    }
    *a = (due_arg){ cb, seq };
    lb->bound[lb->n++] = a;
    *arg = a;
    return 0;
}

int tdm_session_callbacks_launch_graph(tdm_session *s, tdm_bgexec *bx, tdm_bstream *bs)
{
    tdm_session_callbacks *cb;
    launch_bind lb = { 0 };
    tdm_bhost_binder hb;
    int err;

    if (!s->srv->ops->graph_launch_hosts)
        return s->srv->ops->graph_launch(s->srv->be, bx, bs);
    if (!(cb = callbacks_of(s)))
        return cudaErrorMemoryAllocation;
    lb.cb = cb;
    hb = (tdm_bhost_binder){ bind_host, on_due, &lb };
    err = s->srv->ops->graph_launch_hosts(s->srv->be, bx, bs, &hb);
    /* Failed: nothing was queued, so no due comes for what was bound. */
    for (size_t i = 0; err && i < lb.n; i++) {
        tdm_cb_inst *inst;
        void *hold = NULL;

        pthread_mutex_lock(&cb->lock);
        if ((inst = tdm_cbq_find(&cb->q, lb.bound[i]->seq)))
            hold = inst->hold;
        tdm_cbq_remove(&cb->q, lb.bound[i]->seq);
        free(lb.bound[i]);
        cb->refs--;   /* never the last: the session holds one */
        pthread_mutex_unlock(&cb->lock);
        if (hold)
            s->srv->ops->host_func_release(s->srv->be, hold);
    }
    if (err == cudaErrorLaunchOutOfResources)
        tdm_log_session(s->id, "more than %d host callbacks pending: graph launch refused", TDM_CBQ_MAX);
    free(lb.bound);
    return err;
}
