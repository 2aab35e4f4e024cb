/* Twins of bench/apps/lud.cu, arithmetic modulo p = 2^31 - 1:
 *   lud_diagonal(unsigned *a, unsigned *dinv, int n, int k)    <<<1, 16>>>
 *   lud_perimeter(unsigned *a, const unsigned *dinv, int n, int k)  <<<nb-k-1, 32>>>
 *   lud_internal(unsigned *a, int n, int k)    <<<(nb-k-1, nb-k-1), (16, 16)>>>
 * Each tile is loaded, updated and stored as the block does it; the
 * threads of a block own disjoint rows or columns between barriers, so
 * running them one after another gives the GPU's values. */
#include "bench_twin.h"
#include "kernels.h"

#define BS 16
#define P 2147483647u

static uint32_t mulmod(uint32_t a, uint32_t b)
{
    return (uint32_t)((uint64_t)a * b % P);
}

static uint32_t submod(uint32_t a, uint32_t b)
{
    return a >= b ? a - b : a + (P - b);
}

static uint32_t inverse(uint32_t a)
{
    uint32_t r = 1;

    for (uint32_t e = P - 2; e; e >>= 1) {
        if (e & 1)
            r = mulmod(r, a);
        a = mulmod(a, a);
    }
    return r;
}

/* The 16 x 16 tile whose top left element is a[r0 * n + c0], in or out. */
static bool tile_io(const sim_launch *l, uint64_t a, int32_t n, int32_t r0, int32_t c0, uint32_t t[BS][BS],
                    bool store)
{
    for (int32_t i = 0; i < BS; i++)
        for (int32_t j = 0; j < BS; j++) {
            uint32_t *p = bt_u32(l, a, bt_add(bt_mul(bt_add(r0, i), n), bt_add(c0, j)));
            if (!p)
                return false;
            if (store)
                *p = t[i][j];
            else
                t[i][j] = *p;
        }
    return true;
}

static void run_diagonal(const sim_launch *l)
{
    uint64_t a = sim_param_ptr(l, 0), dinv = sim_param_ptr(l, 1);
    int32_t n = sim_param_i32(l, 2), o = bt_mul(sim_param_i32(l, 3), BS);
    uint32_t t[BS][BS];

    /* Several blocks would race on the one tile: the program launches one. */
    if (!bt_block_is(l, BS, 1, 1))
        return;
    if (l->grid.x * l->grid.y * l->grid.z != 1) {
        sim_launch_fault(l, cudaErrorNotSupported, "lud_diagonal twin models a grid of one block only");
        return;
    }
    if (!tile_io(l, a, n, o, o, t, false))
        return;
    for (int i = 0; i < BS; i++) {
        uint32_t inv = inverse(t[i][i]), *d = bt_u32(l, dinv, bt_add(o, i));
        if (!d)
            return;
        *d = inv;
        for (int r = i + 1; r < BS; r++) {
            uint32_t f = mulmod(t[r][i], inv);
            t[r][i] = f;
            for (int j = i + 1; j < BS; j++)
                t[r][j] = submod(t[r][j], mulmod(f, t[i][j]));
        }
    }
    tile_io(l, a, n, o, o, t, true);
}

static bool perimeter_block(const sim_launch *l, uint32_t bx)
{
    uint64_t a = sim_param_ptr(l, 0), dinv = sim_param_ptr(l, 1);
    int32_t n = sim_param_i32(l, 2), k = sim_param_i32(l, 3);
    int32_t o = bt_mul(k, BS), b = bt_mul(bt_add(bt_add(k, 1), (int32_t)bx), BS);
    uint32_t d[BS][BS], row[BS][BS], col[BS][BS], inv[BS];

    if (!tile_io(l, a, n, o, o, d, false) || !tile_io(l, a, n, o, b, row, false) ||
        !tile_io(l, a, n, b, o, col, false))
        return false;
    for (int j = 0; j < BS; j++) {
        uint32_t *p = bt_u32(l, dinv, bt_add(o, j));
        if (!p)
            return false;
        inv[j] = *p;
    }
    /* Threads 0-15: column tx of U, forward substitution with unit-lower L. */
    for (int tx = 0; tx < BS; tx++)
        for (int i = 1; i < BS; i++) {
            uint64_t s = 0;
            for (int m = 0; m < i; m++)
                s += mulmod(d[i][m], row[m][tx]);
            row[i][tx] = submod(row[i][tx], (uint32_t)(s % P));
        }
    /* Threads 16-31: row r of L, scaled by the pivots' inverses. */
    for (int r = 0; r < BS; r++)
        for (int j = 0; j < BS; j++) {
            uint64_t s = 0;
            for (int m = 0; m < j; m++)
                s += mulmod(col[r][m], d[m][j]);
            col[r][j] = mulmod(submod(col[r][j], (uint32_t)(s % P)), inv[j]);
        }
    return tile_io(l, a, n, o, b, row, true) && tile_io(l, a, n, b, o, col, true);
}

static void run_perimeter(const sim_launch *l)
{
    if (!bt_block_is(l, 2 * BS, 1, 1))
        return;
    for (uint32_t bz = 0; bz < l->grid.z; bz++)
        for (uint32_t by = 0; by < l->grid.y; by++)
            for (uint32_t bx = 0; bx < l->grid.x; bx++)
                if (sim_launch_stopped(l) || !perimeter_block(l, bx))
                    return;
}

static bool internal_block(const sim_launch *l, uint32_t bx, uint32_t by)
{
    uint64_t a = sim_param_ptr(l, 0);
    int32_t n = sim_param_i32(l, 1), k = sim_param_i32(l, 2), o = bt_mul(k, BS);
    int32_t r = bt_mul(bt_add(bt_add(k, 1), (int32_t)by), BS), c = bt_mul(bt_add(bt_add(k, 1), (int32_t)bx), BS);
    uint32_t lt[BS][BS], ut[BS][BS], t[BS][BS];

    if (!tile_io(l, a, n, r, o, lt, false) || !tile_io(l, a, n, o, c, ut, false) ||
        !tile_io(l, a, n, r, c, t, false))
        return false;
    for (int ty = 0; ty < BS; ty++)
        for (int tx = 0; tx < BS; tx++) {
            uint64_t s = 0;
            for (int m = 0; m < BS; m++)
                s += mulmod(lt[ty][m], ut[m][tx]);
            t[ty][tx] = submod(t[ty][tx], (uint32_t)(s % P));
        }
    return tile_io(l, a, n, r, c, t, true);
}

static void run_internal(const sim_launch *l)
{
    if (!bt_block_is(l, BS, BS, 1))
        return;
    for (uint32_t bz = 0; bz < l->grid.z; bz++)
        for (uint32_t by = 0; by < l->grid.y; by++)
            for (uint32_t bx = 0; bx < l->grid.x; bx++)
                if (sim_launch_stopped(l) || !internal_block(l, bx, by))
                    return;
}

static const sim_param_desc diag_params[] = { SIM_PARAM_PTR, SIM_PARAM_PTR, SIM_PARAM_I32, SIM_PARAM_I32 };
static const sim_param_desc internal_params[] = { SIM_PARAM_PTR, SIM_PARAM_I32, SIM_PARAM_I32 };

const sim_kernel sim_kernel_bench_lud_diagonal = {
    .name = "_Z12lud_diagonalPjS_ii",
    .nparams = 4,
    .params = diag_params,
    .static_shared = BS * BS * 4 + 4,
    .run = run_diagonal,
};

const sim_kernel sim_kernel_bench_lud_perimeter = {
    .name = "_Z13lud_perimeterPjPKjii",
    .nparams = 4,
    .params = diag_params,
    .static_shared = 3 * BS * BS * 4,
    .run = run_perimeter,
};

const sim_kernel sim_kernel_bench_lud_internal = {
    .name = "_Z12lud_internalPjii",
    .nparams = 3,
    .params = internal_params,
    .static_shared = 2 * BS * BS * 4,
    .run = run_internal,
};
