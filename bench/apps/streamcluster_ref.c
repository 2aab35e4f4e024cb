/* streamcluster host reference: the same decisions, taken with plain loops
 * over the points (one total instead of per-block partial sums). */
#include "streamcluster.h"

static uint32_t dist(const sc_state *s, int i, const int32_t c[SC_DIMS])
{
    uint32_t sum = 0;

    for (int d = 0; d < SC_DIMS; d++) {
        int32_t diff = s->pts[(size_t)d * (size_t)s->n + (size_t)i] - c[d];
        sum += (uint32_t)(diff * diff);
    }
    return sum;
}

int sc_run_host(void *state)
{
    sc_state *s = state;
    int32_t c[SC_DIMS];

    sc_coords(s, 0, c);
    for (int i = 0; i < s->n; i++) {
        s->cost[i] = dist(s, i, c);
        s->assign[i] = 0;
    }
    s->opened = 1;
    s->switched = 0;
    for (int t = 0; t < s->iters; t++) {
        uint64_t saving = 0, movers = 0;
        sc_coords(s, s->cand[t], c);
        for (int i = 0; i < s->n; i++) {
            uint32_t d = dist(s, i, c);
            if (d < s->cost[i]) {
                saving += s->cost[i] - d;
                movers++;
            }
        }
        if (saving <= s->facility)
            continue;
        for (int i = 0; i < s->n; i++) {
            uint32_t d = dist(s, i, c);
            if (d < s->cost[i]) {
                s->cost[i] = d;
                s->assign[i] = s->cand[t];
            }
        }
        s->opened++;
        s->switched += movers;
    }
    return 0;
}
