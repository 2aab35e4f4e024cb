/* Stream capture and executable graphs (docs/graphs.md).  Graphs live on
 * the server as the device's own graphs; cudaGraph_t and cudaGraphExec_t
 * values are the server's logical handles, as streams and events are.  A
 * launch is one one-way call: the server launches its executable graph. */
#include <stdlib.h>
#include <string.h>

#include "guest.h"

static cudaStream_t per_thread(cudaStream_t s)
{
    return s ? s : cudaStreamPerThread;
}

/* The calling thread's capture mode (cudaThreadExchangeStreamCaptureMode).
 * Each thread's own, as in CUDA. */
static _Thread_local enum cudaStreamCaptureMode thread_capture_mode = cudaStreamCaptureModeGlobal;

static bool capture_mode_valid(int mode)
{
    return mode >= cudaStreamCaptureModeGlobal && mode <= cudaStreamCaptureModeRelaxed;
}

cudaError_t cudaStreamBeginCapture(cudaStream_t stream, enum cudaStreamCaptureMode mode)
{
    tdm_capture_begin_args a = { tdm_stream_id(stream), (int)mode };
    cudaError_t err = tdm_call_err(TDM_STREAM_BEGIN_CAPTURE, &a);

    if (!err) {   /* captured work moves no managed memory until launched */
        tdm_coherent_capture(a.stream, true);
        tdm_graph_capture_opened();
    }
    tdm_graph_mem_captures(err ? 0 : 1);   /* ---- graph memory nodes (issue 14) ---- */
    return tdm_ret(err);
}

cudaError_t cudaStreamBeginCapture_ptsz(cudaStream_t stream, enum cudaStreamCaptureMode mode)
{
    return cudaStreamBeginCapture(per_thread(stream), mode);
}

cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t *pGraph)
{
    tdm_handle h = tdm_stream_id(stream);
    tdm_handle_res r;
    cudaError_t err;
    uint64_t id;

    /* A capture into a named graph needs no graph output (issue 14). */
    if (!tdm_capture_to_graph_ended(h) && !pGraph)
        return tdm_ret(cudaErrorInvalidValue);
    id = tdm_graph_capture_ending(h);
    memset(&r, 0, sizeof(r));
    err = tdm_call(TDM_STREAM_END_CAPTURE, &h, &r);
    if (!err)
        err = (cudaError_t)r.err;
    if (err != cudaErrorStreamCaptureWrongThread && err != cudaErrorDevicesUnavailable)
        tdm_coherent_capture(h, false);
    if (pGraph)
        *pGraph = err ? NULL : (cudaGraph_t)(uintptr_t)r.handle;
    /* Not capturing, or not the origin: the capture goes on. */
    if (err != cudaErrorIllegalState && err != cudaErrorStreamCaptureUnmatched) {
        tdm_graph_capture_closed();
        tdm_graph_capture_ended(id, err ? 0 : r.handle);
    }
    tdm_graph_mem_captures(!err || err == cudaErrorStreamCaptureInvalidated ? -1 : 0); /* graph memory (issue 14) */
    return tdm_ret(err);
}

cudaError_t cudaStreamEndCapture_ptsz(cudaStream_t stream, cudaGraph_t *pGraph)
{
    return cudaStreamEndCapture(per_thread(stream), pGraph);
}

static cudaError_t capture_info(cudaStream_t stream, enum cudaStreamCaptureStatus *status, unsigned long long *id)
{
    tdm_handle h = tdm_stream_id(stream);
    tdm_capture_info_res r;
    cudaError_t err;

    memset(&r, 0, sizeof(r));
    err = tdm_call(TDM_STREAM_CAPTURE_INFO, &h, &r);
    if (!err)
        err = (cudaError_t)r.err;
    if (!err) {
        *status = (enum cudaStreamCaptureStatus)r.status;
        if (id)
            *id = r.id;
    }
    return err;
}

cudaError_t cudaStreamIsCapturing(cudaStream_t stream, enum cudaStreamCaptureStatus *pCaptureStatus)
{
    if (!pCaptureStatus)
        return tdm_ret(cudaErrorInvalidValue);
    return tdm_ret(capture_info(stream, pCaptureStatus, NULL));
}

cudaError_t cudaStreamIsCapturing_ptsz(cudaStream_t stream, enum cudaStreamCaptureStatus *pCaptureStatus)
{
    return cudaStreamIsCapturing(per_thread(stream), pCaptureStatus);
}

/* The capture's status and id.  The graph being built and its dependency
 * set stay on the server: graph_out and dependencies_out are answered
 * empty (docs/graphs.md). */
cudaError_t cudaStreamGetCaptureInfo(cudaStream_t stream, enum cudaStreamCaptureStatus *captureStatus_out,
                                     unsigned long long *id_out, cudaGraph_t *graph_out,
                                     const cudaGraphNode_t **dependencies_out,
                                     const cudaGraphEdgeData **edgeData_out, size_t *numDependencies_out)
{
    cudaError_t err;

    if (!captureStatus_out)
        return tdm_ret(cudaErrorInvalidValue);
    /* ---- conditional graph nodes (issue 14): the graph and its nodes ---- */
    if (graph_out || dependencies_out || numDependencies_out)
        return tdm_ret(tdm_capture_graph_info(tdm_stream_id(stream), captureStatus_out, id_out, graph_out,
                                              dependencies_out, edgeData_out, numDependencies_out));
    err = capture_info(stream, captureStatus_out, id_out);
    if (err)
        return tdm_ret(err);
    if (graph_out)
        *graph_out = NULL;
    if (dependencies_out)
        *dependencies_out = NULL;
    if (edgeData_out)
        *edgeData_out = NULL;
    if (numDependencies_out)
        *numDependencies_out = 0;
    return tdm_ret(cudaSuccess);
}

cudaError_t cudaStreamGetCaptureInfo_ptsz(cudaStream_t stream, enum cudaStreamCaptureStatus *captureStatus_out,
                                          unsigned long long *id_out, cudaGraph_t *graph_out,
                                          const cudaGraphNode_t **dependencies_out,
                                          const cudaGraphEdgeData **edgeData_out, size_t *numDependencies_out)
{
    return cudaStreamGetCaptureInfo(per_thread(stream), captureStatus_out, id_out, graph_out, dependencies_out,
                                    edgeData_out, numDependencies_out);
}

/* The mode only decides which calls a capture forbids on this thread; the
 * server serves every thread's calls alike, so the guest keeps it. */
cudaError_t cudaThreadExchangeStreamCaptureMode(enum cudaStreamCaptureMode *mode)
{
    enum cudaStreamCaptureMode old;

    if (!mode || !capture_mode_valid((int)*mode))
        return tdm_ret(cudaErrorInvalidValue);
    old = thread_capture_mode;
    thread_capture_mode = *mode;
    *mode = old;
    return tdm_ret(cudaSuccess);
}

static cudaError_t instantiate(cudaGraphExec_t *pGraphExec, cudaGraph_t graph, unsigned long long flags)
{
    tdm_graph_instantiate_args a = { (uint64_t)(uintptr_t)graph, flags };
    tdm_handle_res r;
    cudaError_t err;

    if (!pGraphExec || !graph)
        return cudaErrorInvalidValue;
    memset(&r, 0, sizeof(r));
    err = tdm_call(TDM_GRAPH_INSTANTIATE, &a, &r);
    if (!err)
        err = (cudaError_t)r.err;
    if (!err)
        *pGraphExec = (cudaGraphExec_t)(uintptr_t)r.handle;
    if (!err)   /* the exec reads the host memory its graph's nodes name */
        err = tdm_graph_host_copy(a.graph, false, r.handle, true);
    if (!err)   /* ---- user objects (issue 14): the exec holds the graph's references too ---- */
        err = tdm_user_objects_copy(a.graph, r.handle, true);
    return err;
}

cudaError_t cudaGraphInstantiate(cudaGraphExec_t *pGraphExec, cudaGraph_t graph, unsigned long long flags)
{
    return tdm_ret(instantiate(pGraphExec, graph, flags));
}

cudaError_t cudaGraphInstantiateWithFlags(cudaGraphExec_t *pGraphExec, cudaGraph_t graph, unsigned long long flags)
{
    return tdm_ret(instantiate(pGraphExec, graph, flags));
}

cudaError_t cudaGraphInstantiateWithParams(cudaGraphExec_t *pGraphExec, cudaGraph_t graph,
                                           cudaGraphInstantiateParams *params)
{
    cudaError_t err;

    if (!params)
        return tdm_ret(cudaErrorInvalidValue);
    err = instantiate(pGraphExec, graph, params->flags);
    params->result_out = err ? cudaGraphInstantiateError : cudaGraphInstantiateSuccess;
    params->errNode_out = NULL;
    if (!err && (params->flags & cudaGraphInstantiateFlagUpload))
        err = cudaGraphUpload(*pGraphExec, params->uploadStream);
    return tdm_ret(err);
}

cudaError_t cudaGraphInstantiateWithParams_ptsz(cudaGraphExec_t *pGraphExec, cudaGraph_t graph,
                                                cudaGraphInstantiateParams *params)
{
    return cudaGraphInstantiateWithParams(pGraphExec, graph, params);
}

cudaError_t cudaGraphLaunch(cudaGraphExec_t graphExec, cudaStream_t stream)
{
    tdm_graph_launch_args a = { (uint64_t)(uintptr_t)graphExec, tdm_stream_id(stream) };

    cudaError_t err;

    if (!graphExec)
        return tdm_ret(cudaErrorInvalidValue);
    /* The graph's nodes may touch managed or mapped memory (coherent.c),
     * and its host-to-device nodes read the program's bytes of now. */
    err = tdm_coherent_before_launch(a.stream, true);
    if (!err)
        err = tdm_graph_host_before_launch(a.exec);
    if (err)
        return tdm_ret(err);
    /* ---- user objects (issue 14): its references wait for this stream ---- */
    tdm_user_objects_launched(a.exec, stream);
    /* ---- graph host nodes (issue 14) ---- */
    if (tdm_callback_graph_launch_begin()) {
        err = tdm_post(TDM_GRAPH_LAUNCH, &a);
        tdm_callback_graph_launch_end();
        return tdm_ret(err);
    }
    return tdm_ret(tdm_post(TDM_GRAPH_LAUNCH, &a));
}

cudaError_t cudaGraphLaunch_ptsz(cudaGraphExec_t graphExec, cudaStream_t stream)
{
    return cudaGraphLaunch(graphExec, per_thread(stream));
}

/* Upload only moves the first launch's setup earlier; the server's graph
 * is set up at its first launch, which gives the same results. */
cudaError_t cudaGraphUpload(cudaGraphExec_t graphExec, cudaStream_t stream)
{
    return tdm_ret(graphExec ? cudaSuccess : cudaErrorInvalidValue);
}

cudaError_t cudaGraphUpload_ptsz(cudaGraphExec_t graphExec, cudaStream_t stream)
{
    return cudaGraphUpload(graphExec, per_thread(stream));
}

cudaError_t cudaGraphExecDestroy(cudaGraphExec_t graphExec)
{
    tdm_handle h = (uint64_t)(uintptr_t)graphExec;
    cudaError_t err;

    if (!graphExec)
        return tdm_ret(cudaErrorInvalidValue);
    tdm_graph_host_forget(h, true);
    tdm_graph_params_forget_exec(h);   /* graph node parameters (issue 14) */
    err = tdm_call_err(TDM_GRAPH_EXEC_DESTROY, &h);
    if (!err)   /* ---- user objects (issue 14) ---- */
        tdm_user_objects_forget(h, true);
    return tdm_ret(err);
}

cudaError_t cudaGraphDestroy(cudaGraph_t graph)
{
    tdm_handle h = (uint64_t)(uintptr_t)graph;
    cudaError_t err;

    if (!graph)
        return tdm_ret(cudaErrorInvalidValue);
    tdm_graph_host_forget(h, false);
    tdm_graph_params_forget_graph(h);   /* graph node parameters (issue 14) */
    err = tdm_call_err(TDM_GRAPH_DESTROY, &h);
    if (!err)   /* ---- user objects (issue 14) ---- */
        tdm_user_objects_forget(h, false);
    return tdm_ret(err);
}

cudaError_t cudaGraphExecUpdate(cudaGraphExec_t hGraphExec, cudaGraph_t hGraph,
                                cudaGraphExecUpdateResultInfo *resultInfo)
{
    tdm_graph_exec_update_args a = { (uint64_t)(uintptr_t)hGraphExec, (uint64_t)(uintptr_t)hGraph };
    tdm_graph_exec_update_res r;
    cudaError_t err;

    if (!hGraphExec || !hGraph || !resultInfo)
        return tdm_ret(cudaErrorInvalidValue);
    memset(&r, 0, sizeof(r));
    err = tdm_call(TDM_GRAPH_EXEC_UPDATE, &a, &r);
    if (!err)
        err = (cudaError_t)r.err;
    if (!err)   /* the exec now reads what the graph's nodes read */
        err = tdm_graph_host_copy(a.graph, false, a.exec, true);
    if (!err)   /* graph node parameters (issue 14): and runs its host nodes' functions */
        tdm_graph_params_forget_exec(a.exec);
    if (!err)   /* ---- user objects (issue 14): the graph's references replace the exec's ---- */
        err = tdm_user_objects_copy(a.graph, a.exec, true);
    /* The nodes stay on the server: errorNode is not named (docs/graphs.md). */
    resultInfo->result = (enum cudaGraphExecUpdateResult)r.result;
    resultInfo->errorNode = NULL;
    resultInfo->errorFromNode = NULL;
    return tdm_ret(err);
}

/* ---- explicit construction ---- */

cudaError_t cudaGraphCreate(cudaGraph_t *pGraph, unsigned int flags)
{
    tdm_handle_res r;
    u_int f = flags;
    cudaError_t err;

    if (!pGraph)
        return tdm_ret(cudaErrorInvalidValue);
    memset(&r, 0, sizeof(r));
    err = tdm_call(TDM_GRAPH_CREATE, &f, &r);
    if (!err)
        err = (cudaError_t)r.err;
    if (!err)
        *pGraph = (cudaGraph_t)(uintptr_t)r.handle;
    return tdm_ret(err);
}

/* Sends a node to add; a->kind and its fields are the caller's. */
static cudaError_t add_node(cudaGraphNode_t *pNode, cudaGraph_t graph, const cudaGraphNode_t *deps, size_t ndeps,
                            tdm_graph_add_node_args *a)
{
    tdm_handle_res r;
    cudaError_t err;

    if (!pNode || !graph || (ndeps && !deps))
        return cudaErrorInvalidValue;
    if (ndeps > TDM_MAX_GRAPH_DEPS)
        return cudaErrorInvalidValue;
    a->graph = (uint64_t)(uintptr_t)graph;
    /* cudaGraphNode_t values are the server's node handles. */
    a->deps.deps_val = (tdm_handle *)(uintptr_t)deps;
    a->deps.deps_len = (u_int)ndeps;
    memset(&r, 0, sizeof(r));
    err = tdm_call(TDM_GRAPH_ADD_NODE, a, &r);
    if (!err)
        err = (cudaError_t)r.err;
    if (!err)
        *pNode = (cudaGraphNode_t)(uintptr_t)r.handle;
    return err;
}

/* ---- graph host nodes (issue 14) ---- */
cudaError_t tdm_graph_add_node_call(cudaGraphNode_t *pNode, cudaGraph_t graph, const cudaGraphNode_t *deps,
                                    size_t ndeps, tdm_graph_add_node_args *a)
{
    return add_node(pNode, graph, deps, ndeps, a);
}

cudaError_t cudaGraphAddEmptyNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph, const cudaGraphNode_t *pDependencies,
                                  size_t numDependencies)
{
    tdm_graph_add_node_args a;

    memset(&a, 0, sizeof(a));
    a.kind = cudaGraphNodeTypeEmpty;
    return tdm_ret(add_node(pGraphNode, graph, pDependencies, numDependencies, &a));
}

/* A kernel node's configuration, its arguments packed as a launch's into
 * *buf (the caller frees it). */
typedef struct kernel_node {
    tdm_handle func;
    tdm_xdim3 grid, block;
    u_int shared_mem;
    char *buf;
    u_int len;
} kernel_node;

static cudaError_t kernel_node_of(const struct cudaKernelNodeParams *p, kernel_node *k)
{
    tdm_function *f;
    cudaError_t err;

    if (!p)
        return cudaErrorInvalidValue;
    if (p->extra)   /* the packed-buffer form: its layout is the program's, not ours to read */
        return tdm_unsupported("kernel node parameters given in extra");
    if (!(f = tdm_function_for_host(p->func, &err)))
        return err;
    if (f->nparams && !p->kernelParams)
        return cudaErrorInvalidValue;
    if (!(k->buf = malloc(f->params_len ? f->params_len : 1)))
        return cudaErrorMemoryAllocation;
    tdm_pack_params(f, p->kernelParams, k->buf);
    k->len = f->params_len;
    k->func = f->handle;
    k->grid = (tdm_xdim3){ p->gridDim.x, p->gridDim.y, p->gridDim.z };
    k->block = (tdm_xdim3){ p->blockDim.x, p->blockDim.y, p->blockDim.z };
    k->shared_mem = p->sharedMemBytes;
    return cudaSuccess;
}

cudaError_t cudaGraphAddKernelNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph, const cudaGraphNode_t *pDependencies,
                                   size_t numDependencies, const struct cudaKernelNodeParams *p)
{
    tdm_graph_add_node_args a;
    kernel_node k;
    cudaError_t err = kernel_node_of(p, &k);

    if (err)
        return tdm_ret(err);
    memset(&a, 0, sizeof(a));
    a.kind = cudaGraphNodeTypeKernel;
    a.func = k.func;
    a.grid = k.grid;
    a.block = k.block;
    a.shared_mem = k.shared_mem;
    a.params.params_val = k.buf;
    a.params.params_len = k.len;
    err = add_node(pGraphNode, graph, pDependencies, numDependencies, &a);
    free(k.buf);
    if (!err)   /* graph node parameters (issue 14): for cudaGraphKernelNodeGetParams */
        tdm_graph_params_kernel((uint64_t)(uintptr_t)*pGraphNode, a.graph, p);
    return tdm_ret(err);
}

static cudaError_t kernel_node_set(cudaGraphExec_t exec, cudaGraphNode_t node, const struct cudaKernelNodeParams *p)
{
    tdm_kernel_node_set_args a;
    kernel_node k;
    cudaError_t err;

    if (!node)
        return cudaErrorInvalidValue;
    if ((err = kernel_node_of(p, &k)))
        return err;
    a = (tdm_kernel_node_set_args){ (uint64_t)(uintptr_t)exec, (uint64_t)(uintptr_t)node, k.func, k.grid, k.block,
                                    k.shared_mem, { k.len, k.buf } };
    err = tdm_call_err(TDM_GRAPH_KERNEL_NODE_SET_PARAMS, &a);
    free(k.buf);
    if (!err && !exec)   /* graph node parameters (issue 14): the node's new ones */
        tdm_graph_params_kernel(a.node, 0, p);
    return err;
}

cudaError_t cudaGraphKernelNodeSetParams(cudaGraphNode_t node, const struct cudaKernelNodeParams *pNodeParams)
{
    return tdm_ret(kernel_node_set(NULL, node, pNodeParams));
}

cudaError_t cudaGraphExecKernelNodeSetParams(cudaGraphExec_t hGraphExec, cudaGraphNode_t node,
                                             const struct cudaKernelNodeParams *pNodeParams)
{
    if (!hGraphExec)
        return tdm_ret(cudaErrorInvalidValue);
    return tdm_ret(kernel_node_set(hGraphExec, node, pNodeParams));
}

/* One byte of an element of `size` bytes, when every byte of it is the same;
 * -1 when the pattern needs wider writes. */
static int memset_byte(unsigned value, unsigned size)
{
    uint8_t b = (uint8_t)value;

    for (unsigned i = 1; i < size; i++)
        if ((uint8_t)(value >> (8 * i)) != b)
            return -1;
    return b;
}

cudaError_t cudaGraphAddMemsetNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph, const cudaGraphNode_t *pDependencies,
                                   size_t numDependencies, const struct cudaMemsetParams *p)
{
    tdm_graph_add_node_args a;
    cudaError_t err;
    int byte;

    if (!p || !p->width || !p->height ||
        (p->elementSize != 1 && p->elementSize != 2 && p->elementSize != 4))
        return tdm_ret(cudaErrorInvalidValue);
    byte = memset_byte(p->value, p->elementSize);
    /* A pitched 2D memset or a multi-byte pattern: not remoted yet (docs/graphs.md). */
    if (p->height != 1 || byte < 0)
        return tdm_ret(tdm_unsupported("cudaGraphAddMemsetNode with a 2D extent or a multi-byte pattern"));
    memset(&a, 0, sizeof(a));
    a.kind = cudaGraphNodeTypeMemset;
    a.dst = (uint64_t)(uintptr_t)p->dst;
    a.size = (uint64_t)p->width * p->elementSize;
    a.value = (unsigned)byte;
    err = add_node(pGraphNode, graph, pDependencies, numDependencies, &a);
    if (!err)   /* graph node parameters (issue 14): for cudaGraphMemsetNodeGetParams */
        tdm_graph_params_memset((uint64_t)(uintptr_t)*pGraphNode, a.graph, p);
    return tdm_ret(err);
}

cudaError_t cudaGraphAddDependencies(cudaGraph_t graph, const cudaGraphNode_t *from, const cudaGraphNode_t *to,
                                     const cudaGraphEdgeData *edgeData, size_t numDependencies)
{
    tdm_graph_deps_args a;

    if (!graph || (numDependencies && (!from || !to)) || numDependencies > TDM_MAX_GRAPH_DEPS)
        return tdm_ret(cudaErrorInvalidValue);
    if (edgeData)   /* programmatic edges: not remoted yet (docs/graphs.md) */
        return tdm_ret(tdm_unsupported("cudaGraphAddDependencies with edge data"));
    a.graph = (uint64_t)(uintptr_t)graph;
    a.from.from_val = (tdm_handle *)(uintptr_t)from;
    a.from.from_len = (u_int)numDependencies;
    a.to.to_val = (tdm_handle *)(uintptr_t)to;
    a.to.to_len = (u_int)numDependencies;
    return tdm_ret(tdm_call_err(TDM_GRAPH_ADD_DEPENDENCIES, &a));
}

cudaError_t cudaGraphNodeGetType(cudaGraphNode_t node, enum cudaGraphNodeType *pType)
{
    tdm_handle h = (uint64_t)(uintptr_t)node;
    tdm_flags_res r;
    cudaError_t err;

    if (!node || !pType)
        return tdm_ret(cudaErrorInvalidValue);
    memset(&r, 0, sizeof(r));
    err = tdm_call(TDM_GRAPH_NODE_GET_TYPE, &h, &r);
    if (!err)
        err = (cudaError_t)r.err;
    if (!err)
        *pType = (enum cudaGraphNodeType)r.flags;
    return tdm_ret(err);
}
