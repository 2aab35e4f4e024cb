/* Conditional graph nodes on the GPU (docs/graphs.md, "Conditional
 * nodes"): the driver's own.  A handle is the driver's, so the program's
 * kernels set it with cudaGraphSetConditional on the device, and the body
 * graphs are the driver's graphs, owned by their node. */
#include "cuda_backend_internal.h"

int tdm_cuda_graph_cond_handle_create(tdm_backend *b, tdm_bgraph *g, unsigned dflt, unsigned flags, uint64_t *handle)
{
    CUgraphConditionalHandle h = 0;
    int err = tdm_cuda_enter(b);

    if (err)
        return err;
    err = tdm_cuda_err(tdm_cu.cuGraphConditionalHandleCreate(&h, (CUgraph)g, b->ctx, dflt, flags),
                       "cuGraphConditionalHandleCreate");
    *handle = err ? 0 : (uint64_t)h;
    return err;
}

int tdm_cuda_graph_add_cond_node(tdm_backend *b, tdm_bgraph *g, uint64_t handle, int type, unsigned size,
                                 tdm_bgnode *const *deps, size_t ndeps, tdm_bgnode **out, tdm_bgraph **bodies)
{
    CUgraphNodeParams p = { .type = CU_GRAPH_NODE_TYPE_CONDITIONAL };
    CUgraphNode n = NULL;
    int err = tdm_cuda_enter(b);

    *out = NULL;
    if (err)
        return err;
    /* cudaGraphConditionalNodeType shares CUgraphConditionalNodeType's values. */
    p.conditional = (CUDA_CONDITIONAL_NODE_PARAMS){ .handle = (CUgraphConditionalHandle)handle,
                                                    .type = (CUgraphConditionalNodeType)type,
                                                    .size = size,
                                                    .ctx = b->ctx };
    err = tdm_cuda_err(tdm_cu.cuGraphAddNode(&n, (CUgraph)g, (const CUgraphNode *)deps, NULL, ndeps, &p),
                       "cuGraphAddNode");
    if (err)
        return err;
    for (unsigned i = 0; i < size; i++)
        bodies[i] = (tdm_bgraph *)p.conditional.phGraph_out[i];
    *out = (tdm_bgnode *)n;
    return 0;
}

int tdm_cuda_stream_begin_capture_to_graph(tdm_backend *b, tdm_bstream *s, tdm_bgraph *g, tdm_bgnode *const *deps,
                                           size_t ndeps, int mode)
{
    int err = tdm_cuda_enter(b);

    if (err)
        return err;
    return tdm_cuda_err(tdm_cu.cuStreamBeginCaptureToGraph(tdm_cuda_stream(s), (CUgraph)g, (const CUgraphNode *)deps,
                                                           NULL, ndeps, (CUstreamCaptureMode)mode),
                        "cuStreamBeginCaptureToGraph");
}
