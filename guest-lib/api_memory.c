/* Memory management entry points of the CUDA runtime. */
#include <string.h>

#include "guest.h"
#include "log.h"
#include "xdr_extra.h"

/* An allocation call whose reply is a tdm_malloc_res: the address goes
 * into the allocation table. */
cudaError_t tdm_malloc_call(uint32_t proc, void *args, size_t size, void **devPtr)
{
    tdm_malloc_res r;
    cudaError_t err;

    if (!devPtr)
        return tdm_ret(cudaErrorInvalidValue);
    memset(&r, 0, sizeof(r));
    err = tdm_call(proc, args, &r);
    if (!err)
        err = (cudaError_t)r.err;
    if (err) {
        *devPtr = NULL;
        return tdm_ret(err);
    }
    *devPtr = (void *)(uintptr_t)r.addr;
    if (r.addr)
        tdm_allocs_add(r.addr, size, false);
    return cudaSuccess;
}

cudaError_t cudaMalloc(void **devPtr, size_t size)
{
    u_quad_t sz = size;

    return tdm_malloc_call(TDM_MALLOC, &sz, size, devPtr);
}

cudaError_t cudaFree(void *devPtr)
{
    tdm_addr a = (uint64_t)(uintptr_t)devPtr;
    bool managed = false;
    cudaError_t err;

    if (!devPtr)
        return cudaSuccess;
    err = tdm_managed_free(devPtr, &managed);
    if (managed)
        return tdm_ret(err);
    if (tdm_pool_share_free(devPtr, &err))   /* a pointer imported from a shared pool (issue 14) */
        return tdm_ret(err);
    err = tdm_call_err(TDM_FREE, &a);
    if (err != cudaErrorInvalidValue && err != cudaErrorDevicesUnavailable)
        tdm_allocs_remove(a);
    return tdm_ret(err);
}

cudaError_t cudaMallocHost(void **ptr, size_t size)
{
    if (!ptr)
        return tdm_ret(cudaErrorInvalidValue);
    return tdm_ret(tdm_host_alloc(size, cudaHostAllocDefault, ptr));
}

cudaError_t cudaHostAlloc(void **pHost, size_t size, unsigned int flags)
{
    if (!pHost || (flags & ~(unsigned)(cudaHostAllocPortable | cudaHostAllocMapped | cudaHostAllocWriteCombined)))
        return tdm_ret(cudaErrorInvalidValue);
    /* cudaHostAllocMapped: over shm the device maps the block on request
     * (api_mapped.c); over TCP, as on a device that cannot map host memory,
     * the failure is deferred to cudaHostGetDevicePointer. */
    return tdm_ret(tdm_host_alloc(size, flags, pHost));
}

cudaError_t cudaFreeHost(void *ptr)
{
    void *base;
    uint64_t size;

    if (!ptr)
        return cudaSuccess;
    if (tdm_managed_block(ptr, &base, &size))
        return tdm_ret(cudaErrorInvalidValue);   /* managed memory goes back with cudaFree */
    return tdm_ret(tdm_host_free(ptr));
}

cudaError_t cudaHostGetFlags(unsigned int *pFlags, void *pHost)
{
    int flags = tdm_host_lookup(pHost, NULL);

    if (flags < 0)
        flags = tdm_host_registered_flags(pHost);   /* cudaHostRegister'ed (api_mapped.c) */
    if (!pFlags || flags < 0)
        return tdm_ret(cudaErrorInvalidValue);
    *pFlags = (unsigned)flags;
    return cudaSuccess;
}

cudaError_t cudaMemGetInfo(size_t *free, size_t *total)
{
    tdm_mem_info_res r;
    cudaError_t err;

    memset(&r, 0, sizeof(r));
    err = tdm_call(TDM_MEM_GET_INFO, NULL, &r);
    if (!err)
        err = (cudaError_t)r.err;
    if (err)
        return tdm_ret(err);
    if (free)
        *free = (size_t)r.free_bytes;
    if (total)
        *total = (size_t)r.total_bytes;
    return cudaSuccess;
}

cudaError_t cudaMemcpy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind)
{
    return tdm_memcpy(dst, src, count, kind, NULL, false);
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind,
                            cudaStream_t stream)
{
    return tdm_memcpy(dst, src, count, kind, stream, true);
}

cudaError_t cudaMemset(void *devPtr, int value, size_t count)
{
    return tdm_memset(devPtr, value, count, NULL);
}

cudaError_t cudaMemsetAsync(void *devPtr, int value, size_t count, cudaStream_t stream)
{
    return tdm_memset(devPtr, value, count, stream);
}

cudaError_t cudaPointerGetAttributes(struct cudaPointerAttributes *attributes, const void *ptr)
{
    void *base = NULL;
    uint64_t size = 0;

    if (!attributes)
        return tdm_ret(cudaErrorInvalidValue);
    memset(attributes, 0, sizeof(*attributes));
    attributes->device = 0;
    if (tdm_managed_block(ptr, &base, &size)) {
        attributes->type = cudaMemoryTypeManaged;
        attributes->devicePointer = (void *)ptr;   /* one pointer serves both sides */
        attributes->hostPointer = (void *)ptr;
    } else if (tdm_host_lookup(ptr, &base) >= 0 || tdm_host_registered_flags(ptr) >= 0) {
        /* Before device memory: over TCP a pinned block a kernel was given
         * lies at device memory of its own (hostmem.c), and is host memory. */
        void *h = NULL;
        uint64_t dev = 0;

        attributes->type = cudaMemoryTypeHost;
        attributes->hostPointer = (void *)ptr;
        /* A block mapped over TCP: its device memory (api_mapped.c). */
        if (tdm_coherent_lookup(ptr, &h, &dev) && (const char *)ptr >= (const char *)h)
            attributes->devicePointer = (void *)(uintptr_t)(dev + (uint64_t)((const char *)ptr - (const char *)h));
    } else if (tdm_allocs_is_device(ptr)) {
        attributes->type = cudaMemoryTypeDevice;
        attributes->devicePointer = (void *)ptr;
    } else {
        attributes->type = cudaMemoryTypeUnregistered;
        attributes->device = -2;
    }
    return cudaSuccess;
}

/* ---- symbols ---- */

cudaError_t tdm_symbol_range(const void *symbol, size_t count, size_t offset, uint64_t *addr)
{
    cudaError_t err;
    tdm_variable *v = tdm_variable_for_host(symbol, &err);

    if (!v)
        return err;
    if (offset > v->size || count > v->size - offset)
        return cudaErrorInvalidValue;
    *addr = v->addr + offset;
    return cudaSuccess;
}

static cudaError_t to_symbol(const void *symbol, const void *src, size_t count, size_t offset,
                             enum cudaMemcpyKind kind, cudaStream_t stream, bool async)
{
    uint64_t addr = 0;
    cudaError_t err = tdm_symbol_range(symbol, count, offset, &addr);

    if (err)
        return tdm_ret(err);
    if (kind != cudaMemcpyHostToDevice && kind != cudaMemcpyDeviceToDevice && kind != cudaMemcpyDefault)
        return tdm_ret(cudaErrorInvalidMemcpyDirection);
    return tdm_memcpy((void *)(uintptr_t)addr, src, count, kind, stream, async);
}

static cudaError_t from_symbol(void *dst, const void *symbol, size_t count, size_t offset,
                               enum cudaMemcpyKind kind, cudaStream_t stream, bool async)
{
    uint64_t addr = 0;
    cudaError_t err = tdm_symbol_range(symbol, count, offset, &addr);

    if (err)
        return tdm_ret(err);
    if (kind != cudaMemcpyDeviceToHost && kind != cudaMemcpyDeviceToDevice && kind != cudaMemcpyDefault)
        return tdm_ret(cudaErrorInvalidMemcpyDirection);
    return tdm_memcpy(dst, (void *)(uintptr_t)addr, count, kind, stream, async);
}

cudaError_t cudaMemcpyToSymbol(const void *symbol, const void *src, size_t count, size_t offset,
                               enum cudaMemcpyKind kind)
{
    return to_symbol(symbol, src, count, offset, kind, NULL, false);
}

cudaError_t cudaMemcpyToSymbolAsync(const void *symbol, const void *src, size_t count, size_t offset,
                                    enum cudaMemcpyKind kind, cudaStream_t stream)
{
    return to_symbol(symbol, src, count, offset, kind, stream, true);
}

cudaError_t cudaMemcpyFromSymbol(void *dst, const void *symbol, size_t count, size_t offset,
                                 enum cudaMemcpyKind kind)
{
    return from_symbol(dst, symbol, count, offset, kind, NULL, false);
}

cudaError_t cudaMemcpyFromSymbolAsync(void *dst, const void *symbol, size_t count, size_t offset,
                                      enum cudaMemcpyKind kind, cudaStream_t stream)
{
    return from_symbol(dst, symbol, count, offset, kind, stream, true);
}

cudaError_t cudaGetSymbolAddress(void **devPtr, const void *symbol)
{
    cudaError_t err;
    tdm_variable *v = tdm_variable_for_host(symbol, &err);

    if (!devPtr)
        return tdm_ret(cudaErrorInvalidValue);
    if (!v)
        return tdm_ret(err);
    *devPtr = (void *)(uintptr_t)v->addr;
    return cudaSuccess;
}

cudaError_t cudaGetSymbolSize(size_t *size, const void *symbol)
{
    cudaError_t err;
    tdm_variable *v = tdm_variable_for_host(symbol, &err);

    if (!size)
        return tdm_ret(cudaErrorInvalidValue);
    if (!v)
        return tdm_ret(err);
    *size = v->size;
    return cudaSuccess;
}
