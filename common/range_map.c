#include "range_map.h"
#include "grow.h"

#include <stdlib.h>
#include <string.h>

void tdm_range_map_init(tdm_range_map *m)
{
    memset(m, 0, sizeof(*m));
}

void tdm_range_map_release(tdm_range_map *m)
{
    free(m->v);
    memset(m, 0, sizeof(*m));
}

/* Index of the first range starting above addr. */
static size_t upper_bound(const tdm_range_map *m, uint64_t addr)
{
    size_t lo = 0, hi = m->n;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->v[mid].addr <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int tdm_range_map_insert(tdm_range_map *m, const tdm_range *r)
{
    uint64_t extent = r->mapped > r->size ? r->mapped : r->size;
    size_t i;

    if (extent == 0 || r->addr + extent < r->addr)
        return -1;
    i = upper_bound(m, r->addr);
    if (i > 0) {
        const tdm_range *p = &m->v[i - 1];
        uint64_t pe = p->mapped > p->size ? p->mapped : p->size;
        if (p->addr + pe > r->addr)
            return -1;
    }
    if (i < m->n && r->addr + extent > m->v[i].addr)
        return -1;
    if (tdm_grow(&m->v, &m->cap, m->n + 1, sizeof(*m->v), 16) != 0)
        return -1;
    memmove(&m->v[i + 1], &m->v[i], (m->n - i) * sizeof(*m->v));
    m->v[i] = *r;
    m->n++;
    return 0;
}

int tdm_range_map_remove(tdm_range_map *m, uint64_t addr, tdm_range *out)
{
    size_t i = upper_bound(m, addr);

    if (i == 0 || m->v[i - 1].addr != addr)
        return -1;
    i--;
    if (out)
        *out = m->v[i];
    memmove(&m->v[i], &m->v[i + 1], (m->n - i - 1) * sizeof(*m->v));
    m->n--;
    return 0;
}

const tdm_range *tdm_range_map_find(const tdm_range_map *m, uint64_t addr)
{
    size_t i = upper_bound(m, addr);

    if (i == 0)
        return NULL;
    const tdm_range *r = &m->v[i - 1];
    return addr - r->addr < r->size ? r : NULL;
}

bool tdm_range_map_covers(const tdm_range_map *m, uint64_t addr, uint64_t len)
{
    const tdm_range *r = tdm_range_map_find(m, addr);

    if (!r)
        return false;
    return len <= r->size - (addr - r->addr);
}
