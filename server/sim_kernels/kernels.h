/* The kernel table's entries, one source file per program (examples/, tests/faults/, bench/). */
#ifndef TANDEM_SIM_KERNELS_H
#define TANDEM_SIM_KERNELS_H

#include "kernel_table.h"

/* vector_add.c (examples/vector_add.cu) */
extern const sim_kernel sim_kernel_vector_add;
extern const sim_global_desc sim_global_vadd_scale;
/* increment_loop.c (examples/increment_loop.cu) */
extern const sim_kernel sim_kernel_increment;
/* streams_events.c (examples/streams_events.cu) */
extern const sim_kernel sim_kernel_se_transform;
extern const sim_kernel sim_kernel_se_combine;
/* matmul.c (examples/matmul.cu) */
extern const sim_kernel sim_kernel_matmul_tiled;
extern const sim_global_desc sim_global_matmul_positive;
/* fault_mmu.c, fault_sm.c, fault_victim.c (tests/faults/, docs/faults.md) */
extern const sim_kernel sim_kernel_fault_sm_oob, sim_kernel_fault_am_cpu, sim_kernel_fault_am_gpu_read,
    sim_kernel_fault_am_gpu, sim_kernel_fault_am_vmm, sim_kernel_fault_zombie, sim_kernel_fault_nonmigratable;
extern const sim_kernel sim_kernel_fault_stack_overflow, sim_kernel_fault_illegal_instruction,
    sim_kernel_fault_shared_oob, sim_kernel_fault_misaligned, sim_kernel_fault_invalid_address_space;
extern const sim_kernel sim_kernel_victim_step;
/* bench_*.c (bench/micro/launch.cu, bench/apps/, docs/benchmarks.md) */
extern const sim_kernel sim_kernel_bench_empty;
extern const sim_kernel sim_kernel_drvcalls_step;   /* bench_driver_calls.c (bench/driver-calls/kernel.cu) */
extern const sim_kernel sim_kernel_fair_tiny;
extern const sim_kernel sim_kernel_fair_spin;
extern const sim_kernel sim_kernel_shares_compute;   /* bench_shares.c (bench/shares/shares.cu) */
extern const sim_kernel sim_kernel_bench_nw_init, sim_kernel_bench_nw_diagonal;
extern const sim_kernel sim_kernel_bench_lud_diagonal, sim_kernel_bench_lud_perimeter, sim_kernel_bench_lud_internal;
extern const sim_kernel sim_kernel_bench_srad_reduce, sim_kernel_bench_srad_coef, sim_kernel_bench_srad_update;
extern const sim_kernel sim_kernel_bench_sc_init, sim_kernel_bench_sc_gain, sim_kernel_bench_sc_commit;
/* ---- device output (issue 14) ---- */
/* device_printf.c (examples/device_printf.cu) */
extern const sim_kernel sim_kernel_dp_say, sim_kernel_dp_check;
/* cdp_tree.c (examples/cdp_tree.cu: dynamic parallelism) */
extern const sim_kernel sim_kernel_cdp_tree;

/* ---- memory models (issue 14) ---- */
/* mem_pools.c (examples/mem_pools.cu) */
extern const sim_kernel sim_kernel_pool_fill, sim_kernel_pool_twice;
/* mapped_memory.c (examples/mapped_memory.cu) */
extern const sim_kernel sim_kernel_mapped_scale;
/* ---- managed memory (issue 14) ---- */
/* managed_memory.c (examples/managed_memory.cu) */
extern const sim_kernel sim_kernel_managed_scale, sim_kernel_managed_fill;
/* managed_memory.c (examples/managed_memory_patterns.cu) */
extern const sim_kernel sim_kernel_mm_atomics, sim_kernel_mm_multiply, sim_kernel_mm_check, sim_kernel_mm_vector_add,
    sim_kernel_mm_spin_until_set;

/* ---- ipc (issue 14): ipc.c (examples/ipc.cu) ---- */
extern const sim_kernel sim_kernel_ipc_step;

/* ---- host callbacks (issue 14) ---- */
/* callbacks_check.c (examples/callbacks_check.cu) */
extern const sim_kernel sim_kernel_cb_stamp, sim_kernel_cb_spin, sim_kernel_cb_fault;

/* graph_nodes.c (examples/graph_nodes.cu) */
extern const sim_global_desc sim_global_gn_table;
/* ---- conditional graph nodes (issue 14) ---- */
/* graph_conditional.c (examples/graph_conditional.cu) */
extern const sim_kernel sim_kernel_cond_set, sim_kernel_cond_count_down, sim_kernel_cond_record;
/* ---- cluster launch (issue 14) ---- */
/* clusters.c (examples/clusters.cu) */
extern const sim_kernel sim_kernel_cluster_sum_fixed, sim_kernel_cluster_sum_any;

/* ---- graph memory nodes (issue 14) ---- */
/* graph_memory.c (examples/graph_memory.cu; its other kernels are mem_pools.c's) */
extern const sim_kernel sim_kernel_gmem_spin;

/* ---- event nodes, child graphs, user objects (issue 14) ---- */
/* graph_events.c (examples/graph_events.cu) */
extern const sim_kernel sim_kernel_ge_slow_store, sim_kernel_ge_scale;

/* ---- libraries (issue 14): examples/library_kernels.cu ---- */
extern const sim_kernel sim_kernel_lib_axpb, sim_kernel_lib_fill, sim_kernel_registered_store;
extern const sim_global_desc sim_global_lib_bias;

#endif
