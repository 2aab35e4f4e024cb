/* Event record and wait nodes of a session's graphs (docs/graphs.md
 * "Event nodes, child graphs and user objects").  A node names one of the
 * session's events; the backend keeps the event in the node, and the
 * program's handle is found again from it, so that captured and cloned
 * event nodes answer as explicitly added ones do. */
#include "session.h"

#include <stdlib.h>

#include <driver_types.h>

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
