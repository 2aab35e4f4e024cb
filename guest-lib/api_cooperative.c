/* Cooperative launch (docs/runtime-api.md, "Cooperative launch"): packed
 * as any launch, sent as a call the server answers, so that a grid too
 * large to be resident at once is refused by this call, as natively. */
#include "guest.h"

cudaError_t cudaLaunchCooperativeKernel(const void *func, dim3 gridDim, dim3 blockDim, void **args, size_t sharedMem,
                                        cudaStream_t stream)
{
    cudaError_t err;
    tdm_function *f = tdm_function_for_host(func, &err);

    return f ? tdm_launch_as(TDM_LAUNCH_COOPERATIVE, f, gridDim, blockDim, args, sharedMem, stream) : tdm_ret(err);
}

cudaError_t cudaLaunchCooperativeKernel_ptsz(const void *func, dim3 gridDim, dim3 blockDim, void **args,
                                             size_t sharedMem, cudaStream_t stream)
{
    return cudaLaunchCooperativeKernel(func, gridDim, blockDim, args, sharedMem, stream ? stream : cudaStreamPerThread);
}
