/* Twins of examples/managed_memory.cu:
 *   managed_scale(unsigned int *p, int n)               p[i] = 3 * p[i] + 1   for i < n
 *   managed_fill(unsigned int *p, int n, unsigned k)    p[i] = i * k + 7      for i < n */
#include "kernels.h"

typedef struct fill_ctx {
    uint64_t p;
    uint32_t k;
} fill_ctx;

static bool scale_one(const sim_launch *l, int32_t i, void *ctx)
{
    uint32_t *p = sim_u32(l, *(uint64_t *)ctx + (uint64_t)((int64_t)i * 4));

    if (p)
        *p = 3u * *p + 1u;
    return p != NULL;
}

static void run_scale(const sim_launch *l)
{
    uint64_t p = sim_param_ptr(l, 0);

    sim_for_each_index_x(l, sim_param_i32(l, 1), scale_one, &p);
}

static bool fill_one(const sim_launch *l, int32_t i, void *ctx)
{
    const fill_ctx *c = ctx;
    uint32_t *p = sim_u32(l, c->p + (uint64_t)((int64_t)i * 4));

    if (p)
        *p = (uint32_t)i * c->k + 7u;
    return p != NULL;
}

static void run_fill(const sim_launch *l)
{
    fill_ctx c = { sim_param_ptr(l, 0), sim_param_u32(l, 2) };

    sim_for_each_index_x(l, sim_param_i32(l, 1), fill_one, &c);
}

static const sim_param_desc scale_params[] = { SIM_PARAM_PTR, SIM_PARAM_I32 };
static const sim_param_desc fill_params[] = { SIM_PARAM_PTR, SIM_PARAM_I32, SIM_PARAM_U32 };

const sim_kernel sim_kernel_managed_scale = {
    .name = "_Z13managed_scalePji",
    .nparams = 2,
    .params = scale_params,
    .run = run_scale,
};

const sim_kernel sim_kernel_managed_fill = {
    .name = "_Z12managed_fillPjij",
    .nparams = 3,
    .params = fill_params,
    .run = run_fill,
};
