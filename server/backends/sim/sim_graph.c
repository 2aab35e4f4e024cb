/* Stream capture and graphs on the simulated GPU.
 *
 * A capture is a list of the operations its streams were given, in the
 * order the server issued them.  That order already respects every
 * dependency of the capture (a stream that joins through an event only
 * gets its work after the record), so a graph replays its list in order on
 * the launch stream: a valid topological order of the graph CUDA would
 * have built, with less concurrency.  Event records inside a capture are
 * dependencies, not work, so they leave no operation behind. */
#include <stdlib.h>
#include <string.h>

#include "sim_internal.h"

typedef struct sim_capture {
    uint64_t id;
    tdm_bstream *origin;     /* the stream that began it: only it may end it */
    sim_op *head, *tail;
    bool invalidated;
} sim_capture;

/* The operations of a graph, shared by the graph and the executable
 * graphs made from it (either may be destroyed first). */
typedef struct sim_oplist {
    int refs;                /* under b->lock */
    sim_op *head;
} sim_oplist;

struct tdm_bgraph {
    sim_oplist *ops;
};

struct tdm_bgexec {
    sim_oplist *ops;
};

bool sim_capture_take_locked(tdm_backend *b, tdm_bstream *s, sim_op *op)
{
    sim_capture *c = s->capture;

    if (!c)
        return false;
    op->next = NULL;
    if (c->tail)
        c->tail->next = op;
    else
        c->head = op;
    c->tail = op;
    return true;
}

int sim_capture_refuse_sync_locked(tdm_backend *b, tdm_bstream *s)
{
    if (!s->capture)
        return 0;
    s->capture->invalidated = true;
    sim_log("synchronizing a capturing stream: the capture is invalidated");
    return cudaErrorStreamCaptureUnsupported;
}

bool sim_capture_record_locked(tdm_backend *b, tdm_bevent *e, tdm_bstream *s)
{
    e->capture = s->capture;
    return s->capture != NULL;
}

int sim_capture_wait_locked(tdm_backend *b, tdm_bstream *s, tdm_bevent *e)
{
    if (!e->capture)
        return 0;
    if (!s->capture) {
        s->capture = e->capture;   /* s joins: its work goes to the graph now */
        return 1;
    }
    return s->capture == e->capture ? 1 : -cudaErrorStreamCaptureIsolation;
}

int sim_stream_begin_capture(tdm_backend *b, tdm_bstream *s, int mode)
{
    sim_capture *c;
    int err = 0;

    if (mode < cudaStreamCaptureModeGlobal || mode > cudaStreamCaptureModeRelaxed)
        return cudaErrorInvalidValue;
    if (!s || s == b->legacy)
        return cudaErrorStreamCaptureImplicit;
    c = calloc(1, sizeof(*c));
    if (!c)
        return cudaErrorMemoryAllocation;
    pthread_mutex_lock(&b->lock);
    if (s->capture) {
        err = cudaErrorIllegalState;
    } else {
        c->id = ++b->last_capture_id;
        c->origin = s;
        s->capture = c;
    }
    pthread_mutex_unlock(&b->lock);
    if (err)
        free(c);
    return err;
}

static void ops_free_locked(tdm_backend *b, sim_op *op)
{
    while (op) {
        sim_op *next = op->next;
        sim_op_free_locked(b, op);
        op = next;
    }
}

int sim_stream_end_capture(tdm_backend *b, tdm_bstream *s, tdm_bgraph **out)
{
    sim_capture *c;
    tdm_bgraph *g = NULL;
    sim_oplist *l = NULL;
    int err = 0;

    *out = NULL;
    pthread_mutex_lock(&b->lock);
    c = s ? s->capture : NULL;
    if (!c) {
        err = cudaErrorIllegalState;
        goto out;
    }
    if (c->origin != s) {
        err = cudaErrorStreamCaptureUnmatched;
        goto out;
    }
    /* Every stream that joined leaves the capture with it. */
    for (tdm_bstream *t = b->streams; t; t = t->next)
        if (t->capture == c)
            t->capture = NULL;
    for (tdm_bevent *e = b->events; e; e = e->next)
        if (e->capture == c)
            e->capture = NULL;
    if (c->invalidated) {
        err = cudaErrorStreamCaptureInvalidated;
    } else if (!(g = calloc(1, sizeof(*g))) || !(l = calloc(1, sizeof(*l)))) {
        err = cudaErrorMemoryAllocation;
    } else {
        l->refs = 1;
        l->head = c->head;
        c->head = NULL;
        g->ops = l;
        *out = g;
    }
    if (err) {
        free(g);
        ops_free_locked(b, c->head);
    }
    free(c);
out:
    pthread_mutex_unlock(&b->lock);
    return err;
}

int sim_stream_capture_info(tdm_backend *b, tdm_bstream *s, int *status, uint64_t *id)
{
    s = sim_stream_or_legacy(b, s);
    pthread_mutex_lock(&b->lock);
    *status = !s->capture ? cudaStreamCaptureStatusNone
              : s->capture->invalidated ? cudaStreamCaptureStatusInvalidated : cudaStreamCaptureStatusActive;
    *id = s->capture ? s->capture->id : 0;
    pthread_mutex_unlock(&b->lock);
    return 0;
}

static void oplist_unref(tdm_backend *b, sim_oplist *l)
{
    pthread_mutex_lock(&b->lock);
    if (--l->refs == 0) {
        ops_free_locked(b, l->head);
        free(l);
    }
    pthread_mutex_unlock(&b->lock);
}

int sim_graph_destroy(tdm_backend *b, tdm_bgraph *g)
{
    oplist_unref(b, g->ops);
    free(g);
    return 0;
}

int sim_graph_instantiate(tdm_backend *b, tdm_bgraph *g, uint64_t flags, tdm_bgexec **out)
{
    tdm_bgexec *x = calloc(1, sizeof(*x));

    if (!x)
        return cudaErrorMemoryAllocation;
    pthread_mutex_lock(&b->lock);
    g->ops->refs++;
    pthread_mutex_unlock(&b->lock);
    x->ops = g->ops;
    *out = x;
    return 0;
}

int sim_graph_exec_destroy(tdm_backend *b, tdm_bgexec *x)
{
    oplist_unref(b, x->ops);
    free(x);
    return 0;
}

/* A queued op owns its buffers and references, so each launch queues
 * copies of the graph's ops.  NULL for want of memory. */
static sim_op *op_clone(tdm_backend *b, const sim_op *op)
{
    sim_op *c = malloc(sizeof(*c));

    if (!c)
        return NULL;
    *c = *op;
    c->next = NULL;
    c->host = NULL;
    c->params = NULL;
    if (op->kind == SIM_OP_HTOD && !(c->host = malloc(op->n ? op->n : 1)))
        goto fail;
    if (op->kind == SIM_OP_HTOD)
        memcpy(c->host, op->host, op->n);
    if (op->params) {
        size_t len = op->func->params_len;
        if (!(c->params = malloc(len ? len : 1)))
            goto fail;
        memcpy(c->params, op->params, len);
    }
    pthread_mutex_lock(&b->lock);
    if (c->func)
        c->func->m->refs++;
    if (c->event)
        c->event->refs++;
    pthread_mutex_unlock(&b->lock);
    return c;
fail:
    free(c->host);
    free(c);
    return NULL;
}

int sim_graph_launch(tdm_backend *b, tdm_bgexec *x, tdm_bstream *s)
{
    for (const sim_op *op = x->ops->head; op; op = op->next) {
        sim_op *c = op_clone(b, op);
        if (!c)
            return cudaErrorMemoryAllocation;
        sim_enqueue(b, s, c);
    }
    return 0;
}

/* Same topology: as many ops, each of the same kind (a captured graph is
 * a chain), a launch of the same kernel. */
int sim_graph_exec_update(tdm_backend *b, tdm_bgexec *x, tdm_bgraph *g, int *result)
{
    const sim_op *a, *n;
    sim_oplist *old;
    size_t na = 0, nn = 0;

    /* As the driver: the node count first, then each node. */
    for (a = x->ops->head; a; a = a->next)
        na++;
    for (n = g->ops->head; n; n = n->next)
        nn++;
    if (na != nn) {
        *result = cudaGraphExecUpdateErrorTopologyChanged;
        return cudaErrorGraphExecUpdateFailure;
    }
    *result = cudaGraphExecUpdateSuccess;
    for (a = x->ops->head, n = g->ops->head; a && n; a = a->next, n = n->next) {
        if (a->kind != n->kind)
            *result = cudaGraphExecUpdateErrorNodeTypeChanged;
        else if (a->kind == SIM_OP_LAUNCH && a->func != n->func)
            *result = cudaGraphExecUpdateErrorFunctionChanged;
        if (*result != cudaGraphExecUpdateSuccess)
            return cudaErrorGraphExecUpdateFailure;
    }
    pthread_mutex_lock(&b->lock);
    g->ops->refs++;
    pthread_mutex_unlock(&b->lock);
    old = x->ops;
    x->ops = g->ops;
    oplist_unref(b, old);
    return 0;
}
