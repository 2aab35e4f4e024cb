/* Host functions in stream order, run in the guest process, where their
 * code and data are (docs/runtime-api.md, "Host callbacks").
 *
 * Asynchronous, as natively: the call queues the function on its stream
 * and returns; the stream's later work waits until the function has run
 * on the process's callback thread (callbacks.c); other streams go on. */
#include "guest.h"

cudaError_t cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void *userData)
{
    if (!fn)
        return tdm_ret(cudaErrorInvalidValue);
    return tdm_ret(tdm_callback_enqueue(stream, fn, NULL, userData));
}

cudaError_t cudaStreamAddCallback(cudaStream_t stream, cudaStreamCallback_t callback, void *userData,
                                  unsigned int flags)
{
    if (!callback || flags != 0)
        return tdm_ret(cudaErrorInvalidValue);
    /* The function gets the stream's error as its status, as CUDA passes it. */
    return tdm_ret(tdm_callback_enqueue(stream, NULL, callback, userData));
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
