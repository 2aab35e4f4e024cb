/* Twins of bench/fairness/fairness.cu (docs/security.md, "Fair share"):
 *   fair_tiny()             does nothing: what is measured is the launch and the synchronize
 *   fair_spin(unsigned us)  keeps the device busy for us microseconds (the GPU spins on
 *                           %globaltimer); the twin sleeps, as a busy device leaves the host's
 *                           CPU free, and ends early when the launch is stopped. */
#include <time.h>

#include "kernels.h"

static void run_tiny(const sim_launch *l)
{
    (void)l;
}

static double now_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static void run_spin(const sim_launch *l)
{
    double end = now_us() + sim_param_u32(l, 0);

    for (double left = end - now_us(); left > 0 && !sim_launch_stopped(l); left = end - now_us())
        sim_launch_wait_step(l, left > 100 ? 100000 : (long)(left * 1000));
}

static const sim_param_desc spin_params[] = { SIM_PARAM_U32 };

const sim_kernel sim_kernel_fair_tiny = {
    .name = "_Z9fair_tinyv",
    .nparams = 0,
    .params = NULL,
    .run = run_tiny,
};

const sim_kernel sim_kernel_fair_spin = {
    .name = "_Z9fair_spinj",
    .nparams = 1,
    .params = spin_params,
    .run = run_spin,
};
