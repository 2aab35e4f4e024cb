/* Address spaces (issue 16): each session's kernels touch only the memory
 * the server granted its space, as kernels of separate CUDA contexts see
 * separate address spaces.  The grants live on the ranges of the memory
 * table (sim_mapped.c), so they end with the mapping. */
#include <stdlib.h>

#include "sim_internal.h"

int sim_space_create(tdm_backend *b, tdm_bspace **out)
{
    tdm_bspace *sp = calloc(1, sizeof(*sp));

    *out = NULL;
    if (!sp)
        return cudaErrorMemoryAllocation;
    *out = sp;
    return 0;
}

void sim_space_destroy(tdm_backend *b, tdm_bspace *sp)
{
    if (!sp)
        return;
    sim_mapped_forget_space(&b->mapped, sp);
    free(sp);
}

int sim_space_grant(tdm_backend *b, tdm_bspace *sp, uint64_t addr)
{
    return sp ? sim_mapped_grant(&b->mapped, addr, sp) : cudaErrorInvalidValue;
}

void sim_space_revoke(tdm_backend *b, tdm_bspace *sp, uint64_t addr)
{
    if (sp)
        sim_mapped_revoke(&b->mapped, addr, sp);
}
