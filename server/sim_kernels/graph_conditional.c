/* Twins of examples/graph_conditional.cu (one thread each):
 *   cond_set(const int *flag, handle)          cudaGraphSetConditional(handle, *flag)
 *   cond_count_down(int *counter, handle)      if (--*counter <= 0) cudaGraphSetConditional(handle, 0)
 *   cond_record(int *log, int v)               if (log[0] < 63) log[1 + log[0]++] = v */
#include "kernels.h"

static const sim_param_desc ptr_handle_params[] = { SIM_PARAM_PTR, SIM_PARAM_PTR };
static const sim_param_desc record_params[] = { SIM_PARAM_PTR, SIM_PARAM_I32 };

static void run_set(const sim_launch *l)
{
    uint32_t *flag = sim_u32(l, sim_param_ptr(l, 0));

    if (flag)
        sim_set_conditional(l, sim_param_ptr(l, 1), *flag);
}

static void run_count_down(const sim_launch *l)
{
    uint32_t *counter = sim_u32(l, sim_param_ptr(l, 0));

    if (counter && (int32_t)--*counter <= 0)
        sim_set_conditional(l, sim_param_ptr(l, 1), 0);
}

static void run_record(const sim_launch *l)
{
    uint64_t log = sim_param_ptr(l, 0);
    uint32_t *n = sim_u32(l, log), *slot;

    if (!n || (int32_t)*n >= 63)
        return;
    if ((slot = sim_u32(l, log + 4 + 4 * (uint64_t)*n))) {
        *slot = (uint32_t)sim_param_i32(l, 1);
        ++*n;
    }
}

const sim_kernel sim_kernel_cond_set = {
    .name = "_Z8cond_setPKiy",
    .nparams = 2,
    .params = ptr_handle_params,
    .run = run_set,
};

const sim_kernel sim_kernel_cond_count_down = {
    .name = "_Z15cond_count_downPiy",
    .nparams = 2,
    .params = ptr_handle_params,
    .run = run_count_down,
};

const sim_kernel sim_kernel_cond_record = {
    .name = "_Z11cond_recordPii",
    .nparams = 2,
    .params = record_params,
    .run = run_record,
};
