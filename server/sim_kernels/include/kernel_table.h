/* The sim kernel table: for every kernel the sim backend can run, its
 * mangled name, its parameter layout, the module globals it uses and its C
 * implementation.  One const table, no state. */
#ifndef TANDEM_SIM_KERNEL_TABLE_H
#define TANDEM_SIM_KERNEL_TABLE_H

#include <stdint.h>

#include "backend.h"
#include "sim_kernel.h"

typedef struct sim_param_desc {
    uint32_t size, align;      /* as the CUDA ABI lays the parameter out */
} sim_param_desc;

#define SIM_PARAM_PTR { 8, 8 }
#define SIM_PARAM_I32 { 4, 4 }
#define SIM_PARAM_U32 { 4, 4 }
#define SIM_PARAM_F32 { 4, 4 }

/* A __device__ or __constant__ variable.  Names are the variable's device
 * name as nvcc registers it (unmangled at namespace scope) and must be
 * unique across the table: every loaded module gets its own storage for
 * each of them. */
typedef struct sim_global_desc {
    const char *name;
    uint32_t size;
} sim_global_desc;

typedef struct sim_kernel {
    const char *name;                   /* mangled, as in the fat binary */
    uint32_t nparams;
    const sim_param_desc *params;
    uint32_t nglobals;
    const char *const *globals;         /* names of the globals it uses */
    uint32_t static_shared;             /* bytes of __shared__ arrays, for attributes */
    void (*run)(const sim_launch *l);
    /* ---- cluster launch (issue 14) ---- */
    uint32_t cluster_dims[3];           /* __cluster_dims__, 0s for none */
} sim_kernel;

/* NULL if no kernel of that name is simulated. */
const sim_kernel *sim_kernel_find(const char *mangled_name);
/* Offsets by natural alignment, as nvcc packs kernel parameters; out->count
 * is k->nparams.  *total is the packed length (last offset + size). */
void sim_kernel_layout(const sim_kernel *k, tdm_param_info *out, uint32_t *total);

uint32_t sim_global_count(void);
const sim_global_desc *sim_global_at(uint32_t i);
/* Index of a global by name, or -1. */
int sim_global_index(const char *name);

#endif
