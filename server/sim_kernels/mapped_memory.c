/* Twin of examples/mapped_memory.cu:
 *   mapped_scale(unsigned int *p, int n)   p[i] = 3 * p[i] + 1   for i < n */
#include "kernels.h"

static bool scale_one(const sim_launch *l, int32_t i, void *ctx)
{
    uint32_t *p = sim_u32(l, *(uint64_t *)ctx + (uint64_t)((int64_t)i * 4));

    if (p)
        *p = 3u * *p + 1u;
    return p != NULL;
}

static void run(const sim_launch *l)
{
    uint64_t p = sim_param_ptr(l, 0);

    sim_for_each_index_x(l, sim_param_i32(l, 1), scale_one, &p);
}

static const sim_param_desc params[] = { SIM_PARAM_PTR, SIM_PARAM_I32 };

const sim_kernel sim_kernel_mapped_scale = {
    .name = "_Z12mapped_scalePji",
    .nparams = 2,
    .params = params,
    .run = run,
};
