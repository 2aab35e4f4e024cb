/* Twins of examples/callbacks_check.cu:
 *   cb_stamp(unsigned int *out, unsigned int value)   *out = value
 *   cb_spin(unsigned int ms)                          runs for ms milliseconds
 *   cb_fault(unsigned int *p, unsigned int ms)        runs ms milliseconds, then
 *                                                     writes *p (no memory there) */

#include "kernels.h"

static void run_stamp(const sim_launch *l)
{
    uint32_t *p = sim_u32(l, sim_param_ptr(l, 0));

    if (p)
        *p = sim_param_u32(l, 1);
}

/* In steps of a millisecond, so a shutdown does not wait for the rest. */
static void spin_ms(const sim_launch *l, uint32_t ms)
{
    for (uint32_t i = 0; i < ms && sim_launch_wait_step(l, 1000000); i++)
        ;
}

static void run_spin(const sim_launch *l)
{
    spin_ms(l, sim_param_u32(l, 0));
}

static void run_fault(const sim_launch *l)
{
    uint32_t *p;

    spin_ms(l, sim_param_u32(l, 1));
    p = sim_u32(l, sim_param_ptr(l, 0));   /* faults: nothing is mapped there */
    if (p)
        *p = 1;
}

static const sim_param_desc stamp_params[] = { SIM_PARAM_PTR, SIM_PARAM_U32 };
static const sim_param_desc spin_params[] = { SIM_PARAM_U32 };
static const sim_param_desc fault_params[] = { SIM_PARAM_PTR, SIM_PARAM_U32 };

const sim_kernel sim_kernel_cb_stamp = {
    .name = "_Z8cb_stampPjj",
    .nparams = 2,
    .params = stamp_params,
    .run = run_stamp,
};

const sim_kernel sim_kernel_cb_spin = {
    .name = "_Z7cb_spinj",
    .nparams = 1,
    .params = spin_params,
    .run = run_spin,
};

const sim_kernel sim_kernel_cb_fault = {
    .name = "_Z8cb_faultPjj",
    .nparams = 2,
    .params = fault_params,
    .run = run_fault,
};
