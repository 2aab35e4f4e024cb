/* The registry entries, one source file per example program (examples/). */
#ifndef TANDEM_SIM_KERNELS_H
#define TANDEM_SIM_KERNELS_H

#include "registry.h"

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

#endif
