/* Thread block clusters (docs/runtime-api.md, "Thread block clusters"):
 * the cluster attributes of a launch configuration, the cluster occupancy
 * calculators and a kernel's cluster attributes.  The server's driver
 * judges every cluster shape; nothing is refused here that it accepts. */
#include <string.h>

#include "func_state.h"
#include "guest.h"

static tdm_xdim3 xdim3(unsigned x, unsigned y, unsigned z)
{
    return (tdm_xdim3){ x, y, z };
}

cudaError_t tdm_cluster_attribute(const cudaLaunchAttribute *a, tdm_cluster_launch_args *c, bool *any)
{
    const cudaLaunchAttributeValue *v = &a->val;

    switch (a->id) {
    case cudaLaunchAttributeClusterDimension:
        c->cluster = xdim3(v->clusterDim.x, v->clusterDim.y, v->clusterDim.z);
        break;
    case cudaLaunchAttributePreferredClusterDimension:
        c->preferred = xdim3(v->preferredClusterDim.x, v->preferredClusterDim.y, v->preferredClusterDim.z);
        break;
    case cudaLaunchAttributeClusterSchedulingPolicyPreference:
        c->policy = (int)v->clusterSchedulingPolicyPreference;
        break;
    default:
        return cudaErrorInvalidValue;
    }
    *any = c->cluster.x || c->cluster.y || c->cluster.z || c->preferred.x || c->preferred.y || c->preferred.z;
    return cudaSuccess;
}

static cudaError_t cluster_occupancy(int what, int *out, const void *func, const cudaLaunchConfig_t *config)
{
    tdm_cluster_occupancy_args a;
    tdm_cluster_launch_args c;
    tdm_u64_res r;
    tdm_function *f;
    bool any = false;
    cudaError_t err;

    if (!out || !config || (config->numAttrs && !config->attrs))
        return tdm_ret(cudaErrorInvalidValue);
    f = tdm_function_for_func(func, &err);
    if (!f)
        return tdm_ret(err);
    memset(&c, 0, sizeof(c));
    /* Only the cluster attributes bear on the answer; the rest are the
     * launch's business. */
    for (unsigned int i = 0; i < config->numAttrs; i++)
        (void)tdm_cluster_attribute(&config->attrs[i], &c, &any);
    memset(&a, 0, sizeof(a));
    a.what = what;
    a.func = f->handle;
    a.grid = xdim3(config->gridDim.x, config->gridDim.y, config->gridDim.z);
    a.block = xdim3(config->blockDim.x, config->blockDim.y, config->blockDim.z);
    if (config->dynamicSmemBytes > UINT32_MAX)
        return tdm_ret(cudaErrorInvalidValue);
    a.shared_mem = (unsigned)config->dynamicSmemBytes;
    a.cluster = c.cluster;
    a.policy = c.policy;
    /* The answer changes only with the function's attributes (func_state.h drops it
     * when one is set), as the per-multiprocessor occupancy's: asked before launches. */
    tdm_occupancy_key k = { .func = f->handle, .dyn_smem = a.shared_mem, .proc = TDM_CLUSTER_OCCUPANCY,
                            .flags = (uint32_t)what, .grid = { a.grid.x, a.grid.y, a.grid.z },
                            .block = { a.block.x, a.block.y, a.block.z },
                            .cluster = { a.cluster.x, a.cluster.y, a.cluster.z }, .policy = a.policy };
    uint64_t v;
    if (tdm_occupancy_cached(&k, &v)) {
        *out = (int)v;
        return cudaSuccess;
    }
    memset(&r, 0, sizeof(r));
    err = tdm_call(TDM_CLUSTER_OCCUPANCY, &a, &r);
    if (!err)
        err = (cudaError_t)r.err;
    if (!err) {
        *out = (int)r.value;
        tdm_occupancy_note(&k, r.value);
    }
    return tdm_ret(err);
}

cudaError_t cudaOccupancyMaxActiveClusters(int *numClusters, const void *func, const cudaLaunchConfig_t *launchConfig)
{
    return cluster_occupancy(TDM_CLUSTER_MAX_ACTIVE, numClusters, func, launchConfig);
}

cudaError_t cudaOccupancyMaxPotentialClusterSize(int *clusterSize, const void *func,
                                                 const cudaLaunchConfig_t *launchConfig)
{
    return cluster_occupancy(TDM_CLUSTER_MAX_POTENTIAL_SIZE, clusterSize, func, launchConfig);
}

cudaError_t tdm_cluster_func_attrs(tdm_function *f, struct cudaFuncAttributes *attr)
{
    tdm_func_cluster_res r;
    cudaError_t err;

    memset(&r, 0, sizeof(r));
    err = tdm_call(TDM_FUNC_GET_CLUSTER_ATTRS, &f->handle, &r);
    if (!err)
        err = (cudaError_t)r.err;
    if (err)
        return err;
    attr->clusterDimMustBeSet = r.dim_must_be_set;
    attr->requiredClusterWidth = r.width;
    attr->requiredClusterHeight = r.height;
    attr->requiredClusterDepth = r.depth;
    attr->nonPortableClusterSizeAllowed = r.non_portable;
    attr->clusterSchedulingPolicyPreference = r.policy;
    return cudaSuccess;
}
