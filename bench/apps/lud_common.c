/* lud: inputs, modular arithmetic for host code, summary, teardown. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "lud.h"

uint32_t lud_mulmod(uint32_t a, uint32_t b)
{
    return (uint32_t)((uint64_t)a * b % LUD_P);
}

uint32_t lud_submod(uint32_t a, uint32_t b)
{
    return a >= b ? a - b : a + (LUD_P - b);
}

uint32_t lud_inverse(uint32_t a)
{
    uint32_t r = 1, e = LUD_P - 2;

    for (; e; e >>= 1) {
        if (e & 1)
            r = lud_mulmod(r, a);
        a = lud_mulmod(a, a);
    }
    return r;
}

int lud_setup(long size, int iters, void **out, char *err, size_t errlen)
{
    lud_state *s;
    uint64_t seed = 0x6c7564u;
    size_t cells;

    if (size < LUD_BS || size > LUD_MAX_N || size % LUD_BS) {
        snprintf(err, errlen, "SIZE must be a multiple of %d from %d to %d", LUD_BS, LUD_BS, LUD_MAX_N);
        return -1;
    }
    cells = (size_t)size * (size_t)size;
    s = calloc(1, sizeof(*s));
    if (!s || !(s->in = malloc(cells * 4)) || !(s->out = malloc(cells * 4))) {
        snprintf(err, errlen, "out of host memory");
        if (s)
            lud_teardown(s);
        return -1;
    }
    (void)iters;   /* lud has none */
    s->n = (int)size;
    memset(s->out, 0, cells * 4);
    for (size_t i = 0; i < cells; i++)
        s->in[i] = bench_rand(&seed) % LUD_P;
    *out = s;
    return 0;
}

void lud_summarize(void *state, uint64_t *checksum, char *summary, size_t len)
{
    const lud_state *s = state;
    size_t n = (size_t)s->n;
    uint32_t det = 1;
    int zero = 0;

    /* det(A) = product of U's diagonal (L has ones there). */
    for (size_t i = 0; i < n; i++) {
        det = lud_mulmod(det, s->out[i * n + i]);
        zero += s->out[i * n + i] == 0;
    }
    *checksum = bench_fnv_u32(BENCH_FNV_OFFSET, s->out, n * n);
    snprintf(summary, len, "det_mod_p=%" PRIu32 " zero_pivots=%d", det, zero);
}

void lud_teardown(void *state)
{
    lud_state *s = state;

    free(s->in);
    free(s->out);
    free(s);
}
