/* cudaLaunchKernelExC (docs/runtime-api.md, "Extensible launch"): the
 * configuration's grid, block, dynamic shared memory and stream go the
 * existing launch path; each attribute is either honoured by what that path
 * already does (a plain launch, the cooperative one, or the cluster launch,
 * "Thread block clusters"), a hint Tandem may drop without changing any
 * result, or refused. */
#include "guest.h"

/* What the attributes ask of the launch, once checked. */
typedef struct launch_ex_plan {
    int cooperative;
    cudaEvent_t event; /* recorded after the launch, NULL for none */
    unsigned int event_flags;
    /* ---- cluster launch (issue 14) ---- */
    bool clusters;                  /* a cluster dimension is set: LAUNCH_CLUSTER */
    tdm_cluster_launch_args cluster; /* its cluster fields */
} launch_ex_plan;

/* Records in *plan what attribute `a` asks; cudaErrorInvalidValue for what
 * cannot be honoured on this path (the runtime's error for an attribute
 * value a launch does not accept). */
static cudaError_t plan_attribute(const cudaLaunchAttribute *a, launch_ex_plan *plan)
{
    const cudaLaunchAttributeValue *v = &a->val;

    switch (a->id) {
    case cudaLaunchAttributeIgnore:
        return cudaSuccess;
    case cudaLaunchAttributeCooperative:
        plan->cooperative = v->cooperative != 0;
        return cudaSuccess;
    case cudaLaunchAttributeClusterDimension:
    case cudaLaunchAttributePreferredClusterDimension:
    case cudaLaunchAttributeClusterSchedulingPolicyPreference:
        /* Dimensions (0s: unset) go to the driver's cluster launch, which
         * judges them; the policy rides along with them. */
        return tdm_cluster_attribute(a, &plan->cluster, &plan->clusters);
    case cudaLaunchAttributeProgrammaticStreamSerialization:
        /* "Allowed" to overlap the previous kernel: running it after the
         * previous one completes is one of the allowed orders, and a
         * cudaGridDependencySynchronize in it then returns at once. */
        return cudaSuccess;
    case cudaLaunchAttributePriority:
    case cudaLaunchAttributePreferredSharedMemoryCarveout:
    case cudaLaunchAttributeNvlinkUtilCentricScheduling:
        /* Scheduling and cache hints: no result depends on them. */
        return cudaSuccess;
    case cudaLaunchAttributeAccessPolicyWindow:
        /* An L2 persistence hint; its ratio must still be a ratio. */
        return v->accessPolicyWindow.hitRatio >= 0.0f && v->accessPolicyWindow.hitRatio <= 1.0f
                   ? cudaSuccess
                   : cudaErrorInvalidValue;
    case cudaLaunchAttributeMemSyncDomain:
        /* One domain for all work makes every fence at least as strong. */
        return v->memSyncDomain == cudaLaunchMemSyncDomainDefault || v->memSyncDomain == cudaLaunchMemSyncDomainRemote
                   ? cudaSuccess
                   : cudaErrorInvalidValue;
    case cudaLaunchAttributeMemSyncDomainMap:
        return cudaSuccess;
    case cudaLaunchAttributeLaunchCompletionEvent:
        /* Recorded after the whole kernel, which is after its last block
         * launched: later than natively, never earlier. */
        if (plan->event)
            return cudaErrorInvalidValue;
        plan->event = v->launchCompletionEvent.event;
        plan->event_flags = (unsigned int)v->launchCompletionEvent.flags;
        return plan->event ? cudaSuccess : cudaErrorInvalidValue;
    case cudaLaunchAttributeDeviceUpdatableKernelNode:
        /* Meaningful in graphs only: a launch accepts "not updatable". */
        return v->deviceUpdatableKernelNode.deviceUpdatable ? cudaErrorInvalidValue : cudaSuccess;
    default:
        /* SynchronizationPolicy is a stream attribute; programmatic events
         * need device-side triggers the launch path cannot honour; an
         * unknown id is the caller's error. */
        return cudaErrorInvalidValue;
    }
}

cudaError_t cudaLaunchKernelExC(const cudaLaunchConfig_t *config, const void *func, void **args)
{
    launch_ex_plan plan = { 0 };
    tdm_function *f;
    cudaError_t err;

    if (!config || (config->numAttrs && !config->attrs))
        return tdm_ret(cudaErrorInvalidValue);
    for (unsigned int i = 0; i < config->numAttrs; i++) {
        err = plan_attribute(&config->attrs[i], &plan);
        if (err)
            return tdm_ret(err);
    }
    /* cudaLaunchKernelExC is cuLaunchKernelEx, whose answers the runtime
     * passes on (the H100 run of 2026-11-24): an unknown func is taken for
     * a kernel handle, cudaErrorInvalidResourceHandle, and an empty grid or
     * block is cudaErrorInvalidValue, where cudaLaunchKernel and <<<>>>
     * answer cudaErrorInvalidDeviceFunction and
     * cudaErrorInvalidConfiguration (launch_packed). */
    f = tdm_function_for_func(func, &err);
    if (!f)
        return tdm_ret(err);
    if (!config->gridDim.x || !config->gridDim.y || !config->gridDim.z || !config->blockDim.x ||
        !config->blockDim.y || !config->blockDim.z)
        return tdm_ret(cudaErrorInvalidValue);
    if (plan.clusters) {
        plan.cluster.cooperative = plan.cooperative;
        err = tdm_launch_cluster(f, config->gridDim, config->blockDim, args, config->dynamicSmemBytes, config->stream,
                                 &plan.cluster);
    } else {
        err = tdm_launch_as(plan.cooperative ? TDM_LAUNCH_COOPERATIVE : TDM_LAUNCH, f, config->gridDim,
                            config->blockDim, args, config->dynamicSmemBytes, config->stream);
    }
    if (!err && plan.event)
        err = cudaEventRecordWithFlags(plan.event, config->stream, plan.event_flags);
    return err;
}

cudaError_t cudaLaunchKernelExC_ptsz(const cudaLaunchConfig_t *config, const void *func, void **args)
{
    cudaLaunchConfig_t c;

    if (!config)
        return tdm_ret(cudaErrorInvalidValue);
    c = *config;
    if (!c.stream)
        c.stream = cudaStreamPerThread;
    return cudaLaunchKernelExC(&c, func, args);
}

/* The C API behind the cudaGetKernel template, which the cudaKernel_t
 * overload of cudaLaunchKernelEx pairs with: the same handle nvcc's own
 * stubs get. */
cudaError_t cudaGetKernel(cudaKernel_t *kernelPtr, const void *entryFuncAddr)
{
    return __cudaGetKernel(kernelPtr, entryFuncAddr);
}
