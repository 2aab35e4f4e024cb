/* Helpers the twins of the benchmark kernels (bench/, bench_*.c) share:
 * int arithmetic as the GPU does it (wrapping, never undefined in C), typed
 * element access at an int index, float parameters, and the refusal of a
 * launch shape a twin does not model. */
#ifndef TANDEM_SIM_BENCH_TWIN_H
#define TANDEM_SIM_BENCH_TWIN_H

#include <stdio.h>

#include <driver_types.h>

#include "sim_kernel.h"

static inline int32_t bt_add(int32_t a, int32_t b)
{
    return (int32_t)((uint32_t)a + (uint32_t)b);
}

static inline int32_t bt_sub(int32_t a, int32_t b)
{
    return (int32_t)((uint32_t)a - (uint32_t)b);
}

static inline int32_t bt_mul(int32_t a, int32_t b)
{
    return (int32_t)((uint32_t)a * (uint32_t)b);
}

/* &base[idx] for a 4-byte element type and an int index, as the GPU forms
 * it (the index sign-extended to 64 bits); NULL after a fault. */
static inline uint32_t *bt_u32(const sim_launch *l, uint64_t base, int32_t idx)
{
    return sim_u32(l, base + (uint64_t)((int64_t)idx * 4));
}

static inline float *bt_f32(const sim_launch *l, uint64_t base, int32_t idx)
{
    return sim_f32(l, base + (uint64_t)((int64_t)idx * 4));
}

static inline uint64_t *bt_u64(const sim_launch *l, uint64_t base, int32_t idx)
{
    return (uint64_t *)sim_mem_ptr_aligned(l, base + (uint64_t)((int64_t)idx * 8), 8, 8);
}

static inline float bt_param_f32(const sim_launch *l, unsigned i)
{
    uint32_t bits = sim_param_u32(l, i);
    float v;

    memcpy(&v, &bits, sizeof(v));
    return v;
}

/* The benchmark kernels assume the block shape their programs launch them
 * with (threads cooperate through shared memory by threadIdx.x); another
 * shape would give results no twin should pretend to know.  Refuses it with
 * a fault naming the shape; true if the launch may go on. */
static inline bool bt_block_is(const sim_launch *l, uint32_t x, uint32_t y, uint32_t z)
{
    char why[128];

    if (l->block.x == x && l->block.y == y && l->block.z == z)
        return true;
    snprintf(why, sizeof(why), "the twin models blockDim (%u,%u,%u) only, not (%u,%u,%u)", x, y, z, l->block.x,
             l->block.y, l->block.z);
    sim_launch_fault(l, cudaErrorNotSupported, why);
    return false;
}

#endif
