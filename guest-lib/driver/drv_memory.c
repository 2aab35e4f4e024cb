/* Memory: allocations, copies, memsets and pointer attributes (issue 15).  Each entry point
 * translates to the runtime layer's call (cudaMalloc, tdm_memcpy, tdm_memset ...), which
 * carries the semantics, coherence and journaling; what is the driver's own is checked
 * here: a current context, the driver's argument rules (cuMemAlloc of 0 bytes is an
 * error, cudaMalloc's is not), and the legacy 32-bit entry points' narrower types.
 * Pointer attributes are answered in the guest from the runtime's tables, never a round
 * trip (PyTorch asks hundreds of times). */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "driver.h"

/* The runtime stream a CUstream names: 0, CU_STREAM_LEGACY and CU_STREAM_PER_THREAD are
 * cudaStreamLegacy's and cudaStreamPerThread's own values. */
static cudaStream_t rt_stream(CUstream s)
{
    return (cudaStream_t)s;
}

/* A _ptsz/_ptds entry point's stream: NULL is the per-thread default stream. */
static cudaStream_t pt_stream(CUstream s)
{
    return s ? (cudaStream_t)s : cudaStreamPerThread;
}

static void *dptr(CUdeviceptr p)
{
    return (void *)(uintptr_t)p;
}

/* CUDA_SUCCESS when a context is current, else why not. */
static CUresult need_ctx(void)
{
    CUresult r;

    tdm_cu_ctx_of(NULL, &r);
    return r;
}

/* ---- allocation ---- */

static CUresult alloc_device(CUdeviceptr *p, size_t bytes)
{
    CUresult r = need_ctx();
    void *d = NULL;

    if (r)
        return r;
    if (!p || bytes == 0)   /* cuda.h: a size of 0 is CUDA_ERROR_INVALID_VALUE */
        return CUDA_ERROR_INVALID_VALUE;
    r = tdm_cu(cudaMalloc(&d, bytes));
    if (!r)
        *p = (CUdeviceptr)(uintptr_t)d;
    return r;
}

CUresult cuMemAlloc_v2(CUdeviceptr *dptr_out, size_t bytesize)
{
    return alloc_device(dptr_out, bytesize);
}

/* The CUDA 3.1 ABI: a 32-bit device pointer.  Tandem's logical addresses lie above 4 GiB
 * as a 64-bit driver's do, so an address that does not fit is given back and the call
 * fails as an allocation that found no room there would. */
CUresult cuMemAlloc(CUdeviceptr_v1 *dptr_out, unsigned int bytesize)
{
    CUdeviceptr p = 0;
    CUresult r;

    if (!dptr_out)
        return CUDA_ERROR_INVALID_VALUE;
    r = alloc_device(&p, bytesize);
    if (r)
        return r;
    if (p > UINT_MAX) {
        cudaFree(dptr(p));
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    *dptr_out = (CUdeviceptr_v1)p;
    return CUDA_SUCCESS;
}

CUresult cuMemFree_v2(CUdeviceptr p)
{
    CUresult r = need_ctx();

    if (r)
        return r;
    return tdm_cu(cudaFree(dptr(p)));
}

CUresult cuMemFree(CUdeviceptr_v1 p)
{
    return cuMemFree_v2(p);
}

CUresult cuMemGetInfo_v2(size_t *free_bytes, size_t *total_bytes)
{
    CUresult r = need_ctx();

    if (r)
        return r;
    return tdm_cu(cudaMemGetInfo(free_bytes, total_bytes));
}

/* 32-bit sizes: what does not fit is answered as the largest that does. */
CUresult cuMemGetInfo(unsigned int *free_bytes, unsigned int *total_bytes)
{
    size_t f = 0, t = 0;
    CUresult r = cuMemGetInfo_v2(&f, &t);

    if (r)
        return r;
    if (free_bytes)
        *free_bytes = f > UINT_MAX ? UINT_MAX : (unsigned)f;
    if (total_bytes)
        *total_bytes = t > UINT_MAX ? UINT_MAX : (unsigned)t;
    return CUDA_SUCCESS;
}

CUresult cuMemAllocPitch_v2(CUdeviceptr *p, size_t *pitch, size_t width, size_t height, unsigned int elem)
{
    CUresult r = need_ctx();
    void *d = NULL;

    if (r)
        return r;
    /* cuda.h: ElementSizeBytes is 4, 8 or 16. */
    if (!p || !pitch || (elem != 4 && elem != 8 && elem != 16) || width == 0 || height == 0)
        return CUDA_ERROR_INVALID_VALUE;
    r = tdm_cu(cudaMallocPitch(&d, pitch, width, height));
    if (!r)
        *p = (CUdeviceptr)(uintptr_t)d;
    return r;
}

CUresult cuMemAllocPitch(CUdeviceptr_v1 *p, unsigned int *pitch, unsigned int width, unsigned int height,
                         unsigned int elem)
{
    CUdeviceptr d = 0;
    size_t pt = 0;
    CUresult r;

    if (!p || !pitch)
        return CUDA_ERROR_INVALID_VALUE;
    r = cuMemAllocPitch_v2(&d, &pt, width, height, elem);
    if (r)
        return r;
    if (d > UINT_MAX || pt > UINT_MAX) {   /* as cuMemAlloc: beyond what 32 bits name */
        cudaFree(dptr(d));
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    *p = (CUdeviceptr_v1)d;
    *pitch = (unsigned)pt;
    return CUDA_SUCCESS;
}

CUresult cuMemAllocManaged(CUdeviceptr *p, size_t bytesize, unsigned int flags)
{
    CUresult r = need_ctx();
    void *d = NULL;

    if (r)
        return r;
    /* cuda.h: exactly one of CU_MEM_ATTACH_GLOBAL and CU_MEM_ATTACH_HOST; 0 bytes is an error. */
    if (!p || bytesize == 0 || (flags != CU_MEM_ATTACH_GLOBAL && flags != CU_MEM_ATTACH_HOST))
        return CUDA_ERROR_INVALID_VALUE;
    r = tdm_cu(cudaMallocManaged(&d, bytesize, flags));
    if (!r)
        *p = (CUdeviceptr)(uintptr_t)d;
    return r;
}

static CUresult alloc_async(CUdeviceptr *p, size_t bytesize, cudaStream_t s)
{
    CUresult r = need_ctx();
    void *d = NULL;

    if (r)
        return r;
    if (!p)
        return CUDA_ERROR_INVALID_VALUE;
    r = tdm_cu(cudaMallocAsync(&d, bytesize, s));
    if (!r)
        *p = (CUdeviceptr)(uintptr_t)d;
    return r;
}

CUresult cuMemAllocAsync(CUdeviceptr *p, size_t bytesize, CUstream s)
{
    return alloc_async(p, bytesize, rt_stream(s));
}

CUresult cuMemAllocAsync_ptsz(CUdeviceptr *p, size_t bytesize, CUstream s)
{
    return alloc_async(p, bytesize, pt_stream(s));
}

CUresult cuMemFreeAsync(CUdeviceptr p, CUstream s)
{
    CUresult r = need_ctx();

    return r ? r : tdm_cu(cudaFreeAsync(dptr(p), rt_stream(s)));
}

CUresult cuMemFreeAsync_ptsz(CUdeviceptr p, CUstream s)
{
    CUresult r = need_ctx();

    return r ? r : tdm_cu(cudaFreeAsync(dptr(p), pt_stream(s)));
}

/* ---- host memory ---- */

CUresult cuMemHostAlloc(void **pp, size_t bytesize, unsigned int flags)
{
    CUresult r = need_ctx();

    if (r)
        return r;
    /* CU_MEMHOSTALLOC_* are cudaHostAlloc*'s numbers. */
    if (!pp || bytesize == 0 ||
        (flags & ~(unsigned)(CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_WRITECOMBINED)))
        return CUDA_ERROR_INVALID_VALUE;
    return tdm_cu(cudaHostAlloc(pp, bytesize, flags));
}

CUresult cuMemAllocHost_v2(void **pp, size_t bytesize)
{
    return cuMemHostAlloc(pp, bytesize, 0);
}

CUresult cuMemAllocHost(void **pp, unsigned int bytesize)
{
    return cuMemHostAlloc(pp, bytesize, 0);
}

CUresult cuMemFreeHost(void *p)
{
    CUresult r = need_ctx();

    if (r)
        return r;
    if (!p)   /* cudaFreeHost(NULL) succeeds; the driver has no such pass (cuda.h: host memory from cuMemHostAlloc) */
        return CUDA_ERROR_INVALID_VALUE;
    return tdm_cu(cudaFreeHost(p));
}

CUresult cuMemHostGetDevicePointer_v2(CUdeviceptr *pdptr, void *p, unsigned int flags)
{
    CUresult r = need_ctx();
    void *d = NULL;

    if (r)
        return r;
    if (!pdptr || !p || flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    r = tdm_cu(cudaHostGetDevicePointer(&d, p, 0));
    if (!r)
        *pdptr = (CUdeviceptr)(uintptr_t)d;
    return r;
}

CUresult cuMemHostGetDevicePointer(CUdeviceptr_v1 *pdptr, void *p, unsigned int flags)
{
    CUdeviceptr d = 0;
    CUresult r;

    if (!pdptr)
        return CUDA_ERROR_INVALID_VALUE;
    r = cuMemHostGetDevicePointer_v2(&d, p, flags);
    if (r)
        return r;
    if (d > UINT_MAX)   /* no 32-bit name for it */
        return CUDA_ERROR_INVALID_VALUE;
    *pdptr = (CUdeviceptr_v1)d;
    return CUDA_SUCCESS;
}

CUresult cuMemHostGetFlags(unsigned int *pFlags, void *p)
{
    CUresult r = need_ctx();

    if (r)
        return r;
    if (!pFlags || !p)
        return CUDA_ERROR_INVALID_VALUE;
    return tdm_cu(cudaHostGetFlags(pFlags, p));
}

CUresult cuMemHostRegister_v2(void *p, size_t bytesize, unsigned int flags)
{
    CUresult r = need_ctx();

    if (r)
        return r;
    /* CU_MEMHOSTREGISTER_* are cudaHostRegister*'s numbers. */
    return tdm_cu(cudaHostRegister(p, bytesize, flags));
}

CUresult cuMemHostRegister(void *p, size_t bytesize, unsigned int flags)
{
    return cuMemHostRegister_v2(p, bytesize, flags);
}

CUresult cuMemHostUnregister(void *p)
{
    CUresult r = need_ctx();

    if (r)
        return r;
    if (!p)
        return CUDA_ERROR_INVALID_VALUE;
    r = tdm_cu(cudaHostUnregister(p));
    /* cuda.h: memory that was never registered is CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED. */
    return r == CUDA_ERROR_INVALID_VALUE ? CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED : r;
}

/* ---- address ranges and pointer attributes ---- */

/* What the guest knows of a pointer: the runtime's classification (cudaPointerGetAttributes
 * reads only the guest's tables) and the range holding it. */
typedef struct ptr_info {
    bool known;           /* memory CUDA allocated, mapped or registered */
    bool managed;
    enum cudaMemoryType type;
    CUdeviceptr device;   /* 0: none */
    void *host;           /* NULL: none */
    uint64_t base, size;  /* the range holding it; size 0 when unknown */
} ptr_info;

static void ptr_range(const void *p, ptr_info *pi)
{
    void *b = NULL;
    uint64_t sz = 0;
    size_t hsz = 0;

    if (pi->managed && tdm_managed_block(p, &b, &sz)) {
        pi->base = (uint64_t)(uintptr_t)b;
        pi->size = sz;
    } else if (pi->type == cudaMemoryTypeHost && tdm_host_block(p, &b, &hsz) >= 0) {
        pi->base = (uint64_t)(uintptr_t)b;
        pi->size = hsz;
    } else if (pi->type == cudaMemoryTypeDevice) {
        tdm_allocs_range((uint64_t)(uintptr_t)p, &pi->base, &pi->size);
    }
}

static void ptr_lookup(CUdeviceptr ptr, ptr_info *pi)
{
    struct cudaPointerAttributes a;
    const void *p = dptr(ptr);

    memset(pi, 0, sizeof(*pi));
    if (cudaPointerGetAttributes(&a, p) != cudaSuccess || a.type == cudaMemoryTypeUnregistered)
        return;
    pi->known = true;
    pi->type = a.type;
    pi->managed = a.type == cudaMemoryTypeManaged;
    pi->device = (CUdeviceptr)(uintptr_t)a.devicePointer;
    pi->host = a.hostPointer;
    ptr_range(p, pi);
}

CUresult cuMemGetAddressRange_v2(CUdeviceptr *pbase, size_t *psize, CUdeviceptr p)
{
    CUresult r = need_ctx();
    ptr_info pi;

    if (r)
        return r;
    ptr_lookup(p, &pi);
    /* cuda.h: a pointer in no allocation is CUDA_ERROR_NOT_FOUND; the range is of device
     * memory (host memory answers only by its mapped device address). */
    if (!pi.known || pi.size == 0 || pi.type == cudaMemoryTypeHost)
        return CUDA_ERROR_NOT_FOUND;
    if (pbase)
        *pbase = (CUdeviceptr)pi.base;
    if (psize)
        *psize = (size_t)pi.size;
    return CUDA_SUCCESS;
}

CUresult cuMemGetAddressRange(CUdeviceptr_v1 *pbase, unsigned int *psize, CUdeviceptr_v1 p)
{
    CUdeviceptr b = 0;
    size_t s = 0;
    CUresult r = cuMemGetAddressRange_v2(&b, &s, p);

    if (r)
        return r;
    if (pbase)
        *pbase = (CUdeviceptr_v1)b;
    if (psize)
        *psize = s > UINT_MAX ? UINT_MAX : (unsigned)s;
    return CUDA_SUCCESS;
}

/* The driver's memory type: managed memory is device memory to it (IS_MANAGED tells them
 * apart; cudaPointerGetAttributes makes cudaMemoryTypeManaged of that pair). */
static CUmemorytype mem_type(const ptr_info *pi)
{
    return pi->type == cudaMemoryTypeHost ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE;
}

/* One attribute of a known pointer into data (its type per cuda.h), or the error. */
static CUresult attr_known(void *data, CUpointer_attribute attr, CUdeviceptr ptr, const ptr_info *pi)
{
    switch (attr) {
    case CU_POINTER_ATTRIBUTE_CONTEXT:   /* the session's one context: the primary */
        *(CUcontext *)data = (CUcontext)tdm_cu_primary(0);
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
        *(unsigned int *)data = mem_type(pi);
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
        if (!pi->device)   /* host memory the device cannot reach */
            return CUDA_ERROR_INVALID_VALUE;
        *(CUdeviceptr *)data = pi->device;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_HOST_POINTER:
        if (!pi->host)     /* device memory the host cannot reach */
            return CUDA_ERROR_INVALID_VALUE;
        *(void **)data = pi->host;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_IS_MANAGED:
        *(int *)data = pi->managed;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
        *(int *)data = 0;
        return CUDA_SUCCESS;
    /* Unique among live allocations: the range's start.  (The driver's ids are never
     * reused; an allocation at a freed one's address gets the same one here.) */
    case CU_POINTER_ATTRIBUTE_BUFFER_ID:
        *(unsigned long long *)data = pi->size ? pi->base : (unsigned long long)ptr;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
        *(void **)data = (void *)(uintptr_t)(pi->size ? pi->base : ptr);
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
        *(size_t *)data = (size_t)pi->size;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_MAPPED:
        *(int *)data = 1;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_SYNC_MEMOPS:   /* set by P2P_TOKENS or cuPointerSetAttribute, neither carried */
    case CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE:
    case CU_POINTER_ATTRIBUTE_IS_HW_DECOMPRESS_CAPABLE:
        *(int *)data = 0;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE:   /* cudaMalloc'ed device memory */
        *(int *)data = pi->type == cudaMemoryTypeDevice;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES:   /* no cuMemCreate memory here */
        *(unsigned long long *)data = CU_MEM_HANDLE_TYPE_NONE;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_ACCESS_FLAGS:
        *(unsigned int *)data = CU_POINTER_ATTRIBUTE_ACCESS_FLAG_READWRITE;
        return CUDA_SUCCESS;
    default:
        return tdm_cu_refuse("cuPointerGetAttribute",
                             "P2P tokens, mempool handles and mappings of this attribute are the server's");
    }
}

CUresult cuPointerGetAttribute(void *data, CUpointer_attribute attribute, CUdeviceptr ptr)
{
    CUresult r = tdm_cu_ready();
    ptr_info pi;

    if (r)
        return r;
    if (!data)
        return CUDA_ERROR_INVALID_VALUE;
    ptr_lookup(ptr, &pi);
    if (!pi.known)   /* cuda.h: memory no context allocated, mapped or registered */
        return CUDA_ERROR_INVALID_VALUE;
    return attr_known(data, attribute, ptr, &pi);
}

/* An unknown pointer's attribute as cuPointerGetAttributes answers it: NULL values
 * (cuda.h), DEVICE_ORDINAL -2 as the driver gives cudaPointerGetAttributes. */
static CUresult attr_unknown(void *data, CUpointer_attribute attr)
{
    switch (attr) {
    case CU_POINTER_ATTRIBUTE_CONTEXT:
    case CU_POINTER_ATTRIBUTE_HOST_POINTER:
    case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
        *(void **)data = NULL;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
        *(CUdeviceptr *)data = 0;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
    case CU_POINTER_ATTRIBUTE_ACCESS_FLAGS:
        *(unsigned int *)data = 0;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
        *(int *)data = -2;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_BUFFER_ID:
    case CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES:
        *(unsigned long long *)data = 0;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
        *(size_t *)data = 0;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_IS_MANAGED:
    case CU_POINTER_ATTRIBUTE_MAPPED:
    case CU_POINTER_ATTRIBUTE_SYNC_MEMOPS:
    case CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE:
    case CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE:
    case CU_POINTER_ATTRIBUTE_IS_HW_DECOMPRESS_CAPABLE:
        *(int *)data = 0;
        return CUDA_SUCCESS;
    default:
        return tdm_cu_refuse("cuPointerGetAttributes",
                             "P2P tokens, mempool handles and mappings of this attribute are the server's");
    }
}

CUresult cuPointerGetAttributes(unsigned int numAttributes, CUpointer_attribute *attributes, void **data,
                                CUdeviceptr ptr)
{
    CUresult r = tdm_cu_ready();
    ptr_info pi;

    if (r)
        return r;
    if (numAttributes == 0 || !attributes || !data)
        return CUDA_ERROR_INVALID_VALUE;
    for (unsigned i = 0; i < numAttributes; i++)
        if (!data[i])
            return CUDA_ERROR_INVALID_VALUE;
    ptr_lookup(ptr, &pi);
    for (unsigned i = 0; i < numAttributes && !r; i++) {
        r = pi.known ? attr_known(data[i], attributes[i], ptr, &pi) : attr_unknown(data[i], attributes[i]);
        /* cuda.h: no error for pointers the attribute does not apply to: NULL instead. */
        if (r == CUDA_ERROR_INVALID_VALUE)
            r = attr_unknown(data[i], attributes[i]);
    }
    return r;
}

/* ---- copies ---- */

static CUresult copy(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind, cudaStream_t s, bool async)
{
    CUresult r = need_ctx();

    if (r)
        return r;
    if (n && (!dst || !src))
        return CUDA_ERROR_INVALID_VALUE;
    return tdm_cu(tdm_memcpy(dst, src, n, kind, s, async));
}

/* cuMemcpy and cuMemcpyAsync: unified addressing tells the kind from the addresses. */
CUresult cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t n)
{
    return copy(dptr(dst), dptr(src), n, cudaMemcpyDefault, NULL, false);
}

CUresult cuMemcpy_ptds(CUdeviceptr dst, CUdeviceptr src, size_t n)
{
    return copy(dptr(dst), dptr(src), n, cudaMemcpyDefault, cudaStreamPerThread, false);
}

CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s)
{
    return copy(dptr(dst), dptr(src), n, cudaMemcpyDefault, rt_stream(s), true);
}

CUresult cuMemcpyAsync_ptsz(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s)
{
    return copy(dptr(dst), dptr(src), n, cudaMemcpyDefault, pt_stream(s), true);
}

CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t n)
{
    return copy(dptr(dst), src, n, cudaMemcpyHostToDevice, NULL, false);
}

CUresult cuMemcpyHtoD_v2_ptds(CUdeviceptr dst, const void *src, size_t n)
{
    return copy(dptr(dst), src, n, cudaMemcpyHostToDevice, cudaStreamPerThread, false);
}

CUresult cuMemcpyHtoD(CUdeviceptr_v1 dst, const void *src, unsigned int n)
{
    return cuMemcpyHtoD_v2(dst, src, n);
}

CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n)
{
    return copy(dst, dptr(src), n, cudaMemcpyDeviceToHost, NULL, false);
}

CUresult cuMemcpyDtoH_v2_ptds(void *dst, CUdeviceptr src, size_t n)
{
    return copy(dst, dptr(src), n, cudaMemcpyDeviceToHost, cudaStreamPerThread, false);
}

CUresult cuMemcpyDtoH(void *dst, CUdeviceptr_v1 src, unsigned int n)
{
    return cuMemcpyDtoH_v2(dst, src, n);
}

CUresult cuMemcpyDtoD_v2(CUdeviceptr dst, CUdeviceptr src, size_t n)
{
    return copy(dptr(dst), dptr(src), n, cudaMemcpyDeviceToDevice, NULL, false);
}

CUresult cuMemcpyDtoD_v2_ptds(CUdeviceptr dst, CUdeviceptr src, size_t n)
{
    return copy(dptr(dst), dptr(src), n, cudaMemcpyDeviceToDevice, cudaStreamPerThread, false);
}

CUresult cuMemcpyDtoD(CUdeviceptr_v1 dst, CUdeviceptr_v1 src, unsigned int n)
{
    return cuMemcpyDtoD_v2(dst, src, n);
}

CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t n, CUstream s)
{
    return copy(dptr(dst), src, n, cudaMemcpyHostToDevice, rt_stream(s), true);
}

CUresult cuMemcpyHtoDAsync_v2_ptsz(CUdeviceptr dst, const void *src, size_t n, CUstream s)
{
    return copy(dptr(dst), src, n, cudaMemcpyHostToDevice, pt_stream(s), true);
}

CUresult cuMemcpyHtoDAsync(CUdeviceptr_v1 dst, const void *src, unsigned int n, CUstream s)
{
    return cuMemcpyHtoDAsync_v2(dst, src, n, s);
}

CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t n, CUstream s)
{
    return copy(dst, dptr(src), n, cudaMemcpyDeviceToHost, rt_stream(s), true);
}

CUresult cuMemcpyDtoHAsync_v2_ptsz(void *dst, CUdeviceptr src, size_t n, CUstream s)
{
    return copy(dst, dptr(src), n, cudaMemcpyDeviceToHost, pt_stream(s), true);
}

CUresult cuMemcpyDtoHAsync(void *dst, CUdeviceptr_v1 src, unsigned int n, CUstream s)
{
    return cuMemcpyDtoHAsync_v2(dst, src, n, s);
}

CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s)
{
    return copy(dptr(dst), dptr(src), n, cudaMemcpyDeviceToDevice, rt_stream(s), true);
}

CUresult cuMemcpyDtoDAsync_v2_ptsz(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s)
{
    return copy(dptr(dst), dptr(src), n, cudaMemcpyDeviceToDevice, pt_stream(s), true);
}

CUresult cuMemcpyDtoDAsync(CUdeviceptr_v1 dst, CUdeviceptr_v1 src, unsigned int n, CUstream s)
{
    return cuMemcpyDtoDAsync_v2(dst, src, n, s);
}

/* ---- memsets ---- */

/* Room for the pattern of a wider memset whose bytes differ (PATTERN bytes at a time). */
#define PATTERN (1u << 20)

/* n elements of `size` bytes (1, 2 or 4) of value at dst on stream s.  The protocol's memset
 * sets bytes (MEMSET carries one byte value), so a value whose bytes are all equal is a byte
 * memset; another one is written by host-to-device copies of the pattern, synchronous
 * ones, so the pattern buffer may go at once (the memset is ordered on its stream as the
 * driver's, and returns later than an asynchronous one would).  A capturing stream would
 * keep the pattern's address in its graph: refused there. */
static CUresult memset_n(CUdeviceptr dst, uint32_t value, unsigned size, size_t n, cudaStream_t s, bool async)
{
    CUresult r = need_ctx();
    unsigned char b[4];
    size_t bytes, chunk;
    unsigned char *pat;
    bool uniform = true;

    if (r)
        return r;
    if (n > SIZE_MAX / size || (dst % size) != 0)   /* cuda.h: D16/D32 need 2-/4-byte alignment */
        return CUDA_ERROR_INVALID_VALUE;
    bytes = n * size;
    for (unsigned i = 0; i < size; i++) {
        b[i] = (unsigned char)(value >> (8 * i));
        uniform = uniform && b[i] == b[0];
    }
    if (uniform)
        return tdm_cu(tdm_memset(dptr(dst), b[0], bytes, s));
    if (bytes == 0)
        return CUDA_SUCCESS;
    if (tdm_graph_mem_captures_open())
        return tdm_cu_refuse(size == 2 ? "cuMemsetD16 (bytes not all equal) while capturing"
                                       : "cuMemsetD32 (bytes not all equal) while capturing",
                             "the protocol's memset sets bytes, and a captured pattern copy would keep a "
                             "host buffer the graph reads at each launch");
    chunk = bytes < PATTERN ? bytes : PATTERN;
    pat = malloc(chunk);
    if (!pat)
        return CUDA_ERROR_OUT_OF_MEMORY;
    for (size_t i = 0; i < chunk; i++)
        pat[i] = b[i % size];
    for (size_t off = 0; off < bytes && !r; off += chunk) {
        size_t len = bytes - off < chunk ? bytes - off : chunk;
        r = tdm_cu(tdm_memcpy(dptr(dst + off), pat, len, cudaMemcpyDefault, s, false));
    }
    free(pat);
    return r;
}

CUresult cuMemsetD8_v2(CUdeviceptr dst, unsigned char uc, size_t n)
{
    return memset_n(dst, uc, 1, n, NULL, false);
}

CUresult cuMemsetD8_v2_ptds(CUdeviceptr dst, unsigned char uc, size_t n)
{
    return memset_n(dst, uc, 1, n, cudaStreamPerThread, false);
}

CUresult cuMemsetD8(CUdeviceptr_v1 dst, unsigned char uc, unsigned int n)
{
    return cuMemsetD8_v2(dst, uc, n);
}

CUresult cuMemsetD8Async(CUdeviceptr dst, unsigned char uc, size_t n, CUstream s)
{
    return memset_n(dst, uc, 1, n, rt_stream(s), true);
}

CUresult cuMemsetD8Async_ptsz(CUdeviceptr dst, unsigned char uc, size_t n, CUstream s)
{
    return memset_n(dst, uc, 1, n, pt_stream(s), true);
}

CUresult cuMemsetD16_v2(CUdeviceptr dst, unsigned short us, size_t n)
{
    return memset_n(dst, us, 2, n, NULL, false);
}

CUresult cuMemsetD16_v2_ptds(CUdeviceptr dst, unsigned short us, size_t n)
{
    return memset_n(dst, us, 2, n, cudaStreamPerThread, false);
}

CUresult cuMemsetD16(CUdeviceptr_v1 dst, unsigned short us, unsigned int n)
{
    return cuMemsetD16_v2(dst, us, n);
}

CUresult cuMemsetD16Async(CUdeviceptr dst, unsigned short us, size_t n, CUstream s)
{
    return memset_n(dst, us, 2, n, rt_stream(s), true);
}

CUresult cuMemsetD16Async_ptsz(CUdeviceptr dst, unsigned short us, size_t n, CUstream s)
{
    return memset_n(dst, us, 2, n, pt_stream(s), true);
}

CUresult cuMemsetD32_v2(CUdeviceptr dst, unsigned int ui, size_t n)
{
    return memset_n(dst, ui, 4, n, NULL, false);
}

CUresult cuMemsetD32_v2_ptds(CUdeviceptr dst, unsigned int ui, size_t n)
{
    return memset_n(dst, ui, 4, n, cudaStreamPerThread, false);
}

CUresult cuMemsetD32(CUdeviceptr_v1 dst, unsigned int ui, unsigned int n)
{
    return cuMemsetD32_v2(dst, ui, n);
}

CUresult cuMemsetD32Async(CUdeviceptr dst, unsigned int ui, size_t n, CUstream s)
{
    return memset_n(dst, ui, 4, n, rt_stream(s), true);
}

CUresult cuMemsetD32Async_ptsz(CUdeviceptr dst, unsigned int ui, size_t n, CUstream s)
{
    return memset_n(dst, ui, 4, n, pt_stream(s), true);
}
