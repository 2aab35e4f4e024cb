/* Twins of bench/apps/nw.cu:
 *   nw_init(int *score, int n, int penalty)
 *     for i <= n: score[i] = score[i * (n + 1)] = -i * penalty
 *   nw_diagonal(int *score, const int *seq_a, const int *seq_b, const int *sub, int n, int diag, int penalty)
 *     one 16 x 16 tile per block, blockDim (16,1,1)
 * Integer maxima and sums: a tile computed row by row holds the same values
 * as the GPU's inner wavefront (every cell depends only on its left, upper
 * and upper-left neighbours). */
#include "bench_twin.h"
#include "kernels.h"

#define TILE 16
#define SYMBOLS 24

static void run_init(const sim_launch *l)
{
    uint64_t score = sim_param_ptr(l, 0);
    int32_t n = sim_param_i32(l, 1), p = sim_param_i32(l, 2);

    for (uint32_t bz = 0; bz < l->grid.z; bz++)
        for (uint32_t by = 0; by < l->grid.y; by++)
            for (uint32_t bx = 0; bx < l->grid.x; bx++) {
                if (sim_launch_stopped(l))
                    return;
                for (uint32_t t = 0; t < l->block.x * l->block.y * l->block.z; t++) {
                    int32_t i = sim_global_index_x(bx, l->block.x, t % l->block.x);
                    uint32_t *a, *b;
                    if (i > n)
                        continue;
                    if (!(a = bt_u32(l, score, i)))
                        return;
                    *a = (uint32_t)bt_mul(bt_sub(0, i), p);
                    if (!(b = bt_u32(l, score, bt_mul(i, bt_add(n, 1)))))
                        return;
                    *b = (uint32_t)bt_mul(bt_sub(0, i), p);
                }
            }
}

static bool load(const sim_launch *l, uint64_t base, int32_t idx, int32_t *out)
{
    uint32_t *p = bt_u32(l, base, idx);

    if (p)
        *out = (int32_t)*p;
    return p != NULL;
}

static int32_t max2(int32_t a, int32_t b)
{
    return a > b ? a : b;
}

/* One tile: the block's boundary loads, the cells, the stores. */
static bool tile(const sim_launch *l, uint32_t bx)
{
    uint64_t score = sim_param_ptr(l, 0), seq_a = sim_param_ptr(l, 1), seq_b = sim_param_ptr(l, 2);
    uint64_t sub = sim_param_ptr(l, 3);
    int32_t n = sim_param_i32(l, 4), diag = sim_param_i32(l, 5), p = sim_param_i32(l, 6);
    int32_t nb = n / TILE, w = bt_add(n, 1);
    int32_t br = bt_add(diag < nb ? 0 : bt_add(bt_sub(diag, nb), 1), (int32_t)bx), bc = bt_sub(diag, br);
    int32_t r0 = bt_mul(br, TILE), c0 = bt_mul(bc, TILE);
    int32_t t[TILE + 1][TILE + 1], a[TILE + 1];

    for (int32_t k = 0; k <= TILE; k++) {
        if (!load(l, score, bt_add(bt_mul(r0, w), bt_add(c0, k)), &t[0][k]))
            return false;
        if (k > 0 && !load(l, score, bt_add(bt_mul(bt_add(r0, k), w), c0), &t[k][0]))
            return false;
    }
    for (int32_t i = 1; i <= TILE; i++)
        if (!load(l, seq_a, bt_add(r0, i), &a[i]))
            return false;
    for (int32_t i = 1; i <= TILE; i++)
        for (int32_t j = 1; j <= TILE; j++) {
            int32_t b, s;
            if (!load(l, seq_b, bt_add(c0, j), &b) || !load(l, sub, bt_add(bt_mul(a[i], SYMBOLS), b), &s))
                return false;
            int32_t m = bt_add(t[i - 1][j - 1], s);
            m = max2(m, bt_sub(t[i - 1][j], p));
            t[i][j] = max2(m, bt_sub(t[i][j - 1], p));
        }
    for (int32_t i = 1; i <= TILE; i++)
        for (int32_t j = 1; j <= TILE; j++) {
            uint32_t *q = bt_u32(l, score, bt_add(bt_mul(bt_add(r0, i), w), bt_add(c0, j)));
            if (!q)
                return false;
            *q = (uint32_t)t[i][j];
        }
    return true;
}

static void run_diagonal(const sim_launch *l)
{
    if (!bt_block_is(l, TILE, 1, 1))
        return;
    /* blockIdx.y and .z do not enter the kernel: such blocks redo a tile. */
    for (uint32_t bz = 0; bz < l->grid.z; bz++)
        for (uint32_t by = 0; by < l->grid.y; by++)
            for (uint32_t bx = 0; bx < l->grid.x; bx++)
                if (sim_launch_stopped(l) || !tile(l, bx))
                    return;
}

static const sim_param_desc init_params[] = { SIM_PARAM_PTR, SIM_PARAM_I32, SIM_PARAM_I32 };
static const sim_param_desc diagonal_params[] = { SIM_PARAM_PTR, SIM_PARAM_PTR, SIM_PARAM_PTR, SIM_PARAM_PTR,
                                                  SIM_PARAM_I32, SIM_PARAM_I32, SIM_PARAM_I32 };

const sim_kernel sim_kernel_bench_nw_init = {
    .name = "_Z7nw_initPiii",
    .nparams = 3,
    .params = init_params,
    .run = run_init,
};

const sim_kernel sim_kernel_bench_nw_diagonal = {
    .name = "_Z11nw_diagonalPiPKiS1_S1_iii",
    .nparams = 7,
    .params = diagonal_params,
    .static_shared = (TILE + 1) * (TILE + 1) * 4,
    .run = run_diagonal,
};
