/* Mapped (zero-copy) host memory (docs/memory-models.md).  Over shm every
 * pinned block lies in the region the server maps too, and the server maps
 * it for the device on request: kernels read and write the very pages the
 * program sees.  Over TCP nothing is shared: a mapped block gets device
 * memory kept coherent with it at synchronization points (coherent.c). */
#include <pthread.h>
#include <string.h>

#include "grow.h"
#include "guest.h"
#include "shm_region.h"

/* cudaHostRegister'ed ranges: the program's own memory, which no transport
 * shares with the server.  Registration is bookkeeping: copies from and to
 * it are correct as for any pageable memory (staged), and mapping it for the
 * device fails at cudaHostGetDevicePointer, where CUDA defers the failure on
 * a device that cannot map it. */
typedef struct registered {
    uintptr_t base;
    size_t size;
    unsigned flags;
} registered;

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static registered *regs;
static size_t nregs, cap_regs;

/* Index of the range containing p, or -1; reg_lock held. */
static long find_registered(uintptr_t p)
{
    for (size_t i = 0; i < nregs; i++)
        if (p >= regs[i].base && p - regs[i].base < regs[i].size)
            return (long)i;
    return -1;
}

int tdm_host_registered_flags(const void *p)
{
    int flags = -1;

    pthread_mutex_lock(&reg_lock);
    long i = find_registered((uintptr_t)p);
    if (i >= 0)
        flags = (int)regs[i].flags;
    pthread_mutex_unlock(&reg_lock);
    return flags;
}

cudaError_t cudaHostRegister(void *ptr, size_t size, unsigned int flags)
{
    const unsigned known = cudaHostRegisterPortable | cudaHostRegisterMapped | cudaHostRegisterIoMemory |
                           cudaHostRegisterReadOnly;
    uintptr_t a = (uintptr_t)ptr;
    cudaError_t err = cudaSuccess;

    if (!ptr || size == 0 || (flags & ~known) || a + size < a)
        return tdm_ret(cudaErrorInvalidValue);
    err = tdm_connect();
    if (err)
        return tdm_ret(err);
    pthread_mutex_lock(&reg_lock);
    /* Memory already pinned (cudaMallocHost, or registered) overlaps. */
    for (size_t i = 0; i < nregs && !err; i++)
        if (a < regs[i].base + regs[i].size && regs[i].base < a + size)
            err = cudaErrorHostMemoryAlreadyRegistered;
    if (!err && (tdm_host_lookup(ptr, NULL) >= 0 || tdm_host_lookup((const char *)ptr + size - 1, NULL) >= 0))
        err = cudaErrorHostMemoryAlreadyRegistered;
    if (!err && tdm_grow(&regs, &cap_regs, nregs + 1, sizeof(*regs), 16) != 0)
        err = cudaErrorMemoryAllocation;
    if (!err)
        regs[nregs++] = (registered){ a, size, flags };
    pthread_mutex_unlock(&reg_lock);
    return tdm_ret(err);
}

cudaError_t cudaHostUnregister(void *ptr)
{
    cudaError_t err = cudaErrorHostMemoryNotRegistered;

    if (!ptr)
        return tdm_ret(cudaErrorInvalidValue);
    pthread_mutex_lock(&reg_lock);
    long i = find_registered((uintptr_t)ptr);
    if (i >= 0 && regs[i].base == (uintptr_t)ptr) {
        regs[i] = regs[--nregs];
        err = cudaSuccess;
    }
    pthread_mutex_unlock(&reg_lock);
    return tdm_ret(err);
}

/* Over TCP: the block gets device memory D of its size, kept coherent with
 * it at synchronization points as managed memory is (coherent.c), from
 * the first cudaHostGetDevicePointer of the block until cudaFreeHost. */
static pthread_mutex_t map_lock = PTHREAD_MUTEX_INITIALIZER;

static cudaError_t map_over_tcp(void **pDevice, void *pHost)
{
    void *base = NULL, *h = NULL, *d = NULL;
    uint64_t dev = 0;
    size_t size = 0;
    cudaError_t err = cudaSuccess;

    if (tdm_host_block(pHost, &base, &size) < 0)
        return tdm_host_registered_flags(pHost) >= 0 ? cudaErrorMemoryAllocation   /* the program's own pages */
                                                     : cudaErrorInvalidValue;
    pthread_mutex_lock(&map_lock);
    if (!tdm_coherent_lookup(base, &h, &dev) || h != base) {
        u_quad_t sz = size ? size : 1;

        err = tdm_malloc_call(TDM_MALLOC, &sz, (size_t)sz, &d);
        if (!err)   /* what the host wrote before is the device's too */
            err = tdm_memcpy_direct(d, base, (size_t)sz, cudaMemcpyHostToDevice, NULL, false);
        if (!err)
            err = tdm_coherent_add((uintptr_t)base, (uint64_t)(uintptr_t)d, sz, (sz + 4095) / 4096 * 4096,
                                   cudaMemAttachGlobal, true);
        if (err && d) {
            tdm_addr a = (uint64_t)(uintptr_t)d;

            tdm_call_err(TDM_FREE, &a);
            tdm_allocs_remove(a);
        }
        dev = (uint64_t)(uintptr_t)d;
    }
    pthread_mutex_unlock(&map_lock);
    if (!err)
        *pDevice = (void *)(uintptr_t)(dev + (uint64_t)((char *)pHost - (char *)base));
    return err;
}

cudaError_t tdm_mapped_release(void *p)
{
    void *h = NULL;
    uint64_t dev = 0;
    tdm_addr a;
    cudaError_t err;

    if (!tdm_coherent_lookup(p, &h, &dev) || h != p)
        return cudaSuccess;
    tdm_coherent_remove((uintptr_t)p);
    a = dev;
    err = tdm_call_err(TDM_FREE, &a);   /* waits for the device, as cudaFreeHost does */
    if (err != cudaErrorInvalidValue && err != cudaErrorDevicesUnavailable)
        tdm_allocs_remove(a);
    return err;
}

cudaError_t cudaHostGetDevicePointer(void **pDevice, void *pHost, unsigned int flags)
{
    const tdm_shm_region *r;
    void *base = NULL;
    uint64_t in_region = 0;
    tdm_shm_span span;
    tdm_malloc_res res;
    cudaError_t err;

    if (!pDevice || flags != 0)
        return tdm_ret(cudaErrorInvalidValue);
    err = tdm_connect();
    if (err)
        return tdm_ret(err);
    r = tdm_shm();
    if (!r)
        return tdm_ret(map_over_tcp(pDevice, pHost));
    if (tdm_host_region_block(pHost, &base, &in_region) != 0) {
        /* Pinned or registered memory the device cannot map here: the
         * error of a device without mapped memory. */
        if (tdm_host_lookup(pHost, NULL) >= 0 || tdm_host_registered_flags(pHost) >= 0)
            return tdm_ret(cudaErrorMemoryAllocation);
        return tdm_ret(cudaErrorInvalidValue);
    }
    span.offset = (uint64_t)(uintptr_t)base - (uint64_t)(uintptr_t)r->base;
    span.size = in_region;
    memset(&res, 0, sizeof(res));
    err = tdm_call(TDM_SHM_HOST_MAP, &span, &res);
    if (!err)
        err = (cudaError_t)res.err;
    if (err)
        return tdm_ret(err);
    *pDevice = (void *)(uintptr_t)(res.addr + (uint64_t)((const char *)pHost - (const char *)base));
    return cudaSuccess;
}
