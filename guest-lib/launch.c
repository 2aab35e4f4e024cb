/* Kernel launches: the <<<>>> configuration stack and the launch entry
 * points.  A launch is a one-way call: the arguments are packed into the
 * layout the server reported for the kernel and sent without waiting. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guest.h"

typedef struct call_config {
    dim3 grid, block;
    size_t shmem;
    cudaStream_t stream;
} call_config;

#define CONFIG_DEPTH 32
static _Thread_local call_config config_stack[CONFIG_DEPTH];
static _Thread_local unsigned config_top;

unsigned __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem, void *stream)
{
    if (config_top >= CONFIG_DEPTH)
        return cudaErrorInvalidConfiguration;
    config_stack[config_top++] = (call_config){ gridDim, blockDim, sharedMem, (cudaStream_t)stream };
    return cudaSuccess;
}

cudaError_t __cudaPopCallConfiguration(dim3 *gridDim, dim3 *blockDim, size_t *sharedMem, void *stream)
{
    if (config_top == 0)
        return cudaErrorMissingConfiguration;
    call_config *c = &config_stack[--config_top];
    *gridDim = c->grid;
    *blockDim = c->block;
    *sharedMem = c->shmem;
    *(cudaStream_t *)stream = c->stream;
    return cudaSuccess;
}

void tdm_pack_params(const tdm_function *f, void **args, char *buf)
{
    memset(buf, 0, f->params_len);
    for (uint32_t i = 0; i < f->nparams; i++)
        memcpy(buf + f->param_offset[i], args[i], f->param_size[i]);
    tdm_host_map_kernel_args(buf, f->params_len);
}

cudaError_t tdm_launch(tdm_function *f, dim3 grid, dim3 block, void **args, size_t shmem, cudaStream_t stream)
{
    return tdm_launch_as(TDM_LAUNCH, f, grid, block, args, shmem, stream);
}

/* Packs and sends one launch (LAUNCH, LAUNCH_COOPERATIVE), or with cluster
 * (LAUNCH_CLUSTER), whose cluster fields the caller set. */
static cudaError_t launch_packed(uint32_t proc, tdm_function *f, dim3 grid, dim3 block, void **args, size_t shmem,
                                 cudaStream_t stream, tdm_cluster_launch_args *cluster)
{
    tdm_launch_args a;
    char small[512];
    char *buf = small;
    cudaError_t err;

    if (!grid.x || !grid.y || !grid.z || !block.x || !block.y || !block.z || shmem > UINT32_MAX)
        return tdm_ret(cudaErrorInvalidConfiguration);
    if (f->nparams && !args)
        return tdm_ret(cudaErrorInvalidValue);
    if (f->params_len > sizeof(small) && !(buf = malloc(f->params_len)))
        return tdm_ret(cudaErrorMemoryAllocation);
    tdm_pack_params(f, args, buf);
    /* What the host wrote to managed or mapped memory reaches the device
     * ahead of the kernel, which may then change any of it (coherent.c). */
    err = tdm_coherent_before_launch(tdm_stream_id(stream), false);
    if (err) {
        if (buf != small)
            free(buf);
        return tdm_ret(err);
    }

    memset(&a, 0, sizeof(a));
    a.func = f->handle;
    a.grid = (tdm_xdim3){ grid.x, grid.y, grid.z };
    a.block = (tdm_xdim3){ block.x, block.y, block.z };
    a.shared_mem = (u_int)shmem;
    a.stream = tdm_stream_id(stream);
    a.params.params_val = buf;
    a.params.params_len = f->params_len;
    /* A plain or cluster launch is one-way; another kind is answered (its
     * errors are the launch call's, as the driver gives them at once). */
    if (cluster) {
        cluster->func = a.func;
        cluster->grid = a.grid;
        cluster->block = a.block;
        cluster->shared_mem = a.shared_mem;
        cluster->stream = a.stream;
        cluster->params.params_val = buf;
        cluster->params.params_len = f->params_len;
        err = tdm_post(proc, cluster);
    } else {
        err = proc == TDM_LAUNCH ? tdm_post(proc, &a) : tdm_call_err(proc, &a);
    }
    if (buf != small)
        free(buf);
    return tdm_ret(err);
}

cudaError_t tdm_launch_as(uint32_t proc, tdm_function *f, dim3 grid, dim3 block, void **args, size_t shmem,
                          cudaStream_t stream)
{
    return launch_packed(proc, f, grid, block, args, shmem, stream, NULL);
}

/* ---- cluster launch (issue 14) ---- */
cudaError_t tdm_launch_cluster(tdm_function *f, dim3 grid, dim3 block, void **args, size_t shmem, cudaStream_t stream,
                               tdm_cluster_launch_args *c)
{
    return launch_packed(TDM_LAUNCH_CLUSTER, f, grid, block, args, shmem, stream, c);
}

cudaError_t cudaLaunchKernel(const void *func, dim3 gridDim, dim3 blockDim, void **args, size_t sharedMem,
                             cudaStream_t stream)
{
    cudaError_t err;
    tdm_function *f = tdm_function_for_host(func, &err);

    return f ? tdm_launch(f, gridDim, blockDim, args, sharedMem, stream) : tdm_ret(err);
}

cudaError_t cudaLaunchKernel_ptsz(const void *func, dim3 gridDim, dim3 blockDim, void **args, size_t sharedMem,
                                  cudaStream_t stream)
{
    return cudaLaunchKernel(func, gridDim, blockDim, args, sharedMem, stream ? stream : cudaStreamPerThread);
}

cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void **args, size_t sharedMem,
                               cudaStream_t stream)
{
    cudaError_t err;
    tdm_function *f = tdm_function_for_kernel(kernel, &err);

    return f ? tdm_launch(f, gridDim, blockDim, args, sharedMem, stream) : tdm_ret(err);
}

cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void **args,
                                    size_t sharedMem, cudaStream_t stream)
{
    return __cudaLaunchKernel(kernel, gridDim, blockDim, args, sharedMem, stream ? stream : cudaStreamPerThread);
}

cudaError_t cudaFuncGetAttributes(struct cudaFuncAttributes *attr, const void *func)
{
    tdm_func_attrs_res r;
    cudaError_t err;
    tdm_function *f;

    if (!attr)
        return tdm_ret(cudaErrorInvalidValue);
    f = tdm_function_for_func(func, &err);
    if (!f)
        return tdm_ret(err);
    memset(&r, 0, sizeof(r));
    err = tdm_call(TDM_FUNC_GET_ATTRIBUTES, &f->handle, &r);
    if (!err)
        err = (cudaError_t)r.err;
    if (!err) {
        memset(attr, 0, sizeof(*attr));
        attr->sharedSizeBytes = (size_t)r.shared_size_bytes;
        attr->constSizeBytes = (size_t)r.const_size_bytes;
        attr->localSizeBytes = (size_t)r.local_size_bytes;
        attr->maxThreadsPerBlock = r.max_threads_per_block;
        attr->numRegs = r.num_regs;
        attr->ptxVersion = r.ptx_version;
        attr->binaryVersion = r.binary_version;
        attr->cacheModeCA = r.cache_mode_ca;
        attr->maxDynamicSharedSizeBytes = r.max_dynamic_shared_size_bytes;
        attr->preferredShmemCarveout = r.preferred_shmem_carveout;
        err = tdm_cluster_func_attrs(f, attr); /* ---- cluster launch (issue 14) ---- */
    }
    return tdm_ret(err);
}
