/* Stream-ordered allocation and memory pools (docs/memory-models.md).  A
 * cudaMemPool_t is the server's pool handle; the server keeps every pool's
 * state and checks every handle.  One device: a pool lives on device 0 and
 * is accessible from it read-write, as a pool always is from its own device. */
#include <string.h>

#include "guest.h"

static uint64_t pool_id(cudaMemPool_t pool)
{
    return (uint64_t)(uintptr_t)pool;
}

static cudaError_t malloc_async(void **devPtr, size_t size, uint64_t pool, cudaStream_t stream)
{
    tdm_malloc_async_args a = { .size = size, .pool = pool, .stream = tdm_stream_id(stream) };
    cudaError_t err = tdm_malloc_call(TDM_MALLOC_ASYNC, &a, size, devPtr);

    if (!err && *devPtr)
        tdm_graph_mem_async_alloc(stream, (uint64_t)(uintptr_t)*devPtr, size); /* graph memory (issue 14) */
    return err;
}

cudaError_t cudaMallocAsync(void **devPtr, size_t size, cudaStream_t stream)
{
    return malloc_async(devPtr, size, 0, stream);
}

cudaError_t cudaMallocFromPoolAsync(void **ptr, size_t size, cudaMemPool_t memPool, cudaStream_t stream)
{
    if (!memPool)
        return tdm_ret(cudaErrorInvalidValue);
    return malloc_async(ptr, size, pool_id(memPool), stream);
}

cudaError_t cudaFreeAsync(void *devPtr, cudaStream_t stream)
{
    tdm_free_async_args a = { .addr = (uint64_t)(uintptr_t)devPtr, .stream = tdm_stream_id(stream) };
    cudaError_t err;

    if (!devPtr)
        return tdm_ret(cudaErrorInvalidValue);
    if (tdm_pool_share_free(devPtr, &err))   /* a pointer imported from a shared pool (issue 14) */
        return tdm_ret(err);
    err = tdm_call_err(TDM_FREE_ASYNC, &a);
    if (!err)
        tdm_allocs_remove(a.addr);
    return tdm_ret(err);
}

cudaError_t cudaMallocAsync_ptsz(void **devPtr, size_t size, cudaStream_t stream)
{
    return malloc_async(devPtr, size, 0, stream ? stream : cudaStreamPerThread);
}

cudaError_t cudaMallocFromPoolAsync_ptsz(void **ptr, size_t size, cudaMemPool_t memPool, cudaStream_t stream)
{
    return cudaMallocFromPoolAsync(ptr, size, memPool, stream ? stream : cudaStreamPerThread);
}

cudaError_t cudaFreeAsync_ptsz(void *devPtr, cudaStream_t stream)
{
    return cudaFreeAsync(devPtr, stream ? stream : cudaStreamPerThread);
}


cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t *memPool, int device)
{
    cudaError_t err;

    if (!memPool)
        return tdm_ret(cudaErrorInvalidValue);
    err = tdm_check_device(device);
    if (err)
        return tdm_ret(err);
    *memPool = (cudaMemPool_t)(uintptr_t)TDM_DEFAULT_MEM_POOL;
    return cudaSuccess;
}

cudaError_t cudaDeviceGetMemPool(cudaMemPool_t *memPool, int device)
{
    tdm_handle_res r;
    cudaError_t err;

    if (!memPool)
        return tdm_ret(cudaErrorInvalidValue);
    err = tdm_check_device(device);
    if (err)
        return tdm_ret(err);
    memset(&r, 0, sizeof(r));
    err = tdm_call(TDM_DEVICE_GET_MEM_POOL, NULL, &r);
    if (!err)
        err = (cudaError_t)r.err;
    if (!err)
        *memPool = (cudaMemPool_t)(uintptr_t)r.handle;
    return tdm_ret(err);
}

cudaError_t cudaDeviceSetMemPool(int device, cudaMemPool_t memPool)
{
    tdm_handle h = pool_id(memPool);
    cudaError_t err = tdm_check_device(device);

    if (err)
        return tdm_ret(err);
    if (!memPool)
        return tdm_ret(cudaErrorInvalidValue);
    return tdm_ret(tdm_call_err(TDM_DEVICE_SET_MEM_POOL, &h));
}

cudaError_t cudaMemPoolCreate(cudaMemPool_t *memPool, const struct cudaMemPoolProps *poolProps)
{
    tdm_handle_res r;
    tdm_u64 max_size;
    cudaError_t err;

    if (!memPool || !poolProps || poolProps->allocType != cudaMemAllocationTypePinned ||
        poolProps->location.type != cudaMemLocationTypeDevice)
        return tdm_ret(cudaErrorInvalidValue);
    err = tdm_check_device(poolProps->location.id);
    if (err)
        return tdm_ret(err);
    max_size = poolProps->maxSize;
    memset(&r, 0, sizeof(r));
    err = tdm_call(TDM_MEM_POOL_CREATE, &max_size, &r);
    if (!err)
        err = (cudaError_t)r.err;
    if (!err)
        *memPool = (cudaMemPool_t)(uintptr_t)r.handle;
    if (!err && poolProps->handleTypes != cudaMemHandleTypeNone)   /* shareable (issue 14) */
        err = tdm_pool_share_created(*memPool, (unsigned)poolProps->handleTypes);
    return tdm_ret(err);
}

cudaError_t cudaMemPoolDestroy(cudaMemPool_t memPool)
{
    tdm_handle h = pool_id(memPool);
    cudaError_t err;

    if (!memPool)
        return tdm_ret(cudaErrorInvalidValue);
    if (tdm_pool_share_destroy(memPool, &err))   /* an imported pool (issue 14) */
        return tdm_ret(err);
    return tdm_ret(tdm_call_err(TDM_MEM_POOL_DESTROY, &h));
}

/* The int attributes travel as 0/1, the size_t ones as they are. */
static bool attr_is_int(enum cudaMemPoolAttr attr)
{
    return attr == cudaMemPoolReuseFollowEventDependencies || attr == cudaMemPoolReuseAllowOpportunistic ||
           attr == cudaMemPoolReuseAllowInternalDependencies;
}

cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t memPool, enum cudaMemPoolAttr attr, void *value)
{
    tdm_pool_attr_args a = { .pool = pool_id(memPool), .attr = (int)attr };

    if (!memPool || !value)
        return tdm_ret(cudaErrorInvalidValue);
    if (attr_is_int(attr))
        a.value = *(const int *)value != 0;
    else
        a.value = *(const uint64_t *)value;
    return tdm_ret(tdm_call_err(TDM_MEM_POOL_SET_ATTR, &a));
}

cudaError_t cudaMemPoolGetAttribute(cudaMemPool_t memPool, enum cudaMemPoolAttr attr, void *value)
{
    tdm_pool_attr_args a = { .pool = pool_id(memPool), .attr = (int)attr };
    tdm_pool_attr_res r;
    cudaError_t err;

    if (!memPool || !value)
        return tdm_ret(cudaErrorInvalidValue);
    memset(&r, 0, sizeof(r));
    err = tdm_call(TDM_MEM_POOL_GET_ATTR, &a, &r);
    if (!err)
        err = (cudaError_t)r.err;
    if (err)
        return tdm_ret(err);
    if (attr_is_int(attr))
        *(int *)value = (int)r.value;
    else
        *(uint64_t *)value = r.value;
    return cudaSuccess;
}

cudaError_t cudaMemPoolTrimTo(cudaMemPool_t memPool, size_t minBytesToKeep)
{
    tdm_pool_trim_args a = { .pool = pool_id(memPool), .keep = minBytesToKeep };

    if (!memPool)
        return tdm_ret(cudaErrorInvalidValue);
    return tdm_ret(tdm_call_err(TDM_MEM_POOL_TRIM, &a));
}

/* A pool is valid when the server can read its attributes. */
static cudaError_t check_pool(cudaMemPool_t memPool)
{
    uint64_t threshold;

    return cudaMemPoolGetAttribute(memPool, cudaMemPoolAttrReleaseThreshold, &threshold);
}

static cudaError_t check_location(const struct cudaMemLocation *loc)
{
    if (loc->type != cudaMemLocationTypeDevice)
        return cudaErrorInvalidValue;
    return tdm_check_device(loc->id);
}

cudaError_t cudaMemPoolSetAccess(cudaMemPool_t memPool, const struct cudaMemAccessDesc *descList, size_t count)
{
    cudaError_t err;

    if (!memPool || (count && !descList))
        return tdm_ret(cudaErrorInvalidValue);
    err = check_pool(memPool);
    for (size_t i = 0; !err && i < count; i++) {
        err = check_location(&descList[i].location);
        /* The only device is the pool's own, always read-write. */
        if (!err && descList[i].flags != cudaMemAccessFlagsProtReadWrite)
            err = cudaErrorInvalidDevice;
    }
    return tdm_ret(err);
}

cudaError_t cudaMemPoolGetAccess(enum cudaMemAccessFlags *flags, cudaMemPool_t memPool,
                                 struct cudaMemLocation *location)
{
    cudaError_t err;

    if (!flags || !memPool || !location)
        return tdm_ret(cudaErrorInvalidValue);
    err = check_pool(memPool);
    if (!err)
        err = check_location(location);
    if (!err)
        *flags = cudaMemAccessFlagsProtReadWrite;
    return tdm_ret(err);
}
