/* Contexts.  A session has one device and one address space, so each device has one
 * context, its primary context; the thread's current context is a stack of them (push and
 * pop).  cuCtxCreate makes a context that shares the primary context's session: its
 * allocations, modules and streams are the session's, and destroying it frees none of them
 * (docs/driver-api.md says so). */
#include <pthread.h>
#include <stdlib.h>

#include "driver.h"

#define MAX_DEVICES 16
#define CTX_STACK 32
#define CREATED_MAX 64

typedef struct ctx_state {
    pthread_mutex_t lock;
    tdm_cu_ctx primary[MAX_DEVICES];
    tdm_cu_ctx *created[CREATED_MAX];   /* cuCtxCreate's, until cuCtxDestroy */
    unsigned long long next_id;
} ctx_state;

/* Once per process, as the driver's own context table is. */
static ctx_state contexts = { .lock = PTHREAD_MUTEX_INITIALIZER, .next_id = 1 };
static _Thread_local tdm_cu_ctx *stack[CTX_STACK];
static _Thread_local unsigned depth;

tdm_cu_ctx *tdm_cu_primary(CUdevice dev)
{
    tdm_cu_ctx *c;

    if (dev < 0 || dev >= MAX_DEVICES)
        return NULL;
    c = &contexts.primary[dev];
    /* Made once and never unmade: no lock once it is (PyTorch asks thousands of times). */
    if (__atomic_load_n(&c->magic, __ATOMIC_ACQUIRE) == TDM_CTX_MAGIC)
        return c;
    pthread_mutex_lock(&contexts.lock);
    if (c->magic != TDM_CTX_MAGIC) {
        c->device = dev;
        c->id = contexts.next_id++;
        __atomic_store_n(&c->magic, TDM_CTX_MAGIC, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&contexts.lock);
    return c;
}

tdm_cu_ctx *tdm_cu_current(void)
{
    return depth ? stack[depth - 1] : NULL;
}

/* Whether c is a primary context already made, without the lock: the primary contexts never
 * go, so the address and the magic (set once, tdm_cu_primary) are enough. */
static bool primary_made(const tdm_cu_ctx *c)
{
    uintptr_t at = (uintptr_t)c, first = (uintptr_t)&contexts.primary[0];

    return at >= first && at < first + sizeof(contexts.primary) && (at - first) % sizeof(*c) == 0 &&
           __atomic_load_n(&c->magic, __ATOMIC_ACQUIRE) == TDM_CTX_MAGIC;
}

/* Whether c is a context this library made and has not destroyed. */
static bool known(const tdm_cu_ctx *c)
{
    bool yes = false;

    if (primary_made(c))   /* the common case (every current context of PyTorch's): no lock */
        return true;
    pthread_mutex_lock(&contexts.lock);
    for (int i = 0; i < MAX_DEVICES && !yes; i++)
        yes = c == &contexts.primary[i] && c->magic == TDM_CTX_MAGIC;
    for (int i = 0; i < CREATED_MAX && !yes; i++)
        yes = c == contexts.created[i];
    pthread_mutex_unlock(&contexts.lock);
    return yes;
}

tdm_cu_ctx *tdm_cu_ctx_of(CUcontext c, CUresult *err)
{
    tdm_cu_ctx *x = c ? (tdm_cu_ctx *)c : tdm_cu_current();
    CUresult r = tdm_cu_ready();

    if (!r && (!x || !known(x)))
        r = CUDA_ERROR_INVALID_CONTEXT;
    if (err)
        *err = r;
    return r ? NULL : x;
}

/* ---- the primary context ---- */

CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
    CUresult r = tdm_cu_device(dev);
    tdm_cu_ctx *c;

    if (!pctx)
        return CUDA_ERROR_INVALID_VALUE;
    if (r)
        return r;
    c = tdm_cu_primary(dev);
    __atomic_add_fetch(&c->retained, 1, __ATOMIC_ACQ_REL);
    *pctx = (CUcontext)c;
    return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
    CUresult r = tdm_cu_device(dev);
    tdm_cu_ctx *c;
    int left;

    if (r)
        return r;
    c = tdm_cu_primary(dev);
    left = __atomic_sub_fetch(&c->retained, 1, __ATOMIC_ACQ_REL);
    if (left < 0) {
        __atomic_store_n(&c->retained, 0, __ATOMIC_RELEASE);
        return CUDA_ERROR_INVALID_CONTEXT;
    }
    if (left == 0)
        tdm_cu_cls_context_gone(c);
    return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRelease(CUdevice dev)
{
    return cuDevicePrimaryCtxRelease_v2(dev);
}

CUresult cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int *flags, int *active)
{
    CUresult r = tdm_cu_device(dev);
    tdm_cu_ctx *c;

    if (!flags || !active)
        return CUDA_ERROR_INVALID_VALUE;
    if (r)
        return r;
    c = tdm_cu_primary(dev);
    *flags = c->flags;
    *active = __atomic_load_n(&c->retained, __ATOMIC_ACQUIRE) > 0;
    return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxSetFlags_v2(CUdevice dev, unsigned int flags)
{
    CUresult r = tdm_cu_device(dev);

    if (r)
        return r;
    if (flags & ~(unsigned)(CU_CTX_SCHED_MASK | CU_CTX_MAP_HOST | CU_CTX_LMEM_RESIZE_TO_MAX | CU_CTX_COREDUMP_ENABLE |
                            CU_CTX_USER_COREDUMP_ENABLE | CU_CTX_SYNC_MEMOPS))
        return CUDA_ERROR_INVALID_VALUE;
    tdm_cu_primary(dev)->flags = flags;
    return tdm_cu(cudaSetDeviceFlags(flags & CU_CTX_SCHED_MASK));
}

CUresult cuDevicePrimaryCtxSetFlags(CUdevice dev, unsigned int flags)
{
    return cuDevicePrimaryCtxSetFlags_v2(dev, flags);
}

/* Destroys everything the session holds, as the driver destroys the context's resources. */
CUresult cuDevicePrimaryCtxReset_v2(CUdevice dev)
{
    CUresult r = tdm_cu_device(dev);
    tdm_cu_ctx *c;

    if (r)
        return r;
    c = tdm_cu_primary(dev);
    tdm_cu_cls_context_gone(c);
    __atomic_store_n(&c->retained, 0, __ATOMIC_RELEASE);
    c->flags = 0;
    return tdm_cu(cudaDeviceReset());
}

CUresult cuDevicePrimaryCtxReset(CUdevice dev)
{
    return cuDevicePrimaryCtxReset_v2(dev);
}

/* ---- the current context ---- */

CUresult cuCtxGetCurrent(CUcontext *pctx)
{
    CUresult r = tdm_cu_ready();

    if (!pctx)
        return CUDA_ERROR_INVALID_VALUE;
    if (r)
        return r;
    *pctx = (CUcontext)tdm_cu_current();
    return CUDA_SUCCESS;
}

/* Replaces the top of the stack (an empty stack gets one entry; NULL empties the top). */
CUresult cuCtxSetCurrent(CUcontext ctx)
{
    CUresult r = tdm_cu_ready();

    if (r)
        return r;
    if (ctx && !known((tdm_cu_ctx *)ctx))
        return CUDA_ERROR_INVALID_CONTEXT;
    if (!ctx) {
        if (depth)
            depth--;
        return CUDA_SUCCESS;
    }
    if (depth == 0)
        depth = 1;
    stack[depth - 1] = (tdm_cu_ctx *)ctx;
    return CUDA_SUCCESS;
}

CUresult cuCtxPushCurrent_v2(CUcontext ctx)
{
    CUresult r = tdm_cu_ready();

    if (r)
        return r;
    if (!ctx || !known((tdm_cu_ctx *)ctx))
        return CUDA_ERROR_INVALID_CONTEXT;
    if (depth == CTX_STACK)
        return CUDA_ERROR_OUT_OF_MEMORY;
    stack[depth++] = (tdm_cu_ctx *)ctx;
    return CUDA_SUCCESS;
}

CUresult cuCtxPopCurrent_v2(CUcontext *pctx)
{
    CUresult r = tdm_cu_ready();

    if (r)
        return r;
    if (depth == 0)
        return CUDA_ERROR_INVALID_CONTEXT;
    depth--;
    if (pctx)
        *pctx = (CUcontext)stack[depth];
    return CUDA_SUCCESS;
}

CUresult cuCtxGetDevice(CUdevice *device)
{
    CUresult r;
    tdm_cu_ctx *c = tdm_cu_ctx_of(NULL, &r);

    if (!device)
        return CUDA_ERROR_INVALID_VALUE;
    if (!c)
        return r;
    *device = c->device;
    return CUDA_SUCCESS;
}

CUresult cuCtxGetDevice_v2(CUdevice *device, CUcontext ctx)
{
    CUresult r;
    tdm_cu_ctx *c = tdm_cu_ctx_of(ctx, &r);

    if (!device)
        return CUDA_ERROR_INVALID_VALUE;
    if (!c)
        return r;
    *device = c->device;
    return CUDA_SUCCESS;
}

CUresult cuCtxGetFlags(unsigned int *flags)
{
    CUresult r;
    tdm_cu_ctx *c = tdm_cu_ctx_of(NULL, &r);

    if (!flags)
        return CUDA_ERROR_INVALID_VALUE;
    if (!c)
        return r;
    *flags = c->flags;
    return CUDA_SUCCESS;
}

CUresult cuCtxSetFlags(unsigned int flags)
{
    CUresult r;
    tdm_cu_ctx *c = tdm_cu_ctx_of(NULL, &r);

    if (!c)
        return r;
    c->flags = flags;
    return CUDA_SUCCESS;
}

CUresult cuCtxGetId(CUcontext ctx, unsigned long long *ctxId)
{
    CUresult r;
    tdm_cu_ctx *c = tdm_cu_ctx_of(ctx, &r);

    if (!ctxId)
        return CUDA_ERROR_INVALID_VALUE;
    if (!c)
        return r;
    *ctxId = c->id;
    return CUDA_SUCCESS;
}

/* The driver answers 3020 for every context made since CUDA 3.2. */
CUresult cuCtxGetApiVersion(CUcontext ctx, unsigned int *version)
{
    CUresult r;
    tdm_cu_ctx *c = tdm_cu_ctx_of(ctx, &r);

    if (!version)
        return CUDA_ERROR_INVALID_VALUE;
    if (!c)
        return r;
    *version = 3020;
    return CUDA_SUCCESS;
}

CUresult cuCtxSynchronize(void)
{
    CUresult r;

    if (!tdm_cu_ctx_of(NULL, &r))
        return r;
    return tdm_cu(cudaDeviceSynchronize());
}

CUresult cuCtxSynchronize_v2(CUcontext ctx)
{
    CUresult r;

    if (!tdm_cu_ctx_of(ctx, &r))
        return r;
    return tdm_cu(cudaDeviceSynchronize());
}

/* CUlimit and cudaLimit share their numbers, as CUfunc_cache and cudaFuncCache do, up to the
 * limits of CIG contexts (shared with graphics), which the runtime has no name for.  A session's
 * context is never one; the H100's driver (580.159.04) answered a plain context: shared memory
 * the opt-in maximum per block, CIG off, the fallback switch an unsupported limit. */
CUresult cuCtxGetLimit(size_t *pvalue, CUlimit limit)
{
    CUresult r;
    int optin = 0;
    tdm_cu_ctx *ctx = tdm_cu_ctx_of(NULL, &r);

    if (!ctx)
        return r;
    switch (limit) {
    case CU_LIMIT_SHMEM_SIZE:
        if (!pvalue)
            return CUDA_ERROR_INVALID_VALUE;
        r = tdm_cu(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, ctx->device));
        if (!r)
            *pvalue = (size_t)optin;
        return r;
    case CU_LIMIT_CIG_ENABLED:
        if (!pvalue)
            return CUDA_ERROR_INVALID_VALUE;
        *pvalue = 0;
        return CUDA_SUCCESS;
    case CU_LIMIT_CIG_SHMEM_FALLBACK_ENABLED:
        return CUDA_ERROR_UNSUPPORTED_LIMIT;
    default:
        return tdm_cu(cudaDeviceGetLimit(pvalue, (enum cudaLimit)limit));
    }
}

/* The two CIG limits that can only be queried (cuda.h) are refused as values a set cannot
 * take; the fallback switch is unsupported outside a CIG context. */
CUresult cuCtxSetLimit(CUlimit limit, size_t value)
{
    CUresult r;

    if (!tdm_cu_ctx_of(NULL, &r))
        return r;
    switch (limit) {
    case CU_LIMIT_SHMEM_SIZE:
    case CU_LIMIT_CIG_ENABLED:
        return CUDA_ERROR_INVALID_VALUE;
    case CU_LIMIT_CIG_SHMEM_FALLBACK_ENABLED:
        return CUDA_ERROR_UNSUPPORTED_LIMIT;
    default:
        return tdm_cu(cudaDeviceSetLimit((enum cudaLimit)limit, value));
    }
}

CUresult cuCtxGetCacheConfig(CUfunc_cache *pconfig)
{
    CUresult r;

    if (!tdm_cu_ctx_of(NULL, &r))
        return r;
    return tdm_cu(cudaDeviceGetCacheConfig((enum cudaFuncCache *)pconfig));
}

CUresult cuCtxSetCacheConfig(CUfunc_cache config)
{
    CUresult r;

    if (!tdm_cu_ctx_of(NULL, &r))
        return r;
    return tdm_cu(cudaDeviceSetCacheConfig((enum cudaFuncCache)config));
}

CUresult cuCtxGetStreamPriorityRange(int *leastPriority, int *greatestPriority)
{
    CUresult r;

    if (!tdm_cu_ctx_of(NULL, &r))
        return r;
    return tdm_cu(cudaDeviceGetStreamPriorityRange(leastPriority, greatestPriority));
}

/* ---- created contexts: the session's, under their own handle ---- */

static CUresult create(CUcontext *pctx, unsigned flags, CUdevice dev)
{
    CUresult r = tdm_cu_device(dev);
    tdm_cu_ctx *c;
    int slot = -1;

    if (!pctx)
        return CUDA_ERROR_INVALID_VALUE;
    if (r)
        return r;
    c = calloc(1, sizeof(*c));
    if (!c)
        return CUDA_ERROR_OUT_OF_MEMORY;
    pthread_mutex_lock(&contexts.lock);
    for (int i = 0; i < CREATED_MAX && slot < 0; i++)
        if (!contexts.created[i])
            slot = i;
    if (slot >= 0) {
        *c = (tdm_cu_ctx){ .magic = TDM_CTX_MAGIC, .device = dev, .flags = flags, .id = contexts.next_id++ };
        contexts.created[slot] = c;
    }
    pthread_mutex_unlock(&contexts.lock);
    if (slot < 0) {
        free(c);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    r = cuCtxPushCurrent_v2((CUcontext)c);
    if (!r)
        *pctx = (CUcontext)c;
    return r;
}

CUresult cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
    return create(pctx, flags, dev);
}

CUresult cuCtxCreate(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
    return create(pctx, flags, dev);
}

/* Execution affinity and creation parameters are refused, as on a device without them. */
CUresult cuCtxCreate_v3(CUcontext *pctx, CUexecAffinityParam *paramsArray, int numParams, unsigned int flags,
                        CUdevice dev)
{
    if (numParams > 0 || paramsArray)
        return tdm_cu_refuse("cuCtxCreate_v3", "execution affinity belongs to the server's context");
    return create(pctx, flags, dev);
}

CUresult cuCtxCreate_v4(CUcontext *pctx, CUctxCreateParams *ctxCreateParams, unsigned int flags, CUdevice dev)
{
    if (ctxCreateParams && (ctxCreateParams->execAffinityParams || ctxCreateParams->numExecAffinityParams ||
                            ctxCreateParams->cigParams))
        return tdm_cu_refuse("cuCtxCreate_v4", "execution affinity and CIG belong to the server's context");
    return create(pctx, flags, dev);
}

CUresult cuCtxDestroy_v2(CUcontext ctx)
{
    tdm_cu_ctx *c = (tdm_cu_ctx *)ctx;
    CUresult r = tdm_cu_ready();
    bool found = false;

    if (r)
        return r;
    if (!c)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&contexts.lock);
    for (int i = 0; i < CREATED_MAX; i++)
        if (contexts.created[i] == c) {
            contexts.created[i] = NULL;
            found = true;
        }
    pthread_mutex_unlock(&contexts.lock);
    if (!found)
        return CUDA_ERROR_INVALID_CONTEXT;
    /* The thread's stack forgets it (other threads' stacks are theirs, as in CUDA). */
    for (unsigned i = 0; i < depth; i++)
        if (stack[i] == c) {
            for (unsigned j = i; j + 1 < depth; j++)
                stack[j] = stack[j + 1];
            depth--;
            i--;
        }
    tdm_cu_cls_context_gone(c);
    c->magic = 0;
    free(c);
    return CUDA_SUCCESS;
}

CUresult cuCtxDestroy(CUcontext ctx)
{
    return cuCtxDestroy_v2(ctx);
}
