/* srad host reference: the same per-pixel formulas as the kernels, written
 * as plain loops over the image (sums in one sequential pass), in ISO C so
 * no multiply-add is fused. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "srad.h"

static float px(const int32_t *j, size_t p)
{
    return (float)j[p] * (1.0f / SRAD_ONE);
}

/* The four differences to the neighbours, edges clamped. */
static void derivatives(const int32_t *j, size_t n, size_t y, size_t x, float d[4])
{
    size_t p = y * n + x;
    float jc = px(j, p);

    d[0] = px(j, (y > 0 ? y - 1 : 0) * n + x) - jc;
    d[1] = px(j, (y + 1 < n ? y + 1 : n - 1) * n + x) - jc;
    d[2] = px(j, y * n + (x > 0 ? x - 1 : 0)) - jc;
    d[3] = px(j, y * n + (x + 1 < n ? x + 1 : n - 1)) - jc;
}

static float coefficient(const int32_t *j, size_t n, size_t y, size_t x, float q0sqr)
{
    float d[4], jc = px(j, y * n + x);

    derivatives(j, n, y, x, d);
    float g2 = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2] + d[3] * d[3]) / (jc * jc);
    float l = (d[0] + d[1] + d[2] + d[3]) / jc;
    float num = 0.5f * g2 - (1.0f / 16.0f) * (l * l);
    float den = 1.0f + 0.25f * l;
    float qsqr = num / (den * den);
    den = (qsqr - q0sqr) / (q0sqr * (1.0f + q0sqr));
    float c = 1.0f / (1.0f + den);
    return !(c >= 0.0f) ? 0.0f : c > 1.0f ? 1.0f : c;
}

static int32_t updated(const int32_t *j, const float *c, size_t n, size_t y, size_t x)
{
    size_t p = y * n + x, ps = (y + 1 < n ? y + 1 : n - 1) * n + x, pe = y * n + (x + 1 < n ? x + 1 : n - 1);
    float d[4];

    derivatives(j, n, y, x, d);
    float div = c[p] * d[0] + c[ps] * d[1] + c[p] * d[2] + c[pe] * d[3];
    float v = (px(j, p) + 0.25f * SRAD_LAMBDA * div) * (float)SRAD_ONE;
    if (!(v >= (float)SRAD_LO))
        v = (float)SRAD_LO;
    if (v > (float)SRAD_HI)
        v = (float)SRAD_HI;
    return (int32_t)lrintf(v);
}

int srad_run_host(void *state)
{
    srad_state *s = state;
    size_t n = (size_t)s->n, npix = n * n;
    int32_t *j = s->out, *next = malloc(npix * 4);
    float *c = malloc(npix * sizeof(float));

    if (!next || !c) {
        free(next);
        free(c);
        return -1;
    }
    memcpy(j, s->in, npix * 4);
    for (int it = 0; it < s->iters; it++) {
        uint64_t sum = 0, sum_sq = 0;
        for (size_t p = 0; p < npix; p++) {
            uint32_t v = (uint32_t)j[p], q = v >> 8;
            sum += v;
            sum_sq += (uint64_t)q * q;
        }
        float q0sqr = srad_q0sqr(sum, sum_sq, npix);
        for (size_t y = 0; y < n; y++)
            for (size_t x = 0; x < n; x++)
                c[y * n + x] = coefficient(j, n, y, x, q0sqr);
        for (size_t y = 0; y < n; y++)
            for (size_t x = 0; x < n; x++)
                next[y * n + x] = updated(j, c, n, y, x);
        memcpy(j, next, npix * 4);
    }
    free(next);
    free(c);
    return 0;
}
