/* Streams, events and graphs (issue 15).  CUstream, CUevent, CUgraph and CUgraphExec are
 * the runtime layer's handles (the server's logical ids); the stream values 0,
 * CU_STREAM_LEGACY and CU_STREAM_PER_THREAD are cudaStreamLegacy's and cudaStreamPerThread's
 * own.  Each entry point checks for a current context and translates to the runtime's
 * call; flags and enums share their numbers with the runtime's (CU_STREAM_NON_BLOCKING and
 * cudaStreamNonBlocking, CUstreamCaptureMode and cudaStreamCaptureMode ...). */
#include <stdlib.h>
#include <string.h>

#include "driver.h"

static cudaStream_t rt_stream(CUstream s)
{
    return (cudaStream_t)s;
}

/* A _ptsz entry point's stream: NULL is the per-thread default stream. */
static cudaStream_t pt_stream(CUstream s)
{
    return s ? (cudaStream_t)s : cudaStreamPerThread;
}

static CUresult need_ctx(void)
{
    CUresult r;

    tdm_cu_ctx_of(NULL, &r);
    return r;
}

/* Whether s names a stream without asking the server: a default stream, or one the program
 * created and has not destroyed (the runtime keeps that set for takeovers). */
static bool stream_known(CUstream s)
{
    uint64_t h = tdm_stream_id(rt_stream(s));

    return h <= 2 || tdm_live_handle_held(h);
}

/* ---- streams ---- */

static CUresult stream_create(CUstream *ph, unsigned flags, int priority)
{
    CUresult r = need_ctx();
    cudaStream_t s = NULL;

    if (r)
        return r;
    if (!ph || (flags & ~(unsigned)CU_STREAM_NON_BLOCKING))
        return CUDA_ERROR_INVALID_VALUE;
    r = tdm_cu(cudaStreamCreateWithPriority(&s, flags, priority));
    if (!r)
        *ph = (CUstream)s;
    return r;
}

CUresult cuStreamCreate(CUstream *phStream, unsigned int Flags)
{
    return stream_create(phStream, Flags, 0);
}

/* cuda.h: a priority outside the range is clamped to it, as the runtime does. */
CUresult cuStreamCreateWithPriority(CUstream *phStream, unsigned int flags, int priority)
{
    return stream_create(phStream, flags, priority);
}

CUresult cuStreamDestroy_v2(CUstream s)
{
    CUresult r = need_ctx();

    if (r)
        return r;
    return tdm_cu(cudaStreamDestroy(rt_stream(s)));
}

CUresult cuStreamDestroy(CUstream s)
{
    return cuStreamDestroy_v2(s);
}

/* The plain call with stream `s` after the context check: the body of most stream calls. */
#define STREAM_CALL(call)                                                                                              \
    do {                                                                                                               \
        CUresult r_ = need_ctx();                                                                                      \
        return r_ ? r_ : tdm_cu(call);                                                                                 \
    } while (0)

CUresult cuStreamSynchronize(CUstream s)
{
    STREAM_CALL(cudaStreamSynchronize(rt_stream(s)));
}

CUresult cuStreamSynchronize_ptsz(CUstream s)
{
    STREAM_CALL(cudaStreamSynchronize(pt_stream(s)));
}

CUresult cuStreamQuery(CUstream s)
{
    STREAM_CALL(cudaStreamQuery(rt_stream(s)));
}

CUresult cuStreamQuery_ptsz(CUstream s)
{
    STREAM_CALL(cudaStreamQuery(pt_stream(s)));
}

/* cuda.h: Flags is CU_EVENT_WAIT_DEFAULT or CU_EVENT_WAIT_EXTERNAL (cudaEventWaitExternal). */
CUresult cuStreamWaitEvent(CUstream s, CUevent e, unsigned int flags)
{
    STREAM_CALL(cudaStreamWaitEvent(rt_stream(s), (cudaEvent_t)e, flags));
}

CUresult cuStreamWaitEvent_ptsz(CUstream s, CUevent e, unsigned int flags)
{
    STREAM_CALL(cudaStreamWaitEvent(pt_stream(s), (cudaEvent_t)e, flags));
}

CUresult cuStreamGetPriority(CUstream s, int *priority)
{
    STREAM_CALL(cudaStreamGetPriority(rt_stream(s), priority));
}

CUresult cuStreamGetPriority_ptsz(CUstream s, int *priority)
{
    STREAM_CALL(cudaStreamGetPriority(pt_stream(s), priority));
}

CUresult cuStreamGetFlags(CUstream s, unsigned int *flags)
{
    STREAM_CALL(cudaStreamGetFlags(rt_stream(s), flags));
}

CUresult cuStreamGetFlags_ptsz(CUstream s, unsigned int *flags)
{
    STREAM_CALL(cudaStreamGetFlags(pt_stream(s), flags));
}

CUresult cuStreamGetId(CUstream s, unsigned long long *id)
{
    STREAM_CALL(cudaStreamGetId(rt_stream(s), id));
}

CUresult cuStreamGetId_ptsz(CUstream s, unsigned long long *id)
{
    STREAM_CALL(cudaStreamGetId(pt_stream(s), id));
}

/* A stream's context: the current one (a cuCtxCreate'd context shares the session, so the
 * stream is as much its as the primary's), else the primary context, whose session it is. */
static CUresult stream_ctx(CUstream s, CUcontext *pctx)
{
    CUresult r = tdm_cu_ready();
    tdm_cu_ctx *c;

    if (r)
        return r;
    if (!pctx)
        return CUDA_ERROR_INVALID_VALUE;
    if (!stream_known(s))
        return CUDA_ERROR_INVALID_HANDLE;
    c = tdm_cu_current();
    if (!c && tdm_stream_id(rt_stream(s)) <= 2)   /* a default stream needs a context to be one of */
        return CUDA_ERROR_INVALID_CONTEXT;
    *pctx = (CUcontext)(c ? c : tdm_cu_primary(0));
    return CUDA_SUCCESS;
}

CUresult cuStreamGetCtx(CUstream s, CUcontext *pctx)
{
    return stream_ctx(s, pctx);
}

CUresult cuStreamGetCtx_ptsz(CUstream s, CUcontext *pctx)
{
    return stream_ctx(s, pctx);
}

/* No green contexts here: *pGreenCtx is NULL, as for a stream of a plain context. */
CUresult cuStreamGetCtx_v2(CUstream s, CUcontext *pctx, CUgreenCtx *pGreenCtx)
{
    CUresult r;

    if (!pGreenCtx)
        return CUDA_ERROR_INVALID_VALUE;
    r = stream_ctx(s, pctx);
    if (!r)
        *pGreenCtx = NULL;
    return r;
}

CUresult cuStreamGetCtx_v2_ptsz(CUstream s, CUcontext *pctx, CUgreenCtx *pGreenCtx)
{
    return cuStreamGetCtx_v2(s, pctx, pGreenCtx);
}

/* ---- host functions ---- */

/* A driver callback gets a CUresult and a CUstream: the runtime's is called with this pair,
 * freed once it ran (a stream callback runs exactly once). */
typedef struct cb_pair {
    CUstreamCallback fn;
    void *data;
} cb_pair;

static void cb_trampoline(cudaStream_t s, cudaError_t status, void *arg)
{
    cb_pair p = *(cb_pair *)arg;

    free(arg);
    p.fn((CUstream)s, tdm_cu(status), p.data);
}

static CUresult add_callback(cudaStream_t s, CUstreamCallback fn, void *data, unsigned flags)
{
    CUresult r = need_ctx();
    cb_pair *p;

    if (r)
        return r;
    if (!fn || flags != 0)   /* cuda.h: flags is reserved, 0 */
        return CUDA_ERROR_INVALID_VALUE;
    p = malloc(sizeof(*p));
    if (!p)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *p = (cb_pair){ fn, data };
    r = tdm_cu(cudaStreamAddCallback(s, cb_trampoline, p, 0));
    if (r)
        free(p);
    return r;
}

CUresult cuStreamAddCallback(CUstream s, CUstreamCallback fn, void *data, unsigned int flags)
{
    return add_callback(rt_stream(s), fn, data, flags);
}

CUresult cuStreamAddCallback_ptsz(CUstream s, CUstreamCallback fn, void *data, unsigned int flags)
{
    return add_callback(pt_stream(s), fn, data, flags);
}

/* CUhostFn and cudaHostFn_t are the same type. */
CUresult cuLaunchHostFunc(CUstream s, CUhostFn fn, void *data)
{
    STREAM_CALL(cudaLaunchHostFunc(rt_stream(s), fn, data));
}

CUresult cuLaunchHostFunc_ptsz(CUstream s, CUhostFn fn, void *data)
{
    STREAM_CALL(cudaLaunchHostFunc(pt_stream(s), fn, data));
}

/* ---- stream capture ---- */

CUresult cuStreamBeginCapture_v2(CUstream s, CUstreamCaptureMode mode)
{
    STREAM_CALL(cudaStreamBeginCapture(rt_stream(s), (enum cudaStreamCaptureMode)mode));
}

CUresult cuStreamBeginCapture_v2_ptsz(CUstream s, CUstreamCaptureMode mode)
{
    STREAM_CALL(cudaStreamBeginCapture(pt_stream(s), (enum cudaStreamCaptureMode)mode));
}

/* The CUDA 10.0 entry point, without a mode: global, as it was then. */
CUresult cuStreamBeginCapture(CUstream s)
{
    return cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_GLOBAL);
}

CUresult cuStreamBeginCapture_ptsz(CUstream s)
{
    return cuStreamBeginCapture_v2_ptsz(s, CU_STREAM_CAPTURE_MODE_GLOBAL);
}

CUresult cuStreamEndCapture(CUstream s, CUgraph *phGraph)
{
    STREAM_CALL(cudaStreamEndCapture(rt_stream(s), (cudaGraph_t *)phGraph));
}

CUresult cuStreamEndCapture_ptsz(CUstream s, CUgraph *phGraph)
{
    STREAM_CALL(cudaStreamEndCapture(pt_stream(s), (cudaGraph_t *)phGraph));
}

/* Asked before nearly every launch by PyTorch: while no capture was begun and not ended, a
 * stream the guest knows is not capturing, answered here; otherwise the server's answer
 * (the runtime's cudaStreamIsCapturing is a round trip each time). */
static CUresult is_capturing(cudaStream_t s, CUstreamCaptureStatus *status)
{
    CUresult r = need_ctx();
    enum cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;

    if (r)
        return r;
    if (!status)
        return CUDA_ERROR_INVALID_VALUE;
    if (!tdm_graph_mem_captures_open() && stream_known((CUstream)s)) {
        *status = CU_STREAM_CAPTURE_STATUS_NONE;
        return CUDA_SUCCESS;
    }
    r = tdm_cu(cudaStreamIsCapturing(s, &st));
    if (!r)
        *status = (CUstreamCaptureStatus)st;
    return r;
}

CUresult cuStreamIsCapturing(CUstream s, CUstreamCaptureStatus *status)
{
    return is_capturing(rt_stream(s), status);
}

CUresult cuStreamIsCapturing_ptsz(CUstream s, CUstreamCaptureStatus *status)
{
    return is_capturing(pt_stream(s), status);
}

static CUresult capture_info(cudaStream_t s, CUstreamCaptureStatus *status, cuuint64_t *id, CUgraph *graph,
                             const CUgraphNode **deps, const CUgraphEdgeData **edges, size_t *ndeps)
{
    CUresult r = need_ctx();
    enum cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;
    unsigned long long i = 0;

    if (r)
        return r;
    if (!status)
        return CUDA_ERROR_INVALID_VALUE;
    r = tdm_cu(cudaStreamGetCaptureInfo(s, &st, id ? &i : NULL, (cudaGraph_t *)graph,
                                        (const cudaGraphNode_t **)deps, (const cudaGraphEdgeData **)edges, ndeps));
    if (r)
        return r;
    *status = (CUstreamCaptureStatus)st;
    if (id)
        *id = i;
    return CUDA_SUCCESS;
}

CUresult cuStreamGetCaptureInfo(CUstream s, CUstreamCaptureStatus *status, cuuint64_t *id)
{
    return capture_info(rt_stream(s), status, id, NULL, NULL, NULL, NULL);
}

CUresult cuStreamGetCaptureInfo_ptsz(CUstream s, CUstreamCaptureStatus *status, cuuint64_t *id)
{
    return capture_info(pt_stream(s), status, id, NULL, NULL, NULL, NULL);
}

CUresult cuStreamGetCaptureInfo_v2(CUstream s, CUstreamCaptureStatus *status, cuuint64_t *id, CUgraph *graph,
                                   const CUgraphNode **deps, size_t *ndeps)
{
    return capture_info(rt_stream(s), status, id, graph, deps, NULL, ndeps);
}

CUresult cuStreamGetCaptureInfo_v2_ptsz(CUstream s, CUstreamCaptureStatus *status, cuuint64_t *id, CUgraph *graph,
                                        const CUgraphNode **deps, size_t *ndeps)
{
    return capture_info(pt_stream(s), status, id, graph, deps, NULL, ndeps);
}

CUresult cuStreamGetCaptureInfo_v3(CUstream s, CUstreamCaptureStatus *status, cuuint64_t *id, CUgraph *graph,
                                   const CUgraphNode **deps, const CUgraphEdgeData **edges, size_t *ndeps)
{
    return capture_info(rt_stream(s), status, id, graph, deps, edges, ndeps);
}

CUresult cuStreamGetCaptureInfo_v3_ptsz(CUstream s, CUstreamCaptureStatus *status, cuuint64_t *id,
                                        CUgraph *graph, const CUgraphNode **deps, const CUgraphEdgeData **edges,
                                        size_t *ndeps)
{
    return capture_info(pt_stream(s), status, id, graph, deps, edges, ndeps);
}

/* The thread's mode is the guest's (the runtime keeps it per thread); no context needed. */
CUresult cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode *mode)
{
    CUresult r = tdm_cu_ready();

    if (r)
        return r;
    return tdm_cu(cudaThreadExchangeStreamCaptureMode((enum cudaStreamCaptureMode *)mode));
}

/* ---- events ---- */

CUresult cuEventCreate(CUevent *ph, unsigned int flags)
{
    CUresult r = need_ctx();
    cudaEvent_t e = NULL;

    if (r)
        return r;
    /* CU_EVENT_* are cudaEvent*'s numbers; INTERPROCESS needs DISABLE_TIMING (cuda.h). */
    if (!ph || (flags & ~(unsigned)(CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING | CU_EVENT_INTERPROCESS)) ||
        ((flags & CU_EVENT_INTERPROCESS) && !(flags & CU_EVENT_DISABLE_TIMING)))
        return CUDA_ERROR_INVALID_VALUE;
    r = tdm_cu(cudaEventCreateWithFlags(&e, flags));
    if (!r)
        *ph = (CUevent)e;
    return r;
}

/* cuda.h: a NULL event is CUDA_ERROR_INVALID_HANDLE. */
#define EVENT_CALL(e, call)                                                                                            \
    do {                                                                                                               \
        CUresult r_ = need_ctx();                                                                                      \
        if (r_)                                                                                                        \
            return r_;                                                                                                 \
        if (!(e))                                                                                                      \
            return CUDA_ERROR_INVALID_HANDLE;                                                                          \
        return tdm_cu(call);                                                                                           \
    } while (0)

CUresult cuEventRecord(CUevent e, CUstream s)
{
    EVENT_CALL(e, cudaEventRecord((cudaEvent_t)e, rt_stream(s)));
}

CUresult cuEventRecord_ptsz(CUevent e, CUstream s)
{
    EVENT_CALL(e, cudaEventRecord((cudaEvent_t)e, pt_stream(s)));
}

CUresult cuEventRecordWithFlags(CUevent e, CUstream s, unsigned int flags)
{
    EVENT_CALL(e, cudaEventRecordWithFlags((cudaEvent_t)e, rt_stream(s), flags));
}

CUresult cuEventRecordWithFlags_ptsz(CUevent e, CUstream s, unsigned int flags)
{
    EVENT_CALL(e, cudaEventRecordWithFlags((cudaEvent_t)e, pt_stream(s), flags));
}

CUresult cuEventQuery(CUevent e)
{
    EVENT_CALL(e, cudaEventQuery((cudaEvent_t)e));
}

CUresult cuEventSynchronize(CUevent e)
{
    EVENT_CALL(e, cudaEventSynchronize((cudaEvent_t)e));
}

CUresult cuEventDestroy_v2(CUevent e)
{
    EVENT_CALL(e, cudaEventDestroy((cudaEvent_t)e));
}

CUresult cuEventDestroy(CUevent e)
{
    return cuEventDestroy_v2(e);
}

CUresult cuEventElapsedTime_v2(float *ms, CUevent start, CUevent end)
{
    CUresult r = need_ctx();

    if (r)
        return r;
    if (!ms)
        return CUDA_ERROR_INVALID_VALUE;
    if (!start || !end)
        return CUDA_ERROR_INVALID_HANDLE;
    return tdm_cu(cudaEventElapsedTime(ms, (cudaEvent_t)start, (cudaEvent_t)end));
}

CUresult cuEventElapsedTime(float *ms, CUevent start, CUevent end)
{
    return cuEventElapsedTime_v2(ms, start, end);
}

/* ---- graphs ---- */

CUresult cuGraphCreate(CUgraph *ph, unsigned int flags)
{
    CUresult r = need_ctx();

    if (r)
        return r;
    if (!ph || flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    return tdm_cu(cudaGraphCreate((cudaGraph_t *)ph, 0));
}

CUresult cuGraphInstantiateWithFlags(CUgraphExec *ph, CUgraph g, unsigned long long flags)
{
    CUresult r = need_ctx();

    if (r)
        return r;
    return tdm_cu(cudaGraphInstantiateWithFlags((cudaGraphExec_t *)ph, (cudaGraph_t)g, flags));
}

/* The CUDA 11 form: no flags; the failing node and a log are answered empty (the server's
 * instantiation names no node). */
static CUresult instantiate_logged(CUgraphExec *ph, CUgraph g, CUgraphNode *err_node, char *log, size_t log_size)
{
    CUresult r = cuGraphInstantiateWithFlags(ph, g, 0);

    if (err_node)
        *err_node = NULL;
    if (log && log_size)
        log[0] = '\0';
    return r;
}

CUresult cuGraphInstantiate_v2(CUgraphExec *ph, CUgraph g, CUgraphNode *err_node, char *log, size_t log_size)
{
    return instantiate_logged(ph, g, err_node, log, log_size);
}

CUresult cuGraphInstantiate(CUgraphExec *ph, CUgraph g, CUgraphNode *err_node, char *log, size_t log_size)
{
    return instantiate_logged(ph, g, err_node, log, log_size);
}

/* CUDA_GRAPH_INSTANTIATE_PARAMS and cudaGraphInstantiateParams have one layout. */
CUresult cuGraphInstantiateWithParams(CUgraphExec *ph, CUgraph g, CUDA_GRAPH_INSTANTIATE_PARAMS *p)
{
    CUresult r = need_ctx();

    if (r)
        return r;
    return tdm_cu(cudaGraphInstantiateWithParams((cudaGraphExec_t *)ph, (cudaGraph_t)g,
                                                 (cudaGraphInstantiateParams *)p));
}

/* The per-thread form: a NULL upload stream is the per-thread default stream. */
CUresult cuGraphInstantiateWithParams_ptsz(CUgraphExec *ph, CUgraph g, CUDA_GRAPH_INSTANTIATE_PARAMS *p)
{
    bool mapped = p && !p->hUploadStream;
    CUresult r;

    if (mapped)   /* the program's struct is its own again on return */
        p->hUploadStream = CU_STREAM_PER_THREAD;
    r = cuGraphInstantiateWithParams(ph, g, p);
    if (mapped)
        p->hUploadStream = NULL;
    return r;
}

CUresult cuGraphLaunch(CUgraphExec x, CUstream s)
{
    STREAM_CALL(cudaGraphLaunch((cudaGraphExec_t)x, rt_stream(s)));
}

CUresult cuGraphLaunch_ptsz(CUgraphExec x, CUstream s)
{
    STREAM_CALL(cudaGraphLaunch((cudaGraphExec_t)x, pt_stream(s)));
}

CUresult cuGraphUpload(CUgraphExec x, CUstream s)
{
    STREAM_CALL(cudaGraphUpload((cudaGraphExec_t)x, rt_stream(s)));
}

CUresult cuGraphUpload_ptsz(CUgraphExec x, CUstream s)
{
    STREAM_CALL(cudaGraphUpload((cudaGraphExec_t)x, pt_stream(s)));
}

CUresult cuGraphExecDestroy(CUgraphExec x)
{
    STREAM_CALL(cudaGraphExecDestroy((cudaGraphExec_t)x));
}

CUresult cuGraphDestroy(CUgraph g)
{
    STREAM_CALL(cudaGraphDestroy((cudaGraph_t)g));
}

CUresult cuGraphGetNodes(CUgraph g, CUgraphNode *nodes, size_t *numNodes)
{
    STREAM_CALL(cudaGraphGetNodes((cudaGraph_t)g, (cudaGraphNode_t *)nodes, numNodes));
}

/* ---- small stream queries the runtime answers alike ---- */

CUresult cuStreamGetDevice(CUstream s, CUdevice *device)
{
    STREAM_CALL(cudaStreamGetDevice(rt_stream(s), device));
}

CUresult cuStreamGetDevice_ptsz(CUstream s, CUdevice *device)
{
    STREAM_CALL(cudaStreamGetDevice(pt_stream(s), device));
}

/* CU_MEM_ATTACH_* are cudaMemAttach*'s numbers. */
CUresult cuStreamAttachMemAsync(CUstream s, CUdeviceptr p, size_t length, unsigned int flags)
{
    STREAM_CALL(cudaStreamAttachMemAsync(rt_stream(s), (void *)(uintptr_t)p, length, flags));
}

CUresult cuStreamAttachMemAsync_ptsz(CUstream s, CUdeviceptr p, size_t length, unsigned int flags)
{
    STREAM_CALL(cudaStreamAttachMemAsync(pt_stream(s), (void *)(uintptr_t)p, length, flags));
}
