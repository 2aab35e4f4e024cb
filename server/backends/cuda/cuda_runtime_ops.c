/* The runtime's everyday calls on the GPU (docs/runtime-api.md): the
 * occupancy calculator is the driver's, on the kernel's CUfunction. */
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
