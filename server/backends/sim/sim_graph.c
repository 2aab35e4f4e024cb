/* Stream capture and graphs on the simulated GPU.
 *
 * A graph is a set of nodes (an operation each, none for an empty node)
 * with their dependencies.  A capture builds its graph as its streams are
 * given work, in the order the server issued it; that order already
 * respects every dependency of the capture (a stream that joins through
 * an event only gets its work after the record), so each captured node
 * follows the capture's current dependencies (the node before it, unless
 * the program set others: cudaStreamUpdateCaptureDependencies).  Instantiation puts the nodes
 * in a topological order, and a launch replays that order on the launch
 * stream: the graph CUDA would run, with less concurrency.  Event records
 * inside a capture are dependencies, not work: they leave no node. */
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "sim_internal.h"

typedef struct sim_capture {
    uint64_t id;
    int mode;                /* cudaStreamCaptureMode it began in */
    pthread_t thread;        /* the thread that began it (thread-local mode binds that one) */
    tdm_bstream *origin;     /* the stream that began it: only it may end it */
    bool invalidated;
    tdm_bgraph *graph;       /* the graph it builds */
    bool owned;              /* graph is the capture's (not cudaStreamBeginCaptureToGraph's) */
    bool shared;             /* graph was handed out (sim_stream_capture_graph): a stream going leaves it */
    tdm_bgnode **deps;       /* what the next captured node follows */
    size_t ndeps, depcap;
} sim_capture;

/* The operations of a graph, shared by the graph and the executable
 * graphs made from it (either may be destroyed first). */
typedef struct sim_oplist {
    int refs;                /* under b->lock */
    sim_op *head;
} sim_oplist;

struct tdm_bgnode {
    sim_op *op;              /* NULL: an empty node */
    struct tdm_bgnode **deps;
    size_t ndeps, depcap;
    size_t mark;             /* topological sort: 0 unseen, 1 in progress, 2 done */
    struct tdm_bgnode *origin; /* a clone's node: the node it copies (compared, never followed) */
    /* ---- external semaphore nodes (issue 14) ---- */
    int extsem;              /* op NULL: 0, or the node's cudaGraphNodeTypeExtSemaphore* (it runs nothing) */
};

struct tdm_bgraph {
    tdm_bgnode **nodes;
    size_t n, cap;
    struct sim_condvar **vars; /* the conditional handles made on it (one reference each) */
    size_t nvars, varcap;
};

/* Which op of an exec's list a graph node became, for setting a node's
 * parameters in the exec (nodes without an op are left out). */
typedef struct sim_nodemap {
    struct {
        tdm_bgnode *node;
        sim_op *op;
    } *v;
    size_t n, cap;
} sim_nodemap;

struct tdm_bgexec {
    sim_oplist *ops;
    sim_nodemap map;
};

/* Conditional handles and nodes: see the conditional block below. */
typedef struct sim_condvar {
    struct sim_condvar *next;
    uint64_t id;
    unsigned value, dflt;
    bool assign_default;
    int refs;                /* its graph, and every op naming it; under b->lock */
} sim_condvar;

/* ---- child graphs (issue 14): a child graph node is a sim_cond of this type, its one body the embedded graph ---- */
enum { SIM_COND_CHILD = -2 };

typedef struct sim_cond {
    int refs;                /* under b->lock */
    int type;                /* a cudaGraphConditionalNodeType; -1: a launch's default values; SIM_COND_CHILD */
    sim_condvar *var;
    unsigned size;
    tdm_bgraph **bodies;     /* a graph's node: its body graphs, owned */
    sim_oplist **lists;      /* an exec's node: the bodies compiled */
    sim_condvar **resets;    /* type -1: the handles to reset */
    size_t nresets;
} sim_cond;

static int node_add_locked(tdm_bgraph *g, sim_op *op, tdm_bgnode *const *deps, size_t ndeps);
static void graph_free_locked(tdm_backend *b, tdm_bgraph *g);

bool sim_capture_take_locked(tdm_backend *b, tdm_bstream *s, sim_op *op)
{
    sim_capture *c = s->capture;

    if (!c)
        return false;
    op->next = NULL;
    if (c->invalidated || node_add_locked(c->graph, op, c->deps, c->ndeps) != 0 ||
        tdm_grow(&c->deps, &c->depcap, 1, sizeof(*c->deps), 4) != 0) {
        if (!c->invalidated && c->graph->n && c->graph->nodes[c->graph->n - 1]->op == op)
            c->graph->nodes[c->graph->n - 1]->op = NULL;   /* the node stays, empty */
        sim_op_free_locked(b, op);
        c->invalidated = true;
        return true;
    }
    c->deps[0] = c->graph->nodes[c->graph->n - 1];
    c->ndeps = 1;
    return true;
}

bool sim_capture_forbids_unsafe_locked(tdm_backend *b)
{
    for (tdm_bstream *t = b->streams; t; t = t->next) {
        const sim_capture *c = t->capture;
        if (c && c->origin == t &&
            (c->mode == cudaStreamCaptureModeGlobal ||
             (c->mode == cudaStreamCaptureModeThreadLocal && pthread_equal(c->thread, pthread_self()))))
            return true;
    }
    return false;
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

/* b->lock held.  Takes every stream and event out of capture c. */
static void capture_detach_locked(tdm_backend *b, sim_capture *c)
{
    for (tdm_bstream *t = b->streams; t; t = t->next)
        if (t->capture == c)
            t->capture = NULL;
    for (tdm_bevent *e = b->events; e; e = e->next)
        if (e->capture == c)
            e->capture = NULL;
}

static void ops_free_locked(tdm_backend *b, sim_op *op);

void sim_capture_stream_gone_locked(tdm_backend *b, tdm_bstream *s)
{
    sim_capture *c = s->capture;

    s->capture = NULL;
    if (!c || c->origin != s)
        return;
    capture_detach_locked(b, c);
    if (c->owned && !c->shared)
        graph_free_locked(b, c->graph);
    free(c->deps);
    free(c);
}

/* A capture into `into` (NULL: a new graph) after deps. */
static int begin_capture(tdm_backend *b, tdm_bstream *s, int mode, tdm_bgraph *into, tdm_bgnode *const *deps,
                         size_t ndeps)
{
    sim_capture *c;
    int err = 0;

    if (mode < cudaStreamCaptureModeGlobal || mode > cudaStreamCaptureModeRelaxed)
        return cudaErrorInvalidValue;
    if (!s || s == b->legacy)
        return cudaErrorStreamCaptureImplicit;
    c = calloc(1, sizeof(*c));
    if (!c || tdm_grow(&c->deps, &c->depcap, ndeps ? ndeps : 1, sizeof(*c->deps), 4) != 0 ||
        !(c->graph = into ? into : calloc(1, sizeof(*c->graph)))) {
        if (c)
            free(c->deps);
        free(c);
        return cudaErrorMemoryAllocation;
    }
    c->owned = !into;
    c->ndeps = ndeps;
    if (ndeps)
        memcpy(c->deps, deps, ndeps * sizeof(*deps));
    pthread_mutex_lock(&b->lock);
    if (s->capture) {
        err = cudaErrorIllegalState;
    } else {
        c->id = ++b->last_capture_id;
        c->mode = mode;
        c->thread = pthread_self();
        c->origin = s;
        s->capture = c;
    }
    pthread_mutex_unlock(&b->lock);
    if (err) {
        if (c->owned)
            free(c->graph);
        free(c->deps);
        free(c);
    }
    return err;
}

int sim_stream_begin_capture(tdm_backend *b, tdm_bstream *s, int mode)
{
    return begin_capture(b, s, mode, NULL, NULL, 0);
}

static void ops_free_locked(tdm_backend *b, sim_op *op)
{
    while (op) {
        sim_op *next = op->next;
        sim_op_free_locked(b, op);
        op = next;
    }
}

/* b->lock held (or g not yet shared).  Adds a node running op (owned by
 * the node from then on; NULL: empty) after deps. */
static int node_add_locked(tdm_bgraph *g, sim_op *op, tdm_bgnode *const *deps, size_t ndeps)
{
    tdm_bgnode *nd = calloc(1, sizeof(*nd));

    if (!nd || tdm_grow(&g->nodes, &g->cap, g->n + 1, sizeof(*g->nodes), 16) != 0 ||
        (ndeps && tdm_grow(&nd->deps, &nd->depcap, ndeps, sizeof(*nd->deps), 4) != 0)) {
        if (nd)
            free(nd->deps);
        free(nd);
        return cudaErrorMemoryAllocation;
    }
    if (ndeps)
        memcpy(nd->deps, deps, ndeps * sizeof(*deps));
    nd->ndeps = ndeps;
    nd->op = op;
    g->nodes[g->n++] = nd;
    return 0;
}

static void condvar_unref_locked(tdm_backend *b, sim_condvar *v);

static void graph_free_locked(tdm_backend *b, tdm_bgraph *g)
{
    for (size_t i = 0; i < g->nvars; i++)
        condvar_unref_locked(b, g->vars[i]);
    free(g->vars);
    for (size_t i = 0; i < g->n; i++) {
        if (g->nodes[i]->op)
            sim_op_free_locked(b, g->nodes[i]->op);
        free(g->nodes[i]->deps);
        free(g->nodes[i]);
    }
    free(g->nodes);
    free(g);
}

int sim_stream_end_capture(tdm_backend *b, tdm_bstream *s, tdm_bgraph **out)
{
    sim_capture *c;
    tdm_bgraph *g = NULL;
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
    capture_detach_locked(b, c);
    g = c->graph;
    if (c->invalidated) {
        /* An invalidated capture's own graph is gone, handed out or not. */
        err = cudaErrorStreamCaptureInvalidated;
        if (c->owned)
            graph_free_locked(b, g);
    } else {
        *out = g;
    }
    free(c->deps);
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
    pthread_mutex_lock(&b->lock);
    graph_free_locked(b, g);
    pthread_mutex_unlock(&b->lock);
    return 0;
}

static sim_op *op_clone(tdm_backend *b, const sim_op *op);
static sim_op *cond_instantiate(tdm_backend *b, const sim_op *op);

/* Depth-first: nd after everything it depends on.  A cycle is an
 * invalid graph, as cuGraphInstantiate says. */
static int topo_visit(tdm_backend *b, tdm_bgnode *nd, sim_op ***tail, sim_nodemap *map)
{
    if (nd->mark == 2)
        return 0;
    if (nd->mark == 1)
        return cudaErrorInvalidValue;
    nd->mark = 1;
    for (size_t i = 0; i < nd->ndeps; i++) {
        int err = topo_visit(b, nd->deps[i], tail, map);
        if (err)
            return err;
    }
    nd->mark = 2;
    if (nd->extsem)   /* ---- external semaphore nodes (issue 14): it names no semaphore ---- */
        return cudaErrorInvalidValue;
    if (nd->op) {
        sim_op *c = nd->op->kind == SIM_OP_COND ? cond_instantiate(b, nd->op) : op_clone(b, nd->op);
        if (!c)
            return cudaErrorMemoryAllocation;
        **tail = c;
        *tail = &c->next;
        if (tdm_grow(&map->v, &map->cap, map->n + 1, sizeof(*map->v), 16) != 0)
            return cudaErrorMemoryAllocation;
        map->v[map->n].node = nd;
        map->v[map->n++].op = c;
    }
    return 0;
}

/* The operations of g in a topological order, copied: an executable graph
 * stands apart from the graph it came from, as in CUDA. */
static void nodemap_free(sim_nodemap *m)
{
    free(m->v);
    memset(m, 0, sizeof(*m));
}

static sim_op *cond_resets(tdm_backend *b, tdm_bgraph *g, int *err);

/* top: g is launched itself (not a conditional body): its handles take
 * their default values first. */
static int graph_oplist(tdm_backend *b, tdm_bgraph *g, bool top, sim_oplist **out, sim_nodemap *map)
{
    sim_oplist *l = calloc(1, sizeof(*l));
    sim_op **tail;
    int err = 0;

    if (!l)
        return cudaErrorMemoryAllocation;
    l->refs = 1;
    tail = &l->head;
    if (top && (*tail = cond_resets(b, g, &err)))
        tail = &(*tail)->next;
    if (err) {
        free(l);
        return err;
    }
    for (size_t i = 0; i < g->n; i++)
        g->nodes[i]->mark = 0;
    memset(map, 0, sizeof(*map));
    for (size_t i = 0; i < g->n && !err; i++)
        err = topo_visit(b, g->nodes[i], &tail, map);
    if (err) {
        oplist_unref(b, l);
        nodemap_free(map);
        return err;
    }
    *out = l;
    return 0;
}

int sim_graph_instantiate(tdm_backend *b, tdm_bgraph *g, uint64_t flags, tdm_bgexec **out)
{
    tdm_bgexec *x = calloc(1, sizeof(*x));
    int err;

    if (!x)
        return cudaErrorMemoryAllocation;
    err = graph_oplist(b, g, true, &x->ops, &x->map);
    if (err) {
        free(x);
        return err;
    }
    *out = x;
    return 0;
}

int sim_graph_exec_destroy(tdm_backend *b, tdm_bgexec *x)
{
    oplist_unref(b, x->ops);
    nodemap_free(&x->map);
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
    /* A device-to-host node writes its graph's host memory, which it does not own. */
    c->host = op->kind == SIM_OP_DTOH ? op->host : NULL;
    c->params = NULL;
    /* A host node's launch binds its own (sim_graph_launch_hosts). */
    c->hold = NULL;
    c->due = NULL;
    c->due_arg = NULL;
    if (op->kind == SIM_OP_HTOD && !(c->host = malloc(op->n ? op->n : 1)))
        goto fail;
    /* A graph's host-to-device node reads its host memory at each launch. */
    if (op->kind == SIM_OP_HTOD)
        memcpy(c->host, op->live_src ? op->live_src : op->host, op->n);
    if (op->params) {
        size_t len = op->func->params_len;
        if (!(c->params = malloc(len ? len : 1)))
            goto fail;
        memcpy(c->params, op->params, len);
    }
    pthread_mutex_lock(&b->lock);
    if (c->cond)
        c->cond->refs++;
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
    return sim_graph_launch_hosts(b, x, s, NULL);
}

/* Every op is copied (and each host node bound) before any is queued, so
 * that a failure queues nothing. */
static void event_op_queued(tdm_backend *b, sim_op *op, tdm_bstream *s);

int sim_graph_launch_hosts(tdm_backend *b, tdm_bgexec *x, tdm_bstream *s, const tdm_bhost_binder *hb)
{
    sim_op *head = NULL, **tail = &head;
    int err = 0;

    for (const sim_op *op = x->ops->head; op && !err; op = op->next) {
        sim_op *c;

        if (op->disabled)   /* graph node parameters (issue 14): an empty node until enabled */
            continue;
        if (!(c = op_clone(b, op))) {

            err = cudaErrorMemoryAllocation;
            break;
        }
        *tail = c;
        tail = &c->next;
        if (c->kind == SIM_OP_HOST)
            err = hb ? sim_host_bind(c, hb) : cudaErrorInvalidValue;
    }
    while (head) {
        sim_op *next = head->next;

        if (err) {
            pthread_mutex_lock(&b->lock);
            sim_op_free_locked(b, head);
            pthread_mutex_unlock(&b->lock);
        } else {
            event_op_queued(b, head, s);   /* ---- event nodes (issue 14) ---- */
            sim_enqueue(b, s, head);
        }
        head = next;
    }
    return err;
}

/* Same topology: as many ops, each of the same kind (a captured graph is
 * a chain), a launch of the same kernel. */
int sim_graph_exec_update(tdm_backend *b, tdm_bgexec *x, tdm_bgraph *g, int *result)
{
    const sim_op *a, *n;
    sim_oplist *old, *l;
    sim_nodemap map;
    size_t na = 0, nn = 0;
    int err = graph_oplist(b, g, true, &l, &map);

    *result = cudaGraphExecUpdateError;
    if (err)
        return err;
    /* As the driver: the node count first, then each node. */
    for (a = x->ops->head; a; a = a->next)
        na++;
    for (n = l->head; n; n = n->next)
        nn++;
    *result = na != nn ? cudaGraphExecUpdateErrorTopologyChanged : cudaGraphExecUpdateSuccess;
    for (a = x->ops->head, n = l->head; a && n && *result == cudaGraphExecUpdateSuccess; a = a->next, n = n->next) {
        if (a->kind != n->kind)
            *result = cudaGraphExecUpdateErrorNodeTypeChanged;
        else if (a->kind == SIM_OP_LAUNCH && a->func != n->func)
            *result = cudaGraphExecUpdateErrorFunctionChanged;
    }
    if (*result != cudaGraphExecUpdateSuccess) {
        oplist_unref(b, l);
        nodemap_free(&map);
        return cudaErrorGraphExecUpdateFailure;
    }
    /* Same shape: the exec's nodes stay those of its own graph, as in CUDA,
     * and now run the new ops. */
    for (size_t i = 0; i < x->map.n && i < map.n; i++) {
        map.v[i].op->disabled = x->map.v[i].op->disabled;   /* a node stays as enabled as it was */
        x->map.v[i].op = map.v[i].op;
    }
    nodemap_free(&map);
    old = x->ops;
    x->ops = l;
    oplist_unref(b, old);
    return 0;
}

/* ---- explicit construction ---- */

int sim_graph_create(tdm_backend *b, tdm_bgraph **out)
{
    *out = calloc(1, sizeof(**out));
    return *out ? 0 : cudaErrorMemoryAllocation;
}

/* The operation a node runs, owning its copies (NULL for want of memory). */
static sim_op *op_of(tdm_backend *b, const tdm_gnode_desc *d)
{
    static const sim_op_kind kinds[] = { [TDM_GNODE_KERNEL] = SIM_OP_LAUNCH, [TDM_GNODE_COPY_HTOD] = SIM_OP_HTOD,
                                         [TDM_GNODE_COPY_DTOD] = SIM_OP_DTOD, [TDM_GNODE_MEMSET] = SIM_OP_MEMSET,
                                         [TDM_GNODE_COPY_DTOH] = SIM_OP_DTOH, [TDM_GNODE_HOST] = SIM_OP_HOST,
                                         [TDM_GNODE_EVENT_RECORD] = SIM_OP_RECORD,
                                         [TDM_GNODE_EVENT_WAIT] = SIM_OP_WAIT };
    sim_op tmp = { .kind = kinds[d->kind], .dst = d->dst, .src = d->src, .n = d->n, .value = d->value,
                   .host = (void *)d->host, .func = d->func, .grid = d->grid, .block = d->block,
                   .shared_mem = d->shared_mem, .params = (void *)d->params,
                   .live_src = d->kind == TDM_GNODE_COPY_HTOD ? d->host : NULL, .host_key = d->host_key,
                   .event = d->event };

    return op_clone(b, &tmp);
}

int sim_graph_add_node(tdm_backend *b, tdm_bgraph *g, const tdm_gnode_desc *d, tdm_bgnode *const *deps, size_t ndeps,
                       tdm_bgnode **out)
{
    sim_op *op = NULL;
    int err;

    bool extsem = d->kind == TDM_GNODE_EXTSEM_SIGNAL || d->kind == TDM_GNODE_EXTSEM_WAIT;

    if (d->kind == TDM_GNODE_KERNEL && d->params_len != d->func->params_len)
        return cudaErrorInvalidValue;
    if (d->kind != TDM_GNODE_EMPTY && !extsem && !(op = op_of(b, d)))
        return cudaErrorMemoryAllocation;
    pthread_mutex_lock(&b->lock);
    err = node_add_locked(g, op, deps, ndeps);
    if (err && op)
        sim_op_free_locked(b, op);
    pthread_mutex_unlock(&b->lock);
    *out = err ? NULL : g->nodes[g->n - 1];
    if (*out && extsem)   /* ---- external semaphore nodes (issue 14): a typed node that runs nothing ---- */
        (*out)->extsem = d->kind == TDM_GNODE_EXTSEM_SIGNAL ? cudaGraphNodeTypeExtSemaphoreSignal
                                                            : cudaGraphNodeTypeExtSemaphoreWait;
    return err;
}

int sim_graph_add_dependencies(tdm_backend *b, tdm_bgraph *g, tdm_bgnode *const *from, tdm_bgnode *const *to,
                               size_t n)
{
    for (size_t i = 0; i < n; i++) {
        tdm_bgnode *t = to[i];
        if (tdm_grow(&t->deps, &t->depcap, t->ndeps + 1, sizeof(*t->deps), 4) != 0)
            return cudaErrorMemoryAllocation;
        t->deps[t->ndeps++] = from[i];
    }
    return 0;
}

/* Replaces op's kernel configuration with d's (op is a launch). */
static int set_kernel(tdm_backend *b, sim_op *op, const tdm_gnode_desc *d)
{
    void *params;

    if (!op || op->kind != SIM_OP_LAUNCH || d->params_len != d->func->params_len)
        return cudaErrorInvalidValue;
    if (!(params = malloc(d->params_len ? d->params_len : 1)))
        return cudaErrorMemoryAllocation;
    if (d->params_len)
        memcpy(params, d->params, d->params_len);
    pthread_mutex_lock(&b->lock);
    d->func->m->refs++;
    sim_module_unref_locked(b, op->func->m);
    pthread_mutex_unlock(&b->lock);
    free(op->params);
    op->params = params;
    op->func = d->func;
    op->grid = d->grid;
    op->block = d->block;
    op->shared_mem = d->shared_mem;
    return 0;
}

int sim_graph_kernel_node_set(tdm_backend *b, tdm_bgexec *x, tdm_bgnode *n, const tdm_gnode_desc *d)
{
    if (!x)
        return set_kernel(b, n->op, d);
    for (size_t i = 0; i < x->map.n; i++)
        if (x->map.v[i].node == n)
            return set_kernel(b, x->map.v[i].op, d);
    return cudaErrorInvalidValue;   /* not a node of the graph x came from */
}

/* ---- graph memcpy nodes, queries (issue 14) ---- */

static bool child_of(const sim_op *op);
static sim_op *child_clone(tdm_backend *b, const sim_cond *c);

int sim_graph_clone(tdm_backend *b, tdm_bgraph *g, tdm_bgraph **out)
{
    tdm_bgraph *c = calloc(1, sizeof(*c));
    int err = c ? 0 : cudaErrorMemoryAllocation;

    *out = NULL;
    /* The nodes first, in g's order, then each one's dependencies mapped
     * to the clone's nodes of the same index. */
    for (size_t i = 0; g && !err && i < g->n; i++) {
        sim_op *op = child_of(g->nodes[i]->op) ? child_clone(b, g->nodes[i]->op->cond)
                     : g->nodes[i]->op             ? op_clone(b, g->nodes[i]->op)
                                                   : NULL;
        if (g->nodes[i]->op && !op) {
            err = cudaErrorMemoryAllocation;
            break;
        }
        pthread_mutex_lock(&b->lock);
        err = node_add_locked(c, op, NULL, 0);
        if (err && op)
            sim_op_free_locked(b, op);
        pthread_mutex_unlock(&b->lock);
        if (!err) {
            c->nodes[c->n - 1]->origin = g->nodes[i];
            c->nodes[c->n - 1]->extsem = g->nodes[i]->extsem;   /* external semaphore nodes (issue 14) */
        }
    }
    for (size_t i = 0; !err && i < g->n; i++) {
        tdm_bgnode *nd = c->nodes[i];
        if (g->nodes[i]->ndeps && tdm_grow(&nd->deps, &nd->depcap, g->nodes[i]->ndeps, sizeof(*nd->deps), 4) != 0) {
            err = cudaErrorMemoryAllocation;
            break;
        }
        for (size_t k = 0; k < g->nodes[i]->ndeps; k++)
            for (size_t j = 0; j < g->n; j++)
                if (g->nodes[j] == g->nodes[i]->deps[k])
                    nd->deps[nd->ndeps++] = c->nodes[j];
    }
    if (err) {
        if (c)
            sim_graph_destroy(b, c);
        return err;
    }
    *out = c;
    return 0;
}

int sim_graph_nodes(tdm_backend *b, tdm_bgraph *g, tdm_bgnode **out, size_t cap, size_t *n)
{
    for (size_t i = 0; i < g->n && i < cap; i++)
        out[i] = g->nodes[i];
    *n = g->n;
    return 0;
}

int sim_graph_node_type(tdm_backend *b, tdm_bgnode *n, int *type)
{
    static const int types[] = { [SIM_OP_HTOD] = cudaGraphNodeTypeMemcpy, [SIM_OP_DTOH] = cudaGraphNodeTypeMemcpy,
                                 [SIM_OP_DTOD] = cudaGraphNodeTypeMemcpy, [SIM_OP_MEMSET] = cudaGraphNodeTypeMemset,
                                 [SIM_OP_LAUNCH] = cudaGraphNodeTypeKernel,
                                 [SIM_OP_RECORD] = cudaGraphNodeTypeEventRecord,
                                 [SIM_OP_WAIT] = cudaGraphNodeTypeWaitEvent, [SIM_OP_HOST] = cudaGraphNodeTypeHost };

    *type = !n->op ? (n->extsem ? n->extsem : cudaGraphNodeTypeEmpty)   /* external semaphore nodes (issue 14) */
            : (size_t)n->op->kind < sizeof(types) / sizeof(types[0]) ? types[n->op->kind] : cudaGraphNodeTypeEmpty;
    if (n->op && n->op->kind == SIM_OP_COND)   /* conditional and child graph nodes (issue 14) */
        *type = n->op->cond->type == SIM_COND_CHILD ? cudaGraphNodeTypeGraph : cudaGraphNodeTypeConditional;
    return 0;
}

int sim_graph_node_deps(tdm_backend *b, tdm_bgnode *n, tdm_bgnode **out, size_t cap, size_t *count)
{
    for (size_t i = 0; i < n->ndeps && i < cap; i++)
        out[i] = n->deps[i];
    *count = n->ndeps;
    return 0;
}

/* The index of `from` among t's dependencies, or -1. */
static long dep_index(const tdm_bgnode *t, const tdm_bgnode *from)
{
    for (size_t i = 0; i < t->ndeps; i++)
        if (t->deps[i] == from)
            return (long)i;
    return -1;
}

int sim_graph_remove_dependencies(tdm_backend *b, tdm_bgraph *g, tdm_bgnode *const *from, tdm_bgnode *const *to,
                                  size_t n)
{
    /* All or nothing, as the driver: every edge must exist first. */
    for (size_t i = 0; i < n; i++)
        if (dep_index(to[i], from[i]) < 0)
            return cudaErrorInvalidValue;
    for (size_t i = 0; i < n; i++) {
        tdm_bgnode *t = to[i];
        long k = dep_index(t, from[i]);
        if (k >= 0)
            memmove(&t->deps[k], &t->deps[k + 1], (t->ndeps - (size_t)k - 1) * sizeof(*t->deps));
        t->ndeps -= k >= 0;
    }
    return 0;
}

int sim_graph_destroy_node(tdm_backend *b, tdm_bgraph *g, tdm_bgnode *n)
{
    size_t at = g->n;

    for (size_t i = 0; i < g->n; i++) {
        long k;
        if (g->nodes[i] == n)
            at = i;
        else if ((k = dep_index(g->nodes[i], n)) >= 0) {
            tdm_bgnode *t = g->nodes[i];
            memmove(&t->deps[k], &t->deps[k + 1], (t->ndeps - (size_t)k - 1) * sizeof(*t->deps));
            t->ndeps--;
        }
    }
    if (at == g->n)
        return cudaErrorInvalidValue;
    /* Keep the others' order: it is the order nodes were added in. */
    memmove(&g->nodes[at], &g->nodes[at + 1], (g->n - at - 1) * sizeof(*g->nodes));
    g->n--;
    pthread_mutex_lock(&b->lock);
    if (n->op)
        sim_op_free_locked(b, n->op);
    pthread_mutex_unlock(&b->lock);
    free(n->deps);
    free(n);
    return 0;
}

int sim_graph_find_in_clone(tdm_backend *b, tdm_bgraph *clone, tdm_bgnode *n, tdm_bgnode **out)
{
    for (size_t i = 0; i < clone->n; i++)
        if (clone->nodes[i]->origin == n) {
            *out = clone->nodes[i];
            return 0;
        }
    return cudaErrorInvalidValue;
}

/* ---- conditional graph nodes (issue 14) ----
 * A handle is a value cell of the backend (sim_condvar), set by twins
 * (sim_set_conditional) and read by conditional nodes when the stream's
 * worker reaches them.  A conditional node of a graph owns its body
 * graphs; instantiating it compiles each body into an op list, and the
 * node's op runs the list its handle's value picks, on the worker, in
 * place (a While node again while the value stays non-zero).  A launch
 * begins with an op giving the graph's cudaGraphCondAssignDefault handles
 * their default values.  The cell is the handle's, not each exec's: two
 * execs of one graph running at once share it (the driver allows one
 * exec of a graph with conditional nodes at a time anyway). */

static void condvar_unref_locked(tdm_backend *b, sim_condvar *v)
{
    if (--v->refs > 0)
        return;
    for (sim_condvar **p = &b->condvars; *p; p = &(*p)->next)
        if (*p == v) {
            *p = v->next;
            break;
        }
    free(v);
}

static sim_condvar *condvar_find_locked(tdm_backend *b, uint64_t id)
{
    for (sim_condvar *v = b->condvars; v; v = v->next)
        if (v->id == id)
            return v;
    return NULL;
}

static void oplist_unref_locked(tdm_backend *b, sim_oplist *l)
{
    if (--l->refs == 0) {
        ops_free_locked(b, l->head);
        free(l);
    }
}

void sim_cond_unref_locked(tdm_backend *b, sim_cond *c)
{
    if (--c->refs > 0)
        return;
    for (unsigned i = 0; c->bodies && i < c->size; i++)
        if (c->bodies[i])
            graph_free_locked(b, c->bodies[i]);
    for (unsigned i = 0; c->lists && i < c->size; i++)
        if (c->lists[i])
            oplist_unref_locked(b, c->lists[i]);
    for (size_t i = 0; i < c->nresets; i++)
        condvar_unref_locked(b, c->resets[i]);
    if (c->var)
        condvar_unref_locked(b, c->var);
    free(c->bodies);
    free(c->lists);
    free(c->resets);
    free(c);
}

static sim_op *cond_op_new(sim_cond *c)
{
    sim_op *op = calloc(1, sizeof(*op));

    if (op) {
        op->kind = SIM_OP_COND;
        op->cond = c;
    }
    return op;
}

static void cond_free(tdm_backend *b, sim_cond *c)
{
    pthread_mutex_lock(&b->lock);
    sim_cond_unref_locked(b, c);
    pthread_mutex_unlock(&b->lock);
}

int sim_graph_cond_handle_create(tdm_backend *b, tdm_bgraph *g, unsigned dflt, unsigned flags, uint64_t *handle)
{
    sim_condvar *v = calloc(1, sizeof(*v));
    int err = 0;

    if (!v)
        return cudaErrorMemoryAllocation;
    if (flags & ~(unsigned)cudaGraphCondAssignDefault) {
        free(v);
        return cudaErrorInvalidValue;
    }
    pthread_mutex_lock(&b->lock);
    if (tdm_grow(&g->vars, &g->varcap, g->nvars + 1, sizeof(*g->vars), 4) != 0) {
        err = cudaErrorMemoryAllocation;
    } else {
        *v = (sim_condvar){ b->condvars, ++b->last_cond_id, dflt, dflt, (flags & cudaGraphCondAssignDefault) != 0, 1 };
        b->condvars = v;
        g->vars[g->nvars++] = v;
        *handle = v->id;
    }
    pthread_mutex_unlock(&b->lock);
    if (err)
        free(v);
    return err;
}

int sim_graph_add_cond_node(tdm_backend *b, tdm_bgraph *g, uint64_t handle, int type, unsigned size,
                            tdm_bgnode *const *deps, size_t ndeps, tdm_bgnode **out, tdm_bgraph **bodies)
{
    sim_cond *c = calloc(1, sizeof(*c));
    sim_op *op = NULL;
    int err = cudaErrorMemoryAllocation;

    *out = NULL;
    if (!c || !size || !(c->bodies = calloc(size, sizeof(*c->bodies))))
        goto fail;
    c->refs = 1;
    c->type = type;
    c->size = size;
    for (unsigned i = 0; i < size; i++)
        if (!(c->bodies[i] = calloc(1, sizeof(**c->bodies))))
            goto fail;
    if (!(op = cond_op_new(c)))
        goto fail;
    pthread_mutex_lock(&b->lock);
    if (!(c->var = condvar_find_locked(b, handle)))
        err = cudaErrorInvalidValue;
    else if (!(err = node_add_locked(g, op, deps, ndeps)))
        c->var->refs++;
    if (err)
        c->var = NULL;
    pthread_mutex_unlock(&b->lock);
    if (err)
        goto fail;
    memcpy(bodies, c->bodies, size * sizeof(*bodies));
    *out = g->nodes[g->n - 1];
    return 0;
fail:
    free(op);
    if (c)
        cond_free(b, c);
    return err;
}

int sim_stream_begin_capture_to_graph(tdm_backend *b, tdm_bstream *s, tdm_bgraph *g, tdm_bgnode *const *deps,
                                      size_t ndeps, int mode)
{
    return begin_capture(b, s, mode, g, deps, ndeps);
}

/* An exec's copy of a conditional node: its bodies compiled. */
static sim_op *cond_instantiate(tdm_backend *b, const sim_op *op)
{
    const sim_cond *n = op->cond;
    sim_cond *c = calloc(1, sizeof(*c));
    sim_op *x = NULL;
    sim_nodemap map;

    if (!c || !(c->lists = calloc(n->size, sizeof(*c->lists))))
        goto fail;
    c->refs = 1;
    c->type = n->type;
    c->size = n->size;
    for (unsigned i = 0; i < n->size; i++) {
        if (graph_oplist(b, n->bodies[i], false, &c->lists[i], &map) != 0)
            goto fail;
        nodemap_free(&map);   /* a body's nodes are not set through the exec */
    }
    if (!(x = cond_op_new(c)))
        goto fail;
    pthread_mutex_lock(&b->lock);
    c->var = n->var;
    if (c->var)   /* a child graph node has none */
        c->var->refs++;
    pthread_mutex_unlock(&b->lock);
    return x;
fail:
    if (c)
        cond_free(b, c);
    return NULL;
}

/* b->lock held.  Visits the cudaGraphCondAssignDefault handles made on g
 * and on its conditional bodies, at any depth: counts them, and stores
 * them (with a reference) in c->resets when c is given. */
static size_t resets_visit_locked(tdm_bgraph *g, sim_cond *c)
{
    size_t n = 0;

    for (size_t i = 0; i < g->nvars; i++)
        if (g->vars[i]->assign_default) {
            n++;
            if (c) {
                g->vars[i]->refs++;
                c->resets[c->nresets++] = g->vars[i];
            }
        }
    for (size_t i = 0; i < g->n; i++) {
        const sim_op *op = g->nodes[i]->op;
        if (op && op->kind == SIM_OP_COND && op->cond->bodies)
            for (unsigned k = 0; k < op->cond->size; k++)
                n += resets_visit_locked(op->cond->bodies[k], c);
    }
    return n;
}

/* The op giving the cudaGraphCondAssignDefault handles of g and its bodies
 * their default values, NULL (*err 0) when there are none. */
static sim_op *cond_resets(tdm_backend *b, tdm_bgraph *g, int *err)
{
    sim_cond *c;
    sim_op *op;

    *err = 0;
    pthread_mutex_lock(&b->lock);
    size_t n = resets_visit_locked(g, NULL);
    pthread_mutex_unlock(&b->lock);
    if (!n)
        return NULL;
    *err = cudaErrorMemoryAllocation;
    if (!(c = calloc(1, sizeof(*c))) || !(c->resets = calloc(n, sizeof(*c->resets))) || !(op = cond_op_new(c))) {
        if (c)
            free(c->resets);
        free(c);
        return NULL;
    }
    c->refs = 1;
    c->type = -1;
    pthread_mutex_lock(&b->lock);
    if (resets_visit_locked(g, NULL) == n)   /* the graph is the session thread's: it cannot change meanwhile */
        resets_visit_locked(g, c);
    pthread_mutex_unlock(&b->lock);
    *err = 0;
    return op;
}

static void event_op_inline(tdm_backend *b, const sim_op *op, tdm_bstream *s);

/* Runs a compiled body in place on the worker of `stream`. */
static int run_list(tdm_backend *b, const sim_oplist *l, tdm_bstream *stream)
{
    for (const sim_op *op = l->head; op; op = op->next) {
        sim_op *c;
        int err;

        if (op->kind == SIM_OP_RECORD || op->kind == SIM_OP_WAIT) {   /* ---- event nodes (issue 14) ---- */
            event_op_inline(b, op, stream);
            continue;
        }
        if (!(c = op_clone(b, op)))
            return cudaErrorMemoryAllocation;
        c->stream = stream;
        err = sim_op_execute(b, c);
        pthread_mutex_lock(&b->lock);
        sim_op_free_locked(b, c);
        pthread_mutex_unlock(&b->lock);
        if (err)
            return err;
    }
    return 0;
}

/* Which body a value picks: -1 none. */
static int cond_pick(const sim_cond *c, unsigned v)
{
    switch (c->type) {
    case cudaGraphCondTypeIf:
        return v ? 0 : c->size == 2 ? 1 : -1;
    case cudaGraphCondTypeWhile:
        return v ? 0 : -1;
    case cudaGraphCondTypeSwitch:
        return v < c->size ? (int)v : -1;
    default:
        return -1;
    }
}

int sim_cond_execute(tdm_backend *b, sim_op *op)
{
    sim_cond *c = op->cond;
    int err = 0;

    if (c->type == SIM_COND_CHILD)   /* ---- child graphs (issue 14) ---- */
        return run_list(b, c->lists[0], op->stream);
    if (c->type < 0) {
        pthread_mutex_lock(&b->lock);
        for (size_t i = 0; i < c->nresets; i++)
            c->resets[i]->value = c->resets[i]->dflt;
        pthread_mutex_unlock(&b->lock);
        return 0;
    }
    /* A While loop the program never ends hangs its stream, as on the GPU;
     * shutdown still ends it. */
    while (!err && !atomic_load(&b->stopping)) {
        pthread_mutex_lock(&b->lock);
        int pick = cond_pick(c, c->var->value);
        pthread_mutex_unlock(&b->lock);
        if (pick < 0)
            break;
        err = run_list(b, c->lists[pick], op->stream);
        if (c->type != cudaGraphCondTypeWhile)
            break;
    }
    return err;
}

void sim_set_conditional(const sim_launch *l, uint64_t handle, unsigned value)
{
    tdm_backend *b = l->exec->b;
    sim_condvar *v;

    pthread_mutex_lock(&b->lock);
    if ((v = condvar_find_locked(b, handle)))
        v->value = value;
    pthread_mutex_unlock(&b->lock);
    if (!v)
        sim_log("%s: cudaGraphSetConditional of %#llx, no live conditional handle: ignored", l->kernel,
                (unsigned long long)handle);
}

/* A node's cudaGraphNodeType. */
static int node_type(const tdm_bgnode *nd)
{
    if (!nd->op)
        return cudaGraphNodeTypeEmpty;
    switch (nd->op->kind) {
    case SIM_OP_LAUNCH:
        return cudaGraphNodeTypeKernel;
    case SIM_OP_MEMSET:
        return cudaGraphNodeTypeMemset;
    case SIM_OP_COND:
        return nd->op->cond->type == SIM_COND_CHILD ? cudaGraphNodeTypeGraph : cudaGraphNodeTypeConditional;
    case SIM_OP_RECORD:   /* ---- event nodes (issue 14) ---- */
        return cudaGraphNodeTypeEventRecord;
    case SIM_OP_WAIT:
        return cudaGraphNodeTypeWaitEvent;
    default:
        return cudaGraphNodeTypeMemcpy;
    }
}

int sim_stream_capture_graph(tdm_backend *b, tdm_bstream *s, tdm_bgraph **g, tdm_bgnode **deps, int *types,
                             size_t cap, size_t *ndeps)
{
    sim_capture *c;

    *g = NULL;
    *ndeps = 0;
    pthread_mutex_lock(&b->lock);
    c = sim_stream_or_legacy(b, s)->capture;
    if (c && !c->invalidated) {
        c->shared = true;
        *g = c->graph;
        *ndeps = c->ndeps;
        for (size_t i = 0; i < c->ndeps && i < cap; i++) {
            deps[i] = c->deps[i];
            types[i] = node_type(c->deps[i]);
        }
    }
    pthread_mutex_unlock(&b->lock);
    return 0;
}

int sim_stream_update_capture_deps(tdm_backend *b, tdm_bstream *s, tdm_bgnode *const *deps, size_t n,
                                   unsigned flags)
{
    sim_capture *c;
    int err = 0;

    if (flags > cudaStreamSetCaptureDependencies)
        return cudaErrorInvalidValue;
    pthread_mutex_lock(&b->lock);
    c = sim_stream_or_legacy(b, s)->capture;
    if (!c || c->invalidated) {
        err = c ? cudaErrorStreamCaptureInvalidated : cudaErrorIllegalState;
    } else {
        size_t base = flags == cudaStreamSetCaptureDependencies ? 0 : c->ndeps;
        if (tdm_grow(&c->deps, &c->depcap, base + n, sizeof(*c->deps), 4) != 0) {
            err = cudaErrorMemoryAllocation;
        } else {
            if (n)
                memcpy(c->deps + base, deps, n * sizeof(*deps));
            c->ndeps = base + n;
        }
    }
    pthread_mutex_unlock(&b->lock);
    return err;
}

/* ---- graph node parameters (issue 14) ---- */

/* n's op in x, or NULL when n is no node of the graph x came from (or an
 * empty one). */
static sim_op *exec_op(tdm_bgexec *x, const tdm_bgnode *n)
{
    for (size_t i = 0; i < x->map.n; i++)
        if (x->map.v[i].node == n)
            return x->map.v[i].op;
    return NULL;
}

int sim_graph_node_enabled(tdm_backend *b, tdm_bgexec *x, tdm_bgnode *n, int set, unsigned *enabled)
{
    sim_op *op = exec_op(x, n);

    (void)b;
    if (!op || (op->kind != SIM_OP_LAUNCH && op->kind != SIM_OP_MEMSET && op->kind != SIM_OP_HTOD &&
                op->kind != SIM_OP_DTOH && op->kind != SIM_OP_DTOD))
        return cudaErrorInvalidValue;   /* the driver's "only kernel, memset and memcpy nodes" */
    if (set < 0)
        *enabled = !op->disabled;
    else
        op->disabled = !set;   /* read by launches on this (the session's) thread only */
    return 0;
}

int sim_graph_memset_node_set(tdm_backend *b, tdm_bgexec *x, tdm_bgnode *n, const tdm_gnode_desc *d)
{
    sim_op *op = x ? exec_op(x, n) : n->op;

    (void)b;
    if (!op || op->kind != SIM_OP_MEMSET || d->kind != TDM_GNODE_MEMSET)
        return cudaErrorInvalidValue;
    op->dst = d->dst;
    op->n = d->n;
    op->value = d->value;
    return 0;
}

static sim_op_kind copy_kind(tdm_gnode_kind k)
{
    return k == TDM_GNODE_COPY_HTOD ? SIM_OP_HTOD : k == TDM_GNODE_COPY_DTOH ? SIM_OP_DTOH : SIM_OP_DTOD;
}

static bool is_copy(const sim_op *op)
{
    return op && (op->kind == SIM_OP_HTOD || op->kind == SIM_OP_DTOH || op->kind == SIM_OP_DTOD);
}

int sim_graph_memcpy_node_set(tdm_backend *b, tdm_bgexec *x, tdm_bgnode *n, const tdm_gnode_desc *d)
{
    sim_op *op = x ? exec_op(x, n) : n->op, *fresh;

    if (!is_copy(op) ||
        (d->kind != TDM_GNODE_COPY_HTOD && d->kind != TDM_GNODE_COPY_DTOH && d->kind != TDM_GNODE_COPY_DTOD))
        return cudaErrorInvalidValue;
    if (x) {
        /* An exec's copy keeps its memory types, as the driver requires. */
        void *host = NULL;

        if (op->kind != copy_kind(d->kind))
            return cudaErrorInvalidValue;
        if (op->kind == SIM_OP_HTOD) {   /* launches read live_src; host is the op's own copy */
            if (!(host = malloc(d->n ? d->n : 1)))
                return cudaErrorMemoryAllocation;
            memcpy(host, d->host, d->n);
            free(op->host);
            op->host = host;
            op->live_src = d->host;
        } else if (op->kind == SIM_OP_DTOH) {
            op->host = (void *)d->host;
        }
        op->dst = d->dst;
        op->src = d->src;
        op->n = d->n;
        return 0;
    }
    /* A graph's node may change direction: a new op in its place. */
    if (!(fresh = op_of(b, d)))
        return cudaErrorMemoryAllocation;
    n->op = fresh;
    pthread_mutex_lock(&b->lock);
    sim_op_free_locked(b, op);
    pthread_mutex_unlock(&b->lock);
    return 0;
}

/* The sim runs every grid's blocks one after another, so a cooperative
 * node needs nothing more (as sim_launch_cooperative), and a priority
 * orders nothing within one stream's queue. */
int sim_graph_kernel_node_attr(tdm_backend *b, tdm_bgnode *n, int id, int value)
{
    (void)b;
    (void)value;
    if (!n->op || n->op->kind != SIM_OP_LAUNCH ||
        (id != cudaLaunchAttributeCooperative && id != cudaLaunchAttributePriority))
        return cudaErrorInvalidValue;
    return 0;
}

int sim_graph_exec_host_node_set(tdm_backend *b, tdm_bgexec *x, tdm_bgnode *n, uint64_t host_key)
{
    sim_op *op = exec_op(x, n);

    (void)b;
    if (!op || op->kind != SIM_OP_HOST)
        return cudaErrorInvalidValue;
    op->host_key = host_key;   /* each launch's copy binds its own hold (sim_graph_launch_hosts) */
    return 0;
}

/* ---- event nodes, child graphs, user objects (issue 14) ---- */

/* A launch's copy of an event node, queued on s now: a record is the
 * event's latest from here on; a wait waits for the record latest now,
 * as cudaStreamWaitEvent at this point would. */
static void event_op_queued(tdm_backend *b, sim_op *op, tdm_bstream *s)
{
    if (op->kind != SIM_OP_RECORD && op->kind != SIM_OP_WAIT)
        return;
    pthread_mutex_lock(&b->lock);
    if (op->kind == SIM_OP_RECORD) {
        op->event_seq = ++op->event->recorded;
        op->event->recorded_on = sim_stream_or_legacy(b, s);
    } else {
        op->event_seq = op->event->recorded;
    }
    pthread_mutex_unlock(&b->lock);
}

/* An event node of a conditional body, run in place on the worker of s:
 * a record completes at once (everything before it in the body ran); a
 * wait waits for the record latest now. */
static void event_op_inline(tdm_backend *b, const sim_op *op, tdm_bstream *s)
{
    pthread_mutex_lock(&b->lock);
    if (op->kind == SIM_OP_RECORD) {
        op->event->recorded_on = s;
        sim_event_complete_locked(b, op->event, ++op->event->recorded);
        pthread_cond_broadcast(&b->progress);
    } else {
        uint64_t target = op->event->recorded;
        while (op->event->completed < target && !atomic_load(&b->stopping))
            pthread_cond_wait(&b->progress, &b->lock);
    }
    pthread_mutex_unlock(&b->lock);
}

static bool event_node(const sim_op *op)
{
    return op && (op->kind == SIM_OP_RECORD || op->kind == SIM_OP_WAIT);
}

int sim_graph_event_node_get(tdm_backend *b, tdm_bgnode *n, tdm_bevent **out)
{
    if (!event_node(n->op))
        return cudaErrorInvalidValue;
    *out = n->op->event;
    return 0;
}

int sim_graph_event_node_set(tdm_backend *b, tdm_bgexec *x, tdm_bgnode *n, tdm_bevent *e)
{
    sim_op *op = NULL;

    if (!x) {
        op = n->op;
    } else {
        for (size_t i = 0; i < x->map.n && !op; i++)
            if (x->map.v[i].node == n)
                op = x->map.v[i].op;
    }
    if (!event_node(op) || !event_node(n->op) || op->kind != n->op->kind)
        return cudaErrorInvalidValue;
    pthread_mutex_lock(&b->lock);
    e->refs++;
    sim_event_unref_locked(b, op->event);
    op->event = e;
    pthread_mutex_unlock(&b->lock);
    return 0;
}

int sim_stream_event_external(tdm_backend *b, tdm_bstream *s, tdm_bevent *e, bool record)
{
    sim_op *op = calloc(1, sizeof(*op));
    tdm_bstream *t = sim_stream_or_legacy(b, s);

    if (!op)
        return cudaErrorMemoryAllocation;
    op->kind = record ? SIM_OP_RECORD : SIM_OP_WAIT;
    op->event = e;
    pthread_mutex_lock(&b->lock);
    if (!t->capture) {
        pthread_mutex_unlock(&b->lock);
        free(op);
        return record ? sim_event_record(b, e, s) : sim_stream_wait_event(b, s, e);
    }
    e->refs++;
    sim_capture_take_locked(b, t, op);   /* a failure invalidates the capture (and frees op) */
    pthread_mutex_unlock(&b->lock);
    return 0;
}

/* ---- child graphs ----
 * A child graph node runs its embedded graph in place, as a conditional
 * node runs a body: its op is a sim_cond of type SIM_COND_CHILD whose one
 * body is the embedded graph (owned by the node), compiled into one list
 * when an exec is made. */

static bool child_of(const sim_op *op)
{
    return op && op->kind == SIM_OP_COND && op->cond->type == SIM_COND_CHILD;
}

/* A child node's op running a copy of graph g (NULL for want of memory). */
static sim_op *child_op_new(tdm_backend *b, tdm_bgraph *g)
{
    sim_cond *c = calloc(1, sizeof(*c));
    tdm_bgraph *copy = NULL;
    sim_op *op = NULL;

    if (!c || !(c->bodies = calloc(1, sizeof(*c->bodies))) || sim_graph_clone(b, g, &copy) != 0 ||
        !(op = cond_op_new(c))) {
        if (copy)
            sim_graph_destroy(b, copy);
        if (c)
            free(c->bodies);
        free(c);
        return NULL;
    }
    c->refs = 1;
    c->type = SIM_COND_CHILD;
    c->size = 1;
    c->bodies[0] = copy;
    return op;
}

/* A graph clone's copy of a child node: its own copy of the embedded graph. */
static sim_op *child_clone(tdm_backend *b, const sim_cond *c)
{
    return child_op_new(b, c->bodies[0]);
}

int sim_graph_add_child_node(tdm_backend *b, tdm_bgraph *g, tdm_bgraph *child, tdm_bgnode *const *deps,
                             size_t ndeps, tdm_bgnode **out, tdm_bgraph **embedded)
{
    sim_op *op = child_op_new(b, child);
    int err;

    *out = NULL;
    if (!op)
        return cudaErrorMemoryAllocation;
    pthread_mutex_lock(&b->lock);
    err = node_add_locked(g, op, deps, ndeps);
    if (err)
        sim_op_free_locked(b, op);
    pthread_mutex_unlock(&b->lock);
    if (err)
        return err;
    *out = g->nodes[g->n - 1];
    *embedded = op->cond->bodies[0];
    return 0;
}

int sim_graph_child_graph(tdm_backend *b, tdm_bgnode *n, tdm_bgraph **out)
{
    if (!child_of(n->op))
        return cudaErrorInvalidValue;
    *out = n->op->cond->bodies[0];
    return 0;
}

/* The driver asks for the same topology; here the same number of nodes,
 * as sim_graph_exec_update checks first. */
int sim_graph_exec_child_set(tdm_backend *b, tdm_bgexec *x, tdm_bgnode *n, tdm_bgraph *child)
{
    sim_op *op = NULL;
    sim_oplist *l, *old;
    sim_nodemap map;
    int err;

    for (size_t i = 0; i < x->map.n && !op; i++)
        if (x->map.v[i].node == n)
            op = x->map.v[i].op;
    if (!child_of(n->op) || !op || op->kind != SIM_OP_COND || !op->cond->lists ||
        n->op->cond->bodies[0]->n != child->n)
        return cudaErrorInvalidValue;
    if ((err = graph_oplist(b, child, false, &l, &map)) != 0)
        return err;
    nodemap_free(&map);
    pthread_mutex_lock(&b->lock);
    old = op->cond->lists[0];
    op->cond->lists[0] = l;
    oplist_unref_locked(b, old);
    pthread_mutex_unlock(&b->lock);
    return 0;
}
