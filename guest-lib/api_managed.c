/* Managed memory (docs/memory-models.md, "Managed memory").  A managed
 * allocation is device memory of the session's arena, allocated as
 * cudaMalloc allocates (quota, range map, mirrored to a standby), with the
 * host copy mapped in this process at the same address: one pointer on
 * both sides, as native.  coherent.c keeps the two coherent at
 * synchronization points, the same over shm and TCP (the pre-Pascal
 * contract, concurrentManagedAccess 0).  Advice is remembered page by page,
 * so cudaMemRangeGetAttribute answers what was asked for. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "grow.h"
#include "guest.h"
#include "log.h"

#define PAGE 4096u

/* What advice and prefetches said of one page. */
enum {
    PG_READ_MOSTLY = 1u << 0,
    PG_PREF_SHIFT = 1,           /* 2 bits: a location code */
    PG_ACC_DEVICE = 1u << 3,
    PG_ACC_HOST = 1u << 4,
    PG_PREFETCH_SHIFT = 5,       /* 2 bits: a location code */
};
enum { LOC_NONE = 0, LOC_HOST = 1, LOC_DEVICE = 2 };

typedef struct managed {
    uintptr_t base;
    uint64_t size;               /* whole pages of the host mapping */
    uint8_t *pages;
} managed;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static managed *blocks;
static size_t nblocks, cap;

/* Index of the block containing [p, p+n) entirely, or -1; lock held. */
static long find(uintptr_t p, uint64_t n)
{
    for (size_t i = 0; i < nblocks; i++)
        if (p >= blocks[i].base && p - blocks[i].base < blocks[i].size &&
            n <= blocks[i].size - (p - blocks[i].base))
            return (long)i;
    return -1;
}

bool tdm_managed_block(const void *p, void **base, uint64_t *size)
{
    pthread_mutex_lock(&lock);
    long i = find((uintptr_t)p, 1);
    if (i >= 0) {
        *base = (void *)blocks[i].base;
        *size = blocks[i].size;
    }
    pthread_mutex_unlock(&lock);
    return i >= 0;
}

/* The host copy at the device address: the arena lies far from this
 * process's own mappings, and MAP_FIXED_NOREPLACE never replaces one. */
static cudaError_t map_host_copy(void *p, uint64_t span)
{
    void *h = mmap(p, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);

    if (h == p)
        return cudaSuccess;
    if (h != MAP_FAILED)
        munmap(h, span);     /* a kernel without MAP_FIXED_NOREPLACE placed it elsewhere */
    tdm_log("cannot map managed memory at %p in this process (address in use)", p);
    return cudaErrorMemoryAllocation;
}

cudaError_t cudaMallocManaged(void **devPtr, size_t size, unsigned int flags)
{
    u_quad_t sz = size;
    uint64_t span = ((uint64_t)size + PAGE - 1) / PAGE * PAGE;
    uint8_t *pages = NULL;
    void *p = NULL;
    cudaError_t err;

    if (!devPtr || (flags != cudaMemAttachGlobal && flags != cudaMemAttachHost))
        return tdm_ret(cudaErrorInvalidValue);
    /* Size 0: success and no memory, as natively (H100, driver 580). */
    if (size == 0) {
        *devPtr = NULL;
        return cudaSuccess;
    }
    err = tdm_connect();
    if (err)
        return tdm_ret(err);
    pages = calloc(span / PAGE, 1);
    if (!pages)
        return tdm_ret(cudaErrorMemoryAllocation);
    err = tdm_malloc_call(TDM_MALLOC, &sz, size, &p);
    if (err) {
        free(pages);
        return tdm_ret(err);
    }
    err = map_host_copy(p, span);
    /* Both copies start zeroed (native leaves the contents undefined), so
     * the host copy starts CLEAN: the device copy must be zero for the
     * work of every stream before the program gets the pointer.  Zeroed on
     * the library's own stream and waited for: queued on the legacy stream
     * (as it was) it ran, in about 1 run of 10 under load, after the
     * program's upload of what it wrote on a non-blocking stream, which
     * does not wait for the legacy stream, and erased it
     * (examples::peer_and_batch_copies). */
    if (!err)
        err = tdm_memset(p, 0, size, tdm_host_upload_stream());
    if (!err)
        err = tdm_host_upload_drain();
    if (!err)
        err = tdm_coherent_add((uintptr_t)p, (uint64_t)(uintptr_t)p, size, span, (int)flags, true);
    if (!err) {
        pthread_mutex_lock(&lock);
        if (tdm_grow(&blocks, &cap, nblocks + 1, sizeof(*blocks), 16) == 0)
            blocks[nblocks++] = (managed){ (uintptr_t)p, span, pages };
        else
            err = cudaErrorMemoryAllocation;
        pthread_mutex_unlock(&lock);
        if (err)
            tdm_coherent_remove((uintptr_t)p);
    }
    if (err) {
        tdm_addr a = (uint64_t)(uintptr_t)p;

        free(pages);
        munmap(p, span);       /* ours if mapped; nothing there otherwise (NOREPLACE) */
        tdm_call_err(TDM_FREE, &a);
        tdm_allocs_remove(a);
        return tdm_ret(err);
    }
    *devPtr = p;
    return cudaSuccess;
}

cudaError_t tdm_managed_free(void *p, bool *was_managed)
{
    managed m = { 0 };
    tdm_addr a = (uint64_t)(uintptr_t)p;
    cudaError_t err;

    *was_managed = false;
    pthread_mutex_lock(&lock);
    long i = find((uintptr_t)p, 1);
    if (i >= 0) {
        *was_managed = true;
        m = blocks[i];
        if (m.base == (uintptr_t)p)
            blocks[i] = blocks[--nblocks];
    }
    pthread_mutex_unlock(&lock);
    if (!*was_managed)
        return cudaSuccess;
    if (m.base != (uintptr_t)p)
        return cudaErrorInvalidValue;      /* not the start of the allocation */
    free(m.pages);
    tdm_coherent_remove(m.base);
    munmap(p, m.size);
    /* Waits for the device, as cudaFree does. */
    err = tdm_call_err(TDM_FREE, &a);
    if (err != cudaErrorInvalidValue && err != cudaErrorDevicesUnavailable)
        tdm_allocs_remove(a);
    return err;
}

void tdm_managed_reset(void)
{
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < nblocks; i++) {
        tdm_coherent_remove(blocks[i].base);
        munmap((void *)blocks[i].base, blocks[i].size);
        free(blocks[i].pages);
    }
    nblocks = 0;
    pthread_mutex_unlock(&lock);
    tdm_coherent_clear();   /* mapped blocks: their device memory is gone too */
}

/* The location a cudaMemLocation names for advice and prefetches: the
 * host, or device 0, the only device.  0 when it names neither. */
static int location_code(struct cudaMemLocation loc, cudaError_t *err)
{
    *err = cudaSuccess;
    if (loc.type == cudaMemLocationTypeHost || loc.type == cudaMemLocationTypeHostNumaCurrent ||
        (loc.type == cudaMemLocationTypeHostNuma && loc.id == 0))
        return LOC_HOST;
    if (loc.type == cudaMemLocationTypeDevice) {
        if (loc.id == 0)
            return LOC_DEVICE;
        *err = cudaErrorInvalidDevice;
        return LOC_NONE;
    }
    *err = cudaErrorInvalidValue;
    return LOC_NONE;
}

/* Applies fn to every page of [p, p+n) of one managed block; lock taken. */
static cudaError_t for_pages(const void *p, size_t n, void (*fn)(uint8_t *pg, int arg), int arg)
{
    cudaError_t err = cudaSuccess;

    if (!p || n == 0)
        return cudaErrorInvalidValue;
    pthread_mutex_lock(&lock);
    long i = find((uintptr_t)p, n);
    if (i < 0) {
        err = cudaErrorInvalidValue;
    } else {
        uint64_t first = ((uintptr_t)p - blocks[i].base) / PAGE;
        uint64_t last = ((uintptr_t)p - blocks[i].base + n - 1) / PAGE;
        for (uint64_t k = first; k <= last; k++)
            fn(&blocks[i].pages[k], arg);
    }
    pthread_mutex_unlock(&lock);
    return err;
}

static void set_prefetch(uint8_t *pg, int loc)
{
    *pg = (uint8_t)((*pg & ~(3u << PG_PREFETCH_SHIFT)) | ((unsigned)loc << PG_PREFETCH_SHIFT));
}

static void set_pref(uint8_t *pg, int loc)
{
    *pg = (uint8_t)((*pg & ~(3u << PG_PREF_SHIFT)) | ((unsigned)loc << PG_PREF_SHIFT));
}

static void set_bits(uint8_t *pg, int bits)
{
    *pg |= (uint8_t)bits;
}

static void clear_bits(uint8_t *pg, int bits)
{
    *pg &= (uint8_t)~bits;
}

/* To the host: the host copy is fetched now, on `stream`; to the device:
 * what the host wrote is uploaded on `stream`.  Accepted although
 * concurrentManagedAccess is 0 (native refuses it there): programs written
 * for GPUs that migrate prefetch unconditionally, and here it moves what
 * it says. */
cudaError_t cudaMemPrefetchAsync(const void *devPtr, size_t count, struct cudaMemLocation location,
                                 unsigned int flags, cudaStream_t stream)
{
    cudaError_t err;
    int loc = location_code(location, &err);

    if (err)
        return tdm_ret(err);
    if (flags != 0)
        return tdm_ret(cudaErrorInvalidValue);
    err = for_pages(devPtr, count, set_prefetch, loc);
    if (!err)
        err = tdm_coherent_prefetch(devPtr, count, loc == LOC_HOST, tdm_stream_id(stream));
    return tdm_ret(err);
}

cudaError_t cudaMemPrefetchAsync_ptsz(const void *devPtr, size_t count, struct cudaMemLocation location,
                                      unsigned int flags, cudaStream_t stream)
{
    return cudaMemPrefetchAsync(devPtr, count, location, flags, stream);
}

cudaError_t cudaMemAdvise(const void *devPtr, size_t count, enum cudaMemoryAdvise advice,
                          struct cudaMemLocation location)
{
    cudaError_t err = cudaSuccess;
    int loc;

    switch (advice) {
    case cudaMemAdviseSetReadMostly:
        return tdm_ret(for_pages(devPtr, count, set_bits, PG_READ_MOSTLY));
    case cudaMemAdviseUnsetReadMostly:
        return tdm_ret(for_pages(devPtr, count, clear_bits, PG_READ_MOSTLY));
    case cudaMemAdviseSetPreferredLocation:
        loc = location_code(location, &err);
        return tdm_ret(err ? err : for_pages(devPtr, count, set_pref, loc));
    case cudaMemAdviseUnsetPreferredLocation:
        return tdm_ret(for_pages(devPtr, count, set_pref, LOC_NONE));
    case cudaMemAdviseSetAccessedBy:
    case cudaMemAdviseUnsetAccessedBy:
        loc = location_code(location, &err);
        /* A device that is not there is a bad value to advice (native, H100). */
        if (err)
            return tdm_ret(err == cudaErrorInvalidDevice ? cudaErrorInvalidValue : err);
        return tdm_ret(for_pages(devPtr, count, advice == cudaMemAdviseSetAccessedBy ? set_bits : clear_bits,
                                 loc == LOC_DEVICE ? PG_ACC_DEVICE : PG_ACC_HOST));
    default:
        return tdm_ret(cudaErrorInvalidValue);
    }
}

/* What every page of [first, last] says, or "none" where they differ. */
typedef struct range_view {
    bool read_mostly, acc_device, acc_host;
    int pref, prefetch;          /* location codes; LOC_NONE where mixed */
} range_view;

static void view_of(const managed *m, uint64_t first, uint64_t last, range_view *v)
{
    uint8_t pg0 = m->pages[first];

    v->read_mostly = v->acc_device = v->acc_host = true;
    v->pref = (pg0 >> PG_PREF_SHIFT) & 3;
    v->prefetch = (pg0 >> PG_PREFETCH_SHIFT) & 3;
    for (uint64_t k = first; k <= last; k++) {
        uint8_t pg = m->pages[k];
        v->read_mostly &= (pg & PG_READ_MOSTLY) != 0;
        v->acc_device &= (pg & PG_ACC_DEVICE) != 0;
        v->acc_host &= (pg & PG_ACC_HOST) != 0;
        if (((pg >> PG_PREF_SHIFT) & 3) != v->pref)
            v->pref = LOC_NONE;
        if (((pg >> PG_PREFETCH_SHIFT) & 3) != v->prefetch)
            v->prefetch = LOC_NONE;
    }
}

static int loc_device_id(int loc)
{
    return loc == LOC_DEVICE ? 0 : loc == LOC_HOST ? cudaCpuDeviceId : cudaInvalidDeviceId;
}

static int loc_type(int loc)
{
    return loc == LOC_DEVICE ? cudaMemLocationTypeDevice : loc == LOC_HOST ? cudaMemLocationTypeHost
                                                                         : cudaMemLocationTypeInvalid;
}

static cudaError_t answer(const range_view *v, void *data, size_t size, enum cudaMemRangeAttribute attr)
{
    int *out = data;

    if (!data || size < 4 || size % 4)
        return cudaErrorInvalidValue;
    if (attr != cudaMemRangeAttributeAccessedBy && size != 4)
        return cudaErrorInvalidValue;
    switch (attr) {
    case cudaMemRangeAttributeReadMostly:
        *out = v->read_mostly;
        return cudaSuccess;
    case cudaMemRangeAttributePreferredLocation:
        *out = loc_device_id(v->pref);
        return cudaSuccess;
    case cudaMemRangeAttributeLastPrefetchLocation:
        *out = loc_device_id(v->prefetch);
        return cudaSuccess;
    case cudaMemRangeAttributePreferredLocationType:
        *out = loc_type(v->pref);
        return cudaSuccess;
    case cudaMemRangeAttributeLastPrefetchLocationType:
        *out = loc_type(v->prefetch);
        return cudaSuccess;
    case cudaMemRangeAttributePreferredLocationId:
        *out = v->pref == LOC_DEVICE ? 0 : cudaInvalidDeviceId;
        return cudaSuccess;
    case cudaMemRangeAttributeLastPrefetchLocationId:
        *out = v->prefetch == LOC_DEVICE ? 0 : cudaInvalidDeviceId;
        return cudaSuccess;
    case cudaMemRangeAttributeAccessedBy: {
        size_t n = size / 4, k = 0;
        if (v->acc_host && k < n)
            out[k++] = cudaCpuDeviceId;
        if (v->acc_device && k < n)
            out[k++] = 0;
        while (k < n)
            out[k++] = cudaInvalidDeviceId;
        return cudaSuccess;
    }
    default:
        return cudaErrorInvalidValue;
    }
}

cudaError_t cudaMemRangeGetAttributes(void **data, size_t *dataSizes, enum cudaMemRangeAttribute *attributes,
                                      size_t numAttributes, const void *devPtr, size_t count)
{
    cudaError_t err = cudaSuccess;
    range_view v;

    if (!data || !dataSizes || !attributes || numAttributes == 0 || !devPtr || count == 0)
        return tdm_ret(cudaErrorInvalidValue);
    pthread_mutex_lock(&lock);
    long i = find((uintptr_t)devPtr, count);
    if (i < 0) {
        err = cudaErrorInvalidValue;
    } else {
        uint64_t off = (uintptr_t)devPtr - blocks[i].base;
        view_of(&blocks[i], off / PAGE, (off + count - 1) / PAGE, &v);
    }
    pthread_mutex_unlock(&lock);
    for (size_t k = 0; !err && k < numAttributes; k++)
        err = answer(&v, data[k], dataSizes[k], attributes[k]);
    return tdm_ret(err);
}

cudaError_t cudaMemRangeGetAttribute(void *data, size_t dataSize, enum cudaMemRangeAttribute attribute,
                                     const void *devPtr, size_t count)
{
    return cudaMemRangeGetAttributes(&data, &dataSize, &attribute, 1, devPtr, count);
}

/* Which launches may touch the allocation from now on (coherent.c): with
 * cudaMemAttachHost none, with cudaMemAttachSingle those of `stream` (and
 * the legacy stream's), with cudaMemAttachGlobal all.  Applied at once
 * rather than in stream order: the host copy is only fetched when the host
 * touches it, after the program synchronized. */
cudaError_t cudaStreamAttachMemAsync(cudaStream_t stream, void *devPtr, size_t length, unsigned int flags)
{
    void *base = NULL;
    uint64_t size = 0;

    if (flags != cudaMemAttachGlobal && flags != cudaMemAttachHost && flags != cudaMemAttachSingle)
        return tdm_ret(cudaErrorInvalidValue);
    if (!tdm_managed_block(devPtr, &base, &size) || base != devPtr || (length != 0 && length > size))
        return tdm_ret(cudaErrorInvalidValue);
    if (flags == cudaMemAttachSingle && tdm_stream_id(stream) <= 1)
        return tdm_ret(cudaErrorInvalidValue);   /* single needs a stream of the program's */
    return tdm_ret(tdm_coherent_attach(devPtr, (int)flags, tdm_stream_id(stream)));
}

cudaError_t cudaStreamAttachMemAsync_ptsz(cudaStream_t stream, void *devPtr, size_t length, unsigned int flags)
{
    return cudaStreamAttachMemAsync(stream, devPtr, length, flags);
}
