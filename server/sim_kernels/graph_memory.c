/* Twin of examples/graph_memory.cu's own kernel (its others are
 * mem_pools.c's):
 *   gmem_spin(unsigned int ms)   runs for ms milliseconds, so graphs launched
 *                                in several streams are running together */
#include "kernels.h"

static void run_spin(const sim_launch *l)
{
    /* In steps of a millisecond, so a shutdown does not wait for the rest. */
    for (uint32_t i = 0, ms = sim_param_u32(l, 0); i < ms && sim_launch_wait_step(l, 1000000); i++)
        ;
}

static const sim_param_desc spin_params[] = { SIM_PARAM_U32 };

const sim_kernel sim_kernel_gmem_spin = {
    .name = "_Z9gmem_spinj",
    .nparams = 1,
    .params = spin_params,
    .run = run_spin,
};
