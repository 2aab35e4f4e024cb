/* Stream priorities, ids and devices (docs/runtime-api.md, "Streams").
 * Priorities are the device's own, from the server; a stream's id and
 * device are answered here once the server has confirmed the stream. */
#include <string.h>

#include "guest.h"

static cudaError_t int_pair(uint32_t proc, void *args, int *first, int *second)
{
    tdm_int_pair_res r;
    cudaError_t err;

    memset(&r, 0, sizeof(r));
    err = tdm_call(proc, args, &r);
    if (!err)
        err = (cudaError_t)r.err;
    if (!err) {
        *first = r.first;
        *second = r.second;
    }
    return err;
}

cudaError_t cudaDeviceGetStreamPriorityRange(int *leastPriority, int *greatestPriority)
{
    int least = 0, greatest = 0;
    cudaError_t err = int_pair(TDM_STREAM_PRIORITY_RANGE, NULL, &least, &greatest);

    /* Either pointer may be NULL, as in CUDA. */
    if (!err && leastPriority)
        *leastPriority = least;
    if (!err && greatestPriority)
        *greatestPriority = greatest;
    return tdm_ret(err);
}

/* The stream's priority; also how the guest learns that the server knows
 * the stream. */
static cudaError_t stream_priority(cudaStream_t stream, int *priority)
{
    tdm_handle h = tdm_stream_id(stream);
    int unused;

    return int_pair(TDM_STREAM_GET_PRIORITY, &h, priority, &unused);
}

cudaError_t cudaStreamGetPriority(cudaStream_t hStream, int *priority)
{
    if (!priority)
        return tdm_ret(cudaErrorInvalidValue);
    return tdm_ret(stream_priority(hStream, priority));
}

/* A created stream's id is its handle, unique in the process for the
 * session's life; the default streams keep their fixed handles (the
 * per-thread stream is one stream for every thread: the session serves it
 * on its null stream). */
cudaError_t cudaStreamGetId(cudaStream_t hStream, unsigned long long *streamId)
{
    int priority;
    cudaError_t err;

    if (!streamId)
        return tdm_ret(cudaErrorInvalidValue);
    err = stream_priority(hStream, &priority);
    if (!err)
        *streamId = tdm_stream_id(hStream);
    return tdm_ret(err);
}

/* A session has one device, ordinal 0. */
cudaError_t cudaStreamGetDevice(cudaStream_t hStream, int *device)
{
    int priority;
    cudaError_t err;

    if (!device)
        return tdm_ret(cudaErrorInvalidValue);
    err = stream_priority(hStream, &priority);
    if (!err)
        *device = 0;
    return tdm_ret(err);
}

static cudaStream_t per_thread(cudaStream_t s)
{
    return s ? s : cudaStreamPerThread;
}

cudaError_t cudaStreamGetPriority_ptsz(cudaStream_t hStream, int *priority)
{
    return cudaStreamGetPriority(per_thread(hStream), priority);
}

cudaError_t cudaStreamGetId_ptsz(cudaStream_t hStream, unsigned long long *streamId)
{
    return cudaStreamGetId(per_thread(hStream), streamId);
}

cudaError_t cudaStreamGetDevice_ptsz(cudaStream_t hStream, int *device)
{
    return cudaStreamGetDevice(per_thread(hStream), device);
}
