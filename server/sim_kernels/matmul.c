/* Twin of examples/matmul.cu, block by block:
 *   __device__ unsigned int matmul_positive;
 *   matmul_tiled(const float *A, const float *B, float *C, int n)
 * Each block stages TILE x TILE tiles of A and B in shared memory between
 * two __syncthreads(); the twin runs each phase for all threads of the block
 * before the next, which is what the barriers guarantee.  nvcc turns
 * `acc += As * Bs` into a fused multiply-add; fmaf rounds the same way. */
#include <math.h>

#include <driver_types.h>

#include "kernels.h"

#define TILE 16

const sim_global_desc sim_global_matmul_positive = { "matmul_positive", sizeof(uint32_t) };

typedef struct block_state {
    float As[TILE][TILE], Bs[TILE][TILE];
    float acc[TILE][TILE];
} block_state;

/* int arithmetic as the GPU does it: wraps instead of being undefined. */
static int32_t wrap_add(int32_t a, int32_t b)
{
    return (int32_t)((uint32_t)a + (uint32_t)b);
}

static int32_t wrap_mul(int32_t a, int32_t b)
{
    return (int32_t)((uint32_t)a * (uint32_t)b);
}

/* Loads one element of a matrix for the tile phase; false on a fault. */
static bool load(const sim_launch *l, uint64_t base, int32_t idx, float *out)
{
    const float *p = sim_f32(l, base + (uint64_t)((int64_t)idx * 4));

    if (!p)
        return false;
    *out = *p;
    return true;
}

/* One z-slice of one block.  Slices of a block with blockDim.z > 1 compute
 * the same values and store the same ones to shared memory, so running them
 * one after another gives what the GPU gives. */
static bool run_slice(const sim_launch *l, block_state *st, uint32_t bx, uint32_t by, uint32_t *counter)
{
    uint64_t A = sim_param_ptr(l, 0), B = sim_param_ptr(l, 1), C = sim_param_ptr(l, 2);
    int32_t n = sim_param_i32(l, 3);
    uint32_t bdx = l->block.x, bdy = l->block.y;
    int32_t tiles = wrap_add(n, TILE - 1) / TILE;

    memset(st->acc, 0, sizeof(st->acc));
    for (int32_t t = 0; t < tiles; t++) {
        for (uint32_t ty = 0; ty < bdy; ty++)
            for (uint32_t tx = 0; tx < bdx; tx++) {
                int32_t row = (int32_t)(by * TILE + ty), col = (int32_t)(bx * TILE + tx);
                int32_t ac = wrap_add(wrap_mul(t, TILE), (int32_t)tx);
                int32_t br = wrap_add(wrap_mul(t, TILE), (int32_t)ty);
                st->As[ty][tx] = 0.0f;
                st->Bs[ty][tx] = 0.0f;
                if (row < n && ac < n && !load(l, A, wrap_add(wrap_mul(row, n), ac), &st->As[ty][tx]))
                    return false;
                if (br < n && col < n && !load(l, B, wrap_add(wrap_mul(br, n), col), &st->Bs[ty][tx]))
                    return false;
            }
        /* __syncthreads() */
        for (uint32_t ty = 0; ty < bdy; ty++)
            for (uint32_t tx = 0; tx < bdx; tx++)
                for (int k = 0; k < TILE; k++)
                    st->acc[ty][tx] = fmaf(st->As[ty][k], st->Bs[k][tx], st->acc[ty][tx]);
        /* __syncthreads() */
    }
    for (uint32_t ty = 0; ty < bdy; ty++)
        for (uint32_t tx = 0; tx < bdx; tx++) {
            int32_t row = (int32_t)(by * TILE + ty), col = (int32_t)(bx * TILE + tx);
            if (row >= n || col >= n)
                continue;
            float *pc = sim_f32(l, C + (uint64_t)((int64_t)wrap_add(wrap_mul(row, n), col) * 4));
            if (!pc)
                return false;
            *pc = st->acc[ty][tx];
            if (st->acc[ty][tx] > 0.0f)
                (*counter)++;   /* atomicAdd: threads of the sim never overlap */
        }
    return true;
}

static void run(const sim_launch *l)
{
    block_state st;
    uint32_t *counter = sim_u32(l, l->globals[0]);

    if (!counter)
        return;
    /* The kernel indexes its TILE x TILE shared arrays with threadIdx: a
     * larger block would run off them, which on the GPU is a fault. */
    if (l->block.x > TILE || l->block.y > TILE) {
        sim_launch_fault(l, cudaErrorIllegalAddress, "block larger than the kernel's 16x16 shared tiles");
        return;
    }
    /* Shared slots a smaller block never writes hold zeros or stale values
     * here; on the GPU they are uninitialized, so such a launch has no
     * defined result to match anyway. */
    memset(&st, 0, sizeof(st));
    for (uint32_t bz = 0; bz < l->grid.z; bz++)
        for (uint32_t by = 0; by < l->grid.y; by++)
            for (uint32_t bx = 0; bx < l->grid.x; bx++) {
                if (sim_launch_stopped(l))
                    return;
                for (uint32_t tz = 0; tz < l->block.z; tz++)
                    if (!run_slice(l, &st, bx, by, counter))
                        return;
            }
}

static const sim_param_desc params[] = { SIM_PARAM_PTR, SIM_PARAM_PTR, SIM_PARAM_PTR, SIM_PARAM_I32 };
static const char *const used_globals[] = { "matmul_positive" };

const sim_kernel sim_kernel_matmul_tiled = {
    .name = "_Z12matmul_tiledPKfS0_Pfi",
    .nparams = 4,
    .params = params,
    .nglobals = 1,
    .globals = used_globals,
    .static_shared = 2 * TILE * TILE * sizeof(float),
    .run = run,
};
