/* Thread block clusters on the simulated GPU (docs/sim-backend.md,
 * docs/runtime-api.md "Thread block clusters"): a cluster launch is checked
 * as the H100's driver checks it and then runs as an ordinary launch, block
 * after block.  A twin cannot model distributed shared memory or
 * cluster.sync(); the check program's twin computes the same result
 * another way.  Also the device odds and ends the sim answers for itself. */
#include <string.h>

#include "sim_internal.h"

#define SIM_CLUSTER_PORTABLE 8      /* blocks, sm_90's portable cluster size */
#define SIM_CLUSTER_NON_PORTABLE 16 /* blocks, the H100's largest */
#define SIM_GPCS 8                  /* a cluster runs inside one GPC */
#define SIM_SMS_PER_GPC 16
#define SIM_TEX1D_LINEAR_MAX (1u << 28) /* elements, the H100's cudaDevAttrMaxTexture1DLinearWidth */

enum { CL_MUST_BE_SET, CL_WIDTH, CL_HEIGHT, CL_DEPTH, CL_NON_PORTABLE, CL_POLICY };

static bool kernel_has_dims(const sim_kernel *k)
{
    return k->cluster_dims[0] || k->cluster_dims[1] || k->cluster_dims[2];
}

static bool dims_set(tdm_dim3 d)
{
    return d.x || d.y || d.z;
}

/* What sim_launch_kernel refuses first (cudaErrorInvalidConfiguration). */
static bool bad_dims(tdm_dim3 grid, tdm_dim3 block)
{
    return !grid.x || !grid.y || !grid.z || !block.x || !block.y || !block.z;
}

int sim_func_cluster_attrs(tdm_backend *b, tdm_bfunc *f, tdm_func_cluster_attrs *out)
{
    const sim_kernel *k = f->k;

    pthread_mutex_lock(&b->lock);
    out->dim_must_be_set = f->cluster_attr[CL_MUST_BE_SET];
    out->width = kernel_has_dims(k) ? (int32_t)k->cluster_dims[0] : f->cluster_attr[CL_WIDTH];
    out->height = kernel_has_dims(k) ? (int32_t)k->cluster_dims[1] : f->cluster_attr[CL_HEIGHT];
    out->depth = kernel_has_dims(k) ? (int32_t)k->cluster_dims[2] : f->cluster_attr[CL_DEPTH];
    out->non_portable = f->cluster_attr[CL_NON_PORTABLE];
    out->policy = f->cluster_attr[CL_POLICY];
    pthread_mutex_unlock(&b->lock);
    return 0;
}

int sim_func_set_cluster_attribute(tdm_backend *b, tdm_bfunc *f, int attr, int value)
{
    int i = attr - cudaFuncAttributeClusterDimMustBeSet;

    if (i < CL_MUST_BE_SET || i > CL_POLICY)
        return cudaErrorInvalidValue;
    if (value < 0)
        return cudaErrorInvalidValue;
    /* Dimensions compiled in (__cluster_dims__) cannot change at run time. */
    if (i >= CL_WIDTH && i <= CL_DEPTH && kernel_has_dims(f->k))
        return cudaErrorNotPermitted;
    if (i == CL_POLICY && value > cudaClusterSchedulingPolicyLoadBalancing)
        return cudaErrorInvalidValue;
    pthread_mutex_lock(&b->lock);
    f->cluster_attr[i] = value;
    pthread_mutex_unlock(&b->lock);
    return 0;
}

/* The cluster dimensions a launch runs with: the launch's, else the
 * kernel's (compiled in or set); 0s for a launch without clusters. */
static int effective_dims(tdm_backend *b, tdm_bfunc *f, const tdm_cluster_config *c, tdm_dim3 *dims)
{
    tdm_func_cluster_attrs a;
    tdm_dim3 own;

    sim_func_cluster_attrs(b, f, &a);
    own = (tdm_dim3){ (uint32_t)a.width, (uint32_t)a.height, (uint32_t)a.depth };
    if (dims_set(c->cluster)) {
        /* A launch may repeat the kernel's required dimensions, not change them. */
        if (dims_set(own) && (own.x != c->cluster.x || own.y != c->cluster.y || own.z != c->cluster.z))
            return cudaErrorInvalidClusterSize;
        *dims = c->cluster;
    } else {
        *dims = own;
    }
    if (!dims_set(*dims))
        return a.dim_must_be_set ? cudaErrorInvalidClusterSize : 0;
    if (!dims->x || !dims->y || !dims->z)
        return cudaErrorInvalidClusterSize;
    return 0;
}

static int size_limit(tdm_backend *b, tdm_bfunc *f)
{
    tdm_func_cluster_attrs a;

    sim_func_cluster_attrs(b, f, &a);
    return a.non_portable ? SIM_CLUSTER_NON_PORTABLE : SIM_CLUSTER_PORTABLE;
}

static int blocks_per_sm(tdm_backend *b, tdm_bfunc *f, const tdm_cluster_config *c, int *per_sm)
{
    uint64_t threads = (uint64_t)c->block.x * c->block.y * c->block.z;

    *per_sm = 0;
    if (!threads || threads > INT32_MAX)
        return cudaErrorInvalidValue;
    return sim_occupancy_max_blocks(b, f, (int)threads, c->shared_mem, 0, per_sm);
}

/* How many clusters of `size` blocks the device holds at once. */
static int active_clusters(int per_sm, uint64_t size)
{
    return size ? (int)(SIM_GPCS * ((uint64_t)SIM_SMS_PER_GPC * (uint64_t)per_sm / size)) : 0;
}

/* The driver's checks of a launch's clusters: c's own, else the kernel's. */
static int check_clusters(tdm_backend *b, tdm_bfunc *f, const tdm_cluster_config *c)
{
    tdm_dim3 d;
    uint64_t size;
    int per_sm = 0, err = effective_dims(b, f, c, &d);

    if (err)
        return err;
    if (c->policy < 0 || c->policy > cudaClusterSchedulingPolicyLoadBalancing)
        return cudaErrorInvalidValue;
    if (dims_set(d)) {
        size = (uint64_t)d.x * d.y * d.z;
        if (c->grid.x % d.x || c->grid.y % d.y || c->grid.z % d.z || size > (uint64_t)size_limit(b, f))
            return cudaErrorInvalidClusterSize;
        /* A preferred cluster is a whole number of regular ones that
         * divides the grid (CUlaunchAttributeValue::preferredClusterDim). */
        if (dims_set(c->preferred) &&
            (!c->preferred.x || !c->preferred.y || c->preferred.x % d.x || c->preferred.y % d.y ||
             c->preferred.z != d.z || c->grid.x % c->preferred.x || c->grid.y % c->preferred.y))
            return cudaErrorInvalidClusterSize;
        if ((err = blocks_per_sm(b, f, c, &per_sm)) != 0)
            return err;
        if (!active_clusters(per_sm, size))
            return cudaErrorInvalidClusterSize; /* a cluster that fits nowhere */
    } else if (dims_set(c->preferred)) {
        return cudaErrorInvalidClusterSize; /* a substitute for no cluster */
    }
    return 0;
}

int sim_launch_cluster(tdm_backend *b, tdm_bfunc *f, const tdm_cluster_config *c, tdm_bstream *s, const void *params,
                       size_t params_len)
{
    int err = check_clusters(b, f, c);

    if (err)
        return err;
    if (c->cooperative)
        return sim_launch_cooperative(b, f, c->grid, c->block, c->shared_mem, s, params, params_len);
    return sim_launch_kernel(b, f, c->grid, c->block, c->shared_mem, s, params, params_len);
}

/* A plain launch (<<<>>>, cudaLaunchKernel) runs in the kernel's own
 * clusters, __cluster_dims__ or set with cudaFuncSetAttribute, and is
 * refused as a cluster launch is when they do not fit the grid. */
int sim_launch_plain(tdm_backend *b, tdm_bfunc *f, tdm_dim3 grid, tdm_dim3 block, uint32_t shared_mem, tdm_bstream *s,
                     const void *params, size_t params_len)
{
    tdm_cluster_config c = { .grid = grid, .block = block, .shared_mem = shared_mem };
    int err = f && !bad_dims(grid, block) ? check_clusters(b, f, &c) : 0;

    return err ? err : sim_launch_kernel(b, f, grid, block, shared_mem, s, params, params_len);
}

int sim_occupancy_max_active_clusters(tdm_backend *b, tdm_bfunc *f, const tdm_cluster_config *c, int *clusters)
{
    tdm_dim3 d;
    uint64_t size;
    int per_sm = 0, err = effective_dims(b, f, c, &d);

    *clusters = 0;
    if (err)
        return err;
    if (!dims_set(d))
        return cudaErrorInvalidClusterSize; /* a cluster size is needed to count clusters */
    size = (uint64_t)d.x * d.y * d.z;
    if (size > (uint64_t)size_limit(b, f))
        return cudaErrorInvalidClusterSize;
    if ((err = blocks_per_sm(b, f, c, &per_sm)) != 0)
        return err;
    *clusters = active_clusters(per_sm, size);
    return 0;
}

int sim_occupancy_max_cluster_size(tdm_backend *b, tdm_bfunc *f, const tdm_cluster_config *c, int *size)
{
    tdm_func_cluster_attrs a;
    int per_sm = 0, err;

    *size = 0;
    sim_func_cluster_attrs(b, f, &a);
    if (a.width && a.height && a.depth) {
        *size = a.width * a.height * a.depth;
        return 0;
    }
    if ((err = blocks_per_sm(b, f, c, &per_sm)) != 0)
        return err;
    *size = SIM_SMS_PER_GPC * per_sm < size_limit(b, f) ? SIM_SMS_PER_GPC * per_sm : size_limit(b, f);
    return 0;
}

int sim_tex1d_linear_max_width(tdm_backend *b, int kind, int bits, int channels, uint64_t *width)
{
    (void)b;
    (void)kind;
    (void)bits;
    (void)channels;
    *width = SIM_TEX1D_LINEAR_MAX;
    return 0;
}

/* The sim's host link is PCIe without native host atomics
 * (cudaDevAttrHostNativeAtomicSupported 0): no capability. */
int sim_host_atomic_caps(tdm_backend *b, unsigned caps[TDM_BACKEND_ATOMIC_OPS])
{
    (void)b;
    memset(caps, 0, TDM_BACKEND_ATOMIC_OPS * sizeof(caps[0]));
    return 0;
}
