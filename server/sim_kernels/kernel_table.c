#include "kernel_table.h"

#include <string.h>

#include "kernels.h"

static const sim_kernel *const kernels[] = {
    &sim_kernel_vector_add,
    &sim_kernel_increment,
    &sim_kernel_se_transform,
    &sim_kernel_se_combine,
    &sim_kernel_matmul_tiled,
    /* tests/faults/ */
    &sim_kernel_fault_sm_oob,
    &sim_kernel_fault_am_cpu,
    &sim_kernel_fault_am_gpu_read,
    &sim_kernel_fault_am_gpu,
    &sim_kernel_fault_am_vmm,
    &sim_kernel_fault_zombie,
    &sim_kernel_fault_nonmigratable,
    &sim_kernel_fault_stack_overflow,
    &sim_kernel_fault_illegal_instruction,
    &sim_kernel_fault_shared_oob,
    &sim_kernel_fault_misaligned,
    &sim_kernel_fault_invalid_address_space,
    &sim_kernel_victim_step,
    /* bench/ (docs/benchmarks.md) */
    &sim_kernel_bench_empty,
    &sim_kernel_drvcalls_step,
    &sim_kernel_fair_tiny,
    &sim_kernel_fair_spin,
    &sim_kernel_shares_compute,
    &sim_kernel_bench_nw_init,
    &sim_kernel_bench_nw_diagonal,
    &sim_kernel_bench_lud_diagonal,
    &sim_kernel_bench_lud_perimeter,
    &sim_kernel_bench_lud_internal,
    &sim_kernel_bench_srad_reduce,
    &sim_kernel_bench_srad_coef,
    &sim_kernel_bench_srad_update,
    &sim_kernel_bench_sc_init,
    &sim_kernel_bench_sc_gain,
    &sim_kernel_bench_sc_commit,
    /* ---- device output (issue 14): examples/device_printf.cu ---- */
    &sim_kernel_dp_say,
    &sim_kernel_dp_check,
    /* examples/cdp_tree.cu (dynamic parallelism) */
    &sim_kernel_cdp_tree,
    /* ---- memory models (issue 14) ---- */
    &sim_kernel_pool_fill,
    &sim_kernel_pool_twice,
    /* ---- graph memory nodes (issue 14): examples/graph_memory.cu ---- */
    &sim_kernel_gmem_spin,
    &sim_kernel_mapped_scale,
    /* ---- managed memory (issue 14) ---- */
    &sim_kernel_managed_scale,
    &sim_kernel_managed_fill,
    /* ---- ipc (issue 14) ---- */
    &sim_kernel_ipc_step,
    /* ---- host callbacks (issue 14) ---- */
    &sim_kernel_cb_stamp,
    &sim_kernel_cb_spin,
    &sim_kernel_cb_fault,
    &sim_kernel_mm_atomics,
    &sim_kernel_mm_multiply,
    &sim_kernel_mm_check,
    &sim_kernel_mm_vector_add,
    &sim_kernel_mm_spin_until_set,
    /* ---- conditional graph nodes (issue 14): examples/graph_conditional.cu ---- */
    &sim_kernel_cond_set,
    &sim_kernel_cond_count_down,
    &sim_kernel_cond_record,
    /* ---- event nodes, child graphs, user objects (issue 14): examples/graph_events.cu ---- */
    &sim_kernel_ge_slow_store,
    &sim_kernel_ge_scale,
    /* ---- libraries (issue 14): examples/library_kernels.cu ---- */
    &sim_kernel_lib_axpb,
    &sim_kernel_lib_fill,
    &sim_kernel_registered_store,
    /* ---- cluster launch (issue 14): examples/clusters.cu ---- */
    &sim_kernel_cluster_sum_fixed,
    &sim_kernel_cluster_sum_any,
};

static const sim_global_desc *const globals[] = {
    &sim_global_vadd_scale,
    &sim_global_matmul_positive,
    /* ---- graph memcpy nodes (issue 14) ---- */
    &sim_global_gn_table,
    /* ---- libraries (issue 14) ---- */
    &sim_global_lib_bias,
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

const sim_kernel *sim_kernel_find(const char *name)
{
    for (size_t i = 0; name && i < COUNT(kernels); i++)
        if (strcmp(kernels[i]->name, name) == 0)
            return kernels[i];
    return NULL;
}

void sim_kernel_layout(const sim_kernel *k, tdm_param_info *out, uint32_t *total)
{
    uint32_t off = 0;

    out->count = k->nparams;
    for (uint32_t i = 0; i < k->nparams && i < TDM_MAX_KERNEL_PARAMS; i++) {
        uint32_t a = k->params[i].align ? k->params[i].align : 1;
        off = (off + a - 1) / a * a;
        out->offset[i] = off;
        out->size[i] = k->params[i].size;
        off += k->params[i].size;
    }
    *total = off;
}

uint32_t sim_global_count(void)
{
    return COUNT(globals);
}

const sim_global_desc *sim_global_at(uint32_t i)
{
    return i < COUNT(globals) ? globals[i] : NULL;
}

int sim_global_index(const char *name)
{
    for (size_t i = 0; name && i < COUNT(globals); i++)
        if (strcmp(globals[i]->name, name) == 0)
            return (int)i;
    return -1;
}
