/* Twin of bench/shares/shares.cu's compute-bound kernel (docs/sm-shares.md, docs/benchmarks.md):
 *   shares_compute(float *out, unsigned *sm_mask, float seed, int iters)
 * Each thread i runs `iters` steps of two dependent fused multiply-adds and stores their sum in
 * out[i]; thread 0 of each block sets its SM's bit (%smid) in sm_mask.  The sim has no SMs: its
 * model (sim_share.c) puts block k on SM k mod the launch's SMs (sim_launch_sms), so the bits
 * set are those of the first min(blocks, SMs) SMs, and a guest sees its share change as it does
 * on the GPU.  The resize probe and the timeline's guests (bench/shares/shares.sh,
 * tests/gpu/run-control-plane-gpu.sh, bench/control-plane/timeline.sh) run it on the sim with few
 * iterations: the time the share model holds each kernel is what they measure. */
#include <math.h>

#include <driver_types.h>

#include "kernels.h"

#define MASK_WORDS 32   /* shares.cu's MAX_SMS / 32 */

static float one(uint32_t i, float seed, int32_t iters)
{
    float a = seed + (float)(i % 97u), b = 0.5f;

    for (int32_t k = 0; k < iters; k++) {
        a = fmaf(a, 0.999f, b);
        b = fmaf(b, 0.998f, 0.001f);
    }
    return a + b;
}

static void run_compute(const sim_launch *l)
{
    uint64_t out = sim_param_ptr(l, 0), mask = sim_param_ptr(l, 1);
    float seed;
    int32_t iters = sim_param_i32(l, 3);
    uint32_t bdim = l->block.x * l->block.y * l->block.z, blocks = l->grid.x * l->grid.y * l->grid.z;
    uint32_t used = sim_launch_sms(l) < blocks ? sim_launch_sms(l) : blocks;

    memcpy(&seed, l->params + l->param_offset[2], sizeof(seed));
    /* The kernel indexes with blockIdx.x and threadIdx.x alone; shares.cu launches 1-D grids. */
    if (l->grid.y != 1 || l->grid.z != 1 || l->block.y != 1 || l->block.z != 1) {
        sim_launch_fault(l, cudaErrorInvalidValue, "shares_compute's twin models 1-D grids and blocks only");
        return;
    }
    for (uint32_t b = 0; b < blocks; b++) {
        if (sim_launch_stopped(l))
            return;
        for (uint32_t t = 0; t < bdim; t++) {
            uint32_t i = b * bdim + t;
            float *p = sim_f32(l, out + (uint64_t)i * 4);
            if (!p)
                return;
            *p = one(i, seed, iters);
        }
    }
    for (uint32_t s = 0; s < used && s < MASK_WORDS * 32; s++) {
        uint32_t *w = sim_u32(l, mask + (uint64_t)(s / 32) * 4);
        if (!w)
            return;
        *w |= 1u << (s % 32);   /* atomicOr: threads of the sim never overlap */
    }
}

static const sim_param_desc compute_params[] = { SIM_PARAM_PTR, SIM_PARAM_PTR, SIM_PARAM_F32, SIM_PARAM_I32 };

const sim_kernel sim_kernel_shares_compute = {
    .name = "_Z14shares_computePfPjfi",
    .nparams = 4,
    .params = compute_params,
    .run = run_compute,
};
