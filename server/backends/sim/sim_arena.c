/* The logical arena and physical memory: an mmap reservation at the fixed
 * arena address, and one memfd per allocation mapped into it (the analogue
 * of a CUDA VMM allocation exported as a shareable POSIX fd). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sim_internal.h"

uint64_t sim_granularity(tdm_backend *b)
{
    return SIM_GRANULARITY;
}

uint64_t sim_globals_window(const tdm_backend *b)
{
    return b->cfg.arena_base + b->cfg.arena_size;
}

/* A PROT_NONE reservation at exactly `at`; NULL after logging why. */
static void *reserve_at(uint64_t at, uint64_t size, const char *what)
{
    void *p = mmap((void *)(uintptr_t)at, size, PROT_NONE,
                   MAP_FIXED_NOREPLACE | MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

    if (p == MAP_FAILED) {
        sim_log("cannot reserve the %s at %#llx (%llu bytes): %s", what, (unsigned long long)at,
                (unsigned long long)size, strerror(errno));
        return NULL;
    }
    /* Kernels before 4.17 take MAP_FIXED_NOREPLACE as a mere hint. */
    if ((uint64_t)(uintptr_t)p != at) {
        munmap(p, size);
        sim_log("the kernel placed the %s at %p instead of %#llx", what, p, (unsigned long long)at);
        return NULL;
    }
    return p;
}

int sim_arena_reserve(tdm_backend *b)
{
    uint64_t base = b->cfg.arena_base, size = b->cfg.arena_size;

    if (b->arena)
        return cudaErrorMemoryAllocation;
    if (!base || !size || base % SIM_GRANULARITY || size % SIM_GRANULARITY || base + size < base ||
        base + size + SIM_GLOBALS_WINDOW < base) {
        sim_log("arena [%#llx, +%#llx) is not %llu-byte aligned", (unsigned long long)base,
                (unsigned long long)size, (unsigned long long)SIM_GRANULARITY);
        return cudaErrorMemoryAllocation;
    }
    b->arena = reserve_at(base, size, "arena");
    if (!b->arena)
        return cudaErrorMemoryAllocation;
    b->globals_window = reserve_at(sim_globals_window(b), SIM_GLOBALS_WINDOW, "module globals window");
    if (!b->globals_window) {
        sim_arena_release(b);
        return cudaErrorMemoryAllocation;
    }
    return 0;
}

void sim_arena_release(tdm_backend *b)
{
    if (b->arena)
        munmap(b->arena, b->cfg.arena_size);
    if (b->globals_window)
        munmap(b->globals_window, SIM_GLOBALS_WINDOW);
    b->arena = b->globals_window = NULL;
}

static bool in_arena(tdm_backend *b, uint64_t addr, uint64_t size)
{
    return b->arena && size && sim_span_holds(b->cfg.arena_base, b->cfg.arena_size, addr, size) &&
           addr % SIM_GRANULARITY == 0 && size % SIM_GRANULARITY == 0;
}

/* Maps `fd` (which `mem` takes over) at addr and records the mapping. */
static int attach(tdm_backend *b, tdm_bmem *mem, int fd, uint64_t addr, uint64_t size)
{
    /* Claim the range in the table first: MAP_FIXED over memory another
     * allocation still uses would silently replace it. */
    int err = sim_mapped_insert(&b->mapped, addr, size, true);

    if (err)
        return err;
    if (mmap((void *)(uintptr_t)addr, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) == MAP_FAILED) {
        sim_log("cannot map simulated device memory at %#llx: %s", (unsigned long long)addr, strerror(errno));
        sim_mapped_remove(&b->mapped, addr, size);
        return cudaErrorMemoryAllocation;
    }
    mem->fd = fd;
    mem->addr = addr;
    mem->size = size;
    pthread_mutex_lock(&b->lock);
    mem->next = b->mems;
    if (b->mems)
        b->mems->prev = mem;
    b->mems = mem;
    pthread_mutex_unlock(&b->lock);
    return 0;
}

int sim_mem_map(tdm_backend *b, uint64_t addr, uint64_t size, tdm_bmem **out)
{
    tdm_bmem *mem = NULL;
    int fd = -1, err;

    *out = NULL;
    if (!in_arena(b, addr, size))
        return cudaErrorInvalidValue;
    if (sim_thread_capture_mode() != cudaStreamCaptureModeRelaxed) {
        pthread_mutex_lock(&b->lock);
        bool refused = sim_capture_forbids_unsafe_locked(b);
        pthread_mutex_unlock(&b->lock);
        if (refused) {
            sim_log("memory made while a capture forbids this thread unsafe calls: refused (in relaxed mode it may)");
            return cudaErrorStreamCaptureUnsupported;
        }
    }
    mem = calloc(1, sizeof(*mem));
    if (!mem)
        return cudaErrorMemoryAllocation;
    fd = memfd_create("tandem-sim-mem", MFD_CLOEXEC);
    if (fd < 0 || ftruncate(fd, (off_t)size) != 0) {
        sim_log("cannot create %llu bytes of simulated device memory: %s", (unsigned long long)size,
                strerror(errno));
        err = cudaErrorMemoryAllocation;
        goto fail;
    }
    err = attach(b, mem, fd, addr, size);
    if (err)
        goto fail;
    *out = mem;
    return 0;
fail:
    if (fd >= 0)
        close(fd);
    free(mem);
    return err;
}

int sim_mem_export(tdm_backend *b, tdm_bmem *mem, int *fd_out)
{
    *fd_out = fcntl(mem->fd, F_DUPFD_CLOEXEC, 0);
    if (*fd_out >= 0)
        return 0;
    sim_log("cannot export simulated device memory at %#llx: %s", (unsigned long long)mem->addr,
            strerror(errno));
    return cudaErrorMemoryAllocation;
}

int sim_mem_import(tdm_backend *b, uint64_t addr, uint64_t size, int fd, tdm_bmem **out)
{
    struct stat st;
    tdm_bmem *mem = NULL;
    int own = -1, err;

    *out = NULL;
    if (!in_arena(b, addr, size))
        return cudaErrorInvalidValue;
    /* The fd comes from another process: it must really be memory of at
     * least this size, or touching the mapping would SIGBUS the server. */
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size < size) {
        sim_log("imported memory for [%#llx, +%llu) is not a memory file of that size",
                (unsigned long long)addr, (unsigned long long)size);
        return cudaErrorInvalidValue;
    }
    mem = calloc(1, sizeof(*mem));
    own = fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (!mem || own < 0) {
        err = cudaErrorMemoryAllocation;
        goto fail;
    }
    err = attach(b, mem, own, addr, size);
    if (err)
        goto fail;
    *out = mem;
    return 0;
fail:
    if (own >= 0)
        close(own);
    free(mem);
    return err;
}

int sim_mem_unmap(tdm_backend *b, uint64_t addr, uint64_t size, tdm_bmem *mem)
{
    int err;

    if (!mem || mem->addr != addr || mem->size != size)
        return cudaErrorInvalidValue;
    /* Exclusive: no copy or kernel is inside the range once this returns. */
    err = sim_mapped_remove(&b->mapped, addr, size);
    if (err)
        return err;
    /* Back to reserved-but-inaccessible, so a stale pointer faults in the
     * server too instead of reading freed memory. */
    if (mmap((void *)(uintptr_t)addr, size, PROT_NONE,
             MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0) == MAP_FAILED) {
        sim_log("cannot return [%#llx, +%llu) to the reservation: %s", (unsigned long long)addr,
                (unsigned long long)size, strerror(errno));
        err = cudaErrorUnknown;
    }
    pthread_mutex_lock(&b->lock);
    if (mem->prev)
        mem->prev->next = mem->next;
    else
        b->mems = mem->next;
    if (mem->next)
        mem->next->prev = mem->prev;
    pthread_mutex_unlock(&b->lock);
    close(mem->fd);
    free(mem);
    return err;
}

void sim_mems_free_all(tdm_backend *b)
{
    while (b->mems) {
        tdm_bmem *mem = b->mems;
        b->mems = mem->next;
        sim_mapped_remove(&b->mapped, mem->addr, mem->size);
        close(mem->fd);
        free(mem);
    }
}

int sim_mem_get_info(tdm_backend *b, uint64_t *free_bytes, uint64_t *total_bytes)
{
    uint64_t used;

    used = sim_mapped_arena_bytes(&b->mapped);
    *total_bytes = SIM_TOTAL_MEM;
    *free_bytes = used < SIM_TOTAL_MEM ? SIM_TOTAL_MEM - used : 0;
    return 0;
}
