/* Graph memory (docs/graphs.md, "Graph memory"): the procedures of
 * calls.def's graph memory block, handed to session_graph_mem.c. */
#include "dispatch.h"

#include "session.h"
#include "tandem_rpc.h"

bool tdm_serve_GRAPH_ADD_MEM_NODE(void *ctx, void *args, void *res)
{
    tdm_graph_mem_node_args *a = args;
    tdm_graph_mem_node_res *r = res;
    uint64_t addr = a->addr, node = 0;

    r->err = tdm_session_graph_add_mem_node(ctx, a->graph, a->deps.deps_val, a->deps.deps_len, a->free != 0, a->size,
                                            &addr, &node);
    r->node = node;
    r->addr = addr;
    return true;
}

bool tdm_serve_GRAPH_MEM_NODE_GET_PARAMS(void *ctx, void *args, void *res)
{
    tdm_graph_mem_params_res *r = res;
    uint64_t addr = 0, size = 0;
    bool free = false;

    r->err = tdm_session_graph_mem_node_params(ctx, *(tdm_handle *)args, &free, &addr, &size);
    r->free = free;
    r->addr = addr;
    r->size = size;
    return true;
}

bool tdm_serve_DEVICE_GRAPH_MEM_TRIM(void *ctx, void *args, void *res)
{
    (void)args;
    *(int *)res = tdm_session_graph_mem_trim(ctx);
    return true;
}

bool tdm_serve_DEVICE_GET_GRAPH_MEM_ATTR(void *ctx, void *args, void *res)
{
    tdm_graph_mem_attr_args *a = args;
    tdm_u64_res *r = res;
    uint64_t v = 0;

    r->err = tdm_session_graph_mem_get_attr(ctx, a->attr, &v);
    r->value = v;
    return true;
}

bool tdm_serve_DEVICE_SET_GRAPH_MEM_ATTR(void *ctx, void *args, void *res)
{
    tdm_graph_mem_attr_args *a = args;

    *(int *)res = tdm_session_graph_mem_set_attr(ctx, a->attr, a->value);
    return true;
}
