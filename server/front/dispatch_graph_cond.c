/* Conditional graph nodes (docs/graphs.md, "Conditional nodes"): the
 * procedures of calls.def's conditional block, handed to
 * session_graph_cond.c and session_graph.c. */
#include "dispatch.h"

#include <stdlib.h>

#include <driver_types.h>

#include "session.h"
#include "tandem_rpc.h"

_Static_assert(TDM_SESSION_MAX_COND_BODIES == TDM_MAX_COND_BODIES, "one bound for a node's bodies");

bool tdm_serve_GRAPH_COND_HANDLE_CREATE(void *ctx, void *args, void *res)
{
    tdm_cond_handle_args *a = args;
    tdm_u64_res *r = res;
    uint64_t h = 0;

    r->err = tdm_session_cond_handle_create(ctx, a->graph, a->default_value, a->flags, &h);
    r->value = h;
    return true;
}

bool tdm_serve_GRAPH_ADD_COND_NODE(void *ctx, void *args, void *res)
{
    tdm_cond_node_args *a = args;
    tdm_cond_node_res *r = res;
    /* The RPC layer frees the reply's array with xdr_free. */
    uint64_t *bodies = calloc(TDM_MAX_COND_BODIES, sizeof(*bodies)), node = 0;

    r->err = bodies ? tdm_session_cond_node_add(ctx, a->graph, a->deps.deps_val, a->deps.deps_len, a->handle, a->type,
                                                a->size, &node, bodies)
                    : cudaErrorMemoryAllocation;
    r->node = node;
    if (r->err) {
        free(bodies);
        bodies = NULL;
    }
    r->bodies.bodies_val = (tdm_handle *)bodies;
    r->bodies.bodies_len = bodies ? a->size : 0;
    return true;
}

bool tdm_serve_STREAM_BEGIN_CAPTURE_TO_GRAPH(void *ctx, void *args, void *res)
{
    tdm_capture_to_graph_args *a = args;

    *(int *)res = tdm_session_begin_capture_to_graph(ctx, a->stream, a->graph, a->deps.deps_val, a->deps.deps_len,
                                                     a->mode);
    return true;
}

bool tdm_serve_STREAM_CAPTURE_GRAPH(void *ctx, void *args, void *res)
{
    tdm_capture_graph_res *r = res;
    /* The RPC layer frees the reply's array with xdr_free. */
    uint64_t *deps = calloc(TDM_MAX_GRAPH_DEPS, sizeof(*deps)), id = 0, graph = 0;
    uint32_t n = 0;
    int status = 0;

    r->err = deps ? tdm_session_capture_graph(ctx, *(tdm_handle *)args, &status, &id, &graph, deps,
                                              TDM_MAX_GRAPH_DEPS, &n)
                  : cudaErrorMemoryAllocation;
    r->status = status;
    r->id = id;
    r->graph = graph;
    if (r->err || !n) {
        free(deps);
        deps = NULL;
        n = 0;
    }
    r->deps.deps_val = (tdm_handle *)deps;
    r->deps.deps_len = n;
    return true;
}

bool tdm_serve_STREAM_UPDATE_CAPTURE_DEPS(void *ctx, void *args, void *res)
{
    tdm_capture_deps_args *a = args;

    *(int *)res = tdm_session_update_capture_deps(ctx, a->stream, a->deps.deps_val, a->deps.deps_len, a->flags);
    return true;
}
