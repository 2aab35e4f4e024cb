/* Stream capture and graphs on the GPU: the driver's own.  A capture is
 * cuStreamBeginCapture on the server's real stream, so the guest's work,
 * which lands on that stream in order, is recorded by the driver; a graph
 * launch is cuGraphLaunch of the real executable graph.  tdm_bgraph and
 * tdm_bgexec are the driver's handles, cast (they carry no state of ours). */
#include "cuda_backend_internal.h"

int tdm_cuda_stream_begin_capture(tdm_backend *b, tdm_bstream *s, int mode)
{
    int err = tdm_cuda_enter(b);

    if (err)
        return err;
    /* cudaStreamCaptureMode and CUstreamCaptureMode share their values. */
    return tdm_cuda_err(tdm_cu.cuStreamBeginCapture(tdm_cuda_stream(s), (CUstreamCaptureMode)mode),
                        "cuStreamBeginCapture");
}

int tdm_cuda_stream_end_capture(tdm_backend *b, tdm_bstream *s, tdm_bgraph **out)
{
    CUgraph g = NULL;
    int err = tdm_cuda_enter(b);

    *out = NULL;
    if (err)
        return err;
    err = tdm_cuda_err(tdm_cu.cuStreamEndCapture(tdm_cuda_stream(s), &g), "cuStreamEndCapture");
    if (!err)
        *out = (tdm_bgraph *)g;
    return err;
}

int tdm_cuda_stream_capture_info(tdm_backend *b, tdm_bstream *s, int *status, uint64_t *id)
{
    CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
    cuuint64_t cid = 0;
    int err = tdm_cuda_enter(b);

    if (err)
        return err;
    err = tdm_cuda_err(tdm_cu.cuStreamGetCaptureInfo(tdm_cuda_stream(s), &st, &cid, NULL, NULL, NULL, NULL),
                       "cuStreamGetCaptureInfo");
    *status = (int)st;   /* cudaStreamCaptureStatus has the same values */
    *id = st == CU_STREAM_CAPTURE_STATUS_NONE ? 0 : cid;
    return err;
}

int tdm_cuda_graph_destroy(tdm_backend *b, tdm_bgraph *g)
{
    int err = tdm_cuda_enter(b);

    return err ? err : tdm_cuda_err(tdm_cu.cuGraphDestroy((CUgraph)g), "cuGraphDestroy");
}

int tdm_cuda_graph_instantiate(tdm_backend *b, tdm_bgraph *g, uint64_t flags, tdm_bgexec **out)
{
    CUgraphExec x = NULL;
    int err = tdm_cuda_enter(b);

    *out = NULL;
    if (err)
        return err;
    err = tdm_cuda_err(tdm_cu.cuGraphInstantiateWithFlags(&x, (CUgraph)g, flags), "cuGraphInstantiateWithFlags");
    /* ---- graph host nodes (issue 14): which nodes a launch binds ---- */
    if (!err && (err = tdm_cuda_hostnodes_scan(b, x, (CUgraph)g)) != 0)
        tdm_cu.cuGraphExecDestroy(x);
    if (!err)
        *out = (tdm_bgexec *)x;
    return err;
}

int tdm_cuda_graph_exec_destroy(tdm_backend *b, tdm_bgexec *x)
{
    int err = tdm_cuda_enter(b);

    if (err)
        return err;
    tdm_cuda_hostnodes_forget(b, (CUgraphExec)x);   /* ---- graph host nodes (issue 14) ---- */
    return tdm_cuda_err(tdm_cu.cuGraphExecDestroy((CUgraphExec)x), "cuGraphExecDestroy");
}

int tdm_cuda_graph_launch(tdm_backend *b, tdm_bgexec *x, tdm_bstream *s)
{
    int err = tdm_cuda_enter(b);

    return err ? err : tdm_cuda_err(tdm_cu.cuGraphLaunch((CUgraphExec)x, tdm_cuda_stream(s)), "cuGraphLaunch");
}

int tdm_cuda_graph_exec_update(tdm_backend *b, tdm_bgexec *x, tdm_bgraph *g, int *result)
{
    CUgraphExecUpdateResultInfo info = { .result = CU_GRAPH_EXEC_UPDATE_SUCCESS };
    CUresult r;
    int err = tdm_cuda_enter(b);

    if (err)
        return err;
    r = tdm_cu.cuGraphExecUpdate((CUgraphExec)x, (CUgraph)g, &info);
    *result = (int)info.result;   /* cudaGraphExecUpdateResult has the same values */
    /* ---- graph host nodes (issue 14): x's host nodes are g's now ---- */
    if (r == CUDA_SUCCESS && (err = tdm_cuda_hostnodes_scan(b, (CUgraphExec)x, (CUgraph)g)) != 0)
        return err;
    /* A refused update is an answer for the program, not a failure to log. */
    return r == CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE ? tdm_cuda_map_error(r) : tdm_cuda_err(r, "cuGraphExecUpdate");
}

/* ---- explicit construction ---- */

int tdm_cuda_graph_create(tdm_backend *b, tdm_bgraph **out)
{
    CUgraph g = NULL;
    int err = tdm_cuda_enter(b);

    *out = NULL;
    if (err)
        return err;
    err = tdm_cuda_err(tdm_cu.cuGraphCreate(&g, 0), "cuGraphCreate");
    if (!err)
        *out = (tdm_bgraph *)g;
    return err;
}

/* A kernel node's parameters; args (TDM_MAX_KERNEL_PARAMS long) points
 * into d->params, which the driver copies when it takes them, as a launch. */
static CUDA_KERNEL_NODE_PARAMS kernel_params(const tdm_gnode_desc *d, void **args)
{
    const tdm_param_info *p = tdm_cuda_func_params(d->func);
    CUDA_KERNEL_NODE_PARAMS kp = {
        .func = tdm_cuda_func_handle(d->func),
        .gridDimX = d->grid.x, .gridDimY = d->grid.y, .gridDimZ = d->grid.z,
        .blockDimX = d->block.x, .blockDimY = d->block.y, .blockDimZ = d->block.z,
        .sharedMemBytes = d->shared_mem,
        .kernelParams = p->count ? args : NULL,
    };

    for (uint32_t i = 0; i < p->count; i++)
        args[i] = (void *)((uintptr_t)d->params + p->offset[i]);
    return kp;
}

static CUresult add_kernel(CUgraphNode *n, CUgraph g, const CUgraphNode *deps, size_t ndeps, const tdm_gnode_desc *d)
{
    void *args[TDM_MAX_KERNEL_PARAMS];
    CUDA_KERNEL_NODE_PARAMS kp = kernel_params(d, args);

    return tdm_cu.cuGraphAddKernelNode(n, g, deps, ndeps, &kp);
}

int tdm_cuda_graph_kernel_node_set(tdm_backend *b, tdm_bgexec *x, tdm_bgnode *n, const tdm_gnode_desc *d)
{
    void *args[TDM_MAX_KERNEL_PARAMS];
    CUDA_KERNEL_NODE_PARAMS kp = kernel_params(d, args);
    int err = tdm_cuda_enter(b);

    if (err)
        return err;
    if (!x)
        return tdm_cuda_err(tdm_cu.cuGraphKernelNodeSetParams((CUgraphNode)n, &kp), "cuGraphKernelNodeSetParams");
    return tdm_cuda_err(tdm_cu.cuGraphExecKernelNodeSetParams((CUgraphExec)x, (CUgraphNode)n, &kp),
                        "cuGraphExecKernelNodeSetParams");
}

CUDA_MEMCPY3D tdm_cuda_graph_copy_params(const tdm_gnode_desc *d)
{
    bool htod = d->kind == TDM_GNODE_COPY_HTOD, dtoh = d->kind == TDM_GNODE_COPY_DTOH;
    CUDA_MEMCPY3D c = {
        .srcMemoryType = htod ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE,
        .srcHost = htod ? d->host : NULL,
        .srcDevice = htod ? 0 : d->src,
        .dstMemoryType = dtoh ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE,
        .dstHost = dtoh ? (void *)d->host : NULL,
        .dstDevice = dtoh ? 0 : d->dst,
        .WidthInBytes = d->n,
        .Height = 1,
        .Depth = 1,
    };

    return c;
}

int tdm_cuda_graph_add_node(tdm_backend *b, tdm_bgraph *g, const tdm_gnode_desc *d, tdm_bgnode *const *deps,
                            size_t ndeps, tdm_bgnode **out)
{
    const CUgraphNode *cdeps = (const CUgraphNode *)deps;
    CUgraph cg = (CUgraph)g;
    CUgraphNode n = NULL;
    CUresult r = CUDA_ERROR_INVALID_VALUE;
    int err = tdm_cuda_enter(b);

    *out = NULL;
    if (err)
        return err;
    switch (d->kind) {
    case TDM_GNODE_EMPTY:
        r = tdm_cu.cuGraphAddEmptyNode(&n, cg, cdeps, ndeps);
        break;
    case TDM_GNODE_KERNEL:
        r = add_kernel(&n, cg, cdeps, ndeps, d);
        break;
    case TDM_GNODE_COPY_HTOD:
    case TDM_GNODE_COPY_DTOD:
    case TDM_GNODE_COPY_DTOH: {   /* graph memcpy nodes (issue 14) */
        CUDA_MEMCPY3D c = tdm_cuda_graph_copy_params(d);
        r = tdm_cu.cuGraphAddMemcpyNode(&n, cg, cdeps, ndeps, &c, b->ctx);
        break;
    }
    case TDM_GNODE_MEMSET: {
        CUDA_MEMSET_NODE_PARAMS m = { .dst = d->dst, .value = d->value, .elementSize = 1, .width = d->n, .height = 1 };
        r = tdm_cu.cuGraphAddMemsetNode(&n, cg, cdeps, ndeps, &m, b->ctx);
        break;
    }
    case TDM_GNODE_EVENT_RECORD:   /* ---- event nodes (issue 14): cuda_graph_events.c ---- */
    case TDM_GNODE_EVENT_WAIT:
        err = tdm_cuda_graph_add_event_node(cg, cdeps, ndeps, d->kind == TDM_GNODE_EVENT_RECORD, d->event, &n);
        if (!err)
            *out = (tdm_bgnode *)n;
        return err;
    case TDM_GNODE_EXTSEM_SIGNAL:   /* ---- external semaphore nodes (issue 14): cuda_graph_events.c ---- */
    case TDM_GNODE_EXTSEM_WAIT:
        err = tdm_cuda_graph_add_extsem_node(cg, cdeps, ndeps, d->kind == TDM_GNODE_EXTSEM_SIGNAL, d->n, &n);
        if (!err)
            *out = (tdm_bgnode *)n;
        return err;
    case TDM_GNODE_HOST:   /* graph host nodes (issue 14): cuda_graph_host.c */
        err = tdm_cuda_graph_add_host_node(b, cg, cdeps, ndeps, d->host_key, &n);
        if (!err)
            *out = (tdm_bgnode *)n;
        return err;
    }
    err = tdm_cuda_err(r, "cuGraphAdd*Node");
    if (!err)
        *out = (tdm_bgnode *)n;
    return err;
}

int tdm_cuda_graph_add_dependencies(tdm_backend *b, tdm_bgraph *g, tdm_bgnode *const *from, tdm_bgnode *const *to,
                                    size_t n)
{
    int err = tdm_cuda_enter(b);

    if (err)
        return err;
    return tdm_cuda_err(tdm_cu.cuGraphAddDependencies((CUgraph)g, (const CUgraphNode *)from, (const CUgraphNode *)to,
                                                      NULL, n),
                        "cuGraphAddDependencies");
}
