/* Managed memory over shm (docs/memory-models.md, "Managed memory").  A
 * managed allocation is a pinned block of the guest's shm region; so that
 * the one pointer the program holds is also the address kernels use, the
 * server maps the block's pages a second time at the guest's own address
 * (the region's first mapping here lies elsewhere) and maps that alias for
 * the device.  With unified addressing the device address of registered
 * memory is its host address, so kernels and the program name the very
 * same pages by the very same pointer: coherent as zero-copy memory is.
 * Where the guest's address is taken in this process (another session's
 * alias, a library of ours) or the device answers another address, the
 * allocation is refused and the guest returns cudaErrorMemoryAllocation. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <driver_types.h>

#include "grow.h"
#include "log.h"
#include "session.h"
#include "shm_guest.h"

#define PAGE 4096u
#define USER_VA_END (1ull << 47)     /* x86-64 and aarch64 user space (4-level tables) */

typedef struct managed_alias {
    uint64_t off, size, addr;
    void *handle;                    /* the backend's registration of the alias */
} managed_alias;

typedef struct tdm_session_managed {
    managed_alias *a;
    size_t n, cap;
} tdm_session_managed;

static bool block_registered(const tdm_shm_guest *g, uint64_t off, uint64_t size)
{
    for (size_t i = 0; i < g->nregs; i++)
        if (g->regs[i].off == off && g->regs[i].size == size)
            return true;
    return false;
}

static bool overlaps(uint64_t a, uint64_t n, uint64_t b, uint64_t m)
{
    return a < b + m && b < a + n;
}

/* Ends the alias: device mapping, registration, pages (in that order,
 * backend.h). */
static void alias_end(tdm_session *s, managed_alias *m)
{
    void *p = (void *)(uintptr_t)m->addr;

    s->srv->ops->host_unmap(s->srv->be, p, m->size);
    if (m->handle)
        s->srv->ops->host_unregister(s->srv->be, m->handle);
    munmap(p, m->size);
}

/* The same pages as the region's [off, off+size), at `addr` in this
 * process; -errno.  The address is first reserved with MAP_FIXED_NOREPLACE
 * so nothing of ours is ever replaced, then the alias is moved over the
 * reservation (mremap of a shared mapping with old size 0 makes a second
 * mapping of the same pages). */
static int alias_map(tdm_session *s, uint64_t off, uint64_t size, uint64_t addr)
{
    void *want = (void *)(uintptr_t)addr;
    void *res = mmap(want, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    void *src = tdm_shm_at(&s->shm->conn.region, off);

    if (res == MAP_FAILED)
        return -errno;
    if (res != want) {               /* a kernel without MAP_FIXED_NOREPLACE */
        munmap(res, size);
        return -EEXIST;
    }
    res = mremap(src, 0, size, MREMAP_MAYMOVE | MREMAP_FIXED, want);
    if (res == MAP_FAILED) {
        int e = errno;
        munmap(want, size);
        return -e;
    }
    return 0;
}

int tdm_session_shm_managed_map(tdm_session *s, uint64_t off, uint64_t size, uint64_t addr)
{
    tdm_session_managed *mm = s->managed;
    const tdm_server_config *cfg = &s->srv->cfg;
    managed_alias m = { .off = off, .size = size, .addr = addr };
    uint64_t dev = 0;
    int err, rc;

    /* Only a pinned block of the region, at a page-aligned user address
     * clear of the device arena's (logical) addresses. */
    if (!s->shm || !block_registered(s->shm, off, size) || addr == 0 || addr % PAGE ||
        addr >= USER_VA_END || size > USER_VA_END - addr ||
        overlaps(addr, size, cfg->arena_base, cfg->arena_size)) {
        tdm_log_session(s->id, "refusing managed block [%llu, +%llu) at 0x%llx: not a pinned block of "
                        "the region at a usable address", (unsigned long long)off,
                        (unsigned long long)size, (unsigned long long)addr);
        return cudaErrorInvalidValue;
    }
    if (!mm) {
        mm = calloc(1, sizeof(*mm));
        if (!mm)
            return cudaErrorMemoryAllocation;
        s->managed = mm;
    }
    for (size_t i = 0; i < mm->n; i++)
        if (mm->a[i].off == off)
            return mm->a[i].addr == addr && mm->a[i].size == size ? 0 : cudaErrorInvalidValue;
    if (tdm_grow(&mm->a, &mm->cap, mm->n + 1, sizeof(*mm->a), 16) != 0)
        return cudaErrorMemoryAllocation;
    rc = alias_map(s, off, size, addr);
    if (rc) {
        tdm_log_session(s->id, "cannot place managed block at 0x%llx here: %s; cudaMallocManaged fails",
                        (unsigned long long)addr, strerror(-rc));
        return cudaErrorMemoryAllocation;
    }
    err = s->srv->ops->host_register ? s->srv->ops->host_register(s->srv->be, (void *)(uintptr_t)addr, size,
                                                                  &m.handle)
                                     : 0;
    if (!err)
        err = s->srv->ops->host_map(s->srv->be, (void *)(uintptr_t)addr, size, &dev);
    if (!err)
        err = tdm_session_grant(s, dev);
    if (!err && dev != addr) {
        tdm_log_session(s->id, "the device maps managed block 0x%llx at 0x%llx, not at its host address; "
                        "cudaMallocManaged fails", (unsigned long long)addr, (unsigned long long)dev);
        err = cudaErrorMemoryAllocation;
    }
    if (err) {
        alias_end(s, &m);
        return err == cudaErrorHostMemoryAlreadyRegistered ? cudaErrorMemoryAllocation : err;
    }
    mm->a[mm->n++] = m;
    return 0;
}

void tdm_session_shm_managed_unmapping(tdm_session *s, uint64_t off, uint64_t size)
{
    tdm_session_managed *mm = s->managed;

    for (size_t i = 0; mm && i < mm->n; i++)
        if (mm->a[i].off == off && mm->a[i].size == size) {
            alias_end(s, &mm->a[i]);
            mm->a[i] = mm->a[--mm->n];
            return;
        }
}

void tdm_session_managed_release(tdm_session *s)
{
    tdm_session_managed *mm = s->managed;

    if (!mm)
        return;
    for (size_t i = 0; i < mm->n; i++)
        alias_end(s, &mm->a[i]);
    free(mm->a);
    free(mm);
    s->managed = NULL;
}
