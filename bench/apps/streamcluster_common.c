/* streamcluster: inputs, summary, teardown. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "streamcluster.h"

#define HIDDEN_CLUSTERS 64
#define SPREAD 96

int sc_setup(long size, int iters, void **out, char *err, size_t errlen)
{
    sc_state *s;
    uint64_t seed = 0x7363u;
    size_t n = (size_t)size;
    int32_t centre[HIDDEN_CLUSTERS][SC_DIMS];

    if (size < SC_THREADS || size > SC_MAX_N) {
        snprintf(err, errlen, "SIZE must be from %d to %d points", SC_THREADS, SC_MAX_N);
        return -1;
    }
    s = calloc(1, sizeof(*s));
    if (!s || !(s->pts = malloc(n * SC_DIMS * 4)) || !(s->cand = malloc((size_t)iters * 4)) ||
        !(s->cost = malloc(n * 4)) || !(s->assign = malloc(n * 4))) {
        snprintf(err, errlen, "out of host memory");
        if (s)
            sc_teardown(s);
        return -1;
    }
    s->n = (int)size;
    s->iters = iters;
    memset(s->cost, 0, n * 4);
    memset(s->assign, 0, n * 4);
    /* Points scattered around hidden cluster centres, so opening a centre
     * in a new cluster pays and one in a covered cluster does not. */
    for (int c = 0; c < HIDDEN_CLUSTERS; c++)
        for (int d = 0; d < SC_DIMS; d++)
            centre[c][d] = (int32_t)(bench_rand(&seed) % (SC_COORD_MAX + 1));
    for (size_t i = 0; i < n; i++) {
        int c = (int)(bench_rand(&seed) % HIDDEN_CLUSTERS);
        for (int d = 0; d < SC_DIMS; d++) {
            int32_t v = centre[c][d] + (int32_t)(bench_rand(&seed) % (2 * SPREAD + 1)) - SPREAD;
            s->pts[(size_t)d * n + i] = v < 0 ? 0 : v > SC_COORD_MAX ? SC_COORD_MAX : v;
        }
    }
    for (int t = 0; t < iters; t++)
        s->cand[t] = (int32_t)(bench_rand(&seed) % n);
    /* About what a tenth of a cluster saves by getting its own centre. */
    s->facility = (uint64_t)n / HIDDEN_CLUSTERS / 10 * SC_DIMS * SPREAD * SPREAD;
    *out = s;
    return 0;
}

void sc_coords(const sc_state *s, int idx, int32_t out[SC_DIMS])
{
    for (int d = 0; d < SC_DIMS; d++)
        out[d] = s->pts[(size_t)d * (size_t)s->n + (size_t)idx];
}

void sc_summarize(void *state, uint64_t *checksum, char *summary, size_t len)
{
    const sc_state *s = state;
    uint64_t total = 0, h;

    for (int i = 0; i < s->n; i++)
        total += s->cost[i];
    h = bench_fnv_u32(BENCH_FNV_OFFSET, s->cost, (size_t)s->n);
    *checksum = bench_fnv_u32(h, (const uint32_t *)s->assign, (size_t)s->n);
    snprintf(summary, len, "centres=%d switched=%" PRIu64 " cost=%" PRIu64, s->opened, s->switched, total);
}

void sc_teardown(void *state)
{
    sc_state *s = state;

    free(s->pts);
    free(s->cand);
    free(s->cost);
    free(s->assign);
    free(s);
}
