/* Limits, cache and shared memory preferences, a kernel's settings and
 * name (docs/runtime-api.md, "Limits and caches").  Sessions of a server
 * share one CUDA context: what would change it for every tenant is either
 * made to only grow (limits, on the server) or kept as this process's own
 * preference (the device cache configuration); a kernel's settings are the
 * session's own and go to the driver. */
#include <stdatomic.h>
#include <string.h>

#include "func_state.h"
#include "guest.h"

cudaError_t cudaDeviceSetLimit(enum cudaLimit limit, size_t value)
{
    tdm_limit_args a = { (u_int)limit, value };

    return tdm_ret(tdm_call_err(TDM_DEVICE_SET_LIMIT, &a));
}

cudaError_t cudaDeviceGetLimit(size_t *pValue, enum cudaLimit limit)
{
    tdm_u32 l = (tdm_u32)limit;
    tdm_u64_res r;
    cudaError_t err;

    if (!pValue)
        return tdm_ret(cudaErrorInvalidValue);
    memset(&r, 0, sizeof(r));
    err = tdm_call(TDM_DEVICE_GET_LIMIT, &l, &r);
    if (!err)
        err = (cudaError_t)r.err;
    if (!err)
        *pValue = (size_t)r.value;
    return tdm_ret(err);
}

/* The process's preferred cache configuration: the device's is every
 * tenant's, and on the GPUs Tandem serves it is only a preference. */
static _Atomic int device_cache_config = cudaFuncCachePreferNone;

cudaError_t cudaDeviceSetCacheConfig(enum cudaFuncCache cacheConfig)
{
    cudaError_t err;

    if ((int)cacheConfig < cudaFuncCachePreferNone || (int)cacheConfig > cudaFuncCachePreferEqual)
        return tdm_ret(cudaErrorInvalidValue);
    err = tdm_connect();
    if (!err)
        atomic_store(&device_cache_config, (int)cacheConfig);
    return tdm_ret(err);
}

cudaError_t cudaDeviceGetCacheConfig(enum cudaFuncCache *pCacheConfig)
{
    cudaError_t err;

    if (!pCacheConfig)
        return tdm_ret(cudaErrorInvalidValue);
    err = tdm_connect();
    if (!err)
        *pCacheConfig = (enum cudaFuncCache)atomic_load(&device_cache_config);
    return tdm_ret(err);
}

/* Shared memory bank size is fixed at four bytes on every GPU since Volta:
 * the runtime accepts any valid setting and reports four bytes. */
cudaError_t cudaDeviceSetSharedMemConfig(enum cudaSharedMemConfig config)
{
    if ((int)config < cudaSharedMemBankSizeDefault || (int)config > cudaSharedMemBankSizeEightByte)
        return tdm_ret(cudaErrorInvalidValue);
    return tdm_ret(tdm_connect());
}

cudaError_t cudaDeviceGetSharedMemConfig(enum cudaSharedMemConfig *pConfig)
{
    cudaError_t err;

    if (!pConfig)
        return tdm_ret(cudaErrorInvalidValue);
    err = tdm_connect();
    if (!err)
        *pConfig = cudaSharedMemBankSizeFourByte;
    return tdm_ret(err);
}

cudaError_t cudaFuncSetSharedMemConfig(const void *func, enum cudaSharedMemConfig config)
{
    cudaError_t err;

    if (!tdm_function_for_func(func, &err))
        return tdm_ret(err);
    if ((int)config < cudaSharedMemBankSizeDefault || (int)config > cudaSharedMemBankSizeEightByte)
        return tdm_ret(cudaErrorInvalidValue);
    return cudaSuccess;
}

static cudaError_t func_set(uint32_t proc, const void *func, int what, int value)
{
    tdm_func_set_args a;
    cudaError_t err;
    tdm_function *f = tdm_function_for_func(func, &err);

    if (!f)
        return err;
    /* The same value again changes nothing, natively too: cuDNN sets it before every launch. */
    if (tdm_func_setting_known(proc, f->handle, what, value))
        return cudaSuccess;
    a.func = f->handle;
    a.what = what;
    a.value = value;
    err = tdm_call_err(proc, &a);
    if (!err)
        tdm_func_setting_note(proc, f->handle, what, value);
    return err;
}

cudaError_t cudaFuncSetAttribute(const void *func, enum cudaFuncAttribute attr, int value)
{
    return tdm_ret(func_set(TDM_FUNC_SET_ATTRIBUTE, func, (int)attr, value));
}

cudaError_t cudaFuncSetCacheConfig(const void *func, enum cudaFuncCache cacheConfig)
{
    return tdm_ret(func_set(TDM_FUNC_SET_CACHE_CONFIG, func, (int)cacheConfig, 0));
}

/* The kernel's mangled name, as the runtime gives it. */
cudaError_t cudaFuncGetName(const char **name, const void *func)
{
    cudaError_t err;
    tdm_function *f;

    if (!name)
        return tdm_ret(cudaErrorInvalidValue);
    f = tdm_function_for_func(func, &err);
    if (!f)
        return tdm_ret(err);
    *name = f->name;
    return cudaSuccess;
}

/* Persisting L2 lines are the whole device's: resetting them would take
 * what other tenants set aside, so a session's reset does nothing beyond
 * what a reset guarantees it (its own later accesses are normal). */
cudaError_t cudaCtxResetPersistingL2Cache(void)
{
    return tdm_ret(tdm_connect());
}
