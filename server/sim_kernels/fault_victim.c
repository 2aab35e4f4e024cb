/* Twin of tests/faults/victim.cu:
 *   victim_step(unsigned *x, int n, unsigned iter)
 *     x[i] = x[i] * 1664525u + 1013904223u + (iter ^ (unsigned)i)   for i < n */
#include "kernels.h"

struct victim_ctx {
    uint64_t x;
    uint32_t iter;
};

static bool step_one(const sim_launch *l, int32_t i, void *arg)
{
    struct victim_ctx *c = arg;
    uint32_t *p = sim_u32(l, c->x + (uint64_t)((int64_t)i * 4));

    if (p)
        *p = *p * 1664525u + 1013904223u + (c->iter ^ (uint32_t)i);
    return p != NULL;
}

static void run(const sim_launch *l)
{
    struct victim_ctx c = { .x = sim_param_ptr(l, 0), .iter = sim_param_u32(l, 2) };

    sim_for_each_index_x(l, sim_param_i32(l, 1), step_one, &c);
}

static const sim_param_desc params[] = { SIM_PARAM_PTR, SIM_PARAM_I32, SIM_PARAM_U32 };

const sim_kernel sim_kernel_victim_step = {
    .name = "_Z11victim_stepPjij", .nparams = 3, .params = params, .run = run,
};
