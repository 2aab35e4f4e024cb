/* The table of mapped device memory: arena mappings, module globals and
 * host memory mapped for the device.  Every device access of a copy or a
 * simulated kernel is checked against it, and a kernel's also against the
 * spaces that may touch each range (issue 16). */
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
    /* Lookups are constant; a map or unmap must not starve behind them.
     * Readers never lock recursively, so writer preference cannot
     * deadlock. */
    pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    rc = pthread_rwlock_init(&m->lock, &attr);
    pthread_rwlockattr_destroy(&attr);
    if (rc != 0)
        return cudaErrorInitializationError;
    pthread_mutex_init(&m->pin_lock, NULL);
    pthread_cond_init(&m->unpinned, NULL);
    return 0;
}

static void range_free(sim_range *r)
{
    free(r->spaces);
    free(r);
}

void sim_mapped_release(sim_mapped *m)
{
    for (size_t i = 0; i < m->n; i++)
        range_free(m->v[i]);
    pthread_rwlock_destroy(&m->lock);
    pthread_mutex_destroy(&m->pin_lock);
    pthread_cond_destroy(&m->unpinned);
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
        if (m->v[mid]->addr + m->v[mid]->size <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static sim_range *find_locked(const sim_mapped *m, uint64_t addr)
{
    size_t i = lower_bound(m, addr);

    return i < m->n && m->v[i]->addr <= addr ? m->v[i] : NULL;
}

static bool may_touch(const sim_range *r, const tdm_bspace *space)
{
    if (!space)
        return true;
    for (size_t i = 0; i < r->nspaces; i++)
        if (r->spaces[i] == space)
            return true;
    return false;
}

int sim_mapped_insert(sim_mapped *m, uint64_t addr, uint64_t size, bool arena)
{
    sim_range *r;
    int err = 0;
    size_t i;

    if (size == 0 || addr + size < addr)
        return cudaErrorInvalidValue;
    r = calloc(1, sizeof(*r));
    if (!r)
        return cudaErrorMemoryAllocation;
    *r = (sim_range){ .addr = addr, .size = size, .arena = arena };
    pthread_rwlock_wrlock(&m->lock);
    i = lower_bound(m, addr);
    if (i < m->n && m->v[i]->addr < addr + size) {
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
    m->v[i] = r;
    r = NULL;
    m->n++;
    if (arena)
        m->arena_bytes += size;
out:
    pthread_rwlock_unlock(&m->lock);
    free(r);
    return err;
}

int sim_mapped_remove(sim_mapped *m, uint64_t addr, uint64_t size)
{
    sim_range *r;
    size_t i;

    pthread_rwlock_wrlock(&m->lock);
    i = lower_bound(m, addr);
    if (i >= m->n || m->v[i]->addr != addr || m->v[i]->size != size) {
        pthread_rwlock_unlock(&m->lock);
        return cudaErrorInvalidValue;
    }
    r = m->v[i];
    if (r->arena)
        m->arena_bytes -= size;
    memmove(&m->v[i], &m->v[i + 1], (m->n - i - 1) * sizeof(*m->v));
    m->n--;
    pthread_rwlock_unlock(&m->lock);
    /* Out of the table, nothing pins it anew: wait for those using it (the
     * unmap behind this must not pull memory from under a running copy). */
    pthread_mutex_lock(&m->pin_lock);
    r->removed = true;
    while (atomic_load(&r->pins) > 0)
        pthread_cond_wait(&m->unpinned, &m->pin_lock);
    pthread_mutex_unlock(&m->pin_lock);
    range_free(r);
    return 0;
}

sim_range *sim_mapped_pin(sim_mapped *m, uint64_t addr, uint64_t n, const tdm_bspace *space, bool *denied)
{
    sim_range *r;

    *denied = false;
    pthread_rwlock_rdlock(&m->lock);
    r = find_locked(m, addr);
    if (r && !sim_span_holds(r->addr, r->size, addr, n))
        r = NULL;
    else if (r && !may_touch(r, space)) {
        *denied = true;
        r = NULL;
    }
    if (r)
        atomic_fetch_add(&r->pins, 1);
    pthread_rwlock_unlock(&m->lock);
    return r;
}

void sim_mapped_unpin(sim_mapped *m, sim_range *r)
{
    if (atomic_fetch_sub(&r->pins, 1) != 1)
        return;
    /* The last one: a remover may wait for it.  Taking the mutex orders this
     * against its check of pins. */
    pthread_mutex_lock(&m->pin_lock);
    if (r->removed)
        pthread_cond_broadcast(&m->unpinned);
    pthread_mutex_unlock(&m->pin_lock);
}

int sim_mapped_grant(sim_mapped *m, uint64_t addr, tdm_bspace *space)
{
    sim_range *r;
    int err = 0;

    pthread_rwlock_wrlock(&m->lock);
    r = find_locked(m, addr);
    if (!r)
        err = cudaErrorInvalidValue;
    else if (!may_touch(r, space)) {
        if (tdm_grow(&r->spaces, &r->cap_spaces, r->nspaces + 1, sizeof(*r->spaces), 2) != 0)
            err = cudaErrorMemoryAllocation;
        else
            r->spaces[r->nspaces++] = space;
    }
    pthread_rwlock_unlock(&m->lock);
    return err;
}

static void drop_space_locked(sim_range *r, const tdm_bspace *space)
{
    for (size_t i = 0; i < r->nspaces; i++)
        if (r->spaces[i] == space) {
            r->spaces[i] = r->spaces[--r->nspaces];
            return;
        }
}

void sim_mapped_revoke(sim_mapped *m, uint64_t addr, const tdm_bspace *space)
{
    sim_range *r;

    pthread_rwlock_wrlock(&m->lock);
    r = find_locked(m, addr);
    if (r)
        drop_space_locked(r, space);
    pthread_rwlock_unlock(&m->lock);
}

void sim_mapped_forget_space(sim_mapped *m, const tdm_bspace *space)
{
    pthread_rwlock_wrlock(&m->lock);
    for (size_t i = 0; i < m->n; i++)
        drop_space_locked(m->v[i], space);
    pthread_rwlock_unlock(&m->lock);
}

uint64_t sim_mapped_arena_bytes(sim_mapped *m)
{
    uint64_t used;

    pthread_rwlock_rdlock(&m->lock);
    used = m->arena_bytes;
    pthread_rwlock_unlock(&m->lock);
    return used;
}

uint64_t sim_mapped_find_gap(sim_mapped *m, uint64_t lo, uint64_t hi, uint64_t size, uint64_t align)
{
    uint64_t at = (lo + align - 1) / align * align, found = 0;

    pthread_rwlock_rdlock(&m->lock);
    for (size_t i = lower_bound(m, lo); i <= m->n; i++) {
        uint64_t end = i < m->n && m->v[i]->addr < hi ? m->v[i]->addr : hi;
        if (at < end && size <= end - at) {
            found = at;
            break;
        }
        if (i == m->n || m->v[i]->addr >= hi)
            break;
        at = (m->v[i]->addr + m->v[i]->size + align - 1) / align * align;
    }
    pthread_rwlock_unlock(&m->lock);
    return found;
}
