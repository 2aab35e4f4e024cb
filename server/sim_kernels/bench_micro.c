/* Twin of bench/micro/launch.cu:
 *   bench_empty()   does nothing; what is measured is the launch. */
#include "kernels.h"

static void run_empty(const sim_launch *l)
{
    (void)l;
}

const sim_kernel sim_kernel_bench_empty = {
    .name = "_Z11bench_emptyv",
    .nparams = 0,
    .params = NULL,
    .run = run_empty,
};
