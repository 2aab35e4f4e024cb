/* What a simulated kernel sees: its launch (grid, block, parameters) and
 * checked access to device memory.
 *
 * The sim backend cannot run GPU code, so every kernel an example launches
 * has a C twin here that computes exactly what the GPU computes.  A twin
 * touches device memory only through the accessors below: they return a
 * host pointer for a mapped device address, or NULL after recording the
 * fault the GPU would raise (illegal or misaligned address).  On NULL the
 * kernel returns at once, as a faulting kernel dies on the GPU. */
#ifndef TANDEM_SIM_KERNEL_H
#define TANDEM_SIM_KERNEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "backend.h"

typedef struct sim_exec sim_exec;   /* the backend's per-launch state */

typedef struct sim_launch {
    const char *kernel;        /* mangled name, for fault messages */
    tdm_dim3 grid, block;
    uint32_t shared_mem;       /* dynamic shared memory, bytes */
    void *dyn_shared;          /* shared_mem bytes (zeroed), one buffer per
                                * launch: block-level twins reuse it per block */
    const uint8_t *params;     /* packed as the kernel table entry's layout says */
    const uint32_t *param_offset;
    const uint64_t *globals;   /* device address of each global the entry names,
                                * in the launching module */
    sim_exec *exec;
} sim_launch;

/* Host pointer for [addr, addr + bytes) if all of it is mapped device
 * memory; otherwise NULL, and the launch is marked faulted with
 * cudaErrorIllegalAddress. */
void *sim_mem_ptr(const sim_launch *l, uint64_t addr, size_t bytes);
/* As sim_mem_ptr, and the address must be aligned to `align` (a power of
 * two) as the GPU requires of a naturally aligned access; a misaligned one
 * marks the launch with cudaErrorMisalignedAddress. */
void *sim_mem_ptr_aligned(const sim_launch *l, uint64_t addr, size_t bytes, size_t align);
/* True once the launch faulted or the backend is shutting down: loops over
 * blocks check it so a huge grid cannot hold a shutdown hostage. */
bool sim_launch_stopped(const sim_launch *l);
/* One step of a twin that waits (for the host's write to a latch, or for
 * time to pass, `ns` nanoseconds; 0 just yields).  Pointers from
 * sim_mem_ptr stay valid across it: what a launch touched stays mapped
 * until it ends.  False once the launch is stopped (sim_launch_stopped). */
bool sim_launch_wait_step(const sim_launch *l, long ns);
/* The SMs the launch runs on: its stream's SM share (docs/sm-shares.md), or
 * the device's SM count.  For twins of kernels that report where their
 * blocks ran (%smid): the sim's model puts block k on SM k mod this. */
unsigned sim_launch_sms(const sim_launch *l);
/* Marks the launch faulted with `err` (a cudaError_t), for faults a twin
 * detects itself, such as out-of-bounds shared memory.  The first fault
 * wins. */
void sim_launch_fault(const sim_launch *l, int err, const char *why);

/* ---- device output (issue 14) ---- */
/* A twin's device printf: the text goes to the launching stream's output,
 * written to the program's stdout when the host synchronizes with the
 * stream (docs/device-output.md). */
void sim_printf(const sim_launch *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A twin's failing device assert: the driver's message (to the program's
 * stderr, at the same point) and the launch fails with cudaErrorAssert. */
void sim_assert_fail(const sim_launch *l, const char *expr, const char *file, unsigned line, const char *func,
                     tdm_dim3 block_idx, tdm_dim3 thread_idx);

static inline uint32_t *sim_u32(const sim_launch *l, uint64_t addr)
{
    return (uint32_t *)sim_mem_ptr_aligned(l, addr, 4, 4);
}

static inline float *sim_f32(const sim_launch *l, uint64_t addr)
{
    return (float *)sim_mem_ptr_aligned(l, addr, 4, 4);
}

/* Parameter i, read at the offset the layout gives (memcpy: the buffer has
 * no alignment guarantee). */
static inline uint64_t sim_param_ptr(const sim_launch *l, unsigned i)
{
    uint64_t v;
    memcpy(&v, l->params + l->param_offset[i], sizeof(v));
    return v;
}

static inline int32_t sim_param_i32(const sim_launch *l, unsigned i)
{
    int32_t v;
    memcpy(&v, l->params + l->param_offset[i], sizeof(v));
    return v;
}

static inline uint32_t sim_param_u32(const sim_launch *l, unsigned i)
{
    uint32_t v;
    memcpy(&v, l->params + l->param_offset[i], sizeof(v));
    return v;
}

/* CUDA's `blockIdx.x * blockDim.x + threadIdx.x` evaluated in int as the
 * GPU does: 32-bit wrap-around, no undefined behaviour in C. */
static inline int32_t sim_global_index_x(uint32_t block_idx, uint32_t block_dim, uint32_t thread_idx)
{
    return (int32_t)(block_idx * block_dim + thread_idx);
}

/* The body of an element-wise kernel guarded by `if (i < n)`, for one i.
 * Returns false after reporting a fault, which ends the launch. */
typedef bool (*sim_index_body)(const sim_launch *l, int32_t i, void *ctx);

/* Runs body for every thread of the grid whose global x index is below n,
 * block by block, stopping when the launch is stopped or body fails. */
void sim_for_each_index_x(const sim_launch *l, int32_t n, sim_index_body body, void *ctx);

/* ---- conditional graph nodes (issue 14) ---- */
/* A twin's cudaGraphSetConditional(handle, value): the value the next
 * conditional node of handle reads (docs/graphs.md, "Conditional nodes").
 * A handle that is no live one's is logged and ignored. */
void sim_set_conditional(const sim_launch *l, uint64_t handle, unsigned value);

#endif
