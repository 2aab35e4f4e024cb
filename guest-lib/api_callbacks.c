/* Host functions in stream order, run in the guest process, where their
 * code and data are (docs/runtime-api.md, "Host callbacks").
 *
 * This is the synchronous form: the calling thread waits for the stream's
 * earlier work, runs the function and returns, so the function runs after
 * everything enqueued before it and everything enqueued after it (by this
 * thread, which is blocked meanwhile) follows it.  The price is that the
 * caller does not run ahead of the device across a callback. */
#include "guest.h"

/* The stream's earlier work, done; its error, consumed as a synchronizing
 * call consumes it. */
static cudaError_t drain(cudaStream_t stream)
{
    tdm_handle h = tdm_stream_id(stream);

    return tdm_call_err(TDM_STREAM_SYNCHRONIZE, &h);
}

cudaError_t cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void *userData)
{
    cudaError_t err;

    if (!fn)
        return tdm_ret(cudaErrorInvalidValue);
    /* A stream whose work failed never gets to the function, as on the GPU
     * where a failed stream stops executing; the error is the caller's. */
    err = drain(stream);
    if (err)
        return tdm_ret(err);
    fn(userData);
    return cudaSuccess;
}

cudaError_t cudaStreamAddCallback(cudaStream_t stream, cudaStreamCallback_t callback, void *userData,
                                  unsigned int flags)
{
    cudaError_t err;

    if (!callback || flags != 0)
        return tdm_ret(cudaErrorInvalidValue);
    err = drain(stream);
    /* An unknown stream is the caller's mistake, not the stream's state. */
    if (err == cudaErrorInvalidResourceHandle)
        return tdm_ret(err);
    /* The stream's error goes to the callback as its status, as CUDA
     * passes it; the call itself only enqueued (here: ran) the callback. */
    callback(stream, err, userData);
    return cudaSuccess;
}

cudaError_t cudaLaunchHostFunc_ptsz(cudaStream_t stream, cudaHostFn_t fn, void *userData)
{
    return cudaLaunchHostFunc(stream ? stream : cudaStreamPerThread, fn, userData);
}

cudaError_t cudaStreamAddCallback_ptsz(cudaStream_t stream, cudaStreamCallback_t callback, void *userData,
                                       unsigned int flags)
{
    return cudaStreamAddCallback(stream ? stream : cudaStreamPerThread, callback, userData, flags);
}
