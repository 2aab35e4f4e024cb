/* srad: inputs, the host step of each iteration, summary, teardown. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "srad.h"

int srad_setup(long size, int iters, void **out, char *err, size_t errlen)
{
    srad_state *s;
    uint64_t seed = 0x73726164u;
    size_t n = (size_t)size;

    if (size < 16 || size > SRAD_MAX_N) {
        snprintf(err, errlen, "SIZE must be from 16 to %d", SRAD_MAX_N);
        return -1;
    }
    s = calloc(1, sizeof(*s));
    if (!s || !(s->in = malloc(n * n * 4)) || !(s->out = malloc(n * n * 4))) {
        snprintf(err, errlen, "out of host memory");
        if (s)
            srad_teardown(s);
        return -1;
    }
    s->n = (int)size;
    s->iters = iters;
    memset(s->out, 0, n * n * 4);
    /* A smooth picture (a ramp and a bright disc) under multiplicative-looking
     * speckle noise, as the ultrasound images SRAD is for. */
    for (size_t y = 0; y < n; y++)
        for (size_t x = 0; x < n; x++) {
            size_t dx = x > n / 2 ? x - n / 2 : n / 2 - x, dy = y > n / 2 ? y - n / 2 : n / 2 - y;
            uint32_t base = 40 + (uint32_t)((x + y) * 100 / (2 * n)) + (dx * dx + dy * dy < n * n / 16 ? 80 : 0);
            uint32_t noise = bench_rand(&seed) % (base / 2 + 1);
            s->in[y * n + x] = (int32_t)((base - base / 4 + noise) * SRAD_ONE + bench_rand(&seed) % SRAD_ONE);
        }
    *out = s;
    return 0;
}

float srad_q0sqr(uint64_t sum, uint64_t sum_sq, size_t npix)
{
    double mean = (double)sum / ((double)npix * SRAD_ONE);
    double mean_sq = (double)sum_sq / ((double)npix * SRAD_ONE);   /* (p >> 8)^2 is in 2^-16 units */
    double var = mean_sq - mean * mean;

    return (float)(var / (mean * mean));
}

void srad_summarize(void *state, uint64_t *checksum, char *summary, size_t len)
{
    const srad_state *s = state;
    size_t npix = (size_t)s->n * (size_t)s->n;
    uint64_t sum = 0;

    for (size_t i = 0; i < npix; i++)
        sum += (uint32_t)s->out[i];
    *checksum = bench_fnv_u32(BENCH_FNV_OFFSET, (const uint32_t *)s->out, npix);
    snprintf(summary, len, "iters=%d mean=%.6f", s->iters, (double)sum / ((double)npix * SRAD_ONE));
}

void srad_teardown(void *state)
{
    srad_state *s = state;

    free(s->in);
    free(s->out);
    free(s);
}
