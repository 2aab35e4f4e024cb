/* Streams and events.  Handles are the server's logical ids, carried in the
 * cudaStream_t / cudaEvent_t pointer values; 0x1 and 0x2 keep their CUDA
 * meaning (legacy and per-thread default stream). */
#include <string.h>

#include "guest.h"

static cudaError_t create_stream(cudaStream_t *pStream, unsigned flags, int priority)
{
    tdm_stream_create_args a = { flags, priority };
    tdm_handle_res r;
    cudaError_t err;

    if (!pStream)
        return tdm_ret(cudaErrorInvalidValue);
    memset(&r, 0, sizeof(r));
    err = tdm_call(TDM_STREAM_CREATE, &a, &r);
    if (!err)
        err = (cudaError_t)r.err;
    if (!err) {
        *pStream = (cudaStream_t)(uintptr_t)r.handle;
        tdm_live_handle_add(r.handle);
    }
    return tdm_ret(err);
}

cudaError_t cudaStreamCreate(cudaStream_t *pStream)
{
    return create_stream(pStream, cudaStreamDefault, 0);
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *pStream, unsigned int flags)
{
    return create_stream(pStream, flags, 0);
}

cudaError_t cudaStreamCreateWithPriority(cudaStream_t *pStream, unsigned int flags, int priority)
{
    return create_stream(pStream, flags, priority);
}

static cudaError_t stream_call(uint32_t proc, cudaStream_t s)
{
    tdm_handle h = tdm_stream_id(s);

    return tdm_call_err(proc, &h);
}

cudaError_t cudaStreamDestroy(cudaStream_t stream)
{
    cudaError_t err;

    if (tdm_stream_id(stream) <= 2)
        return tdm_ret(cudaErrorInvalidResourceHandle);
    err = stream_call(TDM_STREAM_DESTROY, stream);
    if (!err)
        tdm_live_handle_remove(tdm_stream_id(stream));
    return tdm_ret(err);
}

cudaError_t cudaStreamGetFlags(cudaStream_t stream, unsigned int *flags)
{
    tdm_handle h = tdm_stream_id(stream);
    tdm_flags_res r;
    cudaError_t err;

    if (!flags)
        return tdm_ret(cudaErrorInvalidValue);
    memset(&r, 0, sizeof(r));
    err = tdm_call(TDM_STREAM_GET_FLAGS, &h, &r);
    if (!err)
        err = (cudaError_t)r.err;
    if (!err)
        *flags = r.flags;
    return tdm_ret(err);
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream)
{
    return tdm_ret(stream_call(TDM_STREAM_SYNCHRONIZE, stream));
}

cudaError_t cudaStreamQuery(cudaStream_t stream)
{
    cudaError_t err = stream_call(TDM_STREAM_QUERY, stream);

    return err == cudaErrorNotReady ? err : tdm_ret(err);
}

cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags)
{
    tdm_stream_wait_args a = { tdm_stream_id(stream), (uint64_t)(uintptr_t)event, flags };

    if (!event)
        return tdm_ret(cudaErrorInvalidResourceHandle);
    if (flags & ~(unsigned)cudaEventWaitExternal)
        return tdm_ret(cudaErrorInvalidValue);
    /* ---- event nodes (issue 14): on a capturing stream, an event wait node ---- */
    if ((flags & cudaEventWaitExternal) && tdm_graph_captures_open())
        return tdm_ret(tdm_post(TDM_STREAM_WAIT_EVENT_EXTERNAL, &a));
    return tdm_ret(tdm_ipc_event_fence(a.event, tdm_post(TDM_STREAM_WAIT_EVENT, &a)));
}

static cudaError_t create_event(cudaEvent_t *event, unsigned flags)
{
    tdm_handle_res r;
    u_int f = flags;
    cudaError_t err;

    if (!event)
        return tdm_ret(cudaErrorInvalidValue);
    memset(&r, 0, sizeof(r));
    err = tdm_call(TDM_EVENT_CREATE, &f, &r);
    if (!err)
        err = (cudaError_t)r.err;
    if (!err) {
        *event = (cudaEvent_t)(uintptr_t)r.handle;
        tdm_live_handle_add(r.handle);
        if (flags & cudaEventInterprocess)  /* ---- ipc (issue 14) ---- */
            tdm_ipc_event_note(r.handle);
    }
    return tdm_ret(err);
}

cudaError_t cudaEventCreate(cudaEvent_t *event)
{
    return create_event(event, cudaEventDefault);
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int flags)
{
    return create_event(event, flags);
}

static cudaError_t event_call(uint32_t proc, cudaEvent_t e)
{
    tdm_handle h = (uint64_t)(uintptr_t)e;

    if (!e)
        return cudaErrorInvalidResourceHandle;
    return tdm_call_err(proc, &h);
}

cudaError_t cudaEventDestroy(cudaEvent_t event)
{
    cudaError_t err = event_call(TDM_EVENT_DESTROY, event);

    if (!err) {
        tdm_live_handle_remove((uint64_t)(uintptr_t)event);
        tdm_ipc_event_forget((uint64_t)(uintptr_t)event); /* ---- ipc (issue 14) ---- */
    }
    return tdm_ret(err);
}

cudaError_t cudaEventSynchronize(cudaEvent_t event)
{
    return tdm_ret(event_call(TDM_EVENT_SYNCHRONIZE, event));
}

cudaError_t cudaEventQuery(cudaEvent_t event)
{
    cudaError_t err = event_call(TDM_EVENT_QUERY, event);

    return err == cudaErrorNotReady ? err : tdm_ret(err);
}

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream)
{
    tdm_event_record_args a = { (uint64_t)(uintptr_t)event, tdm_stream_id(stream) };

    if (!event)
        return tdm_ret(cudaErrorInvalidResourceHandle);
    return tdm_ret(tdm_ipc_event_fence(a.event, tdm_post(TDM_EVENT_RECORD, &a)));
}

cudaError_t cudaEventRecordWithFlags(cudaEvent_t event, cudaStream_t stream, unsigned int flags)
{
    if (flags & ~(unsigned)cudaEventRecordExternal)
        return tdm_ret(cudaErrorInvalidValue);
    /* ---- event nodes (issue 14): on a capturing stream, an event record node ---- */
    if ((flags & cudaEventRecordExternal) && event && tdm_graph_captures_open()) {
        tdm_event_record_args a = { (uint64_t)(uintptr_t)event, tdm_stream_id(stream) };
        return tdm_ret(tdm_post(TDM_EVENT_RECORD_EXTERNAL, &a));
    }
    return cudaEventRecord(event, stream);
}

cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end)
{
    tdm_elapsed_args a = { (uint64_t)(uintptr_t)start, (uint64_t)(uintptr_t)end };
    tdm_elapsed_res r;
    cudaError_t err;

    if (!ms || !start || !end)
        return tdm_ret(cudaErrorInvalidValue);
    memset(&r, 0, sizeof(r));
    err = tdm_call(TDM_EVENT_ELAPSED_TIME, &a, &r);
    if (!err)
        err = (cudaError_t)r.err;
    if (!err)
        *ms = r.ms;
    return tdm_ret(err);
}
