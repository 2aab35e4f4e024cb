/* nw host reference: the textbook row-by-row dynamic programme, with no
 * tiles and no wavefront, so it checks the tiling as well as the kernels. */
#include <string.h>

#include "nw.h"

static int32_t max3(int32_t a, int32_t b, int32_t c)
{
    int32_t m = a > b ? a : b;

    return m > c ? m : c;
}

int nw_run_host(void *state)
{
    nw_state *st = state;
    size_t w = (size_t)st->n + 1;
    int32_t *S = st->score, p = st->penalty;

    for (int r = 0; r < st->rounds; r++) {
        const int32_t *q = st->queries + (size_t)r * w;
        for (size_t i = 0; i < w; i++) {
            S[i] = -(int32_t)i * p;
            S[i * w] = -(int32_t)i * p;
        }
        for (size_t i = 1; i < w; i++)
            for (size_t j = 1; j < w; j++)
                S[i * w + j] = max3(S[(i - 1) * w + j - 1] + st->sub[q[i] * NW_SYMBOLS + st->ref[j]],
                                    S[(i - 1) * w + j] - p, S[i * w + j - 1] - p);
        memcpy(st->last_rows + (size_t)r * w, S + (w - 1) * w, w * 4);
    }
    return 0;
}
