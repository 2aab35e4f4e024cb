/* The runtime's everyday calls on the GPU (docs/runtime-api.md): the
 * occupancy calculator is the driver's, on the kernel's CUfunction. */
#include <pthread.h>

#include "cuda_backend_internal.h"

int tdm_cuda_occupancy_max_blocks(tdm_backend *b, tdm_bfunc *f, int block_size, size_t dyn_smem, unsigned flags,
                                  int *blocks)
{
    int err = tdm_cuda_enter(b);

    if (err)
        return err;
    return tdm_cuda_err(tdm_cu.cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
                            blocks, tdm_cuda_func_handle(f), block_size, dyn_smem, flags),
                        "cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags");
}

int tdm_cuda_occupancy_dyn_smem(tdm_backend *b, tdm_bfunc *f, int num_blocks, int block_size, size_t *bytes)
{
    int err = tdm_cuda_enter(b);

    if (err)
        return err;
    return tdm_cuda_err(tdm_cu.cuOccupancyAvailableDynamicSMemPerBlock(bytes, tdm_cuda_func_handle(f), num_blocks,
                                                                       block_size),
                        "cuOccupancyAvailableDynamicSMemPerBlock");
}

int tdm_cuda_stream_priority_range(tdm_backend *b, int *least, int *greatest)
{
    int err = tdm_cuda_enter(b);

    if (err)
        return err;
    return tdm_cuda_err(tdm_cu.cuCtxGetStreamPriorityRange(least, greatest), "cuCtxGetStreamPriorityRange");
}

/* One context per process, so one lock: raises and the defaults' first
 * reading are serialized across sessions. */
static pthread_mutex_t limit_lock = PTHREAD_MUTEX_INITIALIZER;

static int device_limit(tdm_backend *b, int limit, uint64_t *value)
{
    size_t v = 0;
    int err = tdm_cuda_enter(b);

    if (!err)
        err = tdm_cuda_err(tdm_cu.cuCtxGetLimit(&v, (CUlimit)limit), "cuCtxGetLimit");
    if (!err)
        *value = v;
    return err;
}

/* limit_lock held. */
static int learn_default(tdm_backend *b, int limit)
{
    int err = 0;

    if (!(b->limit_default_known & (1u << limit))) {
        err = device_limit(b, limit, &b->limit_default[limit]);
        if (!err)
            b->limit_default_known |= 1u << limit;
    }
    return err;
}

int tdm_cuda_limit_get(tdm_backend *b, int limit, uint64_t *value)
{
    int err;

    if (limit < 0 || limit >= TDM_CUDA_LIMITS)
        return cudaErrorUnsupportedLimit;
    pthread_mutex_lock(&limit_lock);
    err = learn_default(b, limit);
    if (!err)
        *value = b->limit_default[limit];
    pthread_mutex_unlock(&limit_lock);
    return err;
}

/* Every session shares the primary context, so a limit never shrinks under
 * another session's kernels. */
int tdm_cuda_limit_raise(tdm_backend *b, int limit, uint64_t value)
{
    uint64_t now = 0;
    int err;

    if (limit < 0 || limit >= TDM_CUDA_LIMITS)
        return cudaErrorUnsupportedLimit;
    pthread_mutex_lock(&limit_lock);
    err = learn_default(b, limit);
    if (!err)
        err = device_limit(b, limit, &now);
    if (!err && value > now)
        err = tdm_cuda_err(tdm_cu.cuCtxSetLimit((CUlimit)limit, (size_t)value), "cuCtxSetLimit");
    pthread_mutex_unlock(&limit_lock);
    return err;
}

/* Each session loads its own modules, so a kernel's settings are its
 * session's alone: passed to the driver as they are. */
int tdm_cuda_func_set_attribute(tdm_backend *b, tdm_bfunc *f, int attr, int value)
{
    int err = tdm_cuda_enter(b);

    if (err)
        return err;
    return tdm_cuda_err(tdm_cu.cuFuncSetAttribute(tdm_cuda_func_handle(f), (CUfunction_attribute)attr, value),
                        "cuFuncSetAttribute");
}

int tdm_cuda_func_set_cache_config(tdm_backend *b, tdm_bfunc *f, int config)
{
    int err = tdm_cuda_enter(b);

    if (err)
        return err;
    return tdm_cuda_err(tdm_cu.cuFuncSetCacheConfig(tdm_cuda_func_handle(f), (CUfunc_cache)config),
                        "cuFuncSetCacheConfig");
}

int tdm_cuda_pci_bus_id(tdm_backend *b, char *buf, size_t len)
{
    int err = tdm_cuda_enter(b);

    if (err)
        return err;
    return tdm_cuda_err(tdm_cu.cuDeviceGetPCIBusId(buf, (int)len, b->dev), "cuDeviceGetPCIBusId");
}
