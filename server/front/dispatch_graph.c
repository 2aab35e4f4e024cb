/* Stream capture and graphs (docs/graphs.md): the procedures of calls.def's
 * graphs block, handed to session_graph.c. */
#include "dispatch.h"

#include <driver_types.h>

#include "session.h"
#include "tandem_rpc.h"

bool tdm_serve_STREAM_BEGIN_CAPTURE(void *ctx, void *args, void *res)
{
    tdm_capture_begin_args *a = args;

    *(int *)res = tdm_session_begin_capture(ctx, a->stream, a->mode);
    return true;
}

bool tdm_serve_STREAM_END_CAPTURE(void *ctx, void *args, void *res)
{
    tdm_handle_res *r = res;
    uint64_t h = 0;

    r->err = tdm_session_end_capture(ctx, *(tdm_handle *)args, &h);
    r->handle = h;
    return true;
}

bool tdm_serve_STREAM_CAPTURE_INFO(void *ctx, void *args, void *res)
{
    tdm_capture_info_res *r = res;
    uint64_t id = 0;
    int status = 0;

    r->err = tdm_session_capture_info(ctx, *(tdm_handle *)args, &status, &id);
    r->status = status;
    r->id = id;
    return true;
}

bool tdm_serve_GRAPH_INSTANTIATE(void *ctx, void *args, void *res)
{
    tdm_graph_instantiate_args *a = args;
    tdm_handle_res *r = res;
    uint64_t h = 0;

    r->err = tdm_session_graph_instantiate(ctx, a->graph, a->flags, &h);
    r->handle = h;
    return true;
}

bool tdm_serve_GRAPH_EXEC_DESTROY(void *ctx, void *args, void *res)
{
    *(int *)res = tdm_session_graph_exec_destroy(ctx, *(tdm_handle *)args);
    return true;
}

bool tdm_serve_GRAPH_DESTROY(void *ctx, void *args, void *res)
{
    *(int *)res = tdm_session_graph_destroy(ctx, *(tdm_handle *)args);
    return true;
}

/* One-way, as a launch: its error surfaces at the next synchronizing call. */
bool tdm_serve_GRAPH_LAUNCH(void *ctx, void *args, void *res)
{
    tdm_graph_launch_args *a = args;

    tdm_session_defer(ctx, tdm_session_graph_launch(ctx, a->exec, a->stream));
    return true;
}

bool tdm_serve_GRAPH_EXEC_UPDATE(void *ctx, void *args, void *res)
{
    tdm_graph_exec_update_args *a = args;
    tdm_graph_exec_update_res *r = res;
    int result = 0;

    r->err = tdm_session_graph_exec_update(ctx, a->exec, a->graph, &result);
    r->result = result;
    return true;
}

bool tdm_serve_GRAPH_CREATE(void *ctx, void *args, void *res)
{
    tdm_handle_res *r = res;
    uint64_t h = 0;

    r->err = tdm_session_graph_create(ctx, *(tdm_u32 *)args, &h);
    r->handle = h;
    return true;
}

/* A node request's kernel part, as both calls that carry one send it. */
static tdm_node_request kernel_request(int type, tdm_handle func, tdm_xdim3 grid, tdm_xdim3 block,
                                       unsigned shared_mem, const char *params, u_int params_len)
{
    return (tdm_node_request){
        .type = type,
        .func = func,
        .grid = { grid.x, grid.y, grid.z },
        .block = { block.x, block.y, block.z },
        .shared_mem = shared_mem,
        .params = params,
        .params_len = params_len,
    };
}

bool tdm_serve_GRAPH_ADD_NODE(void *ctx, void *args, void *res)
{
    tdm_graph_add_node_args *a = args;
    tdm_handle_res *r = res;
    tdm_node_request q = kernel_request(a->kind, a->func, a->grid, a->block, a->shared_mem, a->params.params_val,
                                        a->params.params_len);
    uint64_t h = 0;

    q.dst = a->dst;
    q.src = a->src;
    q.n = a->data.data_len ? a->data.data_len : a->size;
    q.host = a->data.data_len ? a->data.data_val : NULL;
    q.value = (uint8_t)a->value;
    r->err = tdm_session_graph_add_node(ctx, a->graph, a->deps.deps_val, a->deps.deps_len, &q, &h);
    r->handle = h;
    return true;
}

bool tdm_serve_GRAPH_ADD_DEPENDENCIES(void *ctx, void *args, void *res)
{
    tdm_graph_deps_args *a = args;

    *(int *)res = a->from.from_len != a->to.to_len
                      ? cudaErrorInvalidValue
                      : tdm_session_graph_add_dependencies(ctx, a->graph, a->from.from_val, a->to.to_val,
                                                           a->from.from_len);
    return true;
}

bool tdm_serve_GRAPH_NODE_GET_TYPE(void *ctx, void *args, void *res)
{
    tdm_flags_res *r = res;
    int type = 0;

    r->err = tdm_session_graph_node_type(ctx, *(tdm_handle *)args, &type);
    r->flags = (unsigned)type;
    return true;
}

bool tdm_serve_GRAPH_KERNEL_NODE_SET_PARAMS(void *ctx, void *args, void *res)
{
    tdm_kernel_node_set_args *a = args;
    tdm_node_request q = kernel_request(cudaGraphNodeTypeKernel, a->func, a->grid, a->block, a->shared_mem,
                                        a->params.params_val, a->params.params_len);

    *(int *)res = tdm_session_kernel_node_set(ctx, a->exec, a->node, &q);
    return true;
}
