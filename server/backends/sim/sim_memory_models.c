/* Host memory mapped for the simulated device (docs/memory-models.md):
 * the twins reach memory through the mapped table, so the pages join it at
 * their own address, as a unified-addressing GPU maps registered memory. */
#include "sim_internal.h"

int sim_host_map(tdm_backend *b, void *p, size_t n, uint64_t *dev)
{
    int err = sim_mapped_insert(&b->mapped, (uint64_t)(uintptr_t)p, n, false);

    if (!err)
        *dev = (uint64_t)(uintptr_t)p;
    return err;
}

int sim_host_unmap(tdm_backend *b, void *p, size_t n)
{
    return sim_mapped_remove(&b->mapped, (uint64_t)(uintptr_t)p, n);
}
