/* Twin of examples/increment_loop.cu:
 *   increment(unsigned int *x, int n)
 *     x[i] += 1u + (unsigned int)(i % 7)   for i < n */
#include "kernels.h"

static bool increment_one(const sim_launch *l, int32_t i, void *x)
{
    uint32_t *p = sim_u32(l, *(uint64_t *)x + (uint64_t)((int64_t)i * 4));

    if (p)
        *p += 1u + (uint32_t)(i % 7);
    return p != NULL;
}

static void run(const sim_launch *l)
{
    uint64_t x = sim_param_ptr(l, 0);

    sim_for_each_index_x(l, sim_param_i32(l, 1), increment_one, &x);
}

static const sim_param_desc params[] = { SIM_PARAM_PTR, SIM_PARAM_I32 };

const sim_kernel sim_kernel_increment = {
    .name = "_Z9incrementPji",
    .nparams = 2,
    .params = params,
    .run = run,
};
