#include "device_props.h"

#include <assert.h>

#include <driver_types.h>

#include "tandem_rpc.h"

static_assert(TDM_DEVICE_ATTR_UNSUPPORTED == TDM_ATTR_UNSUPPORTED, "backend and protocol mark rejected attributes alike");
static_assert(TDM_DEVICE_ATTR_COUNT == TDM_ATTR_COUNT, "backend and protocol carry the same attributes");

/* Each row: an attribute whose feature Tandem does not serve, so it says 0
 * where the device would say 1.  A guest that believed the device would
 * take a path (zero-copy host pointers, managed allocations) that ends in
 * cudaErrorNotSupported; native programs check these and fall back.  The
 * area that makes one of them work removes its rows. */
static const int differences[] = {
    /* managed memory is coherent at synchronization points only (the
     * pre-Pascal contract, docs/memory-models.md) */
    cudaDevAttrConcurrentManagedAccess,
    cudaDevAttrDirectManagedMemAccessFromHost,
    cudaDevAttrPageableMemoryAccess,                    /* the device cannot see a guest's pageable memory */
    cudaDevAttrPageableMemoryAccessUsesHostPageTables,  /* nor a guest's page tables */
};

void tdm_device_props_apply(tdm_device_info *info)
{
    for (size_t i = 0; i < sizeof(differences) / sizeof(differences[0]); i++) {
        int a = differences[i];

        if (info->attrs[a] != TDM_DEVICE_ATTR_UNSUPPORTED)
            info->attrs[a] = 0;
    }
}
