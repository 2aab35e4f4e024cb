/* Twins of examples/device_printf.cu:
 *   say(int round, int lines, int *out)
 *     block 0 thread 0: prints `lines` lines, then out[round] = round * 100 + lines
 *   check(int value)
 *     assert(value >= 0) in every thread
 * Output goes where the GPU's printf goes (sim_printf, sim_assert_fail:
 * docs/device-output.md). */
#include "kernels.h"

static void say(const sim_launch *l)
{
    int32_t round = sim_param_i32(l, 0), lines = sim_param_i32(l, 1);
    int32_t *out = (int32_t *)sim_mem_ptr_aligned(l, sim_param_ptr(l, 2) + (uint64_t)((int64_t)round * 4), 4, 4);

    for (int32_t i = 0; i < lines; i++)
        sim_printf(l, "device: round %d line %d of %d (%s)\n", round, i, lines, i % 2 ? "odd" : "even");
    if (out)
        *out = round * 100 + lines;
}

static void check(const sim_launch *l)
{
    int32_t value = sim_param_i32(l, 0);

    if (value >= 0)
        return;
    /* Every thread fails; the GPU prints a message for each.  The twin
     * prints the first, which is what a one-thread launch prints. */
    sim_assert_fail(l, "value >= 0", "device_printf.cu", 36, "void check(int)", (tdm_dim3){ 0, 0, 0 },
                    (tdm_dim3){ 0, 0, 0 });
}

static const sim_param_desc say_params[] = { SIM_PARAM_I32, SIM_PARAM_I32, SIM_PARAM_PTR };
static const sim_param_desc check_params[] = { SIM_PARAM_I32 };

const sim_kernel sim_kernel_dp_say = {
    .name = "_Z3sayiiPi",
    .nparams = 3,
    .params = say_params,
    .run = say,
};

const sim_kernel sim_kernel_dp_check = {
    .name = "_Z5checki",
    .nparams = 1,
    .params = check_params,
    .run = check,
};
