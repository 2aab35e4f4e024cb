/* The _ptds/_ptsz entry points that programs built with
 * --default-stream per-thread call.  Their default stream is the per-thread
 * stream (cudaStreamPerThread), which a session serves on its own null
 * stream, so each is the plain entry point with that stream. */
#include "guest.h"

static cudaStream_t per_thread(cudaStream_t s)
{
    return s ? s : cudaStreamPerThread;
}

cudaError_t cudaMemcpy_ptds(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind)
{
    return tdm_memcpy(dst, src, n, kind, cudaStreamPerThread, false);
}

cudaError_t cudaMemcpyAsync_ptsz(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind, cudaStream_t s)
{
    return tdm_memcpy(dst, src, n, kind, per_thread(s), true);
}

cudaError_t cudaMemset_ptds(void *p, int value, size_t n)
{
    return tdm_memset(p, value, n, cudaStreamPerThread);
}

cudaError_t cudaMemsetAsync_ptsz(void *p, int value, size_t n, cudaStream_t s)
{
    return tdm_memset(p, value, n, per_thread(s));
}

cudaError_t cudaStreamSynchronize_ptsz(cudaStream_t s)
{
    return cudaStreamSynchronize(per_thread(s));
}

cudaError_t cudaStreamGetFlags_ptsz(cudaStream_t s, unsigned int *flags)
{
    return cudaStreamGetFlags(per_thread(s), flags);
}

cudaError_t cudaStreamQuery_ptsz(cudaStream_t s)
{
    return cudaStreamQuery(per_thread(s));
}

cudaError_t cudaStreamWaitEvent_ptsz(cudaStream_t s, cudaEvent_t e, unsigned int flags)
{
    return cudaStreamWaitEvent(per_thread(s), e, flags);
}

cudaError_t cudaEventRecord_ptsz(cudaEvent_t e, cudaStream_t s)
{
    return cudaEventRecord(e, per_thread(s));
}

cudaError_t cudaEventRecordWithFlags_ptsz(cudaEvent_t e, cudaStream_t s, unsigned int flags)
{
    return cudaEventRecordWithFlags(e, per_thread(s), flags);
}

cudaError_t cudaMemcpyToSymbol_ptds(const void *sym, const void *src, size_t n, size_t off, enum cudaMemcpyKind k)
{
    return cudaMemcpyToSymbolAsync(sym, src, n, off, k, cudaStreamPerThread);
}

cudaError_t cudaMemcpyFromSymbol_ptds(void *dst, const void *sym, size_t n, size_t off, enum cudaMemcpyKind k)
{
    return cudaMemcpyFromSymbolAsync(dst, sym, n, off, k, cudaStreamPerThread);
}

cudaError_t cudaMemcpyToSymbolAsync_ptsz(const void *sym, const void *src, size_t n, size_t off,
                                         enum cudaMemcpyKind k, cudaStream_t s)
{
    return cudaMemcpyToSymbolAsync(sym, src, n, off, k, per_thread(s));
}

cudaError_t cudaMemcpyFromSymbolAsync_ptsz(void *dst, const void *sym, size_t n, size_t off,
                                           enum cudaMemcpyKind k, cudaStream_t s)
{
    return cudaMemcpyFromSymbolAsync(dst, sym, n, off, k, per_thread(s));
}
