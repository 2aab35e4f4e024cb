/* CUDA arrays (docs/memory-layouts.md): cudaMallocArray, cudaMalloc3DArray,
 * cudaFreeArray, cudaArrayGetInfo, cudaGetChannelDesc (cudaCreateChannelDesc
 * is api_misc.c's), and the copies into, out of and between arrays.
 *
 * A cudaArray_t the program holds is the server's handle for the array.
 * The process keeps what it created them with (channel format, extent,
 * flags), as the runtime does, so the queries are answered here and the
 * copies are checked against the array's extent before they are sent; the
 * server checks again. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "api_layout.h"
#include "grow.h"

typedef struct known_array {
    uint64_t handle;
    struct cudaChannelFormatDesc desc;
    struct cudaExtent extent;   /* in elements, as created (0 for absent dimensions) */
    unsigned flags;
    size_t elem;                /* bytes per element */
} known_array;

/* The process's arrays: once per process, as the runtime has them. */
static pthread_mutex_t arrays_lock = PTHREAD_MUTEX_INITIALIZER;
static known_array *arrays;
static size_t narrays, arrays_cap;

static known_array *find_locked(uint64_t handle)
{
    for (size_t i = 0; i < narrays; i++)
        if (arrays[i].handle == handle)
            return &arrays[i];
    return NULL;
}

/* A copy of the record of `a`; false if the process holds no such array. */
static bool lookup(uint64_t handle, known_array *out)
{
    known_array *k;

    pthread_mutex_lock(&arrays_lock);
    k = find_locked(handle);
    if (k)
        *out = *k;
    pthread_mutex_unlock(&arrays_lock);
    return k != NULL;
}

cudaError_t tdm_layout_array_handle(cudaArray_const_t a, uint64_t *handle)
{
    known_array k;

    if (!a) {
        *handle = 0;
        return cudaSuccess;
    }
    if (!lookup((uint64_t)(uintptr_t)a, &k))
        return cudaErrorInvalidResourceHandle;
    *handle = k.handle;
    return cudaSuccess;
}

size_t tdm_layout_array_elem(uint64_t handle)
{
    known_array k;

    return lookup(handle, &k) ? k.elem : 0;
}

bool tdm_layout_array_covers(uint64_t handle, size_t x, size_t y, size_t z, struct cudaExtent e)
{
    known_array k;
    size_t rows, depth;

    if (!lookup(handle, &k))
        return false;
    rows = k.extent.height ? k.extent.height : 1;
    depth = k.extent.depth ? k.extent.depth : 1;
    return x <= k.extent.width * k.elem && e.width <= k.extent.width * k.elem - x && y <= rows &&
           e.height <= rows - y && z <= depth && e.depth <= depth - z;
}

cudaError_t tdm_layout_array_remember(uint64_t handle, const struct cudaChannelFormatDesc *desc,
                                      struct cudaExtent ext, unsigned flags)
{
    known_array k = { .handle = handle, .desc = *desc, .extent = ext, .flags = flags,
                      .elem = (size_t)(desc->x + desc->y + desc->z + desc->w) / 8 };
    cudaError_t err = cudaSuccess;

    pthread_mutex_lock(&arrays_lock);
    if (!find_locked(handle)) {
        if (tdm_grow(&arrays, &arrays_cap, narrays + 1, sizeof(*arrays), 16) == 0)
            arrays[narrays++] = k;
        else
            err = cudaErrorMemoryAllocation;
    }
    pthread_mutex_unlock(&arrays_lock);
    return err;
}

void tdm_layout_array_forget(uint64_t handle)
{
    pthread_mutex_lock(&arrays_lock);
    known_array *k = find_locked(handle);
    if (k)
        *k = arrays[--narrays];
    pthread_mutex_unlock(&arrays_lock);
}

static cudaError_t create(cudaArray_t *array, const struct cudaChannelFormatDesc *desc, struct cudaExtent ext,
                          unsigned flags)
{
    tdm_array_create_args a;
    tdm_handle_res r = { 0 };
    cudaError_t err;

    a = (tdm_array_create_args){ .x = desc->x, .y = desc->y, .z = desc->z, .w = desc->w, .kind = desc->f,
                                 .width = ext.width, .height = ext.height, .depth = ext.depth, .flags = flags };
    err = tdm_call(TDM_ARRAY_CREATE, &a, &r);
    if (!err)
        err = (cudaError_t)r.err;
    if (err)
        return err;
    if ((err = tdm_layout_array_remember(r.handle, desc, ext, flags)) != cudaSuccess) {
        tdm_handle h = r.handle;
        tdm_call_err(TDM_ARRAY_DESTROY, &h);
        return err;
    }
    *array = (cudaArray_t)(uintptr_t)r.handle;
    return cudaSuccess;
}

cudaError_t cudaMallocArray(cudaArray_t *array, const struct cudaChannelFormatDesc *desc, size_t width,
                            size_t height, unsigned int flags)
{
    if (!array || !desc)
        return tdm_ret(cudaErrorInvalidValue);
    return tdm_ret(create(array, desc, (struct cudaExtent){ .width = width, .height = height, .depth = 0 }, flags));
}

cudaError_t cudaMalloc3DArray(cudaArray_t *array, const struct cudaChannelFormatDesc *desc, struct cudaExtent extent,
                              unsigned int flags)
{
    if (!array || !desc)
        return tdm_ret(cudaErrorInvalidValue);
    return tdm_ret(create(array, desc, extent, flags));
}

cudaError_t cudaFreeArray(cudaArray_t array)
{
    uint64_t handle;
    tdm_handle h;
    cudaError_t err;

    if (!array)
        return cudaSuccess;
    if ((err = tdm_layout_array_handle(array, &handle)) != cudaSuccess)
        return tdm_ret(cudaErrorInvalidValue);
    h = handle;
    err = tdm_call_err(TDM_ARRAY_DESTROY, &h);
    if (!err)
        tdm_layout_array_forget(handle);
    return tdm_ret(err);
}

cudaError_t cudaArrayGetInfo(struct cudaChannelFormatDesc *desc, struct cudaExtent *extent, unsigned int *flags,
                             cudaArray_t array)
{
    known_array k;

    if (!array || !lookup((uint64_t)(uintptr_t)array, &k))
        return tdm_ret(cudaErrorInvalidResourceHandle);
    if (desc)
        *desc = k.desc;
    if (extent)
        *extent = k.extent;
    if (flags)
        *flags = k.flags;
    return cudaSuccess;
}

cudaError_t cudaGetChannelDesc(struct cudaChannelFormatDesc *desc, cudaArray_const_t array)
{
    known_array k;

    if (!desc)
        return tdm_ret(cudaErrorInvalidValue);
    if (!array || !lookup((uint64_t)(uintptr_t)array, &k))
        return tdm_ret(cudaErrorInvalidResourceHandle);
    *desc = k.desc;
    return cudaSuccess;
}

/* ---- copies with arrays: offsets in bytes (wOffset) and rows (hOffset) ---- */

static tdm_layout_side linear(const void *p, size_t pitch, size_t height)
{
    return (tdm_layout_side){ .ptr = (char *)p, .pitch = pitch, .rows = height };
}

static cudaError_t array_side(cudaArray_const_t a, size_t x, size_t y, tdm_layout_side *out)
{
    uint64_t h;

    if (!a || tdm_layout_array_handle(a, &h) != cudaSuccess)
        return cudaErrorInvalidResourceHandle;
    *out = (tdm_layout_side){ .array = h, .x = x, .y = y };
    return cudaSuccess;
}

static struct cudaExtent flat(size_t width, size_t height)
{
    return (struct cudaExtent){ .width = width, .height = height, .depth = 1 };
}

static cudaError_t to_array(cudaArray_t dst, size_t wOffset, size_t hOffset, const void *src, size_t spitch,
                            size_t width, size_t height, enum cudaMemcpyKind kind, cudaStream_t stream)
{
    tdm_layout_side d;
    cudaError_t err = array_side(dst, wOffset, hOffset, &d);

    return err ? tdm_ret(err) : tdm_layout_copy(d, linear(src, spitch, height), flat(width, height), kind, stream);
}

static cudaError_t from_array(void *dst, size_t dpitch, cudaArray_const_t src, size_t wOffset, size_t hOffset,
                              size_t width, size_t height, enum cudaMemcpyKind kind, cudaStream_t stream)
{
    tdm_layout_side s;
    cudaError_t err = array_side(src, wOffset, hOffset, &s);

    return err ? tdm_ret(err) : tdm_layout_copy(linear(dst, dpitch, height), s, flat(width, height), kind, stream);
}

cudaError_t cudaMemcpy2DToArray(cudaArray_t dst, size_t wOffset, size_t hOffset, const void *src, size_t spitch,
                                size_t width, size_t height, enum cudaMemcpyKind kind)
{
    return to_array(dst, wOffset, hOffset, src, spitch, width, height, kind, NULL);
}

cudaError_t cudaMemcpy2DToArrayAsync(cudaArray_t dst, size_t wOffset, size_t hOffset, const void *src,
                                     size_t spitch, size_t width, size_t height, enum cudaMemcpyKind kind,
                                     cudaStream_t stream)
{
    return to_array(dst, wOffset, hOffset, src, spitch, width, height, kind, stream);
}

cudaError_t cudaMemcpy2DFromArray(void *dst, size_t dpitch, cudaArray_const_t src, size_t wOffset, size_t hOffset,
                                  size_t width, size_t height, enum cudaMemcpyKind kind)
{
    return from_array(dst, dpitch, src, wOffset, hOffset, width, height, kind, NULL);
}

cudaError_t cudaMemcpy2DFromArrayAsync(void *dst, size_t dpitch, cudaArray_const_t src, size_t wOffset,
                                       size_t hOffset, size_t width, size_t height, enum cudaMemcpyKind kind,
                                       cudaStream_t stream)
{
    return from_array(dst, dpitch, src, wOffset, hOffset, width, height, kind, stream);
}

static cudaError_t array_to_array(cudaArray_t dst, size_t wOffsetDst, size_t hOffsetDst, cudaArray_const_t src,
                                  size_t wOffsetSrc, size_t hOffsetSrc, size_t width, size_t height,
                                  enum cudaMemcpyKind kind, cudaStream_t stream)
{
    tdm_layout_side d, s;
    cudaError_t err = array_side(dst, wOffsetDst, hOffsetDst, &d);

    if (!err)
        err = array_side(src, wOffsetSrc, hOffsetSrc, &s);
    if (!err && kind != cudaMemcpyDeviceToDevice && kind != cudaMemcpyDefault)
        err = cudaErrorInvalidMemcpyDirection;
    return err ? tdm_ret(err) : tdm_layout_copy(d, s, flat(width, height), cudaMemcpyDeviceToDevice, stream);
}

cudaError_t cudaMemcpy2DArrayToArray(cudaArray_t dst, size_t wOffsetDst, size_t hOffsetDst, cudaArray_const_t src,
                                     size_t wOffsetSrc, size_t hOffsetSrc, size_t width, size_t height,
                                     enum cudaMemcpyKind kind)
{
    return array_to_array(dst, wOffsetDst, hOffsetDst, src, wOffsetSrc, hOffsetSrc, width, height, kind, NULL);
}

/* The deprecated 1D forms copy `count` bytes starting at (wOffset, hOffset)
 * and running on across rows: a partial first row, whole rows, a partial
 * last row, each a 2D copy. */
typedef cudaError_t (*rows_fn)(tdm_layout_side arr, char *lin, struct cudaExtent e, void *ctx);

static cudaError_t by_rows(cudaArray_const_t a, size_t wOffset, size_t hOffset, char *lin, size_t count,
                           rows_fn fn, void *ctx)
{
    tdm_layout_side arr;
    known_array k;
    cudaError_t err = array_side(a, wOffset, hOffset, &arr);
    size_t row;

    if (err)
        return tdm_ret(err);
    lookup(arr.array, &k);
    row = k.extent.width * k.elem;
    if (wOffset > row)
        return tdm_ret(cudaErrorInvalidValue);
    if (wOffset > 0 && count > 0) {
        size_t n = count < row - wOffset ? count : row - wOffset;
        if ((err = fn(arr, lin, flat(n, 1), ctx)) != cudaSuccess)
            return err;
        lin += n;
        count -= n;
        arr.x = 0;
        arr.y++;
    }
    if (count >= row && row > 0) {
        size_t rows = count / row;
        if ((err = fn(arr, lin, flat(row, rows), ctx)) != cudaSuccess)
            return err;
        lin += rows * row;
        count -= rows * row;
        arr.y += rows;
    }
    if (count > 0)
        err = fn(arr, lin, flat(count, 1), ctx);
    return err;
}

typedef struct rows_ctx {
    enum cudaMemcpyKind kind;
    cudaStream_t stream;
    bool into_array;
} rows_ctx;

static cudaError_t rows_copy(tdm_layout_side arr, char *lin, struct cudaExtent e, void *vctx)
{
    rows_ctx *c = vctx;
    tdm_layout_side l = linear(lin, e.width, e.height);

    return c->into_array ? tdm_layout_copy(arr, l, e, c->kind, c->stream)
                         : tdm_layout_copy(l, arr, e, c->kind, c->stream);
}

static cudaError_t to_array_1d(cudaArray_t dst, size_t wOffset, size_t hOffset, const void *src, size_t count,
                               enum cudaMemcpyKind kind, cudaStream_t stream)
{
    rows_ctx c = { kind, stream, true };

    return by_rows(dst, wOffset, hOffset, (char *)src, count, rows_copy, &c);
}

static cudaError_t from_array_1d(void *dst, cudaArray_const_t src, size_t wOffset, size_t hOffset, size_t count,
                                 enum cudaMemcpyKind kind, cudaStream_t stream)
{
    rows_ctx c = { kind, stream, false };

    return by_rows(src, wOffset, hOffset, dst, count, rows_copy, &c);
}

cudaError_t cudaMemcpyToArray(cudaArray_t dst, size_t wOffset, size_t hOffset, const void *src, size_t count,
                              enum cudaMemcpyKind kind)
{
    return to_array_1d(dst, wOffset, hOffset, src, count, kind, NULL);
}

cudaError_t cudaMemcpyToArrayAsync(cudaArray_t dst, size_t wOffset, size_t hOffset, const void *src, size_t count,
                                   enum cudaMemcpyKind kind, cudaStream_t stream)
{
    return to_array_1d(dst, wOffset, hOffset, src, count, kind, stream);
}

cudaError_t cudaMemcpyFromArray(void *dst, cudaArray_const_t src, size_t wOffset, size_t hOffset, size_t count,
                                enum cudaMemcpyKind kind)
{
    return from_array_1d(dst, src, wOffset, hOffset, count, kind, NULL);
}

cudaError_t cudaMemcpyFromArrayAsync(void *dst, cudaArray_const_t src, size_t wOffset, size_t hOffset, size_t count,
                                     enum cudaMemcpyKind kind, cudaStream_t stream)
{
    return from_array_1d(dst, src, wOffset, hOffset, count, kind, stream);
}

/* ---- per-thread default stream twins (api_per_thread.c says why) ---- */

static cudaStream_t per_thread(cudaStream_t s)
{
    return s ? s : cudaStreamPerThread;
}

cudaError_t cudaMemcpy2DToArray_ptds(cudaArray_t dst, size_t wOffset, size_t hOffset, const void *src,
                                     size_t spitch, size_t width, size_t height, enum cudaMemcpyKind kind)
{
    return to_array(dst, wOffset, hOffset, src, spitch, width, height, kind, cudaStreamPerThread);
}

cudaError_t cudaMemcpy2DToArrayAsync_ptsz(cudaArray_t dst, size_t wOffset, size_t hOffset, const void *src,
                                          size_t spitch, size_t width, size_t height, enum cudaMemcpyKind kind,
                                          cudaStream_t stream)
{
    return to_array(dst, wOffset, hOffset, src, spitch, width, height, kind, per_thread(stream));
}

cudaError_t cudaMemcpy2DFromArray_ptds(void *dst, size_t dpitch, cudaArray_const_t src, size_t wOffset,
                                       size_t hOffset, size_t width, size_t height, enum cudaMemcpyKind kind)
{
    return from_array(dst, dpitch, src, wOffset, hOffset, width, height, kind, cudaStreamPerThread);
}

cudaError_t cudaMemcpy2DFromArrayAsync_ptsz(void *dst, size_t dpitch, cudaArray_const_t src, size_t wOffset,
                                            size_t hOffset, size_t width, size_t height, enum cudaMemcpyKind kind,
                                            cudaStream_t stream)
{
    return from_array(dst, dpitch, src, wOffset, hOffset, width, height, kind, per_thread(stream));
}

cudaError_t cudaMemcpy2DArrayToArray_ptds(cudaArray_t dst, size_t wOffsetDst, size_t hOffsetDst,
                                          cudaArray_const_t src, size_t wOffsetSrc, size_t hOffsetSrc, size_t width,
                                          size_t height, enum cudaMemcpyKind kind)
{
    return array_to_array(dst, wOffsetDst, hOffsetDst, src, wOffsetSrc, hOffsetSrc, width, height, kind,
                          cudaStreamPerThread);
}

cudaError_t cudaMemcpyToArray_ptds(cudaArray_t dst, size_t wOffset, size_t hOffset, const void *src, size_t count,
                                   enum cudaMemcpyKind kind)
{
    return to_array_1d(dst, wOffset, hOffset, src, count, kind, cudaStreamPerThread);
}

cudaError_t cudaMemcpyToArrayAsync_ptsz(cudaArray_t dst, size_t wOffset, size_t hOffset, const void *src,
                                        size_t count, enum cudaMemcpyKind kind, cudaStream_t stream)
{
    return to_array_1d(dst, wOffset, hOffset, src, count, kind, per_thread(stream));
}

cudaError_t cudaMemcpyFromArray_ptds(void *dst, cudaArray_const_t src, size_t wOffset, size_t hOffset, size_t count,
                                     enum cudaMemcpyKind kind)
{
    return from_array_1d(dst, src, wOffset, hOffset, count, kind, cudaStreamPerThread);
}

cudaError_t cudaMemcpyFromArrayAsync_ptsz(void *dst, cudaArray_const_t src, size_t wOffset, size_t hOffset,
                                          size_t count, enum cudaMemcpyKind kind, cudaStream_t stream)
{
    return from_array_1d(dst, src, wOffset, hOffset, count, kind, per_thread(stream));
}

/* ---- the rest of the array surface (issue 14, mipmapped arrays) ---- */

/* The process's array behind a, or cudaErrorInvalidResourceHandle. */
static cudaError_t known(cudaArray_const_t a, known_array *k)
{
    return a && lookup((uint64_t)(uintptr_t)a, k) ? cudaSuccess : cudaErrorInvalidResourceHandle;
}

/* Planes are of multi-planar formats (NV12 and the like), which Tandem does
 * not create (docs/memory-layouts.md): every array a program holds is
 * single-planar, which the driver answers with cudaErrorInvalidValue. */
cudaError_t cudaArrayGetPlane(cudaArray_t *pPlaneArray, cudaArray_t hArray, unsigned int planeIdx)
{
    known_array k;
    cudaError_t err;

    (void)planeIdx;
    if (!pPlaneArray)
        return tdm_ret(cudaErrorInvalidValue);
    if ((err = known(hArray, &k)) != cudaSuccess)
        return tdm_ret(err);
    return tdm_ret(cudaErrorInvalidValue);
}

/* Sparse properties are of arrays made with cudaArraySparse, and memory
 * requirements of those made with cudaArrayDeferredMapping; Tandem refuses
 * both flags at creation, so every array a program holds gets the driver's
 * answer for the others, cudaErrorInvalidValue. */
cudaError_t cudaArrayGetSparseProperties(struct cudaArraySparseProperties *sparseProperties, cudaArray_t array)
{
    known_array k;
    cudaError_t err;

    if (!sparseProperties)
        return tdm_ret(cudaErrorInvalidValue);
    if ((err = known(array, &k)) != cudaSuccess)
        return tdm_ret(err);
    return tdm_ret(cudaErrorInvalidValue);
}

cudaError_t cudaArrayGetMemoryRequirements(struct cudaArrayMemoryRequirements *memoryRequirements, cudaArray_t array,
                                           int device)
{
    known_array k;
    cudaError_t err;

    if (!memoryRequirements)
        return tdm_ret(cudaErrorInvalidValue);
    if ((err = known(array, &k)) != cudaSuccess || (err = tdm_check_device(device)) != cudaSuccess)
        return tdm_ret(err);
    return tdm_ret(cudaErrorInvalidValue);
}

/* cudaMemcpyArrayToArray (deprecated, still exported): count bytes from
 * (wOffsetSrc, hOffsetSrc) running on across the source's rows, into the
 * destination from (wOffsetDst, hOffsetDst) across its rows, which may be
 * of another width.  Each piece lies in one row of both; where both sides
 * are at a row's start and rows are equally wide, whole rows go in one
 * 2D copy. */
static size_t bytes_from(const known_array *k, size_t x, size_t y)
{
    size_t row = k->extent.width * k->elem, rows = k->extent.height ? k->extent.height : 1;

    return y < rows && x <= row ? (rows - y) * row - x : 0;
}

static cudaError_t array_to_array_1d(cudaArray_t dst, size_t wOffsetDst, size_t hOffsetDst, cudaArray_const_t src,
                                     size_t wOffsetSrc, size_t hOffsetSrc, size_t count, enum cudaMemcpyKind kind,
                                     cudaStream_t stream)
{
    known_array kd, ks;
    tdm_layout_side d, s;
    size_t drow, srow;
    cudaError_t err;

    if ((err = known(dst, &kd)) != cudaSuccess || (err = known(src, &ks)) != cudaSuccess)
        return tdm_ret(err);
    if (kind != cudaMemcpyDeviceToDevice && kind != cudaMemcpyDefault)
        return tdm_ret(cudaErrorInvalidMemcpyDirection);
    if (count > bytes_from(&kd, wOffsetDst, hOffsetDst) || count > bytes_from(&ks, wOffsetSrc, hOffsetSrc))
        return tdm_ret(cudaErrorInvalidValue);
    d = (tdm_layout_side){ .array = kd.handle, .x = wOffsetDst, .y = hOffsetDst };
    s = (tdm_layout_side){ .array = ks.handle, .x = wOffsetSrc, .y = hOffsetSrc };
    drow = kd.extent.width * kd.elem;
    srow = ks.extent.width * ks.elem;
    while (count > 0) {
        size_t n = count, rows = 1;
        if (d.x == 0 && s.x == 0 && drow == srow && count >= srow) {
            rows = count / srow;
            n = srow;
        } else {
            n = n < drow - d.x ? n : drow - d.x;
            n = n < srow - s.x ? n : srow - s.x;
        }
        if ((err = tdm_layout_copy(d, s, flat(n, rows), cudaMemcpyDeviceToDevice, stream)) != cudaSuccess)
            return err;
        count -= n * rows;
        d.x += n;
        s.x += n;
        if (d.x == drow) {
            d.x = 0;
            d.y += rows;
        }
        if (s.x == srow) {
            s.x = 0;
            s.y += rows;
        }
    }
    return cudaSuccess;
}

cudaError_t cudaMemcpyArrayToArray(cudaArray_t dst, size_t wOffsetDst, size_t hOffsetDst, cudaArray_const_t src,
                                   size_t wOffsetSrc, size_t hOffsetSrc, size_t count, enum cudaMemcpyKind kind)
{
    return array_to_array_1d(dst, wOffsetDst, hOffsetDst, src, wOffsetSrc, hOffsetSrc, count, kind, NULL);
}

cudaError_t cudaMemcpyArrayToArray_ptds(cudaArray_t dst, size_t wOffsetDst, size_t hOffsetDst,
                                        cudaArray_const_t src, size_t wOffsetSrc, size_t hOffsetSrc, size_t count,
                                        enum cudaMemcpyKind kind)
{
    return array_to_array_1d(dst, wOffsetDst, hOffsetDst, src, wOffsetSrc, hOffsetSrc, count, kind,
                             cudaStreamPerThread);
}
