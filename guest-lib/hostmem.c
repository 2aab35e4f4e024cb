/* Host memory handed out by cudaMallocHost/cudaHostAlloc.  Over TCP it is
 * ordinary page-aligned memory.  Over shm it is carved from the shared
 * region's host memory area (the arena allocator the server uses for device
 * addresses, here over the area's addresses), so the server's GPU copies
 * from and to it directly; when the area is full the allocation fails, as a
 * full pinned pool does.  The table remembers every block so cudaFreeHost
 * and cudaPointerGetAttributes behave as in CUDA. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

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
    uintptr_t alias;         /* shm, cudaHostRegister: the program's pages, now this block's; else 0 */
    bool own_ok;             /* shm: at_own_address asked for and done */
    uint64_t dev_elsewhere;  /* shm: SHM_HOST_MAP's device address of the block (its own was refused), else 0 */
    bool shadow;             /* TCP: device memory at the block's own address (at_own_address: in use) */
} host_block;

/* Where the program reaches a region block: a registered range (alias) at
 * the program's own address, cudaMallocHost's at its place in the region. */
static uintptr_t reached_at(const host_block *b)
{
    return b->alias ? b->alias : (uintptr_t)b->base;
}

/* Over TCP, small pinned blocks lie at the address of device memory of
 * their own (a latch a kernel spins on, passed by its host pointer).  The
 * bound on the device memory this takes: blocks of at most SHADOW_MAX
 * bytes, at most SHADOW_BLOCKS of them (each rounded up to the device's
 * allocation granularity, 2 MiB on the H100, and counted against the
 * session's quota); larger or further blocks are ordinary memory. */
#define SHADOW_MAX (1u << 20)
#define SHADOW_BLOCKS 64u

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static host_block *blocks;
static size_t nblocks, cap;
static tdm_arena *shm_area;
/* Blocks with an alias: copies of a process without registered memory
 * skip the table. */
static atomic_size_t naliases;
static atomic_uint nshadows;

/* The server pins a block for the device, as cudaMallocHost pins memory. */
static cudaError_t region_pin(const tdm_shm_region *r, uint64_t addr, uint64_t size, bool pin)
{
    tdm_shm_span a = { addr - (uint64_t)(uintptr_t)r->base, size };

    return tdm_call_err(pin ? TDM_SHM_HOST_REGISTER : TDM_SHM_HOST_UNREGISTER, &a);
}

/* From the region's host memory area; NULL when it is full (`what` ends
 * the line logged then: what the program gets instead). */
static void *region_alloc(const tdm_shm_region *r, size_t size, uint64_t *rounded, const char *what)
{
    uint64_t addr = 0;

    pthread_mutex_lock(&lock);
    if (!shm_area && r->g.host_size)
        tdm_arena_create(&shm_area, (uint64_t)(uintptr_t)(r->base + r->g.host_off), r->g.host_size, SHM_HOST_ALIGN);
    pthread_mutex_unlock(&lock);
    if (!shm_area || tdm_arena_alloc(shm_area, size ? size : 1, &addr, rounded) != 0) {
        tdm_log("pinned host memory of the shm region is exhausted (%llu MiB; raise TANDEM_SHM_HOST_MB): %s",
                (unsigned long long)(r->g.host_size >> 20), what);
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
        blocks[nblocks++] = (host_block){ .base = p, .size = size, .flags = flags, .in_region = in_region };
    pthread_mutex_unlock(&lock);
    return ok;
}

static int find_block(void *p, uint64_t *in_region, bool remove);

static uint64_t page_span(size_t size)
{
    return ((uint64_t)(size ? size : 1) + 4095) / 4096 * 4096;
}

/* Over TCP: a block at the address of device memory of its size (an arena
 * allocation: far from this process's own mappings, and MAP_FIXED_NOREPLACE
 * never replaces one).  NULL when over the bound or refused: the caller
 * takes ordinary memory. */
static void *shadow_alloc(size_t size, unsigned flags)
{
    static atomic_bool told;
    u_quad_t sz = size ? size : 1;
    uint64_t span = page_span(size);
    void *d = NULL, *h;
    tdm_addr a;

    if (size > SHADOW_MAX)
        return NULL;
    if (atomic_fetch_add(&nshadows, 1) >= SHADOW_BLOCKS) {
        atomic_fetch_sub(&nshadows, 1);
        if (!atomic_exchange(&told, true))
            tdm_log("more than %u small pinned blocks: further ones cannot be given to a kernel by their host "
                    "pointer over TCP", SHADOW_BLOCKS);
        return NULL;
    }
    if (tdm_malloc_call(TDM_MALLOC, &sz, (size_t)sz, &d) != cudaSuccess) {
        atomic_fetch_sub(&nshadows, 1);
        return NULL;
    }
    tdm_allocs_remove((uint64_t)(uintptr_t)d);   /* to the program it is host memory */
    h = mmap(d, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    if (h == d && add_block(d, size, flags, 0)) {
        pthread_mutex_lock(&lock);
        for (size_t i = 0; i < nblocks; i++)
            if (blocks[i].base == d)
                blocks[i].shadow = true;
        pthread_mutex_unlock(&lock);
        return d;
    }
    if (h != MAP_FAILED)
        munmap(h, span);
    a = (uint64_t)(uintptr_t)d;
    tdm_call_err(TDM_FREE, &a);
    atomic_fetch_sub(&nshadows, 1);
    return NULL;
}

bool tdm_host_by_pointer(const void *p)
{
    uintptr_t a = (uintptr_t)p;
    bool found = false, activate = false;
    host_block b = { 0 };

    if (atomic_load(&nshadows) == 0)
        return false;
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < nblocks; i++) {
        if (blocks[i].shadow && a >= (uintptr_t)blocks[i].base && a - (uintptr_t)blocks[i].base < page_span(blocks[i].size)) {
            found = true;
            activate = !blocks[i].at_own_address;
            blocks[i].at_own_address = true;
            b = blocks[i];
            break;
        }
    }
    pthread_mutex_unlock(&lock);
    if (activate) {
        cudaError_t err;

        /* Device memory from now on: copies naming it are device copies. */
        tdm_allocs_add((uint64_t)(uintptr_t)b.base, b.size ? b.size : 1, false);
        err = tdm_coherent_add_pinned((uintptr_t)b.base, b.size ? b.size : 1, page_span(b.size));
        if (err) {
            tdm_log("pinned block %p cannot be kept coherent with its device memory (cudaError %d)", b.base,
                    (int)err);
            return false;
        }
    }
    return found;
}

/* cudaFreeHost of a block at device memory of its own: the host copy,
 * then the device memory (waiting for the device, as cudaFreeHost). */
static cudaError_t shadow_free(void *p, size_t size, bool in_use)
{
    tdm_addr a = (uint64_t)(uintptr_t)p;
    cudaError_t err;

    if (in_use)
        tdm_coherent_remove((uintptr_t)p);
    munmap(p, page_span(size));
    err = tdm_call_err(TDM_FREE, &a);
    if (in_use)
        tdm_allocs_remove(a);
    atomic_fetch_sub(&nshadows, 1);
    /* Gone already: cudaDeviceReset released it with the session's memory. */
    return err == cudaErrorInvalidValue ? cudaSuccess : err;
}

void tdm_host_reset(void)
{
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < nblocks;) {
        if (blocks[i].shadow) {
            munmap(blocks[i].base, page_span(blocks[i].size));
            blocks[i] = blocks[--nblocks];
            atomic_fetch_sub(&nshadows, 1);
        } else {
            i++;
        }
    }
    pthread_mutex_unlock(&lock);
}

cudaError_t tdm_host_alloc(size_t size, unsigned flags, void **out)
{
    const tdm_shm_region *r = tdm_shm();
    uint64_t rounded = 0, unused;
    cudaError_t err;
    void *p = NULL;

    *out = NULL;
    if (!r) {
        p = shadow_alloc(size, flags);
        if (p) {
            *out = p;
            return cudaSuccess;
        }
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
    p = region_alloc(r, size, &rounded, "the allocation fails");
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
 * p starts no block.  `lock` held. */
static int find_block_locked(void *p, uint64_t *in_region, bool remove)
{
    for (size_t i = 0; i < nblocks; i++) {
        if (blocks[i].base == p) {
            *in_region = blocks[i].in_region;
            if (remove)
                blocks[i] = blocks[--nblocks];
            return 0;
        }
    }
    return -1;
}

static int find_block(void *p, uint64_t *in_region, bool remove)
{
    int rc;

    pthread_mutex_lock(&lock);
    rc = find_block_locked(p, in_region, remove);
    pthread_mutex_unlock(&lock);
    return rc;
}

cudaError_t tdm_host_free(void *p)
{
    uint64_t in_region = 0;
    cudaError_t err = cudaSuccess;
    host_block shadow = { 0 };

    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < nblocks; i++)
        if (blocks[i].base == p && blocks[i].shadow) {
            shadow = blocks[i];
            blocks[i] = blocks[--nblocks];
            break;
        }
    pthread_mutex_unlock(&lock);
    if (shadow.shadow)
        return shadow_free(p, shadow.size, shadow.at_own_address);
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

/* One call of a takeover to the new server; its cudaError in *err.  Device
 * output waiting is no error: the next call's reply says so again, and that
 * call fetches it. */
static int standby_call(struct tdm_transport *t, uint32_t proc, xdrproc_t xargs, void *args, int *err)
{
    int rc = t->ops->call(t, proc, xargs, args, (xdrproc_t)xdr_int, err);

    tdm_output_flag_take_err(err);
    return rc;
}

/* Why a standby refuses SHM_MANAGED_MAP (server/session_managed.c). */
static const char *map_refusal(int err)
{
    return err == cudaErrorMemoryAllocation ? "the address is taken in its process, or its device maps the "
                                              "block elsewhere"
                                            : "it has no such pinned block at a usable address";
}

int tdm_host_reregister(struct tdm_transport *t)
{
    const tdm_shm_region *r = tdm_transport_shm_region(t);
    tdm_shm_span *spans = NULL;
    tdm_managed_map_args *maps = NULL;
    size_t n = 0, nmaps = 0;
    int rc = TDM_T_OK, err = 0;

    if (!r)
        return TDM_T_OK;
    /* Copied out: the calls are made without the table's lock. */
    pthread_mutex_lock(&lock);
    spans = nblocks ? calloc(nblocks, sizeof(*spans)) : NULL;
    maps = nblocks ? calloc(nblocks, sizeof(*maps)) : NULL;
    for (size_t i = 0; spans && maps && i < nblocks; i++) {
        host_block *b = &blocks[i];
        uint64_t off = (uint64_t)(uintptr_t)b->base - (uint64_t)(uintptr_t)r->base;

        if (!b->in_region)
            continue;
        spans[n++] = (tdm_shm_span){ off, b->in_region };
        /* Where kernels reach the block: at the program's own address, or
         * (its own refused) at the device address the dead server answered,
         * which the program may hold.  Either must hold on the standby. */
        if (b->own_ok || b->dev_elsewhere)
            maps[nmaps++] = (tdm_managed_map_args){ off, b->in_region, b->own_ok ? reached_at(b) : b->dev_elsewhere };
    }
    if (nblocks && (!spans || !maps))
        rc = TDM_T_REJECTED;
    pthread_mutex_unlock(&lock);
    for (size_t i = 0; rc == TDM_T_OK && i < n; i++) {
        rc = standby_call(t, TDM_SHM_HOST_REGISTER, (xdrproc_t)xdr_tdm_shm_span, &spans[i], &err);
        if (rc == TDM_T_OK && err != 0) {
            tdm_log("the standby refused pinned block [%llu, +%llu) of the region (cudaError %d)",
                    (unsigned long long)spans[i].offset, (unsigned long long)spans[i].size, err);
            rc = TDM_T_REJECTED;
        }
    }
    /* After the registrations (a block is mapped only once pinned there),
     * before the replay (replayed kernels name these addresses). */
    for (size_t i = 0; rc == TDM_T_OK && i < nmaps; i++) {
        rc = standby_call(t, TDM_SHM_MANAGED_MAP, (xdrproc_t)xdr_tdm_managed_map_args, &maps[i], &err);
        if (rc == TDM_T_OK && err != 0) {
            tdm_log("the standby cannot map pinned block %p (+%llu, region offset %llu) at 0x%llx, where the "
                    "program's kernels reach it: %s (cudaError %d); its log says more",
                    (void *)((uintptr_t)r->base + (uintptr_t)maps[i].offset), (unsigned long long)maps[i].size,
                    (unsigned long long)maps[i].offset, (unsigned long long)maps[i].addr, map_refusal(err), err);
            rc = TDM_T_REJECTED;
        }
    }
    free(spans);
    free(maps);
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

/* The region block the program reaches `a` in, or NULL.  `lock` held; the
 * pointer holds until the table changes. */
static host_block *region_block_locked(uintptr_t a)
{
    for (size_t i = 0; i < nblocks; i++) {
        uintptr_t b = reached_at(&blocks[i]);
        if (blocks[i].in_region && a >= b && a - b < blocks[i].in_region)
            return &blocks[i];
    }
    return NULL;
}

/* The region block at offset `off` of r, or NULL: a block found again
 * after a call made without the lock, when the table may have moved.
 * `lock` held. */
static host_block *block_at_offset_locked(const tdm_shm_region *r, uint64_t off)
{
    for (size_t i = 0; i < nblocks; i++)
        if (blocks[i].in_region && (uintptr_t)blocks[i].base - (uintptr_t)r->base == off)
            return &blocks[i];
    return NULL;
}

int tdm_host_region_block(const void *p, void **base, uint64_t *in_region, uint64_t *region_addr)
{
    int rc = -1;
    host_block *b;

    pthread_mutex_lock(&lock);
    b = region_block_locked((uintptr_t)p);
    if (b) {
        *base = (void *)reached_at(b);
        *in_region = b->in_region;
        *region_addr = (uint64_t)(uintptr_t)b->base;
        rc = 0;
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

/* fork: natively the child's copy of registered memory is its own
 * (copy-on-write private pages); here the pages are the region's, shared
 * with the parent, so the child gets private copies of them.  (The child
 * cannot use CUDA: client.c.)  The table's lock is held across fork so the
 * child finds it consistent. */
static void fork_prepare(void)
{
    pthread_mutex_lock(&lock);
}

static void fork_parent(void)
{
    pthread_mutex_unlock(&lock);
}

static void fork_child(void)
{
    for (size_t i = 0; i < nblocks; i++)
        if (blocks[i].alias && tdm_host_restore_private((void *)blocks[i].alias, blocks[i].size) == 0)
            blocks[i].alias = 0;
    pthread_mutex_unlock(&lock);
}

static pthread_once_t fork_once = PTHREAD_ONCE_INIT;

static void install_fork_handlers(void)
{
    pthread_atfork(fork_prepare, fork_parent, fork_child);
}

/* Over shm, cudaHostRegister moves the program's pages into the region
 * (docs/memory-models.md, "Registered host memory"): a block of the host
 * area takes the range's current bytes and is mapped over the range at the
 * same address (a second mapping of the same shared pages), then pinned as
 * cudaMallocHost's blocks are.  From then on copies naming the range are
 * DMA from or into those pages, asynchronous as natively. */
/* Copies whole pages of the program's: bytes of other heap objects that
 * share them move too, so this is not a copy of one object, and
 * AddressSanitizer (which would see a read past the registered block) is
 * kept out.  Volatile loads, so the compiler does not make the loop a
 * memcpy call, which the sanitizer intercepts. */
__attribute__((no_sanitize("address")))
static void copy_pages(void *dst, const void *src, size_t len)
{
    const volatile uint64_t *s = src;
    uint64_t *d = dst;

    for (size_t i = 0; i < len / sizeof(*d); i++)
        d[i] = s[i];
}

cudaError_t tdm_host_register_pages(void *lo, size_t len, unsigned flags, bool *moved)
{
    const tdm_shm_region *r = tdm_shm();
    uint64_t rounded = 0, unused;
    cudaError_t err;
    void *blk, *at;

    *moved = false;
    if (!r || !r->g.host_size)
        return cudaSuccess;
    pthread_once(&fork_once, install_fork_handlers);
    blk = region_alloc(r, len, &rounded, "cudaHostRegister falls back to staged copies (correct, slower)");
    if (!blk)
        return cudaSuccess;
    copy_pages(blk, lo, len);   /* lo and len are whole pages */
    /* mremap with old size 0 of a shared mapping makes a second mapping of
     * its pages; MREMAP_FIXED replaces the program's private pages
     * atomically, so the range is never unmapped. */
    at = mremap(blk, 0, len, MREMAP_MAYMOVE | MREMAP_FIXED, lo);
    if (at == MAP_FAILED) {
        tdm_log("cudaHostRegister cannot map the region over %p (+%zu): %s; staged copies instead", lo, len,
                strerror(errno));
        tdm_arena_free(shm_area, (uint64_t)(uintptr_t)blk, rounded);
        return cudaSuccess;
    }
    if (!add_block(blk, len, flags, rounded)) {
        err = cudaErrorMemoryAllocation;
        goto restore;
    }
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < nblocks; i++)
        if (blocks[i].base == blk)
            blocks[i].alias = (uintptr_t)lo;
    atomic_fetch_add(&naliases, 1);
    pthread_mutex_unlock(&lock);
    err = region_pin(r, (uint64_t)(uintptr_t)blk, rounded, true);
    if (err == cudaSuccess) {
        *moved = true;
        return cudaSuccess;
    }
    pthread_mutex_lock(&lock);
    find_block_locked(blk, &unused, true);
    pthread_mutex_unlock(&lock);
restore:
    tdm_host_restore_private(lo, len);
    tdm_arena_free(shm_area, (uint64_t)(uintptr_t)blk, rounded);
    return err;
}

/* The range's bytes back in private anonymous pages at the same address:
 * copied into fresh pages elsewhere, which then replace the alias in one
 * mremap.  -errno. */
int tdm_host_restore_private(void *lo, size_t len)
{
    void *fresh = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

    if (fresh == MAP_FAILED)
        return -errno;
    copy_pages(fresh, lo, len);
    if (mremap(fresh, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, lo) == MAP_FAILED) {
        int e = errno;
        munmap(fresh, len);
        return -e;
    }
    return 0;
}

cudaError_t tdm_host_unregister_pages(void *lo)
{
    const tdm_shm_region *r = tdm_shm();
    uint64_t in_region = 0;
    void *blk = NULL;
    size_t len = 0;
    cudaError_t err;
    int rc;

    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < nblocks; i++)
        if (blocks[i].alias == (uintptr_t)lo) {
            blk = blocks[i].base;
            len = blocks[i].size;
            in_region = blocks[i].in_region;
        }
    pthread_mutex_unlock(&lock);
    if (!blk || !r)
        return cudaErrorHostMemoryNotRegistered;
    /* Waits for the device, which may still copy from or into the pages
     * (and returns an earlier asynchronous error, as cudaHostUnregister). */
    err = region_pin(r, (uint64_t)(uintptr_t)blk, in_region, false);
    rc = tdm_host_restore_private(lo, len);
    if (rc)   /* the pages stay the region's: the bytes are right, the block is never reused */
        tdm_log("cudaHostUnregister cannot give %p (+%zu) private pages back: %s; it keeps shared ones", lo, len,
                strerror(-rc));
    pthread_mutex_lock(&lock);
    find_block_locked(blk, &in_region, true);
    atomic_fetch_sub(&naliases, 1);
    pthread_mutex_unlock(&lock);
    if (!rc)
        tdm_arena_free(shm_area, (uint64_t)(uintptr_t)blk, in_region);
    return err;
}

bool tdm_host_alias_offset(const tdm_shm_region *r, const void *p, size_t n, uint64_t *off)
{
    uintptr_t a = (uintptr_t)p;
    bool found = false;

    if (atomic_load(&naliases) == 0)
        return false;
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < nblocks && !found; i++) {
        uintptr_t b = blocks[i].alias;
        if (b && a >= b && n <= blocks[i].size && a - b <= blocks[i].size - n) {
            *off = (uint64_t)((uintptr_t)blocks[i].base - (uintptr_t)r->base) + (a - b);
            found = true;
        }
    }
    pthread_mutex_unlock(&lock);
    return found;
}

/* Unified addressing for pinned memory over shm: natively the host pointer
 * of pinned memory is also its device address, and programs pass it
 * straight to kernels (a flag a kernel spins on while the host sets it).
 * Here the server maps the region elsewhere, so the first time a pointer
 * into a pinned block appears among a kernel's arguments the server maps
 * the block again at the guest's own address for itself and the device
 * (SHM_MANAGED_MAP, server/session_managed.c): the same pages, truly
 * shared.  No standby can learn of that mapping from the active (it is a
 * mapping of the guest's region, not of device memory), so the guest
 * remembers each block mapped (own_ok) and maps it again on the standby
 * after a takeover (tdm_host_reregister, MIRROR_REREGISTER); it is still
 * made only for blocks a kernel is given, since each is one more address
 * the standby must be able to place.  A pointer hidden deeper (in device
 * memory, in a struct behind a pointer) is not seen. */
/* The SHM_MANAGED_MAP of the region block holding word (at the program's
 * address), asked once per block; true when the device reaches the block
 * at that address. */
static bool map_own(const tdm_shm_region *r, uint64_t word)
{
    tdm_managed_map_args a = { 0 };
    bool want = false, ok = false;
    host_block *b;

    pthread_mutex_lock(&lock);
    b = region_block_locked((uintptr_t)word);
    if (b) {
        want = !b->at_own_address;
        ok = b->own_ok;
        b->at_own_address = true;   /* asked once, whatever the answer */
        a = (tdm_managed_map_args){ (uintptr_t)b->base - (uintptr_t)r->base, b->in_region, reached_at(b) };
    }
    pthread_mutex_unlock(&lock);
    if (!want)
        return ok;
    cudaError_t err = tdm_call_err(TDM_SHM_MANAGED_MAP, &a);
    if (err) {
        tdm_log("pinned block %p cannot be mapped for the device at its own address (cudaError %d); "
                "a kernel given it faults", (void *)(uintptr_t)a.addr, (int)err);
        return false;
    }
    pthread_mutex_lock(&lock);
    if ((b = block_at_offset_locked(r, a.offset)) != NULL)
        b->own_ok = true;
    pthread_mutex_unlock(&lock);
    return true;
}

cudaError_t tdm_host_map_elsewhere(const void *p, void **dev)
{
    const tdm_shm_region *r = tdm_shm();
    tdm_shm_span span = { 0 };
    tdm_malloc_res res;
    uintptr_t at = 0;
    uint64_t known = 0;
    host_block *b;
    cudaError_t err;

    if (!r)
        return cudaErrorInvalidValue;
    pthread_mutex_lock(&lock);
    b = region_block_locked((uintptr_t)p);
    if (b) {
        span = (tdm_shm_span){ (uintptr_t)b->base - (uintptr_t)r->base, b->in_region };
        at = reached_at(b);
        known = b->dev_elsewhere;
    }
    pthread_mutex_unlock(&lock);
    if (!at)
        return cudaErrorInvalidValue;
    /* Answered from the table once known: after a takeover the standby
     * reaches the block at the same device address (tdm_host_reregister),
     * while its own SHM_HOST_MAP would answer another. */
    if (!known) {
        memset(&res, 0, sizeof(res));
        err = tdm_call(TDM_SHM_HOST_MAP, &span, &res);
        if (!err)
            err = (cudaError_t)res.err;
        if (err)
            return err;
        known = res.addr;
        pthread_mutex_lock(&lock);
        if ((b = block_at_offset_locked(r, span.offset)) != NULL)
            b->dev_elsewhere = known;
        pthread_mutex_unlock(&lock);
    }
    *dev = (void *)(uintptr_t)(known + ((uintptr_t)p - at));
    return cudaSuccess;
}

bool tdm_host_map_own(const void *p)
{
    const tdm_shm_region *r = tdm_shm();

    return r && r->g.host_size && map_own(r, (uint64_t)(uintptr_t)p);
}

void tdm_host_map_kernel_args(const char *params, uint32_t len)
{
    const tdm_shm_region *r;
    uintptr_t lo, hi;

    if (len < 8)
        return;
    if (!(r = tdm_shm())) {
        /* TCP: a small pinned block lies at its own device memory, made
         * coherent the first time a kernel is given it. */
        for (uint32_t off = 0; atomic_load(&nshadows) && off + 8 <= len; off += 8) {
            uint64_t word;

            memcpy(&word, params + off, 8);
            tdm_host_by_pointer((const void *)(uintptr_t)word);
        }
        return;
    }
    if (!r->g.host_size)
        return;
    lo = (uintptr_t)r->base + r->g.host_off;
    hi = lo + r->g.host_size;
    for (uint32_t off = 0; off + 8 <= len; off += 8) {
        uint64_t word;

        memcpy(&word, params + off, 8);
        if ((word < lo || word >= hi) && atomic_load(&naliases) == 0)
            continue;
        map_own(r, word);
    }
}
