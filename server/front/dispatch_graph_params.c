/* Handlers of the graph node parameter calls (proto/calls.def, "graph node
 * parameters"; docs/graphs.md "Node parameters and updates"). */
#include <driver_types.h>

#include "dispatch.h"
#include "log.h"
#include "session.h"
#include "shm_guest.h"
#include "tandem_rpc.h"

bool tdm_serve_GRAPH_NODE_SET_ENABLED(void *ctx, void *args, void *res)
{
    tdm_graph_node_enabled_args *a = args;
    unsigned unused = 0;

    *(int *)res = tdm_session_graph_node_enabled(ctx, a->exec, a->node, a->enable ? 1 : 0, &unused);
    return true;
}

bool tdm_serve_GRAPH_NODE_GET_ENABLED(void *ctx, void *args, void *res)
{
    tdm_graph_node_enabled_args *a = args;
    tdm_flags_res *r = res;
    unsigned enabled = 0;

    r->err = tdm_session_graph_node_enabled(ctx, a->exec, a->node, -1, &enabled);
    r->flags = enabled;
    return true;
}

bool tdm_serve_GRAPH_EXEC_GET_FLAGS(void *ctx, void *args, void *res)
{
    tdm_u64_res *r = res;
    uint64_t flags = 0;

    r->err = tdm_session_graph_exec_flags(ctx, *(tdm_handle *)args, &flags);
    r->value = flags;
    return true;
}

bool tdm_serve_GRAPH_MEMSET_NODE_SET(void *ctx, void *args, void *res)
{
    tdm_memset_node_set_args *a = args;

    /* The guest sends one byte of pattern, as GRAPH_ADD_NODE's memset. */
    *(int *)res = a->value > 0xff ? cudaErrorInvalidValue
                                  : tdm_session_memset_node_set(ctx, a->exec, a->node, a->dst, a->size,
                                                                (uint8_t)a->value);
    return true;
}

bool tdm_serve_GRAPH_MEMCPY_NODE_SET(void *ctx, void *args, void *res)
{
    tdm_session *s = ctx;
    tdm_memcpy_node_set_args *a = args;
    tdm_memcpy_node_request q = { .kind = a->kind, .dst = a->dst, .src = a->src, .n = a->size };

    /* The guest's pinned memory in the region: reached where it is. */
    if (a->shm && !(q.region = s->shm ? tdm_shm_conn_span(&s->shm->conn, a->shm_offset, a->size) : NULL)) {
        tdm_log_session(s->id, "memcpy node names shm bytes outside the region");
        *(int *)res = cudaErrorInvalidValue;
        return true;
    }
    *(int *)res = tdm_session_memcpy_node_set(s, a->exec, a->node, &q);
    return true;
}

bool tdm_serve_GRAPH_KERNEL_NODE_ATTR(void *ctx, void *args, void *res)
{
    tdm_kernel_node_attr_args *a = args;

    *(int *)res = tdm_session_kernel_node_attr(ctx, a->node, a->id, a->value);
    return true;
}

bool tdm_serve_GRAPH_EXEC_HOST_NODE_SET(void *ctx, void *args, void *res)
{
    tdm_exec_host_node_args *a = args;

    *(int *)res = tdm_session_exec_host_node_set(ctx, a->exec, a->node, a->key);
    return true;
}
