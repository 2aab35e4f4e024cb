#include "arena.h"

#include "grow.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* Free space as a sorted array of disjoint, non-adjacent extents.  First fit
 * keeps low addresses dense, which keeps a session's footprint compact when it
 * is later copied to another server. */
typedef struct extent { uint64_t addr, size; } extent;

struct tdm_arena {
    pthread_mutex_t lock;
    uint64_t base, size, gran, free_bytes;
    extent *free;
    size_t nfree, cap;
};

int tdm_arena_create(tdm_arena **out, uint64_t base, uint64_t size, uint64_t granularity)
{
    tdm_arena *a;

    if (granularity == 0 || (granularity & (granularity - 1)) || base % granularity ||
        size % granularity || size == 0 || base + size < base)
        return -1;
    a = calloc(1, sizeof(*a));
    if (!a)
        return -1;
    a->free = malloc(16 * sizeof(extent));
    if (!a->free) {
        free(a);
        return -1;
    }
    pthread_mutex_init(&a->lock, NULL);
    a->base = base;
    a->size = size;
    a->gran = granularity;
    a->cap = 16;
    a->nfree = 1;
    a->free[0] = (extent){ base, size };
    a->free_bytes = size;
    *out = a;
    return 0;
}

void tdm_arena_destroy(tdm_arena *a)
{
    if (!a)
        return;
    pthread_mutex_destroy(&a->lock);
    free(a->free);
    free(a);
}

uint64_t tdm_arena_granularity(const tdm_arena *a)
{
    return a->gran;
}

int tdm_arena_alloc(tdm_arena *a, uint64_t size, uint64_t *addr, uint64_t *rounded)
{
    uint64_t need;
    int rc = -1;

    if (size == 0 || size > a->size)
        return -1;
    need = (size + a->gran - 1) & ~(a->gran - 1);
    pthread_mutex_lock(&a->lock);
    for (size_t i = 0; i < a->nfree; i++) {
        extent *e = &a->free[i];
        if (e->size < need)
            continue;
        *addr = e->addr;
        e->addr += need;
        e->size -= need;
        if (e->size == 0) {
            memmove(e, e + 1, (a->nfree - i - 1) * sizeof(extent));
            a->nfree--;
        }
        a->free_bytes -= need;
        *rounded = need;
        rc = 0;
        break;
    }
    pthread_mutex_unlock(&a->lock);
    return rc;
}

int tdm_arena_claim(tdm_arena *a, uint64_t addr, uint64_t size)
{
    int rc = -1;

    if (size == 0 || addr % a->gran || size % a->gran || addr < a->base || addr - a->base > a->size ||
        size > a->size - (addr - a->base))
        return -1;
    pthread_mutex_lock(&a->lock);
    for (size_t i = 0; i < a->nfree; i++) {
        extent *e = &a->free[i];
        if (addr < e->addr || addr + size > e->addr + e->size)
            continue;
        uint64_t head = addr - e->addr, tail = e->addr + e->size - (addr + size);
        if (head && tail) {
            if (tdm_grow(&a->free, &a->cap, a->nfree + 1, sizeof(extent), 16) != 0)
                break;
            e = &a->free[i];
            memmove(e + 2, e + 1, (a->nfree - i - 1) * sizeof(extent));
            e[1] = (extent){ addr + size, tail };
            e->size = head;
            a->nfree++;
        } else if (head) {
            e->size = head;
        } else if (tail) {
            e->addr = addr + size;
            e->size = tail;
        } else {
            memmove(e, e + 1, (a->nfree - i - 1) * sizeof(extent));
            a->nfree--;
        }
        a->free_bytes -= size;
        rc = 0;
        break;
    }
    pthread_mutex_unlock(&a->lock);
    return rc;
}

int tdm_arena_free(tdm_arena *a, uint64_t addr, uint64_t size)
{
    size_t lo = 0, hi;
    int rc = -1;

    if (size == 0 || addr < a->base || addr - a->base > a->size - size || addr % a->gran ||
        size % a->gran)
        return -1;
    pthread_mutex_lock(&a->lock);
    hi = a->nfree;
    while (lo < hi) {                         /* first extent above addr */
        size_t mid = (lo + hi) / 2;
        if (a->free[mid].addr <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    /* The freed range must not overlap its free neighbours. */
    if (lo > 0 && a->free[lo - 1].addr + a->free[lo - 1].size > addr)
        goto out;
    if (lo < a->nfree && addr + size > a->free[lo].addr)
        goto out;

    int merge_prev = lo > 0 && a->free[lo - 1].addr + a->free[lo - 1].size == addr;
    int merge_next = lo < a->nfree && addr + size == a->free[lo].addr;
    if (merge_prev && merge_next) {
        a->free[lo - 1].size += size + a->free[lo].size;
        memmove(&a->free[lo], &a->free[lo + 1], (a->nfree - lo - 1) * sizeof(extent));
        a->nfree--;
    } else if (merge_prev) {
        a->free[lo - 1].size += size;
    } else if (merge_next) {
        a->free[lo].addr = addr;
        a->free[lo].size += size;
    } else {
        if (tdm_grow(&a->free, &a->cap, a->nfree + 1, sizeof(extent), 16) != 0)
            goto out;
        memmove(&a->free[lo + 1], &a->free[lo], (a->nfree - lo) * sizeof(extent));
        a->free[lo] = (extent){ addr, size };
        a->nfree++;
    }
    a->free_bytes += size;
    rc = 0;
out:
    pthread_mutex_unlock(&a->lock);
    return rc;
}

uint64_t tdm_arena_free_bytes(tdm_arena *a)
{
    uint64_t v;

    pthread_mutex_lock(&a->lock);
    v = a->free_bytes;
    pthread_mutex_unlock(&a->lock);
    return v;
}
