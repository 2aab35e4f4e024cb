/* Twin of bench/driver-calls/kernel.cu:
 *   drvcalls_step(float *y, const float *x, const int *idx, unsigned *count, int n, int stride,
 *                 float a, long long tag)
 *     y[i] = a * x[(i * stride) % n] + idx[i] + (tag & 1), count += 1   for i < n
 * The benchmark launches it with n = 0 (what it measures is the call); the body is here so a
 * launch with work means what the GPU's does. */
#include "kernels.h"

struct step_args {
    uint64_t y, x, idx, count;
    int32_t n, stride;
    float a;
    int64_t tag;
};

static bool step_one(const sim_launch *l, int32_t i, void *ctx)
{
    const struct step_args *s = ctx;
    int32_t j = (int32_t)(((int64_t)i * s->stride) % s->n);
    const float *px = sim_f32(l, s->x + (uint64_t)((int64_t)j * 4));
    const uint32_t *pidx = px ? sim_u32(l, s->idx + (uint64_t)((int64_t)i * 4)) : NULL;
    float *py = pidx ? sim_f32(l, s->y + (uint64_t)((int64_t)i * 4)) : NULL;
    uint32_t *pc = py ? sim_u32(l, s->count) : NULL;

    if (!pc)
        return false;
    *py = s->a * *px + (float)(int32_t)*pidx + (float)(s->tag & 1);
    *pc += 1;
    return true;
}

static void run(const sim_launch *l)
{
    struct step_args s = { sim_param_ptr(l, 0), sim_param_ptr(l, 1), sim_param_ptr(l, 2), sim_param_ptr(l, 3),
                           sim_param_i32(l, 4), sim_param_i32(l, 5), 0.0f, 0 };
    uint32_t bits = sim_param_u32(l, 6);

    memcpy(&s.a, &bits, sizeof(s.a));
    memcpy(&s.tag, l->params + l->param_offset[7], sizeof(s.tag));
    if (s.n > 0)
        sim_for_each_index_x(l, s.n, step_one, &s);
}

static const sim_param_desc params[] = { SIM_PARAM_PTR, SIM_PARAM_PTR, SIM_PARAM_PTR, SIM_PARAM_PTR,
                                         SIM_PARAM_I32, SIM_PARAM_I32, SIM_PARAM_F32, { 8, 8 } };

const sim_kernel sim_kernel_drvcalls_step = {
    .name = "_Z13drvcalls_stepPfPKfPKiPjiifx",
    .nparams = 8,
    .params = params,
    .run = run,
};
