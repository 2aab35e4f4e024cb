/* Mapped (zero-copy) host memory (docs/memory-models.md).  Over shm every
 * pinned block lies in the region the server maps too, and the server maps
 * it for the device on request: kernels read and write the very pages the
 * program sees.  Over TCP nothing is shared: a mapped block gets device
 * memory kept coherent with it at synchronization points (coherent.c). */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "grow.h"
#include "log.h"
#include "guest.h"
#include "shm_region.h"

/* cudaHostRegister'ed ranges: the program's own memory.  Over shm its
 * whole pages move into a pinned block of the region mapped at the same
 * address (hostmem.c, tdm_host_register_pages): copies are DMA from and into
 * them and the device maps them, as natively.  Otherwise (TCP, the region's
 * host area full, pages that are not private read-write memory, I/O
 * memory) registration is bookkeeping: copies are correct as for any
 * pageable memory (staged), and mapping it for the device fails at
 * cudaHostGetDevicePointer, where CUDA defers the failure on a device that
 * cannot map it. */
typedef struct registered {
    uintptr_t base;
    size_t size;
    unsigned flags;
    uintptr_t lo, hi;       /* the whole pages */
    bool moved;             /* they are the region's now */
} registered;

#define PAGE 4096u

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

/* Whether [lo, hi) is wholly private read-write memory of the process
 * (heap, stack, anonymous or private file mappings), which may move into
 * the region: shared mappings (a file, another process's memory) and
 * read-only or inaccessible pages keep their own semantics by staying.
 * *mapped false when part of it is not mapped at all. */
static bool pages_movable(uintptr_t lo, uintptr_t hi, bool *mapped)
{
    FILE *f = fopen("/proc/self/maps", "re");
    char line[512];
    uintptr_t at = lo;
    bool movable = true;

    *mapped = true;
    if (!f)
        return false;
    while (at < hi && fgets(line, sizeof(line), f)) {
        unsigned long s = 0, e = 0;
        char perms[8] = "";

        if (sscanf(line, "%lx-%lx %7s", &s, &e, perms) != 3 || e <= at)
            continue;
        if (s > at)
            break;                       /* a hole */
        if (strcmp(perms, "rw-p") != 0)
            movable = false;
        at = e;
        if (strchr(line, '\n') == NULL)  /* a long line: skip its rest */
            while (fgets(line, sizeof(line), f) && !strchr(line, '\n'))
                ;
    }
    fclose(f);
    if (at < hi)
        *mapped = false;
    return movable && *mapped;
}

cudaError_t cudaHostRegister(void *ptr, size_t size, unsigned int flags)
{
    const unsigned known = cudaHostRegisterPortable | cudaHostRegisterMapped | cudaHostRegisterIoMemory |
                           cudaHostRegisterReadOnly;
    uintptr_t a = (uintptr_t)ptr, lo = a / PAGE * PAGE, hi;
    cudaError_t err = cudaSuccess;
    bool try_move = false, mapped = true, moved = false;

    if (!ptr || size == 0 || (flags & ~known) || a + size < a || a + size > UINTPTR_MAX - PAGE)
        return tdm_ret(cudaErrorInvalidValue);
    hi = (a + size + PAGE - 1) / PAGE * PAGE;
    err = tdm_connect();
    if (err)
        return tdm_ret(err);
    /* As the driver: read-only registration only where the device has it. */
    if (flags & cudaHostRegisterReadOnly) {
        int ro = 0;

        if (cudaDeviceGetAttribute(&ro, cudaDevAttrHostRegisterReadOnlySupported, 0) != cudaSuccess || !ro)
            return tdm_ret(cudaErrorNotSupported);
    }
    pthread_mutex_lock(&reg_lock);
    /* Memory already pinned (cudaMallocHost, or registered) overlaps. */
    for (size_t i = 0; i < nregs && !err; i++)
        if (a < regs[i].base + regs[i].size && regs[i].base < a + size)
            err = cudaErrorHostMemoryAlreadyRegistered;
    if (!err && (tdm_host_lookup(ptr, NULL) >= 0 || tdm_host_lookup((const char *)ptr + size - 1, NULL) >= 0))
        err = cudaErrorHostMemoryAlreadyRegistered;
    if (!err && tdm_grow(&regs, &cap_regs, nregs + 1, sizeof(*regs), 16) != 0)
        err = cudaErrorMemoryAllocation;
    /* Over shm the pages move, unless a page is already a moved range's
     * (two ranges sharing a page: the later one stays bookkeeping), the
     * memory is I/O memory, or managed memory (its own host copy). */
    if (!err && tdm_shm() && !(flags & cudaHostRegisterIoMemory) && !tdm_coherent_lookup(ptr, NULL, NULL)) {
        try_move = true;
        for (size_t i = 0; i < nregs; i++)
            if (regs[i].moved && lo < regs[i].hi && regs[i].lo < hi)
                try_move = false;
    }
    if (try_move && !pages_movable(lo, hi, &mapped))
        try_move = false;
    if (!err && !mapped)
        err = cudaErrorInvalidValue;       /* as the driver, for memory that is not there */
    if (!err && try_move)
        err = tdm_host_register_pages((void *)lo, hi - lo, flags, &moved);
    if (!err)
        regs[nregs++] = (registered){ a, size, flags, lo, hi, moved };
    pthread_mutex_unlock(&reg_lock);
    return tdm_ret(err);
}

cudaError_t cudaHostUnregister(void *ptr)
{
    cudaError_t err = cudaErrorHostMemoryNotRegistered;
    registered reg = { 0 };

    if (!ptr)
        return tdm_ret(cudaErrorInvalidValue);
    pthread_mutex_lock(&reg_lock);
    long i = find_registered((uintptr_t)ptr);
    if (i >= 0 && regs[i].base == (uintptr_t)ptr) {
        reg = regs[i];
        regs[i] = regs[--nregs];
        err = cudaSuccess;
    } else if (i >= 0) {
        /* Inside a range, not its start: the driver's answer (H100 run
         * of 2026-11-24), not "not registered". */
        err = cudaErrorInvalidValue;
    }
    /* Under reg_lock: a registration of the same pages waits until they
     * are private again. */
    if (!err && reg.moved)
        err = tdm_host_unregister_pages((void *)reg.lo);
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

    /* A small block at device memory of its own: its device pointer is its
     * host pointer, as with unified addressing natively. */
    if (tdm_host_by_pointer(pHost)) {
        *pDevice = pHost;
        return cudaSuccess;
    }
    if (tdm_host_block(pHost, &base, &size) < 0)
        return tdm_host_registered_flags(pHost) >= 0 ? cudaErrorMemoryAllocation   /* the program's own pages */
                                                     : cudaErrorInvalidValue;
    pthread_mutex_lock(&map_lock);
    if (!tdm_coherent_lookup(base, &h, &dev) || h != base) {
        u_quad_t sz = size ? size : 1;

        err = tdm_malloc_call(TDM_MALLOC, &sz, (size_t)sz, &d);
        /* What the host wrote before is the device's too, for the work of
         * every stream: the host copy is CLEAN from now on (see
         * cudaMallocManaged). */
        if (!err)
            err = tdm_memcpy_direct(d, base, (size_t)sz, cudaMemcpyHostToDevice, tdm_host_upload_stream(), false);
        if (!err)
            err = tdm_host_upload_drain();
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
    uint64_t in_region = 0, region_addr = 0;
    cudaError_t err;

    if (!pDevice || flags != 0)
        return tdm_ret(cudaErrorInvalidValue);
    err = tdm_connect();
    if (err)
        return tdm_ret(err);
    r = tdm_shm();
    if (!r)
        return tdm_ret(map_over_tcp(pDevice, pHost));
    if (tdm_host_region_block(pHost, &base, &in_region, &region_addr) != 0) {
        /* Pinned or registered memory the device cannot map here: the
         * error of a device without mapped memory. */
        if (tdm_host_lookup(pHost, NULL) >= 0 || tdm_host_registered_flags(pHost) >= 0)
            return tdm_ret(cudaErrorMemoryAllocation);
        return tdm_ret(cudaErrorInvalidValue);
    }
    /* With unified addressing the device pointer is the host pointer
     * (natively, and here once the block is mapped at its own address). */
    if (tdm_host_map_own(pHost)) {
        *pDevice = pHost;
        return cudaSuccess;
    }
    return tdm_ret(tdm_host_map_elsewhere(pHost, pDevice));
}

/* The library's own stream (guest.h): non-blocking, so the device runs
 * pinned uploads before a wait beside the kernel the program waits for,
 * and the setup of coherent memory waits for none of the program's work.
 * Made when first needed, and again after a cudaDeviceReset, which
 * destroys it with the session's other streams; the legacy stream (0) if
 * it cannot be made.  One event serves every fence: a stream that waits
 * for a later record of it waits for more uploads than it needs, never
 * fewer.  upload_lock is taken after coherent.c's lock, before the
 * client's. */
static pthread_mutex_t upload_lock = PTHREAD_MUTEX_INITIALIZER;
static cudaStream_t upload_stream;
static cudaEvent_t upload_event;
static bool stream_tried, event_tried;

cudaStream_t tdm_host_upload_stream(void)
{
    cudaStream_t s;

    pthread_mutex_lock(&upload_lock);
    if (!stream_tried) {
        stream_tried = true;
        if (cudaStreamCreateWithFlags(&upload_stream, cudaStreamNonBlocking) != cudaSuccess) {
            tdm_log("no stream of its own: pinned uploads before a wait and the setup of managed memory go on "
                    "the legacy stream, behind the program's kernels (a kernel waiting for the host's write over "
                    "TCP may wait forever)");
            upload_stream = 0;
            cudaGetLastError();
        }
    }
    s = upload_stream;
    pthread_mutex_unlock(&upload_lock);
    return s;
}

static cudaEvent_t fence_event(void)
{
    cudaEvent_t e;

    pthread_mutex_lock(&upload_lock);
    if (!event_tried) {
        event_tried = true;
        if (cudaEventCreateWithFlags(&upload_event, cudaEventDisableTiming) != cudaSuccess) {
            upload_event = NULL;
            cudaGetLastError();
        }
    }
    e = upload_event;
    pthread_mutex_unlock(&upload_lock);
    return e;
}

cudaError_t tdm_host_upload_fence(uint64_t stream)
{
    cudaStream_t up = tdm_host_upload_stream();
    cudaEvent_t ev;
    cudaError_t err;

    if ((uint64_t)(uintptr_t)up == stream)
        return cudaSuccess;
    if (!(ev = fence_event()))   /* no event: wait for the uploads here (they never wait for kernels) */
        return cudaStreamSynchronize(up);
    err = cudaEventRecord(ev, up);
    if (!err)
        err = cudaStreamWaitEvent((cudaStream_t)(uintptr_t)stream, ev, 0);
    return err;
}

cudaError_t tdm_host_upload_drain(void)
{
    return cudaStreamSynchronize(tdm_host_upload_stream());
}

void tdm_host_upload_reset(void)
{
    pthread_mutex_lock(&upload_lock);
    stream_tried = event_tried = false;
    upload_stream = 0;
    upload_event = NULL;
    pthread_mutex_unlock(&upload_lock);
}
