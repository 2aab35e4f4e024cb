/* nw: inputs, summary and teardown, shared by the device path and the host
 * reference. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "nw.h"

int nw_setup(long size, int rounds, void **out, char *err, size_t errlen)
{
    nw_state *s;
    uint64_t seed = 0x6e77u;
    size_t w = (size_t)size + 1;

    if (size < NW_TILE || size > NW_MAX_N || size % NW_TILE) {
        snprintf(err, errlen, "SIZE must be a multiple of %d from %d to %d", NW_TILE, NW_TILE, NW_MAX_N);
        return -1;
    }
    s = calloc(1, sizeof(*s));
    if (!s || !(s->queries = calloc((size_t)rounds * w, 4)) || !(s->ref = calloc(w, 4)) ||
        !(s->sub = malloc(NW_SYMBOLS * NW_SYMBOLS * 4)) || !(s->last_rows = malloc((size_t)rounds * w * 4)) ||
        !(s->score = malloc(w * w * 4))) {
        snprintf(err, errlen, "out of host memory");
        if (s)
            nw_teardown(s);
        return -1;
    }
    s->n = (int)size;
    s->rounds = rounds;
    s->penalty = 10;
    for (size_t i = 1; i < w; i++)
        s->ref[i] = (int32_t)(bench_rand(&seed) % NW_SYMBOLS);
    for (int r = 0; r < rounds; r++)
        for (size_t i = 1; i < w; i++)
            s->queries[(size_t)r * w + i] = (int32_t)(bench_rand(&seed) % NW_SYMBOLS);
    /* A BLOSUM-like table: a bonus on the diagonal, small penalties off it. */
    for (int a = 0; a < NW_SYMBOLS; a++)
        for (int b = 0; b < NW_SYMBOLS; b++)
            s->sub[a * NW_SYMBOLS + b] = a == b ? 5 + a % 4 : -1 - (a * 7 + b * 13) % 4;
    memset(s->last_rows, 0, (size_t)rounds * w * 4);
    memset(s->score, 0, w * w * 4);
    *out = s;
    return 0;
}

void nw_summarize(void *state, uint64_t *checksum, char *summary, size_t len)
{
    const nw_state *s = state;
    size_t w = (size_t)s->n + 1;
    int64_t total = 0;

    for (int r = 0; r < s->rounds; r++)
        total += s->last_rows[(size_t)r * w + w - 1];
    *checksum = bench_fnv_u32(BENCH_FNV_OFFSET, (const uint32_t *)s->last_rows, (size_t)s->rounds * w);
    *checksum = bench_fnv_u32(*checksum, (const uint32_t *)s->score, w * w);
    snprintf(summary, len, "rounds=%d score_sum=%lld last_score=%d", s->rounds, (long long)total,
             (int)s->score[w * w - 1]);
}

void nw_teardown(void *state)
{
    nw_state *s = state;

    free(s->queries);
    free(s->ref);
    free(s->sub);
    free(s->last_rows);
    free(s->score);
    free(s);
}
