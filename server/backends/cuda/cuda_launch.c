/* Kernel launches: the hot path of the whole server, so no allocation and
 * no driver call beyond the context check and cuLaunchKernel itself. */
#include "cuda_backend_internal.h"

/* The driver says only "invalid value" for a bad launch configuration,
 * where cudart (and so the guest's native behaviour) says
 * cudaErrorInvalidConfiguration; tell the two apart by the device limits. */
static bool config_out_of_range(const tdm_backend *b, tdm_dim3 grid, tdm_dim3 block)
{
    const uint32_t g[3] = { grid.x, grid.y, grid.z }, t[3] = { block.x, block.y, block.z };

    for (int i = 0; i < 3; i++)
        if (g[i] == 0 || t[i] == 0 || g[i] > (uint32_t)b->max_grid[i] ||
            t[i] > (uint32_t)b->max_block[i])
            return true;
    return (uint64_t)block.x * block.y * block.z > (uint64_t)b->max_threads_per_block;
}

static CUresult launch_fn(CUfunction fn, tdm_dim3 grid, tdm_dim3 block, uint32_t shared_mem, tdm_bstream *s,
                          void **args, bool cooperative)
{
    if (cooperative)
        return tdm_cu.cuLaunchCooperativeKernel(fn, grid.x, grid.y, grid.z, block.x, block.y, block.z, shared_mem,
                                                tdm_cuda_stream(s), args);
    return tdm_cu.cuLaunchKernel(fn, grid.x, grid.y, grid.z, block.x, block.y, block.z, shared_mem,
                                 tdm_cuda_stream(s), args, NULL);
}

static int launch(tdm_backend *b, tdm_bfunc *f, tdm_dim3 grid, tdm_dim3 block, uint32_t shared_mem,
                  tdm_bstream *s, const void *params, size_t params_len, bool cooperative)
{
    const tdm_param_info *p = tdm_cuda_func_params(f);
    void *args[TDM_MAX_KERNEL_PARAMS];
    size_t want = p->count ? (size_t)p->offset[p->count - 1] + p->size[p->count - 1] : 0;
    CUresult r;
    int err = tdm_cuda_enter(b);

    if (err)
        return err;
    if (params_len != want) {
        tdm_cuda_log("launch: %zu parameter bytes given, kernel takes %zu", params_len, want);
        return cudaErrorInvalidValue;
    }
    /* cuLaunchKernel copies each argument from these pointers before it
     * returns, so pointing into the caller's buffer is enough. */
    for (uint32_t i = 0; i < p->count; i++)
        args[i] = (void *)((uintptr_t)params + p->offset[i]);
    r = launch_fn(tdm_cuda_func_handle(f), grid, block, shared_mem, s, p->count ? args : NULL, cooperative);
    /* ---- SM shares (issue 17): a stream of a green context may refuse the
     * primary context's CUfunction; its context-independent kernel runs
     * wherever the stream is (docs/sm-shares.md). ---- */
    CUfunction k;
    if ((r == CUDA_ERROR_INVALID_HANDLE || r == CUDA_ERROR_INVALID_CONTEXT) && s &&
        tdm_cuda_func_kernel(b, f, &k) == cudaSuccess) {
        if (!atomic_exchange(&b->kernel_fallback_told, true))   /* what the H100 run looks for */
            tdm_cuda_log("a stream refused a module's CUfunction (CUresult %d): launching its CUkernel instead "
                         "(docs/sm-shares.md)", (int)r);
        r = launch_fn(k, grid, block, shared_mem, s, p->count ? args : NULL, cooperative);
    }
    if (r == CUDA_ERROR_INVALID_VALUE && config_out_of_range(b, grid, block)) {
        tdm_cuda_err(r, "cuLaunchKernel(configuration)");
        return cudaErrorInvalidConfiguration;
    }
    return tdm_cuda_err(r, "cuLaunchKernel");
}

int tdm_cuda_launch(tdm_backend *b, tdm_bfunc *f, tdm_dim3 grid, tdm_dim3 block,
                    uint32_t shared_mem, tdm_bstream *s, const void *params, size_t params_len)
{
    return launch(b, f, grid, block, shared_mem, s, params, params_len, false);
}

/* ---- runtime (issue 14) ---- */
int tdm_cuda_launch_cooperative(tdm_backend *b, tdm_bfunc *f, tdm_dim3 grid, tdm_dim3 block, uint32_t shared_mem,
                                tdm_bstream *s, const void *params, size_t params_len)
{
    return launch(b, f, grid, block, shared_mem, s, params, params_len, true);
}
