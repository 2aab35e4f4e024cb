/* Host callbacks on the simulated GPU (issue 14, docs/runtime-api.md "Host
 * callbacks"): an op in the stream's queue.  When the worker reaches it,
 * it tells the session (due) and then waits, holding its stream, until the
 * session releases the hold: later work of the stream waits, other streams
 * go on, as on a GPU. */
#include <stdlib.h>

#include "sim_internal.h"

/* Shared by the op and the session; freed when both let go (b->lock). */
struct tdm_bhold {
    int refs;
    bool released;
};

void sim_host_unref_locked(tdm_bhold *h)
{
    if (--h->refs == 0)
        free(h);
}

int sim_host_func_enqueue(tdm_backend *b, tdm_bstream *s, void (*due)(void *arg, int status), void *arg,
                          tdm_bhold **out)
{
    sim_op *op = calloc(1, sizeof(*op));
    tdm_bhold *h = calloc(1, sizeof(*h));

    if (!op || !h) {
        free(op);
        free(h);
        return cudaErrorMemoryAllocation;
    }
    h->refs = 2;
    op->kind = SIM_OP_HOST;
    op->due = due;
    op->due_arg = arg;
    op->hold = h;
    *out = h;
    sim_enqueue(b, s, op);
    return 0;
}

void sim_host_func_release(tdm_backend *b, tdm_bhold *h)
{
    pthread_mutex_lock(&b->lock);
    h->released = true;
    pthread_cond_broadcast(&b->progress);
    sim_host_unref_locked(h);
    pthread_mutex_unlock(&b->lock);
}

void sim_host_run_locked(tdm_backend *b, tdm_bstream *s, sim_op *op)
{
    int status;

    /* The stream's error is what CUDA passes a stream callback. */
    sim_context_poll_locked(b, s);
    status = s->sticky;
    pthread_mutex_unlock(&b->lock);
    op->due(op->due_arg, status);
    pthread_mutex_lock(&b->lock);
    /* Shutdown cuts the wait short: the server is going, and with it the
     * session that would have released it. */
    while (!op->hold->released && !atomic_load(&b->stopping))
        pthread_cond_wait(&b->progress, &b->lock);
}

/* ---- graph host nodes (issue 14, docs/graphs.md "Host nodes") ---- */

int sim_stream_capture_host(tdm_backend *b, tdm_bstream *s, uint64_t host_key)
{
    sim_op *op = calloc(1, sizeof(*op));
    bool taken;

    if (!op)
        return cudaErrorMemoryAllocation;
    op->kind = SIM_OP_HOST;
    op->host_key = host_key;   /* no hold: a graph's node, each launch binds its own */
    pthread_mutex_lock(&b->lock);
    taken = sim_capture_take_locked(b, s, op);
    pthread_mutex_unlock(&b->lock);
    if (!taken) {
        free(op);
        return cudaErrorIllegalState;
    }
    return 0;
}

int sim_host_bind(sim_op *op, const tdm_bhost_binder *hb)
{
    tdm_bhold *h = calloc(1, sizeof(*h));
    int err;

    if (!h)
        return cudaErrorMemoryAllocation;
    h->refs = 2;   /* the op's and the session's, as host_func_enqueue's */
    err = hb->bind(hb->ctx, op->host_key, h, &op->due_arg);
    if (err) {
        free(h);
        return err;
    }
    op->due = hb->due;
    op->hold = h;
    return 0;
}
