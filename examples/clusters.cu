// clusters: thread block clusters (docs/runtime-api.md, "Thread block
// clusters").  A kernel compiled with __cluster_dims__ launched with <<<>>>
// and with cudaLaunchKernelEx, a plain kernel launched with the cluster
// dimension attribute in 1D and 2D, and a non-portable cluster of 16 blocks;
// each block sums its slice into shared memory and the first block of each
// cluster adds its cluster's sums through distributed shared memory after
// cluster.sync().  Then the function's cluster attributes, the cluster
// occupancy calculators and the driver's refusals of bad cluster shapes.
// Prints the same lines natively and through Tandem.
//
// A cluster launch may report a bad shape in the call (natively) or at the
// next synchronization (through Tandem, where launches are one-way): each
// case prints the first error of the launch and the synchronization.
#include <cooperative_groups.h>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

namespace cg = cooperative_groups;

#define CHECK(call)                                                                    \
    do {                                                                               \
        cudaError_t err_ = (call);                                                     \
        if (err_ != cudaSuccess) {                                                     \
            fprintf(stderr, "clusters: %s failed at %s:%d: %s\n", #call, __FILE__,     \
                    __LINE__, cudaGetErrorName(err_));                                 \
            exit(1);                                                                   \
        }                                                                              \
    } while (0)

static const int PER_BLOCK = 1024; // elements each block sums
static const int THREADS = 128;

// out[cluster] = the sum of in[] over the blocks of that cluster.  The
// cluster's shape is the hardware's (cluster.dim_blocks()); cx and cy say
// it too, for the simulated twin, which cannot run clusters.
__device__ void cluster_sum(const unsigned *in, unsigned *out, int cx, int cy)
{
    __shared__ unsigned partial;
    cg::cluster_group cluster = cg::this_cluster();
    dim3 cdim = cluster.dim_blocks();
    unsigned block = blockIdx.y * gridDim.x + blockIdx.x;
    (void)cx;
    (void)cy;

    if (threadIdx.x == 0)
        partial = 0;
    __syncthreads();
    unsigned s = 0;
    for (int i = threadIdx.x; i < PER_BLOCK; i += blockDim.x)
        s += in[(size_t)block * PER_BLOCK + i];
    atomicAdd(&partial, s);
    cluster.sync(); // every block's partial is complete
    if (cluster.block_rank() == 0 && threadIdx.x == 0) {
        unsigned total = 0;
        for (unsigned r = 0; r < cluster.num_blocks(); r++)
            total += *cluster.map_shared_rank(&partial, r);
        unsigned clusters_x = gridDim.x / cdim.x;
        out[(blockIdx.y / cdim.y) * clusters_x + blockIdx.x / cdim.x] = total;
    }
    cluster.sync(); // no block leaves while its shared memory may be read
}

__global__ void __cluster_dims__(2, 1, 1) cluster_sum_fixed(const unsigned *in, unsigned *out, int cx, int cy)
{
    cluster_sum(in, out, cx, cy);
}

__global__ void cluster_sum_any(const unsigned *in, unsigned *out, int cx, int cy)
{
    cluster_sum(in, out, cx, cy);
}

static unsigned *h_in, *d_in, *d_out;
static const int MAX_BLOCKS = 64;

// The host's answer for a gx x gy grid in cx x cy clusters.
static bool correct(int gx, int gy, int cx, int cy)
{
    int nclusters = (gx / cx) * (gy / cy);
    unsigned got[MAX_BLOCKS];

    CHECK(cudaMemcpy(got, d_out, sizeof(unsigned) * nclusters, cudaMemcpyDeviceToHost));
    for (int c = 0; c < nclusters; c++) {
        unsigned want = 0;
        int x0 = (c % (gx / cx)) * cx, y0 = (c / (gx / cx)) * cy;
        for (int y = y0; y < y0 + cy; y++)
            for (int x = x0; x < x0 + cx; x++)
                for (int i = 0; i < PER_BLOCK; i++)
                    want += h_in[(size_t)(y * gx + x) * PER_BLOCK + i];
        if (got[c] != want)
            return false;
    }
    return true;
}

static cudaLaunchConfig_t config(dim3 grid, cudaLaunchAttribute *attrs, unsigned n)
{
    cudaLaunchConfig_t c = {};
    c.gridDim = grid;
    c.blockDim = dim3(THREADS);
    c.attrs = attrs;
    c.numAttrs = n;
    return c;
}

static cudaLaunchAttribute cluster_attr(unsigned x, unsigned y, unsigned z)
{
    cudaLaunchAttribute a = {};
    a.id = cudaLaunchAttributeClusterDimension;
    a.val.clusterDim.x = x;
    a.val.clusterDim.y = y;
    a.val.clusterDim.z = z;
    return a;
}

// The first error of a launch and the synchronization after it.
static const char *outcome(cudaError_t launch)
{
    cudaError_t sync = cudaDeviceSynchronize();
    cudaGetLastError();
    return cudaGetErrorName(launch != cudaSuccess ? launch : sync);
}

static const char *verdict(cudaError_t launch, int gx, int gy, int cx, int cy)
{
    CHECK(launch);
    CHECK(cudaDeviceSynchronize());
    return correct(gx, gy, cx, cy) ? "correct" : "WRONG";
}

static const char *launch_any(dim3 grid, unsigned cx, unsigned cy)
{
    cudaLaunchAttribute a = cluster_attr(cx, cy, 1);
    cudaLaunchConfig_t c = config(grid, &a, 1);
    CHECK(cudaMemset(d_out, 0, sizeof(unsigned) * MAX_BLOCKS));
    return verdict(cudaLaunchKernelEx(&c, cluster_sum_any, (const unsigned *)d_in, d_out, (int)cx, (int)cy),
                   (int)grid.x, (int)grid.y, (int)cx, (int)cy);
}

static const char *refused_any(dim3 grid, unsigned cx, unsigned cy, unsigned cz)
{
    cudaLaunchAttribute a = cluster_attr(cx, cy, cz);
    cudaLaunchConfig_t c = config(grid, &a, 1);
    return outcome(cudaLaunchKernelEx(&c, cluster_sum_any, (const unsigned *)d_in, d_out, (int)cx, (int)cy));
}

int main(void)
{
    int attr = 0;
    CHECK(cudaDeviceGetAttribute(&attr, cudaDevAttrClusterLaunch, 0));
    printf("cluster launch supported: %d\n", attr);
    if (!attr)
        return 0;

    size_t n = (size_t)MAX_BLOCKS * PER_BLOCK;
    h_in = (unsigned *)malloc(n * sizeof(unsigned));
    for (size_t i = 0; i < n; i++)
        h_in[i] = (unsigned)((i * 2654435761u) >> 7) % 100000u;
    CHECK(cudaMalloc(&d_in, n * sizeof(unsigned)));
    CHECK(cudaMalloc(&d_out, MAX_BLOCKS * sizeof(unsigned)));
    CHECK(cudaMemcpy(d_in, h_in, n * sizeof(unsigned), cudaMemcpyHostToDevice));

    // The function attributes: compiled-in dimensions, and none.
    cudaFuncAttributes fa;
    CHECK(cudaFuncGetAttributes(&fa, cluster_sum_fixed));
    printf("fixed kernel: required cluster %dx%dx%d, non-portable %d\n", fa.requiredClusterWidth,
           fa.requiredClusterHeight, fa.requiredClusterDepth, fa.nonPortableClusterSizeAllowed);
    CHECK(cudaFuncGetAttributes(&fa, cluster_sum_any));
    printf("plain kernel: required cluster %dx%dx%d, non-portable %d\n", fa.requiredClusterWidth,
           fa.requiredClusterHeight, fa.requiredClusterDepth, fa.nonPortableClusterSizeAllowed);

    // __cluster_dims__(2,1,1): <<<>>> and cudaLaunchKernelEx without attributes.
    CHECK(cudaMemset(d_out, 0, sizeof(unsigned) * MAX_BLOCKS));
    cluster_sum_fixed<<<16, THREADS>>>(d_in, d_out, 2, 1);
    printf("__cluster_dims__(2,1,1), <<<16>>>: %s\n", verdict(cudaGetLastError(), 16, 1, 2, 1));
    CHECK(cudaMemset(d_out, 0, sizeof(unsigned) * MAX_BLOCKS));
    cudaLaunchConfig_t c = config(dim3(32), NULL, 0);
    printf("__cluster_dims__(2,1,1), cudaLaunchKernelEx grid 32: %s\n",
           verdict(cudaLaunchKernelEx(&c, cluster_sum_fixed, (const unsigned *)d_in, d_out, 2, 1), 32, 1, 2, 1));

    // The cluster dimension attribute.
    printf("attribute 2x1x1, grid 16: %s\n", launch_any(dim3(16), 2, 1));
    printf("attribute 4x1x1, grid 32: %s\n", launch_any(dim3(32), 4, 1));
    printf("attribute 8x1x1, grid 64: %s\n", launch_any(dim3(64), 8, 1));
    printf("attribute 2x2x1, grid 8x4: %s\n", launch_any(dim3(8, 4), 2, 2));

    // Occupancy: the largest cluster, and how many clusters fit.
    cudaLaunchAttribute a = cluster_attr(2, 1, 1);
    c = config(dim3(64), &a, 1);
    int size = 0, active = 0;
    CHECK(cudaOccupancyMaxPotentialClusterSize(&size, (const void *)cluster_sum_fixed, &c));
    printf("max potential cluster size, fixed kernel: %d\n", size);
    CHECK(cudaOccupancyMaxPotentialClusterSize(&size, (const void *)cluster_sum_any, &c));
    printf("max potential cluster size, plain kernel: %d\n", size);
    CHECK(cudaOccupancyMaxActiveClusters(&active, (const void *)cluster_sum_any, &c));
    printf("max active clusters of 2, plain kernel: %s\n", active > 0 ? "some" : "none");

    // Refusals, as the driver gives them.
    printf("attribute 3x1x1, grid 16 (not a multiple): %s\n", refused_any(dim3(16), 3, 1, 1));
    printf("attribute 16x1x1 without non-portable: %s\n", refused_any(dim3(16), 16, 1, 1));
    printf("attribute 4x1x1 on __cluster_dims__(2,1,1): ");
    a = cluster_attr(4, 1, 1);
    c = config(dim3(16), &a, 1);
    printf("%s\n", outcome(cudaLaunchKernelEx(&c, cluster_sum_fixed, (const unsigned *)d_in, d_out, 4, 1)));
    cluster_sum_fixed<<<15, THREADS>>>(d_in, d_out, 2, 1);
    printf("__cluster_dims__(2,1,1), <<<15>>> (not a multiple): %s\n", outcome(cudaGetLastError()));
    printf("set required width on __cluster_dims__ kernel: %s\n",
           cudaGetErrorName(cudaFuncSetAttribute(cluster_sum_fixed, cudaFuncAttributeRequiredClusterWidth, 4)));
    cudaGetLastError();
    printf("usable after the refusals: %s\n", cudaGetErrorName(cudaDeviceSynchronize()));

    // Non-portable: 16 blocks once the kernel allows it.
    CHECK(cudaFuncSetAttribute(cluster_sum_any, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
    CHECK(cudaFuncGetAttributes(&fa, cluster_sum_any));
    printf("plain kernel after the attribute: non-portable %d\n", fa.nonPortableClusterSizeAllowed);
    a = cluster_attr(2, 1, 1);
    c = config(dim3(64), &a, 1);
    CHECK(cudaOccupancyMaxPotentialClusterSize(&size, (const void *)cluster_sum_any, &c));
    printf("max potential cluster size, non-portable: %d\n", size);
    printf("attribute 16x1x1, grid 64, non-portable: %s\n", launch_any(dim3(64), 16, 1));
    printf("attribute 32x1x1, grid 64, non-portable: %s\n", refused_any(dim3(64), 32, 1, 1));
    printf("still usable: %s\n", cudaGetErrorName(cudaDeviceSynchronize()));

    CHECK(cudaFree(d_in));
    CHECK(cudaFree(d_out));
    free(h_in);
    return 0;
}
