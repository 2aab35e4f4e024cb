/* Node parameters of graphs and executable graphs on the GPU: the
 * driver's own calls (docs/graphs.md "Node parameters and updates").
 * tdm_bgnode and tdm_bgexec are the driver's handles, cast. */
#include "cuda_backend_internal.h"

#include <string.h>

int tdm_cuda_graph_node_enabled(tdm_backend *b, tdm_bgexec *x, tdm_bgnode *n, int set, unsigned *enabled)
{
    int err = tdm_cuda_enter(b);

    if (err)
        return err;
    if (set < 0)
        return tdm_cuda_err(tdm_cu.cuGraphNodeGetEnabled((CUgraphExec)x, (CUgraphNode)n, enabled),
                            "cuGraphNodeGetEnabled");
    return tdm_cuda_err(tdm_cu.cuGraphNodeSetEnabled((CUgraphExec)x, (CUgraphNode)n, (unsigned)set),
                        "cuGraphNodeSetEnabled");
}

int tdm_cuda_graph_memset_node_set(tdm_backend *b, tdm_bgexec *x, tdm_bgnode *n, const tdm_gnode_desc *d)
{
    /* As the node was added (cuda_graph.c): one row of bytes. */
    CUDA_MEMSET_NODE_PARAMS m = { .dst = d->dst, .value = d->value, .elementSize = 1, .width = d->n, .height = 1 };
    int err = tdm_cuda_enter(b);

    if (err)
        return err;
    if (!x)
        return tdm_cuda_err(tdm_cu.cuGraphMemsetNodeSetParams((CUgraphNode)n, &m), "cuGraphMemsetNodeSetParams");
    return tdm_cuda_err(tdm_cu.cuGraphExecMemsetNodeSetParams((CUgraphExec)x, (CUgraphNode)n, &m, b->ctx),
                        "cuGraphExecMemsetNodeSetParams");
}

int tdm_cuda_graph_memcpy_node_set(tdm_backend *b, tdm_bgexec *x, tdm_bgnode *n, const tdm_gnode_desc *d)
{
    CUDA_MEMCPY3D c = tdm_cuda_graph_copy_params(d);
    int err = tdm_cuda_enter(b);

    if (err)
        return err;
    /* The driver itself refuses an exec's change of memory type. */
    if (!x)
        return tdm_cuda_err(tdm_cu.cuGraphMemcpyNodeSetParams((CUgraphNode)n, &c), "cuGraphMemcpyNodeSetParams");
    return tdm_cuda_err(tdm_cu.cuGraphExecMemcpyNodeSetParams((CUgraphExec)x, (CUgraphNode)n, &c, b->ctx),
                        "cuGraphExecMemcpyNodeSetParams");
}

int tdm_cuda_graph_kernel_node_attr(tdm_backend *b, tdm_bgnode *n, int id, int value)
{
    CUlaunchAttributeValue v;
    int err = tdm_cuda_enter(b);

    if (err)
        return err;
    memset(&v, 0, sizeof(v));
    if (id == CU_LAUNCH_ATTRIBUTE_COOPERATIVE)
        v.cooperative = value;
    else if (id == CU_LAUNCH_ATTRIBUTE_PRIORITY)
        v.priority = value;
    else
        return cudaErrorInvalidValue;
    return tdm_cuda_err(tdm_cu.cuGraphKernelNodeSetAttribute((CUgraphNode)n, (CUlaunchAttributeID)id, &v),
                        "cuGraphKernelNodeSetAttribute");
}
