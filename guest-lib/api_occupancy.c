/* The occupancy calculators, answered by the server from the kernel's
 * compiled resources and the device's limits (docs/runtime-api.md).
 * cudaOccupancyMaxPotentialBlockSize and friends are templates of
 * cuda_runtime.h built on these and on cudaFuncGetAttributes. */
#include <string.h>

#include "func_state.h"
#include "guest.h"

static cudaError_t occupancy(uint32_t proc, const void *func, int block_size, int num_blocks, size_t dyn_smem,
                             unsigned flags, uint64_t *value)
{
    tdm_occupancy_args a;
    tdm_u64_res r;
    cudaError_t err;
    tdm_function *f = tdm_function_for_func(func, &err);

    if (!f)
        return err;
    /* A function's occupancy changes only with its attributes (func_state.h drops the
     * answers when one is set): libraries ask the same question before every launch. */
    tdm_occupancy_key k = { .func = f->handle, .dyn_smem = dyn_smem, .proc = proc, .flags = flags,
                            .block_size = block_size, .num_blocks = num_blocks };
    if (tdm_occupancy_cached(&k, value))
        return cudaSuccess;
    a.func = f->handle;
    a.block_size = block_size;
    a.num_blocks = num_blocks;
    a.dyn_smem = dyn_smem;
    a.flags = flags;
    memset(&r, 0, sizeof(r));
    err = tdm_call(proc, &a, &r);
    if (!err)
        err = (cudaError_t)r.err;
    if (!err) {
        *value = r.value;
        tdm_occupancy_note(&k, r.value);
    }
    return err;
}

cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int *numBlocks, const void *func, int blockSize,
                                                                   size_t dynamicSMemSize, unsigned int flags)
{
    uint64_t v = 0;
    cudaError_t err;

    if (!numBlocks)
        return tdm_ret(cudaErrorInvalidValue);
    err = occupancy(TDM_OCCUPANCY_MAX_BLOCKS, func, blockSize, 0, dynamicSMemSize, flags, &v);
    if (!err)
        *numBlocks = (int)v;
    return tdm_ret(err);
}

cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *numBlocks, const void *func, int blockSize,
                                                          size_t dynamicSMemSize)
{
    return cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(numBlocks, func, blockSize, dynamicSMemSize,
                                                                  cudaOccupancyDefault);
}

cudaError_t cudaOccupancyAvailableDynamicSMemPerBlock(size_t *dynamicSmemSize, const void *func, int numBlocks,
                                                      int blockSize)
{
    uint64_t v = 0;
    cudaError_t err;

    if (!dynamicSmemSize)
        return tdm_ret(cudaErrorInvalidValue);
    err = occupancy(TDM_OCCUPANCY_DYN_SMEM, func, blockSize, numBlocks, 0, 0, &v);
    if (!err)
        *dynamicSmemSize = (size_t)v;
    return tdm_ret(err);
}
