/* Pitched, 2D and 3D memory on the GPU (docs/memory-layouts.md): one
 * cuMemcpy3DAsync per copy, one cuMemsetD2D8Async per slice of a memset. */
#include "cuda_backend_internal.h"

#include <string.h>

/* cuMemAllocPitch's row alignment, asked of the driver itself: the pitch it
 * gives a one-byte row is the alignment, and every wider row is rounded up
 * to a multiple of it.  The memory is freed at once; Tandem's pitched
 * allocations come from the logical arena like any cudaMalloc. */
int tdm_cuda_pitch_alignment(tdm_backend *b, uint64_t *align)
{
    CUdeviceptr probe = 0;
    size_t pitch = 0;
    int err = tdm_cuda_enter(b);

    if (err)
        return err;
    err = tdm_cuda_err(tdm_cu.cuMemAllocPitch(&probe, &pitch, 1, 1, 4), "cuMemAllocPitch");
    if (err)
        return err;
    tdm_cuda_err(tdm_cu.cuMemFree(probe), "cuMemFree(pitch probe)");
    *align = pitch;
    return 0;
}

static void side(const tdm_box *box, CUmemorytype *type, const void **host, CUdeviceptr *dev, size_t *pitch,
                 size_t *height)
{
    *type = box->host ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE;
    *host = box->host;
    *dev = box->host ? 0 : (CUdeviceptr)box->dev;
    *pitch = box->pitch;
    *height = box->rows;
}

/* A host source is the RPC buffer, packed: like cuMemcpyHtoDAsync from
 * pageable memory, the driver stages it before returning (cuda_copy.c).  A
 * host destination is waited for. */
int tdm_cuda_copy_3d(tdm_backend *b, const tdm_box *dst, const tdm_box *src, tdm_extent ext, tdm_bstream *s)
{
    CUstream cs = tdm_cuda_stream(s);
    CUDA_MEMCPY3D c;
    int err = tdm_cuda_enter(b);

    if (err)
        return err;
    memset(&c, 0, sizeof(c));
    side(src, &c.srcMemoryType, &c.srcHost, &c.srcDevice, &c.srcPitch, &c.srcHeight);
    side(dst, &c.dstMemoryType, (const void **)&c.dstHost, &c.dstDevice, &c.dstPitch, &c.dstHeight);
    c.WidthInBytes = ext.width;
    c.Height = ext.height;
    c.Depth = ext.depth;
    err = tdm_cuda_err(tdm_cu.cuMemcpy3DAsync(&c, cs), "cuMemcpy3DAsync");
    if (err || !dst->host)
        return err;
    return tdm_cuda_err(tdm_cu.cuStreamSynchronize(cs), "cuStreamSynchronize(3D dtoh)");
}

int tdm_cuda_memset_3d(tdm_backend *b, const tdm_box *dst, uint8_t value, tdm_extent ext, tdm_bstream *s)
{
    CUstream cs = tdm_cuda_stream(s);
    int err = tdm_cuda_enter(b);

    for (uint64_t z = 0; !err && z < ext.depth; z++)
        err = tdm_cuda_err(tdm_cu.cuMemsetD2D8Async(dst->dev + z * dst->rows * dst->pitch, dst->pitch, value,
                                                    ext.width, ext.height, cs),
                           "cuMemsetD2D8Async");
    return err;
}
