/* Handlers of the event node calls (proto/calls.def, "event nodes, child
 * graphs, user objects"; docs/graphs.md "Event nodes, child graphs and
 * user objects").  Event nodes themselves are added through
 * GRAPH_ADD_NODE. */
#include "dispatch.h"
#include "session.h"
#include "tandem_rpc.h"

bool tdm_serve_GRAPH_EVENT_NODE_GET(void *ctx, void *args, void *res)
{
    tdm_graph_event_node_args *a = args;
    tdm_handle_res *r = res;
    uint64_t ev = 0;

    r->err = tdm_session_graph_event_node_get(ctx, a->node, a->record != 0, &ev);
    r->handle = ev;
    return true;
}

bool tdm_serve_GRAPH_EVENT_NODE_SET(void *ctx, void *args, void *res)
{
    tdm_graph_event_node_args *a = args;

    *(int *)res = tdm_session_graph_event_node_set(ctx, a->exec, a->node, a->record != 0, a->event);
    return true;
}

bool tdm_serve_EVENT_RECORD_EXTERNAL(void *ctx, void *args, void *res)
{
    tdm_event_record_args *a = args;

    tdm_session_defer(ctx, tdm_session_event_external(ctx, a->event, a->stream, true));
    return true;
}

bool tdm_serve_STREAM_WAIT_EVENT_EXTERNAL(void *ctx, void *args, void *res)
{
    tdm_stream_wait_args *a = args;

    tdm_session_defer(ctx, tdm_session_event_external(ctx, a->event, a->stream, false));
    return true;
}

bool tdm_serve_GRAPH_ADD_CHILD_NODE(void *ctx, void *args, void *res)
{
    tdm_graph_child_node_args *a = args;
    tdm_handle_res *r = res;
    uint64_t node = 0;

    r->err = tdm_session_graph_add_child_node(ctx, a->graph, a->deps.deps_val, a->deps.deps_len, a->child, &node);
    r->handle = node;
    return true;
}

bool tdm_serve_GRAPH_CHILD_NODE_GRAPH(void *ctx, void *args, void *res)
{
    tdm_handle_res *r = res;
    uint64_t graph = 0;

    r->err = tdm_session_graph_child_graph(ctx, *(tdm_handle *)args, &graph);
    r->handle = graph;
    return true;
}

bool tdm_serve_GRAPH_EXEC_CHILD_SET(void *ctx, void *args, void *res)
{
    tdm_graph_exec_child_args *a = args;

    *(int *)res = tdm_session_graph_exec_child_set(ctx, a->exec, a->node, a->child);
    return true;
}
