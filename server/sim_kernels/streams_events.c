/* Twins of examples/streams_events.cu:
 *   se_transform(unsigned int *x, int n, unsigned int k, unsigned int base)
 *     x[i] = x[i] * k + ((unsigned int)i + base)          for i < n
 *   se_combine(const unsigned int *a, const unsigned int *b, unsigned int *out, int n)
 *     out[i] = (a[i] ^ (b[i] >> 3)) + 7u * (unsigned int)i  for i < n */
#include "kernels.h"

struct transform_args {
    uint64_t x;
    uint32_t k, base;
};

static bool transform_one(const sim_launch *l, int32_t i, void *ctx)
{
    const struct transform_args *a = ctx;
    uint32_t *p = sim_u32(l, a->x + (uint64_t)((int64_t)i * 4));

    if (p)
        *p = *p * a->k + ((uint32_t)i + a->base);
    return p != NULL;
}

static void run_transform(const sim_launch *l)
{
    struct transform_args a = { sim_param_ptr(l, 0), sim_param_u32(l, 2), sim_param_u32(l, 3) };

    sim_for_each_index_x(l, sim_param_i32(l, 1), transform_one, &a);
}

struct combine_args {
    uint64_t a, b, out;
};

static bool combine_one(const sim_launch *l, int32_t i, void *ctx)
{
    const struct combine_args *c = ctx;
    uint64_t off = (uint64_t)((int64_t)i * 4);
    const uint32_t *pa = sim_u32(l, c->a + off);
    const uint32_t *pb = pa ? sim_u32(l, c->b + off) : NULL;
    uint32_t *po = pb ? sim_u32(l, c->out + off) : NULL;

    if (po)
        *po = (*pa ^ (*pb >> 3)) + 7u * (uint32_t)i;
    return po != NULL;
}

static void run_combine(const sim_launch *l)
{
    struct combine_args c = { sim_param_ptr(l, 0), sim_param_ptr(l, 1), sim_param_ptr(l, 2) };

    sim_for_each_index_x(l, sim_param_i32(l, 3), combine_one, &c);
}

static const sim_param_desc transform_params[] = { SIM_PARAM_PTR, SIM_PARAM_I32, SIM_PARAM_U32, SIM_PARAM_U32 };
static const sim_param_desc combine_params[] = { SIM_PARAM_PTR, SIM_PARAM_PTR, SIM_PARAM_PTR, SIM_PARAM_I32 };

const sim_kernel sim_kernel_se_transform = {
    .name = "_Z12se_transformPjijj",
    .nparams = 4,
    .params = transform_params,
    .run = run_transform,
};

const sim_kernel sim_kernel_se_combine = {
    .name = "_Z10se_combinePKjS0_Pji",
    .nparams = 4,
    .params = combine_params,
    .run = run_combine,
};
