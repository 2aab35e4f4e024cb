/* Twins of bench/apps/streamcluster.cu (16 coordinates per point, stored
 * coordinate-major: coordinate d of point i at pts[d * n + i]):
 *   sc_init(const int *pts, int n, const int *cand, unsigned *cost, int *assign)
 *   sc_gain(const int *pts, int n, const int *cand, const unsigned *cost, unsigned char *flags,
 *           unsigned long long *partial)
 *   sc_commit(const int *pts, int n, const int *cand, int cand_idx, unsigned *cost, int *assign)
 * Integer arithmetic only; sc_gain's per-block sum is a shared-memory
 * atomicAdd on the GPU, a running sum here. */
#include "bench_twin.h"
#include "kernels.h"

#define DIMS 16

/* Squared distance of point i to the candidate; false after a fault. */
static bool dist(const sim_launch *l, uint64_t pts, int32_t n, int32_t i, uint64_t cand, uint32_t *out)
{
    uint32_t sum = 0;

    for (int32_t d = 0; d < DIMS; d++) {
        uint32_t *p = bt_u32(l, pts, bt_add(bt_mul(d, n), i)), *c = p ? bt_u32(l, cand, d) : NULL;
        if (!c)
            return false;
        int32_t diff = bt_sub((int32_t)*p, (int32_t)*c);
        sum += (uint32_t)bt_mul(diff, diff);
    }
    *out = sum;
    return true;
}

static bool init_one(const sim_launch *l, int32_t i, void *ctx)
{
    uint64_t pts = sim_param_ptr(l, 0), cand = sim_param_ptr(l, 2);
    uint64_t cost = sim_param_ptr(l, 3), assign = sim_param_ptr(l, 4);
    uint32_t d, *pc, *pa;

    (void)ctx;
    if (!dist(l, pts, sim_param_i32(l, 1), i, cand, &d) || !(pc = bt_u32(l, cost, i)) ||
        !(pa = bt_u32(l, assign, i)))
        return false;
    *pc = d;
    *pa = 0;
    return true;
}

static void run_init(const sim_launch *l)
{
    sim_for_each_index_x(l, sim_param_i32(l, 1), init_one, NULL);
}

static bool gain_one(const sim_launch *l, int32_t i, uint64_t *saving)
{
    uint64_t pts = sim_param_ptr(l, 0), cand = sim_param_ptr(l, 2), cost = sim_param_ptr(l, 3);
    uint64_t flags = sim_param_ptr(l, 4);
    uint32_t d, *pc;
    uint8_t *f;

    if (!dist(l, pts, sim_param_i32(l, 1), i, cand, &d) || !(pc = bt_u32(l, cost, i)) ||
        !(f = sim_mem_ptr(l, flags + (uint64_t)(int64_t)i, 1)))
        return false;
    *f = d < *pc;
    if (d < *pc)
        *saving += *pc - d;
    return true;
}

static void run_gain(const sim_launch *l)
{
    uint64_t partial = sim_param_ptr(l, 5);
    int32_t n = sim_param_i32(l, 1);
    uint32_t threads = l->block.x * l->block.y * l->block.z;

    for (uint32_t bz = 0; bz < l->grid.z; bz++)
        for (uint32_t by = 0; by < l->grid.y; by++)
            for (uint32_t bx = 0; bx < l->grid.x; bx++) {
                uint64_t saving = 0, *out;
                if (sim_launch_stopped(l))
                    return;
                for (uint32_t t = 0; t < threads; t++) {
                    int32_t i = sim_global_index_x(bx, l->block.x, t % l->block.x);
                    if (i < n && !gain_one(l, i, &saving))
                        return;
                }
                if (!(out = bt_u64(l, partial, (int32_t)bx)))
                    return;
                *out = saving;
            }
}

static bool commit_one(const sim_launch *l, int32_t i, void *ctx)
{
    uint64_t pts = sim_param_ptr(l, 0), cand = sim_param_ptr(l, 2);
    uint64_t cost = sim_param_ptr(l, 4), assign = sim_param_ptr(l, 5);
    uint32_t d, *pc, *pa;

    (void)ctx;
    if (!dist(l, pts, sim_param_i32(l, 1), i, cand, &d) || !(pc = bt_u32(l, cost, i)))
        return false;
    if (d < *pc) {
        if (!(pa = bt_u32(l, assign, i)))
            return false;
        *pc = d;
        *pa = (uint32_t)sim_param_i32(l, 3);
    }
    return true;
}

static void run_commit(const sim_launch *l)
{
    sim_for_each_index_x(l, sim_param_i32(l, 1), commit_one, NULL);
}

static const sim_param_desc init_params[] = { SIM_PARAM_PTR, SIM_PARAM_I32, SIM_PARAM_PTR, SIM_PARAM_PTR,
                                              SIM_PARAM_PTR };
static const sim_param_desc gain_params[] = { SIM_PARAM_PTR, SIM_PARAM_I32, SIM_PARAM_PTR, SIM_PARAM_PTR,
                                              SIM_PARAM_PTR, SIM_PARAM_PTR };
static const sim_param_desc commit_params[] = { SIM_PARAM_PTR, SIM_PARAM_I32, SIM_PARAM_PTR, SIM_PARAM_I32,
                                                SIM_PARAM_PTR, SIM_PARAM_PTR };

const sim_kernel sim_kernel_bench_sc_init = {
    .name = "_Z7sc_initPKiiS0_PjPi",
    .nparams = 5,
    .params = init_params,
    .run = run_init,
};

const sim_kernel sim_kernel_bench_sc_gain = {
    .name = "_Z7sc_gainPKiiS0_PKjPhPy",
    .nparams = 6,
    .params = gain_params,
    .static_shared = 8,
    .run = run_gain,
};

const sim_kernel sim_kernel_bench_sc_commit = {
    .name = "_Z9sc_commitPKiiS0_iPjPi",
    .nparams = 6,
    .params = commit_params,
    .run = run_commit,
};
