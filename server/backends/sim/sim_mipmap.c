/* Mipmapped arrays of the simulated GPU (docs/memory-layouts.md
 * "Mipmapped arrays"): one sim array per level, made up front, so a level
 * is copied to and from exactly as any array is. */
#include "sim_internal.h"

#include <stdlib.h>

struct tdm_bmipmap {
    unsigned levels;
    tdm_barray **level;
};

int sim_mipmap_destroy(tdm_backend *b, tdm_bmipmap *m)
{
    for (unsigned i = 0; i < m->levels; i++)
        if (m->level[i])
            sim_array_destroy(b, m->level[i]);
    free(m->level);
    free(m);
    return 0;
}

int sim_mipmap_create(tdm_backend *b, const tdm_array_desc *d, unsigned levels, tdm_bmipmap **out)
{
    tdm_bmipmap *m = calloc(1, sizeof(*m));
    int err = 0;

    if (!m || !(m->level = calloc(levels, sizeof(*m->level)))) {
        free(m);
        return cudaErrorMemoryAllocation;
    }
    m->levels = levels;
    for (unsigned i = 0; !err && i < levels; i++) {
        tdm_array_desc l = tdm_mipmap_level_desc(d, i);
        err = sim_array_create(b, &l, &m->level[i]);
    }
    if (err) {
        sim_mipmap_destroy(b, m);
        return err;
    }
    *out = m;
    return 0;
}

int sim_mipmap_level(tdm_backend *b, tdm_bmipmap *m, unsigned level, tdm_barray **out)
{
    (void)b;
    if (level >= m->levels)
        return cudaErrorInvalidValue;
    *out = m->level[level];
    return 0;
}
