/* Host memory handed out by cudaMallocHost/cudaHostAlloc.  Over TCP it is
 * ordinary page-aligned memory.  Over shm it is carved from the shared
 * region's host memory area (the arena allocator the server uses for device
 * addresses, here over the area's addresses), so the server's GPU copies
 * from and to it directly; when the area is full the allocation fails, as a
 * full pinned pool does.  The table remembers every block so cudaFreeHost
 * and cudaPointerGetAttributes behave as in CUDA. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "guest.h"
#include "log.h"
#include "shm_region.h"
#include "transport.h"
#include "xdr_extra.h"
#include "grow.h"

#define SHM_HOST_ALIGN 4096  /* whole pages: the server pins each block */

typedef struct host_block {
    void *base;
    size_t size;
    unsigned flags;
    uint64_t in_region;      /* bytes taken from the shm area, 0 for malloc'ed */
    bool at_own_address;     /* shm: the device reaches it at its host address */
} host_block;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static host_block *blocks;
static size_t nblocks, cap;
static tdm_arena *shm_area;

/* The server pins a block for the device, as cudaMallocHost pins memory. */
static cudaError_t region_pin(const tdm_shm_region *r, uint64_t addr, uint64_t size, bool pin)
{
    tdm_shm_span a = { addr - (uint64_t)(uintptr_t)r->base, size };

    return tdm_call_err(pin ? TDM_SHM_HOST_REGISTER : TDM_SHM_HOST_UNREGISTER, &a);
}

/* From the region's host memory area; NULL when it is full. */
static void *region_alloc(const tdm_shm_region *r, size_t size, uint64_t *rounded)
{
    uint64_t addr = 0;

    pthread_mutex_lock(&lock);
    if (!shm_area && r->g.host_size)
        tdm_arena_create(&shm_area, (uint64_t)(uintptr_t)(r->base + r->g.host_off), r->g.host_size, SHM_HOST_ALIGN);
    pthread_mutex_unlock(&lock);
    if (!shm_area || tdm_arena_alloc(shm_area, size ? size : 1, &addr, rounded) != 0) {
        tdm_log("pinned host memory of the shm region is exhausted (%llu MiB; raise TANDEM_SHM_HOST_MB)",
                (unsigned long long)(r->g.host_size >> 20));
        return NULL;
    }
    return (void *)(uintptr_t)addr;
}

/* Adds a block to the table; false when out of memory. */
static bool add_block(void *p, size_t size, unsigned flags, uint64_t in_region)
{
    bool ok = true;

    pthread_mutex_lock(&lock);
    ok = tdm_grow(&blocks, &cap, nblocks + 1, sizeof(*blocks), 64) == 0;
    if (ok)
        blocks[nblocks++] = (host_block){ p, size, flags, in_region, false };
    pthread_mutex_unlock(&lock);
    return ok;
}

static int find_block(void *p, uint64_t *in_region, bool remove);

cudaError_t tdm_host_alloc(size_t size, unsigned flags, void **out)
{
    const tdm_shm_region *r = tdm_shm();
    uint64_t rounded = 0, unused;
    cudaError_t err;
    void *p = NULL;

    *out = NULL;
    if (!r) {
        /* Whole pages: if the device maps it (api_mapped.c), its host copy
         * is write-protected page by page and must share no page. */
        if (posix_memalign(&p, 4096, ((size ? size : 1) + 4095) / 4096 * 4096) != 0)
            return cudaErrorMemoryAllocation;
        if (!add_block(p, size, flags, 0)) {
            free(p);
            return cudaErrorMemoryAllocation;
        }
        *out = p;
        return cudaSuccess;
    }
    p = region_alloc(r, size, &rounded);
    if (!p)
        return cudaErrorMemoryAllocation;
    /* In the table before the server pins it: if the server dies from
     * here on, the takeover registers the block with the standby (which
     * takes a second registration of the same block as done). */
    if (!add_block(p, size, flags, rounded)) {
        tdm_arena_free(shm_area, (uint64_t)(uintptr_t)p, rounded);
        return cudaErrorMemoryAllocation;
    }
    err = region_pin(r, (uint64_t)(uintptr_t)p, rounded, true);
    if (err != cudaSuccess) {
        find_block(p, &unused, true);
        tdm_arena_free(shm_area, (uint64_t)(uintptr_t)p, rounded);
        return err;
    }
    *out = p;
    return cudaSuccess;
}

/* The block that starts at p: its bytes taken from the region (0 for a
 * malloc'ed one) in *in_region, removed from the table if `remove`.  -1 if
 * p starts no block. */
static int find_block(void *p, uint64_t *in_region, bool remove)
{
    int rc = -1;

    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < nblocks; i++) {
        if (blocks[i].base == p) {
            *in_region = blocks[i].in_region;
            if (remove)
                blocks[i] = blocks[--nblocks];
            rc = 0;
            break;
        }
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

cudaError_t tdm_host_free(void *p)
{
    uint64_t in_region = 0;
    cudaError_t err = cudaSuccess;

    if (find_block(p, &in_region, false) != 0)
        return cudaErrorInvalidValue;
    /* Errors of earlier asynchronous work come back here, as from CUDA's
     * cudaFreeHost, which also waits for the device.  The block stays in
     * the table until the server let go of it: if the server dies
     * meanwhile, the takeover registers it with the standby, where the
     * release is retried. */
    if (in_region)
        err = region_pin(tdm_shm(), (uint64_t)(uintptr_t)p, in_region, false);
    else
        err = tdm_mapped_release(p);
    if (find_block(p, &in_region, true) != 0)
        return cudaErrorInvalidValue;     /* another thread freed it meanwhile */
    if (in_region)
        tdm_arena_free(shm_area, (uint64_t)(uintptr_t)p, in_region);
    else
        free(p);
    return err;
}

int tdm_host_reregister(struct tdm_transport *t)
{
    const tdm_shm_region *r = tdm_transport_shm_region(t);
    tdm_shm_span *spans = NULL;
    size_t n = 0;
    int rc = TDM_T_OK;

    if (!r)
        return TDM_T_OK;
    /* Copied out: the calls are made without the table's lock. */
    pthread_mutex_lock(&lock);
    spans = nblocks ? calloc(nblocks, sizeof(*spans)) : NULL;
    for (size_t i = 0; spans && i < nblocks; i++)
        if (blocks[i].in_region)
            spans[n++] = (tdm_shm_span){ (uint64_t)(uintptr_t)blocks[i].base - (uint64_t)(uintptr_t)r->base,
                                         blocks[i].in_region };
    if (nblocks && !spans)
        rc = TDM_T_REJECTED;
    pthread_mutex_unlock(&lock);
    for (size_t i = 0; rc == TDM_T_OK && i < n; i++) {
        int err = 0;

        rc = t->ops->call(t, TDM_SHM_HOST_REGISTER, (xdrproc_t)xdr_tdm_shm_span, &spans[i], (xdrproc_t)xdr_int, &err);
        /* Device output waiting is no error: the next call's reply says so
         * again, and that call fetches it. */
        tdm_output_flag_take_err(&err);
        if (rc == TDM_T_OK && err != 0) {
            tdm_log("the standby refused pinned block [%llu, +%llu) of the region (cudaError %d)",
                    (unsigned long long)spans[i].offset, (unsigned long long)spans[i].size, err);
            rc = TDM_T_REJECTED;
        }
    }
    free(spans);
    return rc;
}

int tdm_host_lookup(const void *p, void **base)
{
    return tdm_host_block(p, base, NULL);
}

int tdm_host_block(const void *p, void **base, size_t *size)
{
    int flags = -1;
    uintptr_t a = (uintptr_t)p;

    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < nblocks; i++) {
        uintptr_t b = (uintptr_t)blocks[i].base;
        if (a >= b && a - b < (blocks[i].size ? blocks[i].size : 1)) {
            flags = (int)blocks[i].flags;
            if (base)
                *base = blocks[i].base;
            if (size)
                *size = blocks[i].size;
            break;
        }
    }
    pthread_mutex_unlock(&lock);
    return flags;
}

/* ---- memory models (issue 14) ---- */

int tdm_host_region_block(const void *p, void **base, uint64_t *in_region)
{
    int rc = -1;
    uintptr_t a = (uintptr_t)p;

    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < nblocks; i++) {
        uintptr_t b = (uintptr_t)blocks[i].base;
        if (blocks[i].in_region && a >= b && a - b < blocks[i].in_region) {
            *base = blocks[i].base;
            *in_region = blocks[i].in_region;
            rc = 0;
            break;
        }
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

/* Unified addressing for pinned memory over shm: natively the host pointer
 * of pinned memory is also its device address, and programs pass it
 * straight to kernels (a flag a kernel spins on while the host sets it).
 * Here the server maps the region elsewhere, so the first time a pointer
 * into a pinned block appears among a kernel's arguments the server maps
 * the block again at the guest's own address for itself and the device
 * (SHM_MANAGED_MAP, server/session_managed.c): the same pages, truly
 * shared.  That call ends the session's protection by a standby (the
 * standby could not place the block there), so it is made only for
 * blocks a kernel is given.  A pointer hidden deeper (in device memory, in
 * a struct behind a pointer) is not seen. */
void tdm_host_map_kernel_args(const char *params, uint32_t len)
{
    const tdm_shm_region *r;
    uintptr_t lo, hi;

    if (len < 8 || !(r = tdm_shm()) || !r->g.host_size)
        return;
    lo = (uintptr_t)r->base + r->g.host_off;
    hi = lo + r->g.host_size;
    for (uint32_t off = 0; off + 8 <= len; off += 8) {
        uint64_t word;
        tdm_managed_map_args a = { 0 };
        bool want = false;

        memcpy(&word, params + off, 8);
        if (word < lo || word >= hi)
            continue;
        pthread_mutex_lock(&lock);
        for (size_t i = 0; i < nblocks; i++) {
            uintptr_t b = (uintptr_t)blocks[i].base;
            if (blocks[i].in_region && word >= b && word - b < blocks[i].in_region) {
                want = !blocks[i].at_own_address;
                blocks[i].at_own_address = true;   /* asked once, whatever the answer */
                a = (tdm_managed_map_args){ b - (uintptr_t)r->base, blocks[i].in_region, b };
                break;
            }
        }
        pthread_mutex_unlock(&lock);
        if (want) {
            cudaError_t err = tdm_call_err(TDM_SHM_MANAGED_MAP, &a);
            if (err)
                tdm_log("pinned block %p cannot be mapped for the device at its own address (cudaError %d); "
                        "a kernel given it faults", (void *)(uintptr_t)a.addr, (int)err);
        }
    }
}
