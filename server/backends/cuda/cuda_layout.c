/* Pitched, 2D and 3D memory and CUDA arrays on the GPU
 * (docs/memory-layouts.md): one cuMemcpy3DAsync per copy, one
 * cuMemsetD2D8Async per slice of a memset. */
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

/* tdm_barray is the driver's CUarray, cast, as streams are (cuda_backend_internal.h). */
static CUarray cu_array(tdm_barray *a)
{
    return (CUarray)a;
}

int tdm_cuda_array_format(int kind, int bits, CUarray_format *f)
{
    static const struct { int kind, bits; CUarray_format f; } formats[] = {
        { cudaChannelFormatKindSigned, 8, CU_AD_FORMAT_SIGNED_INT8 },
        { cudaChannelFormatKindSigned, 16, CU_AD_FORMAT_SIGNED_INT16 },
        { cudaChannelFormatKindSigned, 32, CU_AD_FORMAT_SIGNED_INT32 },
        { cudaChannelFormatKindUnsigned, 8, CU_AD_FORMAT_UNSIGNED_INT8 },
        { cudaChannelFormatKindUnsigned, 16, CU_AD_FORMAT_UNSIGNED_INT16 },
        { cudaChannelFormatKindUnsigned, 32, CU_AD_FORMAT_UNSIGNED_INT32 },
        { cudaChannelFormatKindFloat, 16, CU_AD_FORMAT_HALF },
        { cudaChannelFormatKindFloat, 32, CU_AD_FORMAT_FLOAT },
    };

    for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++)
        if (formats[i].kind == kind && formats[i].bits == bits) {
            *f = formats[i].f;
            return 0;
        }
    return cudaErrorInvalidChannelDescriptor;
}

int tdm_cuda_array_desc(const tdm_array_desc *d, CUDA_ARRAY3D_DESCRIPTOR *desc)
{
    int err;

    memset(desc, 0, sizeof(*desc));
    if ((err = tdm_cuda_array_format(d->kind, d->bits, &desc->Format)) != 0)
        return err;
    desc->Width = d->width;
    desc->Height = d->height;
    desc->Depth = d->depth;
    desc->NumChannels = (unsigned)d->channels;
    desc->Flags = d->flags;
    return 0;
}

int tdm_cuda_array_create(tdm_backend *b, const tdm_array_desc *d, tdm_barray **out)
{
    CUDA_ARRAY3D_DESCRIPTOR desc;
    CUarray a = NULL;
    int err = tdm_cuda_enter(b);

    if (err)
        return err;
    if ((err = tdm_cuda_array_desc(d, &desc)) != 0)
        return err;
    err = tdm_cuda_err(tdm_cu.cuArray3DCreate(&a, &desc), "cuArray3DCreate");
    if (!err)
        *out = (tdm_barray *)a;
    return err;
}

/* The session layer has waited for the session's work (cudaFreeArray's
 * implicit synchronization), so no other session waits here. */
int tdm_cuda_array_destroy(tdm_backend *b, tdm_barray *a)
{
    int err = tdm_cuda_enter(b);

    if (err)
        return err;
    return tdm_cuda_err(tdm_cu.cuArrayDestroy(cu_array(a)), "cuArrayDestroy");
}

static void side(const tdm_box *box, CUmemorytype *type, const void **host, CUdeviceptr *dev, CUarray *array,
                 size_t *x, size_t *y, size_t *z, size_t *pitch, size_t *height)
{
    *type = box->array ? CU_MEMORYTYPE_ARRAY : box->host ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE;
    *host = box->host;
    *dev = box->host || box->array ? 0 : (CUdeviceptr)box->dev;
    *array = box->array ? cu_array(box->array) : NULL;
    *x = box->x;
    *y = box->y;
    *z = box->z;
    *pitch = box->array ? 0 : box->pitch;
    *height = box->array ? 0 : box->rows;
}

/* The host side of a 3D copy is the RPC buffer, packed and pageable, and
 * gone once the call returns: a copy from or to the host is waited for. */
int tdm_cuda_copy_3d(tdm_backend *b, const tdm_box *dst, const tdm_box *src, tdm_extent ext, tdm_bstream *s)
{
    CUstream cs = tdm_cuda_stream(s);
    CUDA_MEMCPY3D c;
    int err = tdm_cuda_enter(b);

    if (err)
        return err;
    memset(&c, 0, sizeof(c));
    side(src, &c.srcMemoryType, &c.srcHost, &c.srcDevice, &c.srcArray, &c.srcXInBytes, &c.srcY, &c.srcZ,
         &c.srcPitch, &c.srcHeight);
    side(dst, &c.dstMemoryType, (const void **)&c.dstHost, &c.dstDevice, &c.dstArray, &c.dstXInBytes, &c.dstY,
         &c.dstZ, &c.dstPitch, &c.dstHeight);
    c.WidthInBytes = ext.width;
    c.Height = ext.height;
    c.Depth = ext.depth;
    err = tdm_cuda_err(tdm_cu.cuMemcpy3DAsync(&c, cs), "cuMemcpy3DAsync");
    if (err || (!dst->host && !src->host))
        return err;
    return tdm_cuda_err(tdm_cu.cuStreamSynchronize(cs), "cuStreamSynchronize(3D copy with the host)");
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
