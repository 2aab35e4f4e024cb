/* Twins of examples/clusters.cu:
 *   cluster_sum_fixed (__cluster_dims__(2,1,1)) and cluster_sum_any
 *   (const unsigned *in, unsigned *out, int cx, int cy)
 * Each block sums in[block * 1024 .. +1024) and the cluster's first block
 * adds its cluster's sums through distributed shared memory after
 * cluster.sync().  The sim has neither, so the twin adds the cluster's
 * slices directly, with the cluster shape the program passes in cx, cy
 * (the GPU's kernel reads it from the hardware): the same sum, unsigned
 * and wrapping as on the GPU. */
#include <driver_types.h>

#include "kernels.h"

#define PER_BLOCK 1024u

static void run(const sim_launch *l)
{
    uint64_t in = sim_param_ptr(l, 0), out = sim_param_ptr(l, 1);
    int32_t cx = sim_param_i32(l, 2), cy = sim_param_i32(l, 3);
    uint32_t clusters_x;

    if (cx <= 0 || cy <= 0 || l->grid.x % (uint32_t)cx || l->grid.y % (uint32_t)cy || l->grid.z != 1) {
        sim_launch_fault(l, cudaErrorInvalidValue, "cluster_sum: cx, cy do not tile the grid");
        return;
    }
    clusters_x = l->grid.x / (uint32_t)cx;
    for (uint32_t by = 0; by < l->grid.y; by += (uint32_t)cy)
        for (uint32_t bx = 0; bx < l->grid.x; bx += (uint32_t)cx) {
            uint32_t total = 0, *dst;

            if (sim_launch_stopped(l))
                return;
            for (uint32_t y = by; y < by + (uint32_t)cy; y++)
                for (uint32_t x = bx; x < bx + (uint32_t)cx; x++) {
                    uint64_t block = (uint64_t)y * l->grid.x + x;
                    const uint32_t *src = sim_mem_ptr_aligned(l, in + block * PER_BLOCK * 4, PER_BLOCK * 4, 4);

                    if (!src)
                        return;
                    for (uint32_t i = 0; i < PER_BLOCK; i++)
                        total += src[i];
                }
            dst = sim_u32(l, out + ((uint64_t)(by / (uint32_t)cy) * clusters_x + bx / (uint32_t)cx) * 4);
            if (!dst)
                return;
            *dst = total;
        }
}

static const sim_param_desc params[] = { SIM_PARAM_PTR, SIM_PARAM_PTR, SIM_PARAM_I32, SIM_PARAM_I32 };

const sim_kernel sim_kernel_cluster_sum_fixed = {
    .name = "_Z17cluster_sum_fixedPKjPjii",
    .nparams = 4,
    .params = params,
    .static_shared = 4,
    .run = run,
    .cluster_dims = { 2, 1, 1 },
};

const sim_kernel sim_kernel_cluster_sum_any = {
    .name = "_Z15cluster_sum_anyPKjPjii",
    .nparams = 4,
    .params = params,
    .static_shared = 4,
    .run = run,
};
