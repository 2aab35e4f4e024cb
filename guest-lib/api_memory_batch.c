/* Peer copies and batches of copies, prefetches and discards
 * (docs/memory-models.md, "Batch copies").  No remoted call of their own:
 * one GPU makes a peer copy a device-to-device copy, and a batch is
 * validated here as the driver validates it, then executed as a sequence
 * of the ordinary asynchronous operations on its stream, in order (the
 * batch as a whole is in stream order natively; the order within it is
 * unspecified, so any order is native's). */
#include "guest.h"

/* ---- peer copies ---- */

static cudaError_t check_peers(int dstDevice, int srcDevice)
{
    cudaError_t err = tdm_check_device(dstDevice);

    return err ? err : tdm_check_device(srcDevice);
}

cudaError_t cudaMemcpyPeer(void *dst, int dstDevice, const void *src, int srcDevice, size_t count)
{
    cudaError_t err = check_peers(dstDevice, srcDevice);

    if (err)
        return tdm_ret(err);
    return tdm_memcpy(dst, src, count, cudaMemcpyDeviceToDevice, NULL, false);
}

cudaError_t cudaMemcpyPeerAsync(void *dst, int dstDevice, const void *src, int srcDevice, size_t count,
                                cudaStream_t stream)
{
    cudaError_t err = check_peers(dstDevice, srcDevice);

    if (err)
        return tdm_ret(err);
    return tdm_memcpy(dst, src, count, cudaMemcpyDeviceToDevice, stream, true);
}

/* ---- validation shared by the batches ---- */

/* Batches refuse the legacy NULL stream (their headers say so); the
 * _ptsz twins map NULL to the per-thread stream before this. */
static bool legacy_stream(cudaStream_t stream)
{
    return stream == NULL || stream == cudaStreamLegacy;
}

/* The index array that spreads numIdx entries (attributes, prefetch
 * locations) over count operations: starts at 0, strictly increases,
 * stays below count, and numIdx <= count. */
static bool valid_spread(const size_t *idxs, size_t numIdx, size_t count)
{
    if (!idxs || numIdx == 0 || numIdx > count || idxs[0] != 0)
        return false;
    for (size_t k = 1; k < numIdx; k++)
        if (idxs[k] <= idxs[k - 1] || idxs[k] >= count)
            return false;
    return true;
}

/* The entry of a valid spread that applies to operation i. */
static size_t spread_entry(const size_t *idxs, size_t numIdx, size_t i)
{
    size_t k = numIdx - 1;

    while (idxs[k] > i)
        k--;
    return k;
}

static bool valid_order(enum cudaMemcpySrcAccessOrder order)
{
    return order == cudaMemcpySrcAccessOrderStream || order == cudaMemcpySrcAccessOrderDuringApiCall ||
           order == cudaMemcpySrcAccessOrderAny;
}

static bool valid_copy_flags(unsigned int flags)
{
    return (flags & ~(unsigned)cudaMemcpyFlagPreferOverlapWithCompute) == 0;
}

/* ---- pointer copies ---- */

/* Every source is read before the call returns on both transports (the
 * bytes leave with the request), so cudaMemcpySrcAccessOrderDuringApiCall
 * holds for every copy; the other orders are weaker. */
static cudaError_t memcpy_batch(void *const *dsts, const void *const *srcs, const size_t *sizes, size_t count,
                                const struct cudaMemcpyAttributes *attrs, const size_t *attrsIdxs, size_t numAttrs,
                                cudaStream_t stream)
{
    cudaError_t err = cudaSuccess;

    if (!dsts || !srcs || !sizes || count == 0 || !attrs || !valid_spread(attrsIdxs, numAttrs, count) ||
        legacy_stream(stream))
        return tdm_ret(cudaErrorInvalidValue);
    for (size_t k = 0; k < numAttrs; k++)
        if (!valid_order(attrs[k].srcAccessOrder) || !valid_copy_flags(attrs[k].flags))
            return tdm_ret(cudaErrorInvalidValue);
    for (size_t i = 0; !err && i < count; i++)
        if (sizes[i])
            err = tdm_memcpy(dsts[i], srcs[i], sizes[i], cudaMemcpyDefault, stream, true);
    return err;
}

cudaError_t cudaMemcpyBatchAsync(void *const *dsts, const void *const *srcs, const size_t *sizes, size_t count,
                                 struct cudaMemcpyAttributes *attrs, size_t *attrsIdxs, size_t numAttrs,
                                 cudaStream_t stream)
{
    return memcpy_batch(dsts, srcs, sizes, count, attrs, attrsIdxs, numAttrs, stream);
}

cudaError_t cudaMemcpyBatchAsync_ptsz(void *const *dsts, const void *const *srcs, const size_t *sizes, size_t count,
                                      struct cudaMemcpyAttributes *attrs, size_t *attrsIdxs, size_t numAttrs,
                                      cudaStream_t stream)
{
    return memcpy_batch(dsts, srcs, sizes, count, attrs, attrsIdxs, numAttrs,
                        stream ? stream : cudaStreamPerThread);
}

/* ---- 3D copies: each becomes a cudaMemcpy3DAsync ---- */

/* Bytes per element of an array operand (its channels' bits / 8); 1 for
 * a pointer, as the header defines pointer-to-pointer copies. */
static cudaError_t elem_size(const struct cudaMemcpy3DOperand *o, size_t *size)
{
    struct cudaChannelFormatDesc d;
    cudaError_t err;

    *size = 1;
    if (o->type == cudaMemcpyOperandTypePointer)
        return o->op.ptr.ptr ? cudaSuccess : cudaErrorInvalidValue;
    if (o->type != cudaMemcpyOperandTypeArray)
        return cudaErrorInvalidValue;
    err = cudaArrayGetInfo(&d, NULL, NULL, o->op.array.array);
    if (err)
        return err;
    *size = (size_t)(d.x + d.y + d.z + d.w) / 8;
    return cudaSuccess;
}

/* One operand into a cudaMemcpy3DParms side: a pointer is a pitched
 * pointer (rows of rowLength elements, layers of layerHeight rows; 0 means
 * packed to the extent), an array is the array at its offset. */
static cudaError_t operand(const struct cudaMemcpy3DOperand *o, const struct cudaExtent *e, size_t elem,
                           cudaArray_t *array, struct cudaPos *pos, struct cudaPitchedPtr *ptr)
{
    if (o->type == cudaMemcpyOperandTypeArray) {
        *array = o->op.array.array;
        *pos = (struct cudaPos){ o->op.array.offset.x, o->op.array.offset.y, o->op.array.offset.z };
        return cudaSuccess;
    }
    size_t row = o->op.ptr.rowLength, layer = o->op.ptr.layerHeight;
    if ((row && row < e->width) || (layer && layer < e->height))
        return cudaErrorInvalidValue;
    row = row ? row : e->width;
    layer = layer ? layer : e->height;
    *ptr = (struct cudaPitchedPtr){ .ptr = o->op.ptr.ptr, .pitch = row * elem, .xsize = row * elem, .ysize = layer };
    return cudaSuccess;
}

static cudaError_t copy_3d_op(const struct cudaMemcpy3DBatchOp *op, struct cudaMemcpy3DParms *p)
{
    size_t src_elem, dst_elem;
    cudaError_t err;

    if (!op->extent.width || !op->extent.height || !op->extent.depth || !valid_order(op->srcAccessOrder) ||
        !valid_copy_flags(op->flags))
        return cudaErrorInvalidValue;
    err = elem_size(&op->src, &src_elem);
    if (!err)
        err = elem_size(&op->dst, &dst_elem);
    if (err)
        return err;
    if (op->src.type == cudaMemcpyOperandTypeArray && op->dst.type == cudaMemcpyOperandTypeArray &&
        src_elem != dst_elem)
        return cudaErrorInvalidValue;
    /* A pointer side takes the array side's element size. */
    size_t elem = op->src.type == cudaMemcpyOperandTypeArray ? src_elem : dst_elem;
    *p = (struct cudaMemcpy3DParms){ .extent = op->extent, .kind = cudaMemcpyDefault };
    err = operand(&op->src, &op->extent, elem, &p->srcArray, &p->srcPos, &p->srcPtr);
    if (!err)
        err = operand(&op->dst, &op->extent, elem, &p->dstArray, &p->dstPos, &p->dstPtr);
    /* cudaMemcpy3DParms measures width in bytes between pointers, in
     * elements when an array is involved: the batch's width is elements,
     * and a pointer-to-pointer element is one byte, so both agree. */
    return err;
}

static cudaError_t memcpy_3d_batch(size_t numOps, const struct cudaMemcpy3DBatchOp *opList, unsigned long long flags,
                                   cudaStream_t stream)
{
    struct cudaMemcpy3DParms p;
    cudaError_t err = cudaSuccess;

    if (numOps == 0 || !opList || flags != 0 || legacy_stream(stream))
        return tdm_ret(cudaErrorInvalidValue);
    /* Everything is checked before anything is queued, as the driver
     * refuses a batch as a whole. */
    for (size_t i = 0; !err && i < numOps; i++)
        err = copy_3d_op(&opList[i], &p);
    for (size_t i = 0; !err && i < numOps; i++) {
        copy_3d_op(&opList[i], &p);
        err = cudaMemcpy3DAsync(&p, stream);
    }
    return err ? tdm_ret(err) : cudaSuccess;
}

cudaError_t cudaMemcpy3DBatchAsync(size_t numOps, struct cudaMemcpy3DBatchOp *opList, unsigned long long flags,
                                   cudaStream_t stream)
{
    return memcpy_3d_batch(numOps, opList, flags, stream);
}

cudaError_t cudaMemcpy3DBatchAsync_ptsz(size_t numOps, struct cudaMemcpy3DBatchOp *opList, unsigned long long flags,
                                        cudaStream_t stream)
{
    return memcpy_3d_batch(numOps, opList, flags, stream ? stream : cudaStreamPerThread);
}

/* ---- prefetch and discard batches of managed memory ---- */

/* Each range must be managed memory (the driver refuses anything else;
 * no pageable memory is device-accessible here). */
static cudaError_t check_ranges(void *const *dptrs, const size_t *sizes, size_t count)
{
    void *base;
    uint64_t size;

    if (!dptrs || !sizes || count == 0)
        return cudaErrorInvalidValue;
    for (size_t i = 0; i < count; i++) {
        if (!sizes[i] || !tdm_managed_block(dptrs[i], &base, &size) ||
            (uintptr_t)dptrs[i] - (uintptr_t)base > size - sizes[i] || sizes[i] > size)
            return cudaErrorInvalidValue;
    }
    return cudaSuccess;
}

static bool valid_location(const struct cudaMemLocation *loc)
{
    return loc->type == cudaMemLocationTypeHost || loc->type == cudaMemLocationTypeHostNumaCurrent ||
           loc->type == cudaMemLocationTypeHostNuma || loc->type == cudaMemLocationTypeDevice;
}

/* Prefetches as cudaMemPrefetchAsync serves one (docs/memory-models.md:
 * accepted although concurrentManagedAccess is reported 0). */
static cudaError_t prefetch_batch(void **dptrs, size_t *sizes, size_t count, const struct cudaMemLocation *locs,
                                  const size_t *locIdxs, size_t numLocs, unsigned long long flags,
                                  cudaStream_t stream)
{
    cudaError_t err = check_ranges(dptrs, sizes, count);

    if (err || !locs || !valid_spread(locIdxs, numLocs, count) || flags != 0 || legacy_stream(stream))
        return tdm_ret(err ? err : cudaErrorInvalidValue);
    for (size_t k = 0; k < numLocs; k++) {
        if (!valid_location(&locs[k]))
            return tdm_ret(cudaErrorInvalidValue);
        if (locs[k].type == cudaMemLocationTypeDevice && (err = tdm_check_device(locs[k].id)) != cudaSuccess)
            return tdm_ret(err);
    }
    for (size_t i = 0; !err && i < count; i++)
        err = cudaMemPrefetchAsync(dptrs[i], sizes[i], locs[spread_entry(locIdxs, numLocs, i)], 0, stream);
    return err;
}

/* A discard says the contents no longer matter: keeping them is one of the
 * indeterminate values a later read may give, so after validation there
 * is nothing to move (the host copy's coherence state stays exact). */
static cudaError_t discard_batch(void **dptrs, size_t *sizes, size_t count, unsigned long long flags,
                                 cudaStream_t stream)
{
    cudaError_t err = check_ranges(dptrs, sizes, count);

    if (!err && (flags != 0 || legacy_stream(stream)))
        err = cudaErrorInvalidValue;
    return err ? tdm_ret(err) : cudaSuccess;
}

cudaError_t cudaMemPrefetchBatchAsync(void **dptrs, size_t *sizes, size_t count, struct cudaMemLocation *prefetchLocs,
                                      size_t *prefetchLocIdxs, size_t numPrefetchLocs, unsigned long long flags,
                                      cudaStream_t stream)
{
    return prefetch_batch(dptrs, sizes, count, prefetchLocs, prefetchLocIdxs, numPrefetchLocs, flags, stream);
}

cudaError_t cudaMemDiscardBatchAsync(void **dptrs, size_t *sizes, size_t count, unsigned long long flags,
                                     cudaStream_t stream)
{
    return discard_batch(dptrs, sizes, count, flags, stream);
}

cudaError_t cudaMemDiscardAndPrefetchBatchAsync(void **dptrs, size_t *sizes, size_t count,
                                                struct cudaMemLocation *prefetchLocs, size_t *prefetchLocIdxs,
                                                size_t numPrefetchLocs, unsigned long long flags,
                                                cudaStream_t stream)
{
    cudaError_t err = discard_batch(dptrs, sizes, count, flags, stream);

    if (err)
        return err;
    return prefetch_batch(dptrs, sizes, count, prefetchLocs, prefetchLocIdxs, numPrefetchLocs, flags, stream);
}

cudaError_t cudaMemPrefetchBatchAsync_ptsz(void **dptrs, size_t *sizes, size_t count,
                                           struct cudaMemLocation *prefetchLocs, size_t *prefetchLocIdxs,
                                           size_t numPrefetchLocs, unsigned long long flags, cudaStream_t stream)
{
    return prefetch_batch(dptrs, sizes, count, prefetchLocs, prefetchLocIdxs, numPrefetchLocs, flags,
                          stream ? stream : cudaStreamPerThread);
}

cudaError_t cudaMemDiscardBatchAsync_ptsz(void **dptrs, size_t *sizes, size_t count, unsigned long long flags,
                                          cudaStream_t stream)
{
    return discard_batch(dptrs, sizes, count, flags, stream ? stream : cudaStreamPerThread);
}

cudaError_t cudaMemDiscardAndPrefetchBatchAsync_ptsz(void **dptrs, size_t *sizes, size_t count,
                                                     struct cudaMemLocation *prefetchLocs, size_t *prefetchLocIdxs,
                                                     size_t numPrefetchLocs, unsigned long long flags,
                                                     cudaStream_t stream)
{
    return cudaMemDiscardAndPrefetchBatchAsync(dptrs, sizes, count, prefetchLocs, prefetchLocIdxs, numPrefetchLocs,
                                               flags, stream ? stream : cudaStreamPerThread);
}
