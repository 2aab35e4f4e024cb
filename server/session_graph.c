/* A session's stream captures, graphs and executable graphs
 * (docs/graphs.md).  The device records and replays the graphs itself (the
 * backend's capture and graph ops); this layer checks what the guest names,
 * bounds what it holds, and keeps alive the host bytes that captured
 * host-to-device copies read. */
#include "session.h"

#include <stdlib.h>
#include <string.h>

#include <driver_types.h>

#include "grow.h"
#include "log.h"
#include "session_graph_internal.h"

static const tdm_backend_ops *ops(tdm_session *s)
{
    return s->srv->ops;
}

static tdm_backend *be(tdm_session *s)
{
    return s->srv->be;
}

void tdm_session_graphs_init(tdm_session *s)
{
    tdm_handles_init(&s->graphs, TAG_GRAPH);
    tdm_handles_init(&s->graph_execs, TAG_GRAPH_EXEC);
    tdm_handles_init(&s->graph_nodes, TAG_GRAPH_NODE);
}

void tdm_kept_unref(tdm_session *s, tdm_kept_bytes *k)
{
    if (!k || --k->refs > 0)
        return;
    tdm_kept_host_io_free(s, k);
    for (size_t i = 0; i < k->n; i++)
        free(k->v[i]);
    s->kept_bytes -= k->bytes;
    free(k->v);
    free(k);
}

/* The id of the capture st's work goes to, 0 when none. */
static uint64_t capture_id(tdm_session *s, const tdm_stream_state *st)
{
    int status = cudaStreamCaptureStatusNone;
    uint64_t id = 0;

    if (ops(s)->stream_capture_info(be(s), st->bs, &status, &id) || status == cudaStreamCaptureStatusNone)
        return 0;
    return id;
}

bool tdm_session_capturing(tdm_session *s, const tdm_stream_state *st)
{
    return s->ncaptures && capture_id(s, st) != 0;
}

static tdm_capture_entry *capture_find(tdm_session *s, uint64_t id)
{
    for (size_t i = 0; i < s->ncaptures; i++)
        if (s->captures[i].id == id)
            return &s->captures[i];
    return NULL;
}

/* A copy of [src, +n) kept in *kp (made on first use); NULL with *err. */
static const void *kept_add(tdm_session *s, tdm_kept_bytes **kp, const void *src, uint64_t n, int *err)
{
    void *copy;

    *err = cudaErrorMemoryAllocation;
    if (n > TDM_SESSION_MAX_KEPT_BYTES - s->kept_bytes) {
        tdm_log_session(s->id, "captured host-to-device copies would keep more than %llu bytes",
                        (unsigned long long)TDM_SESSION_MAX_KEPT_BYTES);
        return NULL;
    }
    if (!*kp && !(*kp = calloc(1, sizeof(**kp))))
        return NULL;
    (*kp)->refs = (*kp)->refs ? (*kp)->refs : 1;
    if (tdm_grow(&(*kp)->v, &(*kp)->cap, (*kp)->n + 1, sizeof(void *), 8) != 0 || !(copy = malloc(n ? n : 1)))
        return NULL;
    memcpy(copy, src, n);
    (*kp)->v[(*kp)->n++] = copy;
    (*kp)->bytes += n;
    s->kept_bytes += n;
    *err = 0;
    return copy;
}

tdm_kept_bytes *tdm_kept_get(tdm_kept_bytes **kp)
{
    if (!*kp && (*kp = calloc(1, sizeof(**kp))))
        (*kp)->refs = 1;
    return *kp;
}

tdm_kept_bytes *tdm_session_capture_kept(tdm_session *s, tdm_stream_state *st, int *err)
{
    tdm_capture_entry *c = capture_find(s, capture_id(s, st));

    *err = c ? cudaErrorMemoryAllocation : cudaErrorStreamCaptureInvalidated;
    return c ? tdm_kept_get(&c->kept) : NULL;
}

const void *tdm_session_capture_keep(tdm_session *s, tdm_stream_state *st, const void *src, uint64_t n, int *err)
{
    tdm_capture_entry *c = capture_find(s, capture_id(s, st));

    *err = cudaErrorStreamCaptureInvalidated;
    return c ? kept_add(s, &c->kept, src, n, err) : NULL;
}

static void forget_graph(tdm_session *s, uint64_t graph);

/* A capture on stream, into graph `into` after deps (0: a new graph). */
static int begin_capture(tdm_session *s, uint64_t stream, int mode, uint64_t into, const uint64_t *deps,
                         uint32_t ndeps)
{
    graph_entry *g = into ? tdm_handles_get(&s->graphs, into) : NULL;
    tdm_bgnode **bdeps = NULL;
    tdm_stream_state *st;
    uint64_t id;
    int err;

    if (into && !g)
        return cudaErrorInvalidValue;
    if (g && g->embedded)   /* ---- child graphs (issue 14): what a capture adds is not checked ---- */
        return tdm_graph_child_refuse(s, "a capture");

    if (stream == TDM_STREAM_NULL || stream == TDM_STREAM_LEGACY)
        return cudaErrorStreamCaptureUnsupported;   /* as native: the legacy stream cannot capture */
    if (mode < cudaStreamCaptureModeGlobal || mode > cudaStreamCaptureModeRelaxed)
        return cudaErrorInvalidValue;
    if (!(st = tdm_session_stream_state(s, stream)))
        return cudaErrorInvalidResourceHandle;
    if (tdm_grow(&s->captures, &s->captures_cap, s->ncaptures + 1, sizeof(*s->captures), 4) != 0)
        return cudaErrorMemoryAllocation;
    /* One server process serves every tenant: a global-mode capture would
     * forbid unsafe calls on every session's thread.  This session's calls
     * all come from its own thread, so thread-local mode forbids exactly
     * what global mode forbids in the guest's process (docs/graphs.md). */
    if (mode == cudaStreamCaptureModeGlobal)
        mode = cudaStreamCaptureModeThreadLocal;
    if (!into) {
        err = ops(s)->stream_begin_capture(be(s), st->bs, mode);
    } else if (ndeps && !(bdeps = malloc(ndeps * sizeof(*bdeps)))) {
        err = cudaErrorMemoryAllocation;
    } else {
        err = tdm_graph_nodes_of(s, into, deps, ndeps, bdeps)
                  ? ops(s)->stream_begin_capture_to_graph(be(s), st->bs, g->bg, bdeps, ndeps, mode)
                  : cudaErrorInvalidValue;
        free(bdeps);
    }
    if (err)
        return err;
    /* Counted before asking: tdm_session_capturing asks only while one is open. */
    s->captures[s->ncaptures++] = (tdm_capture_entry){ 0, stream, NULL, into, false };
    id = capture_id(s, st);
    s->captures[s->ncaptures - 1].id = id;
    return 0;
}

int tdm_session_begin_capture(tdm_session *s, uint64_t stream, int mode)
{
    return begin_capture(s, stream, mode, 0, NULL, 0);
}

int tdm_session_begin_capture_to_graph(tdm_session *s, uint64_t stream, uint64_t graph, const uint64_t *deps,
                                       uint32_t ndeps, int mode)
{
    return begin_capture(s, stream, mode, graph, deps, ndeps);
}

static void capture_remove(tdm_session *s, tdm_capture_entry *c)
{
    *c = s->captures[--s->ncaptures];
}

int tdm_session_end_capture(tdm_session *s, uint64_t stream, uint64_t *graph)
{
    tdm_stream_state *st = tdm_session_stream_state(s, stream);
    tdm_capture_entry *c;
    tdm_kept_bytes *kept = NULL;
    tdm_bgraph *bg = NULL;
    graph_entry *g;
    int err;

    if (!st)
        return cudaErrorInvalidResourceHandle;
    if (s->graphs.live >= TDM_SESSION_MAX_GRAPHS)
        return cudaErrorMemoryAllocation;
    c = capture_find(s, capture_id(s, st));
    uint64_t cid = c ? c->id : 0, into = c ? c->into : 0;
    bool owns = c && c->owns;
    err = ops(s)->stream_end_capture(be(s), st->bs, &bg);
    /* Ended (or invalidated and so ended): the capture is gone. */
    if (c && !capture_id(s, st)) {
        kept = c->kept;
        capture_remove(s, c);
    }
    if (err) {
        tdm_kept_unref(s, kept);
        tdm_session_graph_mem_moved(s, cid, 0);
        if (owns)
            forget_graph(s, into);   /* the backend destroyed the capture's graph */
        return err;
    }
    /* ---- conditional graph nodes (issue 14): the nodes went into an existing graph ---- */
    if (into && (g = tdm_handles_get(&s->graphs, into))) {
        if (kept && g->kept) {
            /* The capture's kept bytes join the graph's (its nodes read them). */
            if (tdm_grow(&g->kept->v, &g->kept->cap, g->kept->n + kept->n, sizeof(void *), 8) == 0) {
                memcpy(g->kept->v + g->kept->n, kept->v, kept->n * sizeof(void *));
                g->kept->n += kept->n;
                g->kept->bytes += kept->bytes;
                kept->n = 0;
                kept->bytes = 0;
                tdm_kept_unref(s, kept);
            } else {
                /* Kept alive (counted, never freed) rather than freed under the graph's nodes. */
                tdm_log_session(s->id, "out of memory joining a capture's kept bytes to its graph");
            }
        } else if (kept) {
            g->kept = kept;
        }
        *graph = into;
        tdm_session_graph_mem_moved(s, cid, into);
        return 0;
    }
    if (!(g = malloc(sizeof(*g)))) {
        err = cudaErrorMemoryAllocation;
        goto fail;
    }
    *g = (graph_entry){ .bg = bg, .kept = kept };
    if (!(*graph = tdm_handles_add(&s->graphs, g))) {
        free(g);
        err = cudaErrorMemoryAllocation;
        goto fail;
    }
    tdm_session_graph_mem_moved(s, cid, *graph);
    return 0;
fail:
    ops(s)->graph_destroy(be(s), bg);
    tdm_kept_unref(s, kept);
    tdm_session_graph_mem_moved(s, cid, 0);
    return err;
}

int tdm_session_capture_info(tdm_session *s, uint64_t stream, int *status, uint64_t *id)
{
    tdm_stream_state *st = tdm_session_stream_state(s, stream);

    *status = cudaStreamCaptureStatusNone;
    *id = 0;
    if (!st)
        return cudaErrorInvalidResourceHandle;
    if (!s->ncaptures)
        return 0;
    return ops(s)->stream_capture_info(be(s), st->bs, status, id);
}

typedef struct nodes_of_ctx {
    uint64_t graph;
    uint64_t *ids;
    size_t n;
} nodes_of_ctx;

static void collect_node(void *obj, uint64_t id, void *arg)
{
    nodes_of_ctx *c = arg;

    if (((node_entry *)obj)->graph == c->graph)
        c->ids[c->n++] = id;
}

/* Forgets the node handles of a graph going away. */
static void drop_nodes(tdm_session *s, uint64_t graph)
{
    nodes_of_ctx c = { graph, NULL, 0 };

    if (!s->graph_nodes.live || !(c.ids = malloc(s->graph_nodes.live * sizeof(*c.ids))))
        return;
    tdm_handles_each(&s->graph_nodes, collect_node, &c);
    for (size_t i = 0; i < c.n; i++)
        free(tdm_handles_remove(&s->graph_nodes, c.ids[i]));
    free(c.ids);
}

static void drop_bodies(tdm_session *s, uint64_t graph);
static void forget_graph(tdm_session *s, uint64_t graph);

/* A capture is being made into graph (cudaStreamBeginCaptureToGraph). */
static bool captured_into(tdm_session *s, uint64_t graph)
{
    for (size_t i = 0; i < s->ncaptures; i++)
        if (s->captures[i].into == graph)
            return true;
    return false;
}

int tdm_session_graph_destroy(tdm_session *s, uint64_t graph)
{
    graph_entry *g = tdm_handles_get(&s->graphs, graph);
    int err;

    /* A body graph is its node's (it goes with the node's graph); a graph
     * a capture is filling stays until the capture ends. */
    if (!g || g->parent || captured_into(s, graph))
        return cudaErrorInvalidValue;     /* as cudaGraphDestroy of a bad graph */
    tdm_handles_remove(&s->graphs, graph);
    drop_nodes(s, graph);
    drop_bodies(s, graph);
    err = ops(s)->graph_destroy(be(s), g->bg);
    tdm_session_graph_mem_dropped(s, TDM_GMEM_GRAPH, graph);
    tdm_session_graph_cond_dropped(s, graph);
    tdm_kept_unref(s, g->kept);
    free(g);
    return err;
}

static void exec_free(tdm_session *s, struct exec_entry *x);

int tdm_session_graph_instantiate(tdm_session *s, uint64_t graph, uint64_t flags, uint64_t *exec)
{
    graph_entry *g = tdm_handles_get(&s->graphs, graph);
    exec_entry *x;
    tdm_bgexec *bx = NULL;
    int err;

    if (!g)
        return cudaErrorInvalidValue;
    if (s->graph_execs.live >= TDM_SESSION_MAX_GRAPHS)
        return cudaErrorMemoryAllocation;
    if ((err = tdm_graph_extsem_check(s, g->bg, 0)) != 0)   /* ---- external semaphore nodes (issue 14) ---- */
        return err;
    err = ops(s)->graph_instantiate(be(s), g->bg, flags, &bx);
    if (err)
        return err;
    if (!(x = malloc(sizeof(*x)))) {
        ops(s)->graph_exec_destroy(be(s), bx);
        return cudaErrorMemoryAllocation;
    }
    *x = (exec_entry){ bx, g->kept, graph, flags };
    if (!(*exec = tdm_handles_add(&s->graph_execs, x))) {
        ops(s)->graph_exec_destroy(be(s), bx);
        free(x);
        return cudaErrorMemoryAllocation;
    }
    if (g->kept)
        g->kept->refs++;
    err = tdm_session_graph_mem_instantiated(s, graph, *exec, flags);
    if (err)
        exec_free(s, tdm_handles_remove(&s->graph_execs, *exec));
    return err;
}

static void exec_free(tdm_session *s, struct exec_entry *x)
{
    ops(s)->graph_exec_destroy(be(s), x->bx);
    tdm_kept_unref(s, x->kept);
    free(x);
}

int tdm_session_graph_exec_destroy(tdm_session *s, uint64_t exec)
{
    exec_entry *x = tdm_handles_remove(&s->graph_execs, exec);

    if (!x)
        return cudaErrorInvalidValue;
    exec_free(s, x);
    tdm_session_graph_mem_dropped(s, TDM_GMEM_EXEC, exec);
    return 0;
}

int tdm_session_graph_launch(tdm_session *s, uint64_t exec, uint64_t stream)
{
    exec_entry *x = tdm_handles_get(&s->graph_execs, exec);
    tdm_stream_state *st;
    int err;

    if (!x)
        return cudaErrorInvalidResourceHandle;
    if (!(st = tdm_session_stream_for_work(s, stream, &err)))
        return err;
    err = tdm_session_graph_mem_check_launch(s, exec);
    /* ---- graph host nodes (issue 14): its host nodes are host callbacks ---- */
    if (!err)
        err = tdm_session_callbacks_launch_graph(s, x->bx, st->bs);
    if (!err)
        err = tdm_kept_launched(s, x->kept, st);
    return err ? err : tdm_session_graph_mem_launched(s, exec, stream);
}

void tdm_session_graphs_release(tdm_session *s)
{
    void *obj;

    tdm_session_graph_copy_release(s);

    tdm_session_graph_mem_release(s);
    tdm_session_cond_release(s);
    while (s->ncaptures) {
        tdm_capture_entry c = s->captures[--s->ncaptures];
        tdm_stream_state *st = tdm_session_stream_state(s, c.origin);
        tdm_bgraph *bg = NULL;

        /* A capture into a graph leaves it to the graph's own entry, unless
         * it failed and the graph was its own (the backend destroyed it). */
        int end = st ? ops(s)->stream_end_capture(be(s), st->bs, &bg) : cudaErrorInvalidResourceHandle;
        if (!end && bg && !c.into)
            ops(s)->graph_destroy(be(s), bg);
        if (end && c.owns)
            forget_graph(s, c.into);
        tdm_kept_unref(s, c.kept);
    }
    while ((obj = tdm_handles_pop(&s->graph_execs, NULL)))
        exec_free(s, obj);
    while ((obj = tdm_handles_pop(&s->graph_nodes, NULL)))
        free(obj);
    while ((obj = tdm_handles_pop(&s->graphs, NULL))) {
        graph_entry *g = obj;
        if (!g->parent)                  /* bodies go with their node's graph */
            ops(s)->graph_destroy(be(s), g->bg);
        tdm_kept_unref(s, g->kept);
        free(g);
    }
}

int tdm_session_graph_exec_update(tdm_session *s, uint64_t exec, uint64_t graph, int *result)
{
    exec_entry *x = tdm_handles_get(&s->graph_execs, exec);
    graph_entry *g = tdm_handles_get(&s->graphs, graph);
    int err;

    *result = cudaGraphExecUpdateError;
    if (!x || !g)
        return cudaErrorInvalidValue;
    /* ---- external semaphore nodes (issue 14): no exec has one (refused at
     * instantiation), so one in the graph is a node of another type ---- */
    if (tdm_graph_extsem_check(s, g->bg, 0) != 0) {
        *result = cudaGraphExecUpdateErrorNodeTypeChanged;
        return cudaErrorGraphExecUpdateFailure;
    }
    err = ops(s)->graph_exec_update(be(s), x->bx, g->bg, result);
    if (err)
        return err;
    /* The exec now reads what g's captured copies read. */
    if (g->kept)
        g->kept->refs++;
    tdm_kept_unref(s, x->kept);
    x->kept = g->kept;
    return 0;
}

/* ---- explicit construction ---- */

int tdm_session_graph_create(tdm_session *s, unsigned flags, uint64_t *graph)
{
    tdm_bgraph *bg = NULL;
    graph_entry *g;
    int err;

    if (flags)
        return cudaErrorInvalidValue;     /* "must be 0", as cudaGraphCreate says */
    if (s->graphs.live >= TDM_SESSION_MAX_GRAPHS)
        return cudaErrorMemoryAllocation;
    err = ops(s)->graph_create(be(s), &bg);
    if (err)
        return err;
    if ((g = calloc(1, sizeof(*g)))) {
        g->bg = bg;
        if ((*graph = tdm_handles_add(&s->graphs, g)))
            return 0;
    }
    free(g);
    ops(s)->graph_destroy(be(s), bg);
    return cudaErrorMemoryAllocation;
}

/* The backend nodes behind n node handles, all of `graph`; false if one is
 * not (out has room for n). */
bool tdm_graph_nodes_of(tdm_session *s, uint64_t graph, const uint64_t *ids, uint32_t n, tdm_bgnode **out)
{
    for (uint32_t i = 0; i < n; i++) {
        node_entry *e = tdm_handles_get(&s->graph_nodes, ids[i]);
        if (!e || e->graph != graph)
            return false;
        out[i] = e->bn;
    }
    return true;
}

/* Checks what the guest asks a node to do and fills the backend's
 * description (device addresses resolved, bytes kept with the graph). */
static int describe_node(tdm_session *s, graph_entry *g, const tdm_node_request *q, tdm_gnode_desc *d)
{
    const tdm_func_entry *f;
    uint64_t dev, sdev;
    int err;

    memset(d, 0, sizeof(*d));
    switch (q->type) {
    case cudaGraphNodeTypeEmpty:
        d->kind = TDM_GNODE_EMPTY;
        return 0;
    case cudaGraphNodeTypeMemAlloc:
    case cudaGraphNodeTypeMemFree:      /* graph memory: the memory is there already (session_graph_mem.c) */
        d->kind = TDM_GNODE_EMPTY;
        return q->internal ? 0 : cudaErrorInvalidValue;
    case cudaGraphNodeTypeKernel:
        if (!(f = tdm_session_func(s, q->func)))
            return cudaErrorInvalidDeviceFunction;
        if (q->params_len != f->params_len)
            return cudaErrorInvalidValue;
        if (!q->grid.x || !q->grid.y || !q->grid.z || !q->block.x || !q->block.y || !q->block.z)
            return cudaErrorInvalidConfiguration;
        *d = (tdm_gnode_desc){ .kind = TDM_GNODE_KERNEL, .func = f->bf, .grid = q->grid, .block = q->block,
                               .shared_mem = q->shared_mem, .params = q->params, .params_len = q->params_len };
        return 0;
    case cudaGraphNodeTypeMemcpy:
        if (q->host && g->embedded)   /* ---- child graphs (issue 14) ---- */
            return tdm_graph_child_refuse(s, "a copy from host memory");
        if (!q->n || !tdm_session_resolve(s, q->dst, q->n, &dev) ||
            (!q->host && !tdm_session_resolve(s, q->src, q->n, &sdev)))
            return cudaErrorInvalidValue;
        if (!q->host) {
            *d = (tdm_gnode_desc){ .kind = TDM_GNODE_COPY_DTOD, .dst = dev, .src = sdev, .n = q->n };
            return 0;
        }
        *d = (tdm_gnode_desc){ .kind = TDM_GNODE_COPY_HTOD, .dst = dev, .n = q->n };
        if (q->n > TDM_SESSION_MAX_KEPT_BYTES - s->kept_bytes)
            return cudaErrorMemoryAllocation;
        d->host = kept_add(s, &g->kept, q->host, q->n, &err);
        return d->host ? 0 : err;
    case cudaGraphNodeTypeMemset:
        if (!q->n || !tdm_session_resolve(s, q->dst, q->n, &dev))
            return cudaErrorInvalidValue;
        *d = (tdm_gnode_desc){ .kind = TDM_GNODE_MEMSET, .dst = dev, .n = q->n, .value = q->value };
        return 0;
    case cudaGraphNodeTypeHost:   /* ---- graph host nodes (issue 14): src is the guest's key ---- */
        if (!ops(s)->graph_launch_hosts)
            return cudaErrorNotSupported;
        if (g->embedded)   /* ---- child graphs (issue 14) ---- */
            return tdm_graph_child_refuse(s, "a host node");
        if (!q->src)
            return cudaErrorInvalidValue;
        *d = (tdm_gnode_desc){ .kind = TDM_GNODE_HOST, .host_key = q->src };
        return 0;
    case cudaGraphNodeTypeEventRecord:   /* ---- event nodes (issue 14): src is the event ---- */
    case cudaGraphNodeTypeWaitEvent:
        return tdm_graph_event_describe(s, q, d);
    case cudaGraphNodeTypeExtSemaphoreSignal:   /* ---- external semaphore nodes (issue 14): n semaphores ---- */
    case cudaGraphNodeTypeExtSemaphoreWait:
        return tdm_graph_extsem_describe(s, q, d);
    default:
        return cudaErrorInvalidValue;
    }
}

int tdm_session_graph_add_node(tdm_session *s, uint64_t graph, const uint64_t *deps, uint32_t ndeps,
                               const tdm_node_request *req, uint64_t *node)
{
    graph_entry *g = tdm_handles_get(&s->graphs, graph);
    tdm_bgnode **bdeps = NULL, *bn = NULL;
    tdm_gnode_desc d;
    int err;

    if (!g)
        return cudaErrorInvalidValue;
    if (s->graph_nodes.live >= TDM_SESSION_MAX_GRAPH_NODES)
        return cudaErrorMemoryAllocation;
    if (ndeps && !(bdeps = malloc(ndeps * sizeof(*bdeps))))
        return cudaErrorMemoryAllocation;
    err = tdm_graph_nodes_of(s, graph, deps, ndeps, bdeps) ? describe_node(s, g, req, &d) : cudaErrorInvalidValue;
    if (!err)
        err = ops(s)->graph_add_node(be(s), g->bg, &d, bdeps, ndeps, &bn);
    free(bdeps);
    if (err)
        return err;
    /* The backend's node stays in the graph even if no handle can name it. */
    return tdm_graph_node_name(s, graph, bn, req->type, node);
}

int tdm_graph_node_name(tdm_session *s, uint64_t graph, tdm_bgnode *bn, int type, uint64_t *node)
{
    node_entry *e = malloc(sizeof(*e));

    if (!e)
        return cudaErrorMemoryAllocation;
    *e = (node_entry){ graph, bn, type };
    if (!(*node = tdm_handles_add(&s->graph_nodes, e))) {
        free(e);
        return cudaErrorMemoryAllocation;
    }
    return 0;
}

int tdm_graph_edit_edges(tdm_session *s, uint64_t graph, const uint64_t *from, const uint64_t *to, uint32_t n,
                         bool add)
{
    graph_entry *g = tdm_handles_get(&s->graphs, graph);
    tdm_bgnode **b = NULL;
    int err = cudaErrorInvalidValue;

    if (!g)
        return cudaErrorInvalidValue;
    if (!n)
        return 0;
    if (!(b = malloc(2 * (size_t)n * sizeof(*b))))
        return cudaErrorMemoryAllocation;
    if (tdm_graph_nodes_of(s, graph, from, n, b) && tdm_graph_nodes_of(s, graph, to, n, b + n))
        err = add ? ops(s)->graph_add_dependencies(be(s), g->bg, b, b + n, n)
                  : ops(s)->graph_remove_dependencies(be(s), g->bg, b, b + n, n);
    free(b);
    return err;
}

int tdm_session_graph_add_dependencies(tdm_session *s, uint64_t graph, const uint64_t *from, const uint64_t *to,
                                       uint32_t n)
{
    return tdm_graph_edit_edges(s, graph, from, to, n, true);
}

int tdm_session_graph_node_type(tdm_session *s, uint64_t node, int *type)
{
    node_entry *e = tdm_handles_get(&s->graph_nodes, node);

    if (!e)
        return cudaErrorInvalidValue;
    *type = e->type;
    return 0;
}

int tdm_session_kernel_node_set(tdm_session *s, uint64_t exec, uint64_t node, const tdm_node_request *req)
{
    node_entry *e = tdm_handles_get(&s->graph_nodes, node);
    exec_entry *x = exec ? tdm_handles_get(&s->graph_execs, exec) : NULL;
    graph_entry *g;
    tdm_gnode_desc d;
    int err;

    if (!e || e->type != cudaGraphNodeTypeKernel || req->type != cudaGraphNodeTypeKernel)
        return cudaErrorInvalidValue;
    if (exec && (!x || x->graph != e->graph))
        return cudaErrorInvalidValue;
    if (!(g = tdm_handles_get(&s->graphs, e->graph)))
        return cudaErrorInvalidValue;
    err = describe_node(s, g, req, &d);
    return err ? err : ops(s)->graph_kernel_node_set(be(s), x ? x->bx : NULL, e->bn, &d);
}

/* ---- graph memory nodes (issue 14) ---- */

uint64_t tdm_session_capture_id(tdm_session *s, uint64_t stream)
{
    tdm_stream_state *st;

    if (!s->ncaptures || !(st = tdm_session_stream_state(s, stream)))
        return 0;
    return capture_id(s, st);
}

bool tdm_session_graph_exists(tdm_session *s, uint64_t graph)
{
    return tdm_handles_get(&s->graphs, graph) != NULL;
}

/* ---- conditional graph nodes (issue 14) ---- */

typedef struct bodies_of_ctx {
    uint64_t parent;
    uint64_t *ids;
    size_t n;
} bodies_of_ctx;

static void collect_body(void *obj, uint64_t id, void *arg)
{
    bodies_of_ctx *c = arg;

    if (((graph_entry *)obj)->parent == c->parent)
        c->ids[c->n++] = id;
}

/* Forgets the body graphs of graph's conditional nodes, and theirs: the
 * backend destroys them with graph. */
static void drop_bodies(tdm_session *s, uint64_t graph)
{
    bodies_of_ctx c = { graph, NULL, 0 };

    if (!s->graphs.live || !(c.ids = malloc(s->graphs.live * sizeof(*c.ids))))
        return;
    tdm_handles_each(&s->graphs, collect_body, &c);
    for (size_t i = 0; i < c.n; i++) {
        graph_entry *b = tdm_handles_remove(&s->graphs, c.ids[i]);
        drop_nodes(s, c.ids[i]);
        drop_bodies(s, c.ids[i]);
        tdm_session_graph_cond_dropped(s, c.ids[i]);
        tdm_kept_unref(s, b->kept);
        free(b);
    }
    free(c.ids);
}

/* How many conditional bodies graph lies in (0: a graph of its own); -1
 * if the session has no such graph. */
int tdm_session_graph_depth(tdm_session *s, uint64_t graph)
{
    int depth = 0;
    graph_entry *g;

    for (; (g = tdm_handles_get(&s->graphs, graph)) && g->parent; graph = g->parent)
        depth++;
    return g ? depth : -1;
}

bool tdm_session_graph_within(tdm_session *s, uint64_t graph, uint64_t ancestor)
{
    graph_entry *g;

    for (; (g = tdm_handles_get(&s->graphs, graph)); graph = g->parent)
        if (graph == ancestor)
            return true;
    return false;
}

tdm_bgraph *tdm_session_graph_backend(tdm_session *s, uint64_t graph)
{
    graph_entry *g = tdm_handles_get(&s->graphs, graph);

    return g ? g->bg : NULL;
}

int tdm_session_graph_add_cond_node(tdm_session *s, uint64_t graph, const uint64_t *deps, uint32_t ndeps,
                                    uint64_t handle, int type, unsigned size, uint64_t *node, uint64_t *bodies)
{
    graph_entry *g = tdm_handles_get(&s->graphs, graph);
    tdm_bgraph *bb[TDM_SESSION_MAX_COND_BODIES];
    tdm_bgnode **bdeps = NULL, *bn = NULL;
    int err;

    if (!g)
        return cudaErrorInvalidValue;
    if (s->graph_nodes.live >= TDM_SESSION_MAX_GRAPH_NODES || size > TDM_SESSION_MAX_COND_BODIES ||
        s->graphs.live + size > TDM_SESSION_MAX_GRAPHS ||
        tdm_session_graph_depth(s, graph) >= TDM_SESSION_MAX_COND_DEPTH) {
        tdm_log_session(s->id, "a conditional node of %u bodies at depth %d is beyond the session's bounds", size,
                        tdm_session_graph_depth(s, graph));
        return cudaErrorMemoryAllocation;
    }
    if (ndeps && !(bdeps = malloc(ndeps * sizeof(*bdeps))))
        return cudaErrorMemoryAllocation;
    err = tdm_graph_nodes_of(s, graph, deps, ndeps, bdeps) ? 0 : cudaErrorInvalidValue;
    if (!err)
        err = ops(s)->graph_add_cond_node(be(s), g->bg, handle, type, size, bdeps, ndeps, &bn, bb);
    free(bdeps);
    if (err)
        return err;
    /* The node and its bodies stay in the backend's graph even if no
     * handle can name them (they go with the graph). */
    if ((err = tdm_graph_node_name(s, graph, bn, cudaGraphNodeTypeConditional, node)) != 0)
        return err;
    for (unsigned i = 0; i < size; i++) {
        graph_entry *b = calloc(1, sizeof(*b));
        if (!b || !(bodies[i] = tdm_handles_add(&s->graphs, b))) {
            free(b);
            return cudaErrorMemoryAllocation;
        }
        b->bg = bb[i];
        b->parent = graph;
    }
    return 0;
}

/* Forgets graph's entry (its nodes, bodies and handles too) without
 * destroying the backend's graph: the backend did. */
static void forget_graph(tdm_session *s, uint64_t graph)
{
    graph_entry *g = tdm_handles_remove(&s->graphs, graph);

    if (!g)
        return;
    drop_nodes(s, graph);
    drop_bodies(s, graph);
    tdm_session_graph_cond_dropped(s, graph);
    tdm_session_graph_mem_dropped(s, TDM_GMEM_GRAPH, graph);
    tdm_kept_unref(s, g->kept);
    free(g);
}

typedef struct node_find_ctx {
    uint64_t graph;
    tdm_bgnode *bn;
    uint64_t found;
} node_find_ctx;

static void find_node(void *obj, uint64_t id, void *arg)
{
    node_find_ctx *c = arg;
    node_entry *e = obj;

    if (!c->found && e->graph == c->graph && e->bn == c->bn)
        c->found = id;
}

/* The handle of backend node bn of graph, made if it has none (a captured node). */
static int node_handle(tdm_session *s, uint64_t graph, tdm_bgnode *bn, int type, uint64_t *out)
{
    node_find_ctx c = { graph, bn, 0 };

    tdm_handles_each(&s->graph_nodes, find_node, &c);
    if ((*out = c.found))
        return 0;
    if (s->graph_nodes.live >= TDM_SESSION_MAX_GRAPH_NODES)
        return cudaErrorMemoryAllocation;
    return tdm_graph_node_name(s, graph, bn, type, out);
}

int tdm_session_capture_graph(tdm_session *s, uint64_t stream, int *status, uint64_t *id, uint64_t *graph,
                              uint64_t *deps, uint32_t cap, uint32_t *ndeps)
{
    tdm_bgnode **bn = NULL;
    tdm_capture_entry *c;
    tdm_bgraph *bg = NULL;
    int *types = NULL, err;
    size_t n = 0;

    *graph = 0;
    *ndeps = 0;
    err = tdm_session_capture_info(s, stream, status, id);
    if (err || *status != cudaStreamCaptureStatusActive || !(c = capture_find(s, *id)))
        return err;
    if (!(bn = malloc((cap ? cap : 1) * sizeof(*bn))) || !(types = malloc((cap ? cap : 1) * sizeof(*types)))) {
        err = cudaErrorMemoryAllocation;
        goto out;
    }
    err = ops(s)->stream_capture_graph(be(s), tdm_session_stream_state(s, stream)->bs, &bg, bn, types, cap, &n);
    if (err || !bg)
        goto out;
    if (n > cap) {
        tdm_log_session(s->id, "a capture follows %zu nodes, more than a reply names", n);
        err = cudaErrorMemoryAllocation;
        goto out;
    }
    if (!c->into) {
        /* The capture's graph gets its handle now; the capture ends into it. */
        graph_entry *g = calloc(1, sizeof(*g));
        if (s->graphs.live >= TDM_SESSION_MAX_GRAPHS || !g || !(c->into = tdm_handles_add(&s->graphs, g))) {
            free(g);
            err = cudaErrorMemoryAllocation;
            goto out;
        }
        g->bg = bg;
        c->owns = true;
    }
    for (size_t i = 0; i < n && !err; i++)
        err = node_handle(s, c->into, bn[i], types[i], &deps[i]);
    if (!err) {
        *graph = c->into;
        *ndeps = (uint32_t)n;
    }
out:
    free(bn);
    free(types);
    return err;
}

int tdm_session_update_capture_deps(tdm_session *s, uint64_t stream, const uint64_t *deps, uint32_t n,
                                    unsigned flags)
{
    tdm_stream_state *st = tdm_session_stream_state(s, stream);
    tdm_capture_entry *c;
    tdm_bgnode **bn = NULL;
    int err;

    if (!st)
        return cudaErrorInvalidResourceHandle;
    if (flags > cudaStreamSetCaptureDependencies)
        return cudaErrorInvalidValue;
    if (!s->ncaptures || !(c = capture_find(s, capture_id(s, st))))
        return cudaErrorIllegalState;
    if (n && !(bn = malloc(n * sizeof(*bn))))
        return cudaErrorMemoryAllocation;
    /* Only nodes of the capture's graph: a graph the program can name. */
    err = !n || (c->into && tdm_graph_nodes_of(s, c->into, deps, n, bn))
              ? ops(s)->stream_update_capture_deps(be(s), st->bs, bn, n, flags)
              : cudaErrorInvalidValue;
    free(bn);
    return err;
}

/* ---- event nodes, child graphs, user objects (issue 14) ---- */
void tdm_graph_forget(tdm_session *s, uint64_t graph)
{
    forget_graph(s, graph);
}
