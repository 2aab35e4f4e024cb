/* Mapped (zero-copy) host memory (docs/memory-models.md).  Over shm every
 * pinned block lies in the region the server maps too, and the server maps
 * it for the device on request: kernels read and write the very pages the
 * program sees.  Over TCP nothing is shared, so nothing can be mapped and
 * canMapHostMemory is reported 0. */
#include <string.h>

#include "guest.h"
#include "shm_region.h"

bool tdm_mapped_available(void)
{
    return tdm_shm() != NULL;
}

cudaError_t cudaHostGetDevicePointer(void **pDevice, void *pHost, unsigned int flags)
{
    const tdm_shm_region *r;
    void *base = NULL;
    uint64_t in_region = 0;
    tdm_shm_span span;
    tdm_malloc_res res;
    cudaError_t err;

    if (!pDevice || flags != 0)
        return tdm_ret(cudaErrorInvalidValue);
    err = tdm_connect();
    if (err)
        return tdm_ret(err);
    r = tdm_shm();
    if (!r || tdm_host_region_block(pHost, &base, &in_region) != 0)
        return tdm_ret(cudaErrorInvalidValue);
    span.offset = (uint64_t)(uintptr_t)base - (uint64_t)(uintptr_t)r->base;
    span.size = in_region;
    memset(&res, 0, sizeof(res));
    err = tdm_call(TDM_SHM_HOST_MAP, &span, &res);
    if (!err)
        err = (cudaError_t)res.err;
    if (err)
        return tdm_ret(err);
    *pDevice = (void *)(uintptr_t)(res.addr + (uint64_t)((const char *)pHost - (const char *)base));
    return cudaSuccess;
}
