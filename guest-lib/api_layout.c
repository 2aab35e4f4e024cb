/* Pitched and 3D linear memory: cudaMallocPitch, cudaMalloc3D, and the 2D
 * and 3D copies and memsets (docs/memory-layouts.md).  A pitched
 * allocation is a cudaMalloc of pitch * height (* depth) bytes from the
 * logical arena; its pitch is the device's row alignment, asked of the
 * server once per process. */
#include <stdatomic.h>

#include "api_layout.h"

static _Atomic size_t row_alignment;   /* 0 until the server said */

static cudaError_t alignment(size_t *out)
{
    tdm_pitch_res r = { 0 };
    size_t a = atomic_load(&row_alignment);
    cudaError_t err;

    if (a) {
        *out = a;
        return cudaSuccess;
    }
    err = tdm_call(TDM_PITCH_ALIGNMENT, NULL, &r);
    if (!err)
        err = (cudaError_t)r.err;
    /* An alignment that is not a power of two would be a broken server. */
    if (!err && (r.align == 0 || (r.align & (r.align - 1)) != 0))
        err = cudaErrorUnknown;
    if (err)
        return err;
    atomic_store(&row_alignment, (size_t)r.align);
    *out = (size_t)r.align;
    return cudaSuccess;
}

/* The pitch of rows `width` bytes wide and the bytes of `rows` of them. */
static cudaError_t pitched_size(size_t width, size_t rows, size_t *pitch, size_t *bytes)
{
    size_t a;
    cudaError_t err = alignment(&a);

    if (err)
        return err;
    if (width > SIZE_MAX - (a - 1))
        return cudaErrorMemoryAllocation;
    *pitch = (width + a - 1) & ~(a - 1);
    if (__builtin_mul_overflow(*pitch, rows, bytes))
        return cudaErrorMemoryAllocation;
    return cudaSuccess;
}

cudaError_t cudaMallocPitch(void **devPtr, size_t *pitch, size_t width, size_t height)
{
    size_t p, bytes;
    cudaError_t err;

    if (!devPtr || !pitch)
        return tdm_ret(cudaErrorInvalidValue);
    if ((err = pitched_size(width, height, &p, &bytes)) != cudaSuccess)
        return tdm_ret(err);
    if ((err = cudaMalloc(devPtr, bytes)) != cudaSuccess)
        return err;
    *pitch = p;
    return cudaSuccess;
}

cudaError_t cudaMalloc3D(struct cudaPitchedPtr *pitchedDevPtr, struct cudaExtent extent)
{
    size_t p, rows, bytes;
    void *ptr = NULL;
    cudaError_t err;

    if (!pitchedDevPtr)
        return tdm_ret(cudaErrorInvalidValue);
    if (__builtin_mul_overflow(extent.height, extent.depth, &rows))
        return tdm_ret(cudaErrorMemoryAllocation);
    if ((err = pitched_size(extent.width, rows, &p, &bytes)) != cudaSuccess)
        return tdm_ret(err);
    if ((err = cudaMalloc(&ptr, bytes)) != cudaSuccess)
        return err;
    *pitchedDevPtr = (struct cudaPitchedPtr){ .ptr = ptr, .pitch = p, .xsize = extent.width, .ysize = extent.height };
    return cudaSuccess;
}

static struct cudaExtent extent2d(size_t width, size_t height)
{
    return (struct cudaExtent){ .width = width, .height = height, .depth = 1 };
}

static tdm_layout_side side2d(const void *p, size_t pitch, size_t height)
{
    return (tdm_layout_side){ .ptr = (char *)p, .pitch = pitch, .rows = height };
}

static cudaError_t copy2d(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width, size_t height,
                          enum cudaMemcpyKind kind, cudaStream_t stream)
{
    return tdm_layout_copy(side2d(dst, dpitch, height), side2d(src, spitch, height),
                           extent2d(width, height), kind, stream);
}

cudaError_t cudaMemcpy2D(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width, size_t height,
                         enum cudaMemcpyKind kind)
{
    return copy2d(dst, dpitch, src, spitch, width, height, kind, NULL);
}

cudaError_t cudaMemcpy2DAsync(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                              size_t height, enum cudaMemcpyKind kind, cudaStream_t stream)
{
    return copy2d(dst, dpitch, src, spitch, width, height, kind, stream);
}

/* A cudaPitchedPtr at a position, as cudaMemcpy3D addresses it. */
static tdm_layout_side side3d(struct cudaPitchedPtr p, struct cudaPos pos)
{
    return (tdm_layout_side){ .ptr = (char *)p.ptr + (pos.z * p.ysize + pos.y) * p.pitch + pos.x,
                              .pitch = p.pitch, .rows = p.ysize };
}

/* One side of cudaMemcpy3D: an array (positions and extent in elements,
 * *elem set to its element size) or a pitched pointer (in bytes). */
static cudaError_t side_of(cudaArray_const_t array, struct cudaPitchedPtr p, struct cudaPos pos,
                           tdm_layout_side *out, size_t *elem)
{
    uint64_t h;

    if (!array) {
        *out = side3d(p, pos);
        return cudaSuccess;
    }
    if (p.ptr)   /* an array and a pointer for one side */
        return cudaErrorInvalidValue;
    if (tdm_layout_array_handle(array, &h) != cudaSuccess)
        return cudaErrorInvalidResourceHandle;
    *elem = tdm_layout_array_elem(h);
    *out = (tdm_layout_side){ .array = h, .x = pos.x, .y = pos.y, .z = pos.z };
    return cudaSuccess;
}

/* With an array in the copy, positions and the width count its elements
 * (the first array's, as CUDA does); without, bytes. */
static cudaError_t copy3d(const struct cudaMemcpy3DParms *p, cudaStream_t stream)
{
    tdm_layout_side d, s;
    size_t delem = 0, selem = 0, elem;
    struct cudaExtent e;
    cudaError_t err;

    if (!p)
        return tdm_ret(cudaErrorInvalidValue);
    if ((err = side_of(p->dstArray, p->dstPtr, p->dstPos, &d, &delem)) != cudaSuccess ||
        (err = side_of(p->srcArray, p->srcPtr, p->srcPos, &s, &selem)) != cudaSuccess)
        return tdm_ret(err);
    elem = selem ? selem : delem ? delem : 1;
    e = p->extent;
    if (__builtin_mul_overflow(e.width, elem, &e.width))
        return tdm_ret(cudaErrorInvalidValue);
    if (d.array)
        d.x *= delem;
    if (s.array)
        s.x *= selem;
    return tdm_layout_copy(d, s, e, p->kind, stream);
}

cudaError_t cudaMemcpy3D(const struct cudaMemcpy3DParms *p)
{
    return copy3d(p, NULL);
}

cudaError_t cudaMemcpy3DAsync(const struct cudaMemcpy3DParms *p, cudaStream_t stream)
{
    return copy3d(p, stream);
}

cudaError_t cudaMemset2D(void *devPtr, size_t pitch, int value, size_t width, size_t height)
{
    return tdm_layout_memset(side2d(devPtr, pitch, height), value, extent2d(width, height), NULL);
}

cudaError_t cudaMemset2DAsync(void *devPtr, size_t pitch, int value, size_t width, size_t height,
                              cudaStream_t stream)
{
    return tdm_layout_memset(side2d(devPtr, pitch, height), value, extent2d(width, height), stream);
}

cudaError_t cudaMemset3D(struct cudaPitchedPtr p, int value, struct cudaExtent extent)
{
    return tdm_layout_memset(side2d(p.ptr, p.pitch, p.ysize), value, extent, NULL);
}

cudaError_t cudaMemset3DAsync(struct cudaPitchedPtr p, int value, struct cudaExtent extent, cudaStream_t stream)
{
    return tdm_layout_memset(side2d(p.ptr, p.pitch, p.ysize), value, extent, stream);
}

/* ---- per-thread default stream twins (api_per_thread.c says why) ---- */

static cudaStream_t per_thread(cudaStream_t s)
{
    return s ? s : cudaStreamPerThread;
}

cudaError_t cudaMemcpy2D_ptds(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                              size_t height, enum cudaMemcpyKind kind)
{
    return copy2d(dst, dpitch, src, spitch, width, height, kind, cudaStreamPerThread);
}

cudaError_t cudaMemcpy2DAsync_ptsz(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                                   size_t height, enum cudaMemcpyKind kind, cudaStream_t stream)
{
    return copy2d(dst, dpitch, src, spitch, width, height, kind, per_thread(stream));
}

cudaError_t cudaMemcpy3D_ptds(const struct cudaMemcpy3DParms *p)
{
    return copy3d(p, cudaStreamPerThread);
}

cudaError_t cudaMemcpy3DAsync_ptsz(const struct cudaMemcpy3DParms *p, cudaStream_t stream)
{
    return copy3d(p, per_thread(stream));
}

cudaError_t cudaMemset2D_ptds(void *devPtr, size_t pitch, int value, size_t width, size_t height)
{
    return cudaMemset2DAsync(devPtr, pitch, value, width, height, cudaStreamPerThread);
}

cudaError_t cudaMemset2DAsync_ptsz(void *devPtr, size_t pitch, int value, size_t width, size_t height,
                                   cudaStream_t stream)
{
    return cudaMemset2DAsync(devPtr, pitch, value, width, height, per_thread(stream));
}

cudaError_t cudaMemset3D_ptds(struct cudaPitchedPtr p, int value, struct cudaExtent extent)
{
    return cudaMemset3DAsync(p, value, extent, cudaStreamPerThread);
}

cudaError_t cudaMemset3DAsync_ptsz(struct cudaPitchedPtr p, int value, struct cudaExtent extent,
                                   cudaStream_t stream)
{
    return cudaMemset3DAsync(p, value, extent, per_thread(stream));
}

/* ---- peer 3D copies (issue 14, mipmapped arrays) ---- */

/* cudaMemcpy3DPeer: a cudaMemcpy3D between devices.  On the one device a
 * Tandem program has, a copy with both devices 0 is an ordinary copy
 * (cudaMemcpyDefault); any other device is the runtime's
 * cudaErrorInvalidDevice. */
static cudaError_t copy3d_peer(const struct cudaMemcpy3DPeerParms *p, cudaStream_t stream)
{
    struct cudaMemcpy3DParms c;
    cudaError_t err;

    if (!p)
        return tdm_ret(cudaErrorInvalidValue);
    if ((err = tdm_check_device(p->srcDevice)) != cudaSuccess || (err = tdm_check_device(p->dstDevice)) != cudaSuccess)
        return tdm_ret(err);
    c = (struct cudaMemcpy3DParms){ .srcArray = p->srcArray, .srcPos = p->srcPos, .srcPtr = p->srcPtr,
                                    .dstArray = p->dstArray, .dstPos = p->dstPos, .dstPtr = p->dstPtr,
                                    .extent = p->extent, .kind = cudaMemcpyDefault };
    return copy3d(&c, stream);
}

cudaError_t cudaMemcpy3DPeer(const struct cudaMemcpy3DPeerParms *p)
{
    return copy3d_peer(p, NULL);
}

cudaError_t cudaMemcpy3DPeerAsync(const struct cudaMemcpy3DPeerParms *p, cudaStream_t stream)
{
    return copy3d_peer(p, stream);
}

cudaError_t cudaMemcpy3DPeer_ptds(const struct cudaMemcpy3DPeerParms *p)
{
    return copy3d_peer(p, cudaStreamPerThread);
}

cudaError_t cudaMemcpy3DPeerAsync_ptsz(const struct cudaMemcpy3DPeerParms *p, cudaStream_t stream)
{
    return copy3d_peer(p, per_thread(stream));
}
