/* Twins of bench/apps/srad.cu:
 *   srad_reduce(const int *img, int npix, unsigned long long *sums)   1-D blocks
 *     sums[0] += img[i], sums[1] += (img[i] >> 8)^2 over a grid-stride loop
 *   srad_coef(const int *img, float *coef, int n, float q0sqr)         2-D blocks
 *   srad_update(const int *img, const float *coef, int *out, int n, float lambda)
 * The float formulas are the kernels', operation for operation.  The device
 * code is built with --fmad=false and this file in ISO C mode (GCC does not
 * contract a * b + c there), so every operation is one IEEE-rounded float
 * operation on both sides; __float2int_rn is lrintf in the default
 * round-to-nearest-even mode. */
#include <math.h>

#include "bench_twin.h"
#include "kernels.h"

#define ONE 65536
#define LO (1.0f * ONE)
#define HI (255.0f * ONE)

static bool reduce_block(const sim_launch *l, uint32_t bx, uint64_t *b1, uint64_t *b2)
{
    uint64_t img = sim_param_ptr(l, 0);
    int32_t npix = sim_param_i32(l, 1);
    int32_t stride = bt_mul((int32_t)l->grid.x, (int32_t)l->block.x);

    for (uint32_t t = 0; t < l->block.x; t++)
        for (int32_t i = sim_global_index_x(bx, l->block.x, t); i < npix; i = bt_add(i, stride)) {
            uint32_t *p = bt_u32(l, img, i);
            if (!p)
                return false;
            uint32_t v = *p, q = v >> 8;
            *b1 += v;
            *b2 += (uint64_t)q * q;
            if (stride <= 0)   /* the GPU would loop for ever; stop after one */
                break;
        }
    return true;
}

static void run_reduce(const sim_launch *l)
{
    uint64_t sums = sim_param_ptr(l, 2);

    if (!bt_block_is(l, l->block.x, 1, 1))
        return;
    for (uint32_t bz = 0; bz < l->grid.z; bz++)
        for (uint32_t by = 0; by < l->grid.y; by++)
            for (uint32_t bx = 0; bx < l->grid.x; bx++) {
                uint64_t b1 = 0, b2 = 0, *s1, *s2;
                if (sim_launch_stopped(l) || !reduce_block(l, bx, &b1, &b2))
                    return;
                if (!(s1 = bt_u64(l, sums, 0)) || !(s2 = bt_u64(l, sums, 1)))
                    return;
                *s1 += b1;   /* atomicAdd: the sim's threads never overlap */
                *s2 += b2;
            }
}

static bool px(const sim_launch *l, uint64_t img, int32_t p, float *out)
{
    uint32_t *v = bt_u32(l, img, p);

    if (v)
        *out = (float)(int32_t)*v * (1.0f / ONE);
    return v != NULL;
}

/* `i + 1 < n ? i + 1 : n - 1` in the kernels' int arithmetic. */
static int32_t clamp_next(int32_t i, int32_t n)
{
    return bt_add(i, 1) < n ? bt_add(i, 1) : bt_sub(n, 1);
}

/* Pixel (y, x) and its north, south, west, east differences, edges clamped. */
static bool derivatives(const sim_launch *l, uint64_t img, int32_t n, int32_t y, int32_t x, float *jc, float d[4])
{
    int32_t nb[4] = {
        bt_add(bt_mul(y > 0 ? y - 1 : 0, n), x),
        bt_add(bt_mul(clamp_next(y, n), n), x),
        bt_add(bt_mul(y, n), x > 0 ? x - 1 : 0),
        bt_add(bt_mul(y, n), clamp_next(x, n)),
    };

    if (!px(l, img, bt_add(bt_mul(y, n), x), jc))
        return false;
    for (int k = 0; k < 4; k++) {
        if (!px(l, img, nb[k], &d[k]))
            return false;
        d[k] = d[k] - *jc;
    }
    return true;
}

static bool coef_one(const sim_launch *l, int32_t y, int32_t x)
{
    uint64_t img = sim_param_ptr(l, 0), coef = sim_param_ptr(l, 1);
    int32_t n = sim_param_i32(l, 2);
    float q0sqr = bt_param_f32(l, 3), jc, d[4], *out;

    if (!derivatives(l, img, n, y, x, &jc, d))
        return false;
    float g2 = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2] + d[3] * d[3]) / (jc * jc);
    float lap = (d[0] + d[1] + d[2] + d[3]) / jc;
    float num = 0.5f * g2 - (1.0f / 16.0f) * (lap * lap);
    float den = 1.0f + 0.25f * lap;
    float qsqr = num / (den * den);
    den = (qsqr - q0sqr) / (q0sqr * (1.0f + q0sqr));
    float c = 1.0f / (1.0f + den);
    if (!(out = bt_f32(l, coef, bt_add(bt_mul(y, n), x))))
        return false;
    *out = !(c >= 0.0f) ? 0.0f : c > 1.0f ? 1.0f : c;
    return true;
}

static bool update_one(const sim_launch *l, int32_t y, int32_t x)
{
    uint64_t img = sim_param_ptr(l, 0), coef = sim_param_ptr(l, 1), out = sim_param_ptr(l, 2);
    int32_t n = sim_param_i32(l, 3);
    float lambda = bt_param_f32(l, 4), jc, d[4];
    int32_t p = bt_add(bt_mul(y, n), x);
    int32_t ps = bt_add(bt_mul(clamp_next(y, n), n), x), pe = bt_add(bt_mul(y, n), clamp_next(x, n));
    float *cp, *cs, *ce;
    uint32_t *o;

    if (!derivatives(l, img, n, y, x, &jc, d) || !(cp = bt_f32(l, coef, p)) || !(cs = bt_f32(l, coef, ps)) ||
        !(ce = bt_f32(l, coef, pe)))
        return false;
    float div = *cp * d[0] + *cs * d[1] + *cp * d[2] + *ce * d[3];
    float v = (jc + 0.25f * lambda * div) * (float)ONE;
    if (!(v >= LO))
        v = LO;
    if (v > HI)
        v = HI;
    if (!(o = bt_u32(l, out, p)))
        return false;
    *o = (uint32_t)(int32_t)lrintf(v);
    return true;
}

/* Every thread (x, y) of the 2-D grid inside the n x n image. */
static void for_each_pixel(const sim_launch *l, int32_t n, bool (*one)(const sim_launch *, int32_t, int32_t))
{
    for (uint32_t bz = 0; bz < l->grid.z; bz++)
        for (uint32_t by = 0; by < l->grid.y; by++)
            for (uint32_t bx = 0; bx < l->grid.x; bx++) {
                if (sim_launch_stopped(l))
                    return;
                for (uint32_t tz = 0; tz < l->block.z; tz++)
                    for (uint32_t ty = 0; ty < l->block.y; ty++)
                        for (uint32_t tx = 0; tx < l->block.x; tx++) {
                            int32_t x = sim_global_index_x(bx, l->block.x, tx);
                            int32_t y = sim_global_index_x(by, l->block.y, ty);
                            if (x < n && y < n && !one(l, y, x))
                                return;
                        }
            }
}

static void run_coef(const sim_launch *l)
{
    for_each_pixel(l, sim_param_i32(l, 2), coef_one);
}

static void run_update(const sim_launch *l)
{
    for_each_pixel(l, sim_param_i32(l, 3), update_one);
}

static const sim_param_desc reduce_params[] = { SIM_PARAM_PTR, SIM_PARAM_I32, SIM_PARAM_PTR };
static const sim_param_desc coef_params[] = { SIM_PARAM_PTR, SIM_PARAM_PTR, SIM_PARAM_I32, SIM_PARAM_F32 };
static const sim_param_desc update_params[] = { SIM_PARAM_PTR, SIM_PARAM_PTR, SIM_PARAM_PTR, SIM_PARAM_I32,
                                                SIM_PARAM_F32 };

const sim_kernel sim_kernel_bench_srad_reduce = {
    .name = "_Z11srad_reducePKiiPy",
    .nparams = 3,
    .params = reduce_params,
    .static_shared = 16,
    .run = run_reduce,
};

const sim_kernel sim_kernel_bench_srad_coef = {
    .name = "_Z9srad_coefPKiPfif",
    .nparams = 4,
    .params = coef_params,
    .run = run_coef,
};

const sim_kernel sim_kernel_bench_srad_update = {
    .name = "_Z11srad_updatePKiPKfPiif",
    .nparams = 5,
    .params = update_params,
    .run = run_update,
};
