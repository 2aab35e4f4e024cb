/* Copies and memsets, queued on the caller's stream. */
#include "cuda_backend_internal.h"

/* cuMemcpyHtoDAsync from pageable memory: the driver must stage the bytes
 * into its own pinned memory before the call returns, since it cannot know
 * how long a pageable buffer lives; so `src` (the RPC buffer, freed after
 * the call) is consumed on return while the copy stays ordered on `s`.
 * The CUDA documentation only says such a copy "might be synchronous"; the
 * GPU smoke test checks the behaviour by queueing the copy behind a busy
 * kernel and overwriting the source at once. */
/* Pins the pages (they are the guest's shm region, mapped here too) and
 * maps them for the device, so cuMemcpy*Async from and to them is DMA and
 * truly asynchronous.  PORTABLE: every context may use them; DEVICEMAP:
 * kernels may use them too (zero-copy, tdm_cuda_host_map). */
int tdm_cuda_host_register(tdm_backend *b, void *p, size_t n, void **handle)
{
    int err = tdm_cuda_enter(b);

    if (err)
        return err;
    err = tdm_cuda_err(tdm_cu.cuMemHostRegister(p, n, CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP),
                       "cuMemHostRegister");
    if (!err)
        *handle = p;
    return err;
}

int tdm_cuda_host_unregister(tdm_backend *b, void *handle)
{
    int err = tdm_cuda_enter(b);

    if (err)
        return err;
    return tdm_cuda_err(tdm_cu.cuMemHostUnregister(handle), "cuMemHostUnregister");
}

int tdm_cuda_memcpy_htod(tdm_backend *b, uint64_t dst, const void *src, size_t n, tdm_bstream *s)
{
    int err = tdm_cuda_enter(b);

    if (err)
        return err;
    return tdm_cuda_err(tdm_cu.cuMemcpyHtoDAsync(dst, src, n, tdm_cuda_stream(s)), "cuMemcpyHtoDAsync");
}

int tdm_cuda_memcpy_dtoh_sync(tdm_backend *b, void *dst, uint64_t src, size_t n, tdm_bstream *s)
{
    CUstream cs = tdm_cuda_stream(s);
    int err = tdm_cuda_enter(b);

    if (err)
        return err;
    err = tdm_cuda_err(tdm_cu.cuMemcpyDtoHAsync(dst, src, n, cs), "cuMemcpyDtoHAsync");
    if (err)
        return err;
    return tdm_cuda_err(tdm_cu.cuStreamSynchronize(cs), "cuStreamSynchronize(dtoh)");
}

/* Into registered staging (session_copy.c): DMA, truly asynchronous. */
int tdm_cuda_memcpy_dtoh_async(tdm_backend *b, void *dst, uint64_t src, size_t n, tdm_bstream *s)
{
    int err = tdm_cuda_enter(b);

    if (err)
        return err;
    return tdm_cuda_err(tdm_cu.cuMemcpyDtoHAsync(dst, src, n, tdm_cuda_stream(s)), "cuMemcpyDtoHAsync");
}

int tdm_cuda_memcpy_dtod(tdm_backend *b, uint64_t dst, uint64_t src, size_t n, tdm_bstream *s)
{
    int err = tdm_cuda_enter(b);

    if (err)
        return err;
    return tdm_cuda_err(tdm_cu.cuMemcpyDtoDAsync(dst, src, n, tdm_cuda_stream(s)), "cuMemcpyDtoDAsync");
}

int tdm_cuda_memset_d8(tdm_backend *b, uint64_t dst, uint8_t value, size_t n, tdm_bstream *s)
{
    int err = tdm_cuda_enter(b);

    if (err)
        return err;
    return tdm_cuda_err(tdm_cu.cuMemsetD8Async(dst, value, n, tdm_cuda_stream(s)), "cuMemsetD8Async");
}
