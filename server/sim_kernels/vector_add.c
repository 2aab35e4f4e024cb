/* Twin of examples/vector_add.cu:
 *   __constant__ float vadd_scale;
 *   vector_add(const float *a, const float *b, float *c, int n)
 *     c[i] = vadd_scale * a[i] + b[i]   for i < n
 * nvcc contracts the expression to one fused multiply-add; fmaf does the
 * same rounding. */
#include <math.h>

#include "kernels.h"

const sim_global_desc sim_global_vadd_scale = { "vadd_scale", sizeof(float) };

struct vadd_args {
    uint64_t a, b, c;
    float scale;
};

static bool vadd_one(const sim_launch *l, int32_t i, void *ctx)
{
    const struct vadd_args *v = ctx;
    uint64_t off = (uint64_t)((int64_t)i * 4);
    const float *pa = sim_f32(l, v->a + off);
    const float *pb = pa ? sim_f32(l, v->b + off) : NULL;
    float *pc = pb ? sim_f32(l, v->c + off) : NULL;

    if (pc)
        *pc = fmaf(v->scale, *pa, *pb);
    return pc != NULL;
}

static void run(const sim_launch *l)
{
    const float *scale = sim_f32(l, l->globals[0]);
    struct vadd_args v = { sim_param_ptr(l, 0), sim_param_ptr(l, 1), sim_param_ptr(l, 2), 0.0f };

    if (!scale)
        return;
    v.scale = *scale;
    sim_for_each_index_x(l, sim_param_i32(l, 3), vadd_one, &v);
}

static const sim_param_desc params[] = { SIM_PARAM_PTR, SIM_PARAM_PTR, SIM_PARAM_PTR, SIM_PARAM_I32 };
static const char *const used_globals[] = { "vadd_scale" };

const sim_kernel sim_kernel_vector_add = {
    .name = "_Z10vector_addPKfS0_Pfi",
    .nparams = 4,
    .params = params,
    .nglobals = 1,
    .globals = used_globals,
    .run = run,
};
