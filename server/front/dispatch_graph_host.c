/* Handlers of the graph host node calls (proto/calls.def, "graph host
 * nodes"; docs/graphs.md "Host nodes").  Host nodes themselves are added
 * through GRAPH_ADD_NODE and CALLBACK_ENQUEUE. */
#include <stdlib.h>
#include <string.h>

#include <driver_types.h>

#include "dispatch.h"
#include "session.h"
#include "tandem_rpc.h"

bool tdm_serve_GRAPH_HOST_FETCH_NOW(void *ctx, void *args, void *res)
{
    tdm_graph_fetch_res *r = res;
    const void *data = NULL;
    uint64_t dst = 0, n = 0;
    int got = 0;

    r->err = tdm_session_graph_host_fetch_now(ctx, *(tdm_handle *)args, &got, &dst, &data, &n);
    if (r->err || !got)
        return true;
    /* The RPC layer frees the reply's bytes after sending it. */
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
