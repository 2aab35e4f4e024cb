/* Graph memcpy nodes, host bytes of launches and graph queries
 * (docs/graphs.md): the procedures of calls.def's graph memcpy nodes
 * block, handed to session_graph_copy.c and session_graph_query.c.  Reply
 * arrays are malloc'd: the RPC layer frees them (xdr_free). */
#include "dispatch.h"

#include <stdlib.h>
#include <string.h>

#include <driver_types.h>

#include "log.h"
#include "session.h"
#include "shm_guest.h"
#include "tandem_rpc.h"

bool tdm_serve_GRAPH_ADD_MEMCPY_NODE(void *ctx, void *args, void *res)
{
    tdm_session *s = ctx;
    tdm_graph_memcpy_node_args *a = args;
    tdm_handle_res *r = res;
    tdm_memcpy_node_request q = { .kind = a->kind, .dst = a->dst, .src = a->src, .n = a->size };
    uint64_t node = 0;

    if (a->shm) {
        /* The guest's pinned memory: the node reaches it where it is. */
        q.region = s->shm ? tdm_shm_conn_span(&s->shm->conn, a->shm_offset, a->size) : NULL;
        if (!q.region) {
            tdm_log_session(s->id, "memcpy node names shm bytes outside the region");
            r->err = cudaErrorInvalidValue;
            return true;
        }
    }
    r->err = tdm_session_graph_add_memcpy_node(s, a->graph, a->deps.deps_val, a->deps.deps_len, &q, &node);
    r->handle = node;
    return true;
}

bool tdm_serve_GRAPH_HOST_UPLOAD(void *ctx, void *args, void *res)
{
    tdm_graph_upload_args *a = args;

    /* One-way: its error surfaces at the next synchronizing call. */
    tdm_session_defer(ctx, tdm_session_graph_host_upload(ctx, a->exec, a->key, a->offset, a->data.data_val,
                                                         a->data.data_len));
    return true;
}

bool tdm_serve_GRAPH_HOST_FETCH(void *ctx, void *args, void *res)
{
    tdm_graph_fetch_res *r = res;
    const void *data = NULL;
    uint64_t dst = 0, n = 0;
    int got = 0, more = 0;

    r->err = tdm_session_graph_host_fetch(ctx, &got, &more, &dst, &data, &n);
    r->more = more;
    if (r->err || !got)
        return true;
    if (!(r->data.data_val = malloc(n ? n : 1))) {
        r->err = cudaErrorMemoryAllocation;
        return true;
    }
    memcpy(r->data.data_val, data, n);
    r->data.data_len = (u_int)n;
    r->got = 1;
    r->dst = dst;
    return true;
}

bool tdm_serve_GRAPH_CAPTURE_DTOH(void *ctx, void *args, void *res)
{
    tdm_graph_capture_dtoh_args *a = args;

    *(int *)res = tdm_session_graph_capture_dtoh(ctx, a->stream, a->src, a->size, a->dst);
    return true;
}

static void nodes_reply(tdm_graph_nodes_res *r, int err, uint64_t *ids, uint32_t n)
{
    if (!err && n > TDM_MAX_GRAPH_NODES_REPLY)   /* a node's neighbours, through its edges */
        err = cudaErrorMemoryAllocation;
    r->err = err;
    r->nodes.nodes_val = ids;
    r->nodes.nodes_len = err ? 0 : n;
}

bool tdm_serve_GRAPH_GET_NODES(void *ctx, void *args, void *res)
{
    uint64_t *ids = NULL;
    uint32_t n = 0;
    int err = tdm_session_graph_get_nodes(ctx, *(tdm_handle *)args, false, &ids, &n);

    nodes_reply(res, err, ids, n);
    return true;
}

bool tdm_serve_GRAPH_GET_ROOT_NODES(void *ctx, void *args, void *res)
{
    uint64_t *ids = NULL;
    uint32_t n = 0;
    int err = tdm_session_graph_get_nodes(ctx, *(tdm_handle *)args, true, &ids, &n);

    nodes_reply(res, err, ids, n);
    return true;
}

bool tdm_serve_GRAPH_GET_EDGES(void *ctx, void *args, void *res)
{
    tdm_graph_edges_res *r = res;
    uint64_t *from = NULL, *to = NULL;
    uint32_t n = 0;

    r->err = tdm_session_graph_get_edges(ctx, *(tdm_handle *)args, &from, &to, &n);
    /* A reply holds at most as many edges as a session may have nodes. */
    if (!r->err && n > TDM_MAX_GRAPH_NODES_REPLY) {
        free(from);
        free(to);
        from = to = NULL;
        n = 0;
        r->err = cudaErrorMemoryAllocation;
    }
    r->from.from_val = from;
    r->from.from_len = n;
    r->to.to_val = to;
    r->to.to_len = n;
    return true;
}

bool tdm_serve_GRAPH_CLONE(void *ctx, void *args, void *res)
{
    tdm_handle_res *r = res;
    uint64_t h = 0;

    r->err = tdm_session_graph_clone(ctx, *(tdm_handle *)args, &h);
    r->handle = h;
    return true;
}

bool tdm_serve_GRAPH_CAPTURE_HTOD(void *ctx, void *args, void *res)
{
    tdm_graph_capture_htod_args *a = args;
    tdm_graph_capture_htod_res *r = res;
    uint64_t key = 0, id = 0;

    r->err = tdm_session_graph_capture_htod(ctx, a->stream, a->dst, a->size, a->src, &key, &id);
    r->key = key;
    r->id = id;
    return true;
}

bool tdm_serve_GRAPH_NODE_NEIGHBOURS(void *ctx, void *args, void *res)
{
    tdm_graph_node_neighbours_args *a = args;
    uint64_t *ids = NULL;
    uint32_t n = 0;
    int err = tdm_session_graph_node_neighbours(ctx, a->node, a->dependents != 0, &ids, &n);

    nodes_reply(res, err, ids, n);
    return true;
}

bool tdm_serve_GRAPH_REMOVE_DEPENDENCIES(void *ctx, void *args, void *res)
{
    tdm_graph_deps_args *a = args;

    *(int *)res = a->from.from_len != a->to.to_len
                      ? cudaErrorInvalidValue
                      : tdm_session_graph_remove_dependencies(ctx, a->graph, a->from.from_val, a->to.to_val,
                                                              a->from.from_len);
    return true;
}

bool tdm_serve_GRAPH_DESTROY_NODE(void *ctx, void *args, void *res)
{
    *(int *)res = tdm_session_graph_destroy_node(ctx, *(tdm_handle *)args);
    return true;
}

bool tdm_serve_GRAPH_NODE_FIND_IN_CLONE(void *ctx, void *args, void *res)
{
    tdm_graph_find_in_clone_args *a = args;
    tdm_handle_res *r = res;
    uint64_t h = 0;

    r->err = tdm_session_graph_node_find_in_clone(ctx, a->node, a->clone, &h);
    r->handle = h;
    return true;
}
