/* Twin of examples/ipc.cu:
 *   ipc_step(unsigned int *p, int n, unsigned int v)   p[i] = p[i] * 31 + v   for i < n
 * (a grid-stride loop: every index once, whatever the grid). */
#include "kernels.h"

static void run_step(const sim_launch *l)
{
    uint64_t p = sim_param_ptr(l, 0);
    int32_t n = sim_param_i32(l, 1);
    uint32_t v = sim_param_u32(l, 2);

    for (int32_t i = 0; i < n; i++) {
        uint32_t *x = sim_u32(l, p + (uint64_t)i * 4);
        if (!x)
            return;
        *x = *x * 31u + v;
    }
}

static const sim_param_desc step_params[] = { SIM_PARAM_PTR, SIM_PARAM_I32, SIM_PARAM_I32 };

const sim_kernel sim_kernel_ipc_step = {
    .name = "_Z8ipc_stepPjij",
    .nparams = 3,
    .params = step_params,
    .run = run_step,
};
