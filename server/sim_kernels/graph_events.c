/* Twins of examples/graph_events.cu (one thread each):
 *   ge_slow_store(unsigned *p, unsigned v, unsigned ms)   runs ms milliseconds, then *p = v
 *   ge_scale(unsigned *dst, const unsigned *src, unsigned k)   *dst = *src * k */

#include "kernels.h"

static const sim_param_desc store_params[] = { SIM_PARAM_PTR, SIM_PARAM_U32, SIM_PARAM_U32 };
static const sim_param_desc scale_params[] = { SIM_PARAM_PTR, SIM_PARAM_PTR, SIM_PARAM_U32 };

/* In steps of a millisecond, so a shutdown does not wait for the rest. */
static void run_slow_store(const sim_launch *l)
{
    uint32_t ms = sim_param_u32(l, 2), *p;

    for (uint32_t i = 0; i < ms && sim_launch_wait_step(l, 1000000); i++)
        ;
    if ((p = sim_u32(l, sim_param_ptr(l, 0))))
        *p = sim_param_u32(l, 1);
}

static void run_scale(const sim_launch *l)
{
    uint32_t *dst = sim_u32(l, sim_param_ptr(l, 0)), *src = sim_u32(l, sim_param_ptr(l, 1));

    if (dst && src)
        *dst = *src * sim_param_u32(l, 2);
}

const sim_kernel sim_kernel_ge_slow_store = {
    .name = "_Z13ge_slow_storePjjj",
    .nparams = 3,
    .params = store_params,
    .run = run_slow_store,
};

const sim_kernel sim_kernel_ge_scale = {
    .name = "_Z8ge_scalePjPKjj",
    .nparams = 3,
    .params = scale_params,
    .run = run_scale,
};
