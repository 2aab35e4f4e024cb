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

int tdm_cuda_stream_capture_graph(tdm_backend *b, tdm_bstream *s, tdm_bgraph **g, tdm_bgnode **deps, int *types,
                                  size_t cap, size_t *ndeps)
{
    CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
    CUgraph graph = NULL;
    const CUgraphNode *d = NULL;
    size_t n = 0;
    int err = tdm_cuda_enter(b);

    *g = NULL;
    *ndeps = 0;
    if (err)
        return err;
    err = tdm_cuda_err(tdm_cu.cuStreamGetCaptureInfo(tdm_cuda_stream(s), &st, NULL, &graph, &d, NULL, &n),
                       "cuStreamGetCaptureInfo");
    if (err || st != CU_STREAM_CAPTURE_STATUS_ACTIVE)
        return err;
    for (size_t i = 0; i < n && i < cap; i++) {
        CUgraphNodeType t = CU_GRAPH_NODE_TYPE_EMPTY;
        if ((err = tdm_cuda_err(tdm_cu.cuGraphNodeGetType(d[i], &t), "cuGraphNodeGetType")) != 0)
            return err;
        deps[i] = (tdm_bgnode *)d[i];
        types[i] = (int)t;   /* cudaGraphNodeType has the same values */
    }
    *g = (tdm_bgraph *)graph;
    *ndeps = n;
    return 0;
}

int tdm_cuda_stream_update_capture_deps(tdm_backend *b, tdm_bstream *s, tdm_bgnode *const *deps, size_t n,
                                        unsigned flags)
{
    int err = tdm_cuda_enter(b);

    if (err)
        return err;
    return tdm_cuda_err(tdm_cu.cuStreamUpdateCaptureDependencies(tdm_cuda_stream(s), (CUgraphNode *)deps, NULL, n,
                                                                 flags),
                        "cuStreamUpdateCaptureDependencies");
}
