/* Twins of examples/mem_pools.cu:
 *   pool_fill(unsigned int *p, int n, unsigned int v)      p[i] = v + i
 *   pool_twice(const unsigned int *a, unsigned int *b, int n)  b[i] = 2 * a[i]   for i < n */
#include "kernels.h"

typedef struct fill_ctx {
    uint64_t p;
    uint32_t v;
} fill_ctx;

static bool fill_one(const sim_launch *l, int32_t i, void *ctx)
{
    fill_ctx *f = ctx;
    uint32_t *p = sim_u32(l, f->p + (uint64_t)((int64_t)i * 4));

    if (p)
        *p = f->v + (uint32_t)i;
    return p != NULL;
}

static void run_fill(const sim_launch *l)
{
    fill_ctx f = { sim_param_ptr(l, 0), sim_param_u32(l, 2) };

    sim_for_each_index_x(l, sim_param_i32(l, 1), fill_one, &f);
}

static bool twice_one(const sim_launch *l, int32_t i, void *ctx)
{
    const uint64_t *ab = ctx;
    uint32_t *a = sim_u32(l, ab[0] + (uint64_t)((int64_t)i * 4));
    uint32_t *b = a ? sim_u32(l, ab[1] + (uint64_t)((int64_t)i * 4)) : NULL;

    if (b)
        *b = 2u * *a;
    return b != NULL;
}

static void run_twice(const sim_launch *l)
{
    uint64_t ab[2] = { sim_param_ptr(l, 0), sim_param_ptr(l, 1) };

    sim_for_each_index_x(l, sim_param_i32(l, 2), twice_one, ab);
}

static const sim_param_desc fill_params[] = { SIM_PARAM_PTR, SIM_PARAM_I32, SIM_PARAM_I32 };
static const sim_param_desc twice_params[] = { SIM_PARAM_PTR, SIM_PARAM_PTR, SIM_PARAM_I32 };

const sim_kernel sim_kernel_pool_fill = {
    .name = "_Z9pool_fillPjij",
    .nparams = 3,
    .params = fill_params,
    .run = run_fill,
};

const sim_kernel sim_kernel_pool_twice = {
    .name = "_Z10pool_twicePKjPji",
    .nparams = 3,
    .params = twice_params,
    .run = run_twice,
};
