/* Host memory mapped for the device (docs/memory-models.md).  The pages
 * were registered with CU_MEMHOSTREGISTER_DEVICEMAP (tdm_cuda_host_register),
 * so the device already reaches them: mapping is asking where. */
#include "cuda_backend_internal.h"

int tdm_cuda_host_map(tdm_backend *b, void *p, size_t n, uint64_t *dev)
{
    CUdeviceptr d = 0;
    int err = tdm_cuda_enter(b);

    (void)n;
    if (err)
        return err;
    err = tdm_cuda_err(tdm_cu.cuMemHostGetDevicePointer(&d, p, 0), "cuMemHostGetDevicePointer");
    if (!err)
        *dev = (uint64_t)d;
    return err;
}

/* The mapping ends with the registration (host_unregister). */
int tdm_cuda_host_unmap(tdm_backend *b, void *p, size_t n)
{
    (void)b;
    (void)p;
    (void)n;
    return 0;
}
