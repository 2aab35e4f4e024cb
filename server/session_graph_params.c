/* Node parameters of graphs and executable graphs after they were made:
 * enabling and disabling an executable graph's nodes, its instantiation
 * flags, new memset parameters (docs/graphs.md "Node parameters and
 * updates").  Kernel nodes' new parameters are session_graph.c's
 * (tdm_session_kernel_node_set); what a node was given is the guest's to
 * answer (guest-lib/api_graph_params.c). */
#include "session.h"

#include <driver_types.h>

#include "log.h"
#include "session_graph_internal.h"

/* The node entry and, for exec != 0, the exec entry of a node of the graph
 * that exec was made from; NULL (nothing set) when either is unknown or the
 * node belongs to another graph. */
static node_entry *exec_node(tdm_session *s, uint64_t exec, uint64_t node, exec_entry **x)
{
    node_entry *e = tdm_handles_get(&s->graph_nodes, node);

    *x = NULL;
    if (!e || !exec)
        return e;
    if (!(*x = tdm_handles_get(&s->graph_execs, exec)) || (*x)->graph != e->graph)
        return NULL;
    return e;
}

int tdm_session_graph_node_enabled(tdm_session *s, uint64_t exec, uint64_t node, int set, unsigned *enabled)
{
    exec_entry *x;
    node_entry *e = exec ? exec_node(s, exec, node, &x) : NULL;
    int err;

    if (!e)
        return cudaErrorInvalidValue;
    /* "Currently only kernel, memset and memcpy nodes are supported." */
    if (e->type != cudaGraphNodeTypeKernel && e->type != cudaGraphNodeTypeMemcpy &&
        e->type != cudaGraphNodeTypeMemset)
        return cudaErrorInvalidValue;
    if ((err = s->srv->ops->graph_node_enabled(s->srv->be, x->bx, e->bn, set, enabled)) || set < 0)
        return err;
    /* A disabled device-to-host node writes nothing: its staging (what an
     * earlier launch wrote) must not reach the program either. */
    for (size_t i = 0; x->kept && i < x->kept->nio; i++)
        if (x->kept->io[i].key == node && x->kept->io[i].dtoh)
            x->kept->io[i].off = !set;
    return 0;
}

int tdm_session_graph_exec_flags(tdm_session *s, uint64_t exec, uint64_t *flags)
{
    exec_entry *x = tdm_handles_get(&s->graph_execs, exec);

    if (!x)
        return cudaErrorInvalidValue;
    /* As the driver reports them: cuda.h says Upload is never reported (it
     * does not shape the exec), and the H100 run of 2026-11-24 showed
     * UseNodePriority is not either (examples/graph_params.cu: 0 after
     * instantiating with it). The exec itself was made with both. */
    *flags = x->flags & ~(uint64_t)(cudaGraphInstantiateFlagUpload | cudaGraphInstantiateFlagUseNodePriority);
    return 0;
}

int tdm_session_memset_node_set(tdm_session *s, uint64_t exec, uint64_t node, uint64_t dst, uint64_t n,
                                uint8_t value)
{
    exec_entry *x;
    node_entry *e = exec_node(s, exec, node, &x);
    tdm_gnode_desc d;
    uint64_t dev;

    if (!e || e->type != cudaGraphNodeTypeMemset)
        return cudaErrorInvalidValue;
    if (!n || !tdm_session_resolve(s, dst, n, &dev))
        return cudaErrorInvalidValue;
    d = (tdm_gnode_desc){ .kind = TDM_GNODE_MEMSET, .dst = dev, .n = n, .value = value };
    return s->srv->ops->graph_memset_node_set(s->srv->be, x ? x->bx : NULL, e->bn, &d);
}

/* The staging of node's host side in k, or NULL. */
static tdm_host_io *node_staging(tdm_kept_bytes *k, uint64_t node)
{
    for (size_t i = 0; k && i < k->nio; i++)
        if (k->io[i].key == node)
            return &k->io[i];
    return NULL;
}

int tdm_session_memcpy_node_set(tdm_session *s, uint64_t exec, uint64_t node, const tdm_memcpy_node_request *q)
{
    exec_entry *x;
    node_entry *e = exec_node(s, exec, node, &x);
    graph_entry *g = e ? tdm_handles_get(&s->graphs, e->graph) : NULL;
    tdm_host_io *io;
    tdm_gnode_desc d;
    bool staged;
    int err;

    if (!e || !g || e->type != cudaGraphNodeTypeMemcpy || !q->n)
        return cudaErrorInvalidValue;
    if ((err = tdm_graph_copy_desc(s, q, &d)) != 0)
        return err;
    staged = d.kind != TDM_GNODE_COPY_DTOD && !q->region;
    io = node_staging(x ? x->kept : g->kept, node);
    /* Staging is shared by the graph and every exec made from it (docs/graphs.md):
     * one node's staging cannot change its direction or size for one of them, nor
     * appear or go (an exec made before would fetch or miss bytes). */
    if (staged != (io != NULL) || (io && (io->dtoh != (d.kind == TDM_GNODE_COPY_DTOH) || io->n != q->n))) {
        tdm_log_session(s->id, "memcpy node parameters would change its host staging: not supported");
        return cudaErrorNotSupported;
    }
    d.host = io ? io->buf : q->region;
    if ((err = s->srv->ops->graph_memcpy_node_set(s->srv->be, x ? x->bx : NULL, e->bn, &d)) != 0)
        return err;
    if (io && io->dtoh)   /* fetched to the new address from now on (shared: see above) */
        io->guest = q->dst;
    return 0;
}

int tdm_session_kernel_node_attr(tdm_session *s, uint64_t node, int id, int value)
{
    node_entry *e = tdm_handles_get(&s->graph_nodes, node);

    if (!e || e->type != cudaGraphNodeTypeKernel ||
        (id != cudaLaunchAttributeCooperative && id != cudaLaunchAttributePriority))
        return cudaErrorInvalidValue;
    return s->srv->ops->graph_kernel_node_attr(s->srv->be, e->bn, id, value);
}

int tdm_session_exec_host_node_set(tdm_session *s, uint64_t exec, uint64_t node, uint64_t key)
{
    exec_entry *x;
    node_entry *e = exec ? exec_node(s, exec, node, &x) : NULL;

    if (!e || e->type != cudaGraphNodeTypeHost || !key)
        return cudaErrorInvalidValue;
    if (!s->srv->ops->graph_exec_host_node_set)
        return cudaErrorNotSupported;
    return s->srv->ops->graph_exec_host_node_set(s->srv->be, x->bx, e->bn, key);
}
