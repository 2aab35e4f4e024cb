/* Event record and wait nodes and child graph nodes of a session's graphs
 * (docs/graphs.md "Event nodes, child graphs and user objects").
 *
 * An event node names one of the session's events; the backend keeps the
 * event in the node, and the program's handle is found again from it, so
 * that captured and cloned event nodes answer as explicitly added ones do.
 *
 * A child graph node embeds a clone of its child graph, owned by the node
 * (the backend's); the session names it with a graph handle the first time
 * the program asks, an entry whose parent is the node's graph, so that it
 * goes with that graph (or with the node) as a conditional body does. */
#include "session.h"

#include <stdlib.h>

#include <driver_types.h>

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

int tdm_graph_event_describe(tdm_session *s, const tdm_node_request *q, tdm_gnode_desc *d)
{
    tdm_event_entry *e = tdm_handles_get(&s->events, q->src);

    if (!ops(s)->graph_event_node_get)
        return cudaErrorNotSupported;
    if (!e)
        return cudaErrorInvalidResourceHandle;   /* as cudaEventRecord of a bad event */
    d->kind = q->type == cudaGraphNodeTypeEventRecord ? TDM_GNODE_EVENT_RECORD : TDM_GNODE_EVENT_WAIT;
    d->event = e->ev;
    return 0;
}

/* The node entry of an event node of the wanted kind, NULL otherwise. */
static node_entry *event_node(tdm_session *s, uint64_t node, bool record)
{
    node_entry *e = tdm_handles_get(&s->graph_nodes, node);

    if (!e || e->type != (record ? cudaGraphNodeTypeEventRecord : cudaGraphNodeTypeWaitEvent))
        return NULL;
    return e;
}

typedef struct find_event {
    const tdm_bevent *ev;
    uint64_t handle;
} find_event;

static void match_event(void *obj, uint64_t id, void *arg)
{
    find_event *f = arg;

    if (!f->handle && ((tdm_event_entry *)obj)->ev == f->ev)
        f->handle = id;
}

int tdm_session_graph_event_node_get(tdm_session *s, uint64_t node, bool record, uint64_t *event)
{
    node_entry *n = event_node(s, node, record);
    find_event f = { NULL, 0 };
    tdm_bevent *ev = NULL;
    int err;

    *event = 0;
    if (!n)
        return cudaErrorInvalidValue;   /* as the driver, for a node of another type */
    if ((err = ops(s)->graph_event_node_get(be(s), n->bn, &ev)) != 0)
        return err;
    f.ev = ev;
    tdm_handles_each(&s->events, match_event, &f);
    /* The program destroyed the event the node names (natively the node
     * then names a dangling handle): no handle to answer. */
    if (!f.handle)
        return cudaErrorInvalidResourceHandle;
    *event = f.handle;
    return 0;
}

int tdm_session_graph_event_node_set(tdm_session *s, uint64_t exec, uint64_t node, bool record, uint64_t event)
{
    node_entry *n = event_node(s, node, record);
    exec_entry *x = exec ? tdm_handles_get(&s->graph_execs, exec) : NULL;
    tdm_event_entry *e = tdm_handles_get(&s->events, event);

    if (!n || (exec && (!x || x->graph != n->graph)))
        return cudaErrorInvalidValue;
    if (!e)
        return cudaErrorInvalidResourceHandle;
    return ops(s)->graph_event_node_set(be(s), x ? x->bx : NULL, n->bn, e->ev);
}

int tdm_session_event_external(tdm_session *s, uint64_t event, uint64_t stream, bool record)
{
    tdm_event_entry *e = tdm_handles_get(&s->events, event);
    tdm_stream_state *st = tdm_session_stream_state(s, stream);
    int err;

    if (!st || !tdm_session_capturing(s, st))
        return record ? tdm_session_event_record(s, event, stream) : tdm_session_stream_wait_event(s, stream, event);
    if (!e)
        return cudaErrorInvalidResourceHandle;
    if (!(st = tdm_session_stream_for_work(s, stream, &err)))
        return err;
    return ops(s)->stream_event_external(be(s), st->bs, e->ev, record);
}

/* ---- child graph nodes ---- */

int tdm_graph_child_refuse(tdm_session *s, const char *what)
{
    tdm_log_session(s->id, "%s in a child graph node's graph is not remoted", what);
    return cudaErrorNotSupported;
}

/* Whether child may be embedded: as the driver, no memory nodes
 * (cudaErrorNotSupported, as the H100 answered on 2026-11-24) nor
 * conditional nodes (cudaErrorInvalidValue); nor, here, host nodes or
 * copies of host memory, which the guest's and the server's launch
 * bookkeeping know only at the top of a graph (cudaErrorNotSupported,
 * logged). */
static int child_check(tdm_session *s, uint64_t child, graph_entry *c)
{
    tdm_bgnode **nodes = NULL;
    size_t n = 0, got = 0;
    int err;

    if (tdm_session_graph_mem_has_nodes(s, child))
        return cudaErrorNotSupported;
    if (c->kept && (c->kept->n || c->kept->nio))
        return tdm_graph_child_refuse(s, "a copy from or to host memory");
    if ((err = ops(s)->graph_nodes(be(s), c->bg, NULL, 0, &n)) != 0)
        return err;
    if (n && !(nodes = malloc(n * sizeof(*nodes))))
        return cudaErrorMemoryAllocation;
    if (n)
        err = ops(s)->graph_nodes(be(s), c->bg, nodes, n, &got);
    for (size_t i = 0; !err && i < got && i < n; i++) {
        int type = 0;
        if ((err = ops(s)->graph_node_type(be(s), nodes[i], &type)) != 0)
            break;
        if (type == cudaGraphNodeTypeConditional)
            err = cudaErrorInvalidValue;
        else if (type == cudaGraphNodeTypeMemAlloc || type == cudaGraphNodeTypeMemFree)
            err = cudaErrorNotSupported;
        else if (type == cudaGraphNodeTypeHost)
            err = tdm_graph_child_refuse(s, "a host node");
    }
    free(nodes);
    return err;
}

int tdm_session_graph_add_child_node(tdm_session *s, uint64_t graph, const uint64_t *deps, uint32_t ndeps,
                                     uint64_t child, uint64_t *node)
{
    graph_entry *g = tdm_handles_get(&s->graphs, graph), *c = tdm_handles_get(&s->graphs, child);
    tdm_bgnode **bdeps = NULL, *bn = NULL;
    tdm_bgraph *embedded = NULL;
    int err;

    *node = 0;
    if (!g || !c || graph == child)
        return cudaErrorInvalidValue;
    if (!ops(s)->graph_add_child_node)
        return cudaErrorNotSupported;
    if (s->graph_nodes.live >= TDM_SESSION_MAX_GRAPH_NODES ||
        tdm_session_graph_depth(s, graph) >= TDM_SESSION_MAX_COND_DEPTH) {
        tdm_log_session(s->id, "a child graph node at depth %d is beyond the session's bounds",
                        tdm_session_graph_depth(s, graph));
        return cudaErrorMemoryAllocation;
    }
    if ((err = child_check(s, child, c)) != 0)
        return err;
    if (ndeps && !(bdeps = malloc(ndeps * sizeof(*bdeps))))
        return cudaErrorMemoryAllocation;
    err = tdm_graph_nodes_of(s, graph, deps, ndeps, bdeps) ? 0 : cudaErrorInvalidValue;
    if (!err)
        err = ops(s)->graph_add_child_node(be(s), g->bg, c->bg, bdeps, ndeps, &bn, &embedded);
    free(bdeps);
    if (err)
        return err;
    /* The node stays in the backend's graph even if no handle can name it. */
    return tdm_graph_node_name(s, graph, bn, cudaGraphNodeTypeGraph, node);
}

typedef struct find_graph {
    const tdm_bgraph *bg;
    uint64_t handle;
} find_graph;

static void match_graph(void *obj, uint64_t id, void *arg)
{
    find_graph *f = arg;

    if (!f->handle && ((graph_entry *)obj)->bg == f->bg)
        f->handle = id;
}

/* The handle of backend graph bg, 0 if it has none. */
static uint64_t graph_handle_of(tdm_session *s, const tdm_bgraph *bg)
{
    find_graph f = { bg, 0 };

    tdm_handles_each(&s->graphs, match_graph, &f);
    return f.handle;
}

/* The embedded graph of child graph node e, NULL if it is none. */
static tdm_bgraph *embedded_of(tdm_session *s, node_entry *e)
{
    tdm_bgraph *bg = NULL;

    if (e->type != cudaGraphNodeTypeGraph || ops(s)->graph_child_graph(be(s), e->bn, &bg) != 0)
        return NULL;
    return bg;
}

int tdm_session_graph_child_graph(tdm_session *s, uint64_t node, uint64_t *graph)
{
    node_entry *e = tdm_handles_get(&s->graph_nodes, node);
    tdm_bgraph *bg = e && ops(s)->graph_child_graph ? embedded_of(s, e) : NULL;
    graph_entry *g;

    *graph = 0;
    if (!bg)
        return cudaErrorInvalidValue;
    if ((*graph = graph_handle_of(s, bg)) != 0)
        return 0;
    if (s->graphs.live >= TDM_SESSION_MAX_GRAPHS)
        return cudaErrorMemoryAllocation;
    if (!(g = calloc(1, sizeof(*g))))
        return cudaErrorMemoryAllocation;
    *g = (graph_entry){ .bg = bg, .parent = e->graph, .embedded = true };
    if (!(*graph = tdm_handles_add(&s->graphs, g))) {
        free(g);
        return cudaErrorMemoryAllocation;
    }
    return 0;
}

void tdm_graph_child_node_going(tdm_session *s, node_entry *e)
{
    tdm_bgraph *bg = ops(s)->graph_child_graph ? embedded_of(s, e) : NULL;
    uint64_t h = bg ? graph_handle_of(s, bg) : 0;

    if (h)
        tdm_graph_forget(s, h);
}

int tdm_session_graph_exec_child_set(tdm_session *s, uint64_t exec, uint64_t node, uint64_t child)
{
    node_entry *e = tdm_handles_get(&s->graph_nodes, node);
    exec_entry *x = tdm_handles_get(&s->graph_execs, exec);
    graph_entry *c = tdm_handles_get(&s->graphs, child);
    int err;

    if (!e || !x || !c || e->type != cudaGraphNodeTypeGraph || x->graph != e->graph)
        return cudaErrorInvalidValue;
    if (!ops(s)->graph_exec_child_set)
        return cudaErrorNotSupported;
    if ((err = child_check(s, child, c)) != 0)
        return err;
    return ops(s)->graph_exec_child_set(be(s), x->bx, e->bn, c->bg);
}

/* ---- external semaphore nodes (issue 14) ---- */

/* A node of n semaphores, each naming none: no cudaExternalSemaphore_t can
 * reach the server (cudaImportExternalSemaphore is out of reach), and the
 * guest sends only NULL ones, which the driver accepts at add time (H100
 * run of 2026-11-24). n bounds what the cuda backend allocates. */
int tdm_graph_extsem_describe(tdm_session *s, const tdm_node_request *q, tdm_gnode_desc *d)
{
    if (q->n > TDM_SESSION_MAX_EXTSEMS) {
        tdm_log_session(s->id, "an external semaphore node of %llu semaphores is beyond the session's bound",
                        (unsigned long long)q->n);
        return cudaErrorMemoryAllocation;
    }
    *d = (tdm_gnode_desc){ .kind = q->type == cudaGraphNodeTypeExtSemaphoreSignal ? TDM_GNODE_EXTSEM_SIGNAL
                                                                                   : TDM_GNODE_EXTSEM_WAIT,
                           .n = q->n };
    return 0;
}

int tdm_graph_extsem_check(tdm_session *s, tdm_bgraph *bg, int depth)
{
    tdm_bgnode **nodes = NULL;
    size_t n = 0, got = 0;
    int err;

    if (depth > TDM_SESSION_MAX_COND_DEPTH)   /* nesting is bounded where child nodes are added */
        return cudaErrorInvalidValue;
    if ((err = ops(s)->graph_nodes(be(s), bg, NULL, 0, &n)) != 0 || !n)
        return err;
    if (!(nodes = malloc(n * sizeof(*nodes))))
        return cudaErrorMemoryAllocation;
    err = ops(s)->graph_nodes(be(s), bg, nodes, n, &got);
    for (size_t i = 0; !err && i < got && i < n; i++) {
        tdm_bgraph *child = NULL;
        int type = 0;

        if ((err = ops(s)->graph_node_type(be(s), nodes[i], &type)) != 0)
            break;
        if (type == cudaGraphNodeTypeExtSemaphoreSignal || type == cudaGraphNodeTypeExtSemaphoreWait) {
            tdm_log_session(s->id, "a graph's external semaphore node names no semaphore: it cannot run");
            err = cudaErrorInvalidValue;
        } else if (type == cudaGraphNodeTypeGraph && ops(s)->graph_child_graph &&
                   (err = ops(s)->graph_child_graph(be(s), nodes[i], &child)) == 0) {
            err = tdm_graph_extsem_check(s, child, depth + 1);
        }
    }
    free(nodes);
    return err;
}
