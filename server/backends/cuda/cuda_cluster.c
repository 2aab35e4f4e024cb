/* Thread block clusters and the device odds and ends on the GPU
 * (docs/runtime-api.md, "Thread block clusters", "Device odds and ends"):
 * each is one driver call; the driver's own checks and errors stand. */
#include <string.h>

#include "cuda_backend_internal.h"

/* The attributes a cluster configuration gives cuLaunchKernelEx and the
 * cluster occupancy calculators; returns how many of attrs[4] are used. */
static unsigned cluster_attrs(const tdm_cluster_config *c, bool with_cluster, CUlaunchAttribute attrs[4])
{
    unsigned n = 0;

    memset(attrs, 0, 4 * sizeof(*attrs));
    if (with_cluster && (c->cluster.x || c->cluster.y || c->cluster.z)) {
        attrs[n].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
        attrs[n].value.clusterDim.x = c->cluster.x;
        attrs[n].value.clusterDim.y = c->cluster.y;
        attrs[n].value.clusterDim.z = c->cluster.z;
        n++;
    }
    if (with_cluster && (c->preferred.x || c->preferred.y || c->preferred.z)) {
        attrs[n].id = CU_LAUNCH_ATTRIBUTE_PREFERRED_CLUSTER_DIMENSION;
        attrs[n].value.preferredClusterDim.x = c->preferred.x;
        attrs[n].value.preferredClusterDim.y = c->preferred.y;
        attrs[n].value.preferredClusterDim.z = c->preferred.z;
        n++;
    }
    if (c->policy) {
        attrs[n].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE;
        attrs[n].value.clusterSchedulingPolicyPreference = (CUclusterSchedulingPolicy)c->policy;
        n++;
    }
    if (c->cooperative) {
        attrs[n].id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
        attrs[n].value.cooperative = 1;
        n++;
    }
    return n;
}

static void fill_config(CUlaunchConfig *lc, const tdm_cluster_config *c, tdm_bstream *s, CUlaunchAttribute *attrs,
                        unsigned nattrs)
{
    memset(lc, 0, sizeof(*lc));
    lc->gridDimX = c->grid.x;
    lc->gridDimY = c->grid.y;
    lc->gridDimZ = c->grid.z;
    lc->blockDimX = c->block.x;
    lc->blockDimY = c->block.y;
    lc->blockDimZ = c->block.z;
    lc->sharedMemBytes = c->shared_mem;
    lc->hStream = tdm_cuda_stream(s);
    lc->attrs = nattrs ? attrs : NULL;
    lc->numAttrs = nattrs;
}

int tdm_cuda_launch_cluster(tdm_backend *b, tdm_bfunc *f, const tdm_cluster_config *c, tdm_bstream *s,
                            const void *params, size_t params_len)
{
    const tdm_param_info *p = tdm_cuda_func_params(f);
    void *args[TDM_MAX_KERNEL_PARAMS];
    size_t want = p->count ? (size_t)p->offset[p->count - 1] + p->size[p->count - 1] : 0;
    CUlaunchAttribute attrs[4];
    CUlaunchConfig lc;
    int err = tdm_cuda_enter(b);

    if (err)
        return err;
    if (params_len != want)
        return cudaErrorInvalidValue;
    for (uint32_t i = 0; i < p->count; i++)
        args[i] = (void *)((uintptr_t)params + p->offset[i]);
    fill_config(&lc, c, s, attrs, cluster_attrs(c, true, attrs));
    return tdm_cuda_err(tdm_cu.cuLaunchKernelEx(&lc, tdm_cuda_func_handle(f), p->count ? args : NULL, NULL),
                        "cuLaunchKernelEx");
}

int tdm_cuda_occupancy_max_active_clusters(tdm_backend *b, tdm_bfunc *f, const tdm_cluster_config *c, int *clusters)
{
    CUlaunchAttribute attrs[4];
    CUlaunchConfig lc;
    int err = tdm_cuda_enter(b);

    if (err)
        return err;
    fill_config(&lc, c, NULL, attrs, cluster_attrs(c, true, attrs));
    return tdm_cuda_err(tdm_cu.cuOccupancyMaxActiveClusters(clusters, tdm_cuda_func_handle(f), &lc),
                        "cuOccupancyMaxActiveClusters");
}

int tdm_cuda_occupancy_max_cluster_size(tdm_backend *b, tdm_bfunc *f, const tdm_cluster_config *c, int *size)
{
    CUlaunchAttribute attrs[4];
    CUlaunchConfig lc;
    int err = tdm_cuda_enter(b);

    if (err)
        return err;
    fill_config(&lc, c, NULL, attrs, cluster_attrs(c, false, attrs));
    return tdm_cuda_err(tdm_cu.cuOccupancyMaxPotentialClusterSize(size, tdm_cuda_func_handle(f), &lc),
                        "cuOccupancyMaxPotentialClusterSize");
}

int tdm_cuda_func_cluster_attrs(tdm_backend *b, tdm_bfunc *f, tdm_func_cluster_attrs *out)
{
    static const struct { CUfunction_attribute a; size_t at; } fields[] = {
        { CU_FUNC_ATTRIBUTE_CLUSTER_SIZE_MUST_BE_SET, offsetof(tdm_func_cluster_attrs, dim_must_be_set) },
        { CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH, offsetof(tdm_func_cluster_attrs, width) },
        { CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT, offsetof(tdm_func_cluster_attrs, height) },
        { CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH, offsetof(tdm_func_cluster_attrs, depth) },
        { CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, offsetof(tdm_func_cluster_attrs, non_portable) },
        { CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE, offsetof(tdm_func_cluster_attrs, policy) },
    };
    int err = tdm_cuda_enter(b);

    if (err)
        return err;
    for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
        int v = 0;

        err = tdm_cuda_err(tdm_cu.cuFuncGetAttribute(&v, fields[i].a, tdm_cuda_func_handle(f)), "cuFuncGetAttribute");
        if (err)
            return err;
        *(int32_t *)((char *)out + fields[i].at) = v;
    }
    return 0;
}

int tdm_cuda_tex1d_linear_max_width(tdm_backend *b, int kind, int bits, int channels, uint64_t *width)
{
    CUarray_format format;
    size_t w = 0;
    int err = tdm_cuda_enter(b);

    if (err)
        return err;
    if ((err = tdm_cuda_array_format(kind, bits, &format)) != 0)
        return err;
    err = tdm_cuda_err(tdm_cu.cuDeviceGetTexture1DLinearMaxWidth(&w, format, (unsigned)channels, b->dev),
                       "cuDeviceGetTexture1DLinearMaxWidth");
    if (!err)
        *width = w;
    return err;
}

int tdm_cuda_host_atomic_caps(tdm_backend *b, unsigned caps[TDM_BACKEND_ATOMIC_OPS])
{
    CUatomicOperation ops[TDM_BACKEND_ATOMIC_OPS];
    int err = tdm_cuda_enter(b);

    if (err)
        return err;
    for (int i = 0; i < TDM_BACKEND_ATOMIC_OPS; i++)
        ops[i] = (CUatomicOperation)i;
    return tdm_cuda_err(tdm_cu.cuDeviceGetHostAtomicCapabilities(caps, ops, TDM_BACKEND_ATOMIC_OPS, b->dev),
                        "cuDeviceGetHostAtomicCapabilities");
}
