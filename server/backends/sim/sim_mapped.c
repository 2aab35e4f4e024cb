/* The table of mapped device memory: arena mappings and module globals.
 * Every device access of a copy or a simulated kernel is checked against it. */
#include <stdlib.h>
#include <string.h>

#include "sim_internal.h"
#include "grow.h"

int sim_mapped_init(sim_mapped *m)
{
    pthread_rwlockattr_t attr;
    int rc;

    memset(m, 0, sizeof(*m));
    if (pthread_rwlockattr_init(&attr) != 0)
        return cudaErrorInitializationError;
    /* Stream workers read almost continuously; a map or unmap must not
     * starve behind them.  Readers never lock recursively, so writer
     * preference cannot deadlock. */
    pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    rc = pthread_rwlock_init(&m->lock, &attr);
    pthread_rwlockattr_destroy(&attr);
    return rc == 0 ? 0 : cudaErrorInitializationError;
}

void sim_mapped_release(sim_mapped *m)
{
    pthread_rwlock_destroy(&m->lock);
    free(m->v);
    m->v = NULL;
    m->n = m->cap = 0;
}

/* Index of the first range that ends after addr. */
static size_t lower_bound(const sim_mapped *m, uint64_t addr)
{
    size_t lo = 0, hi = m->n;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->v[mid].addr + m->v[mid].size <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

const sim_range *sim_mapped_find_locked(const sim_mapped *m, uint64_t addr)
{
    size_t i = lower_bound(m, addr);

    return i < m->n && m->v[i].addr <= addr ? &m->v[i] : NULL;
}

bool sim_mapped_covers_locked(const sim_mapped *m, uint64_t addr, uint64_t n)
{
    const sim_range *r = sim_mapped_find_locked(m, addr);

    return r && n <= r->size - (addr - r->addr);
}

int sim_mapped_insert(sim_mapped *m, uint64_t addr, uint64_t size, bool arena)
{
    int err = 0;
    size_t i;

    if (size == 0 || addr + size < addr)
        return cudaErrorInvalidValue;
    pthread_rwlock_wrlock(&m->lock);
    i = lower_bound(m, addr);
    if (i < m->n && m->v[i].addr < addr + size) {
        err = cudaErrorInvalidValue;
        goto out;
    }
    if (arena && size > SIM_TOTAL_MEM - m->arena_bytes) {
        err = cudaErrorMemoryAllocation;    /* the simulated device is full */
        goto out;
    }
    if (tdm_grow(&m->v, &m->cap, m->n + 1, sizeof(*m->v), 16) != 0) {
        err = cudaErrorMemoryAllocation;
        goto out;
    }
    memmove(&m->v[i + 1], &m->v[i], (m->n - i) * sizeof(*m->v));
    m->v[i] = (sim_range){ .addr = addr, .size = size, .arena = arena };
    m->n++;
    if (arena)
        m->arena_bytes += size;
out:
    pthread_rwlock_unlock(&m->lock);
    return err;
}

int sim_mapped_remove(sim_mapped *m, uint64_t addr, uint64_t size)
{
    int err = 0;
    size_t i;

    pthread_rwlock_wrlock(&m->lock);
    i = lower_bound(m, addr);
    if (i >= m->n || m->v[i].addr != addr || m->v[i].size != size) {
        err = cudaErrorInvalidValue;
        goto out;
    }
    if (m->v[i].arena)
        m->arena_bytes -= size;
    memmove(&m->v[i], &m->v[i + 1], (m->n - i - 1) * sizeof(*m->v));
    m->n--;
out:
    pthread_rwlock_unlock(&m->lock);
    return err;
}

void sim_mapped_read_lock(sim_mapped *m)
{
    pthread_rwlock_rdlock(&m->lock);
}

void sim_mapped_read_unlock(sim_mapped *m)
{
    pthread_rwlock_unlock(&m->lock);
}
