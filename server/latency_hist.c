/* See latency_hist.h. */
#include "latency_hist.h"

unsigned tdm_latency_bucket(uint64_t ns)
{
    if (ns < 4)
        return (unsigned)ns;
    /* Octave o (ns in [2^o, 2^(o+1))) split in four by the two bits after the leading one. */
    unsigned o = 63u - (unsigned)__builtin_clzll(ns);
    unsigned b = 4u * (o - 1u) + (unsigned)((ns >> (o - 2u)) & 3u);
    return b < TDM_LATENCY_BUCKETS ? b : TDM_LATENCY_BUCKETS - 1;
}

uint64_t tdm_latency_bucket_mid_ns(unsigned b)
{
    if (b < 4)
        return b;
    unsigned o = b / 4u + 1u, sub = b % 4u;
    uint64_t low = (uint64_t)(4u + sub) << (o - 2u), width = 1ull << (o - 2u);
    return low + width / 2;
}

uint64_t tdm_latency_take_window(_Atomic uint32_t hist[TDM_LATENCY_BUCKETS], uint32_t reported[TDM_LATENCY_BUCKETS],
                                 uint32_t window[TDM_LATENCY_BUCKETS])
{
    uint64_t total = 0;

    for (unsigned b = 0; b < TDM_LATENCY_BUCKETS; b++) {
        uint32_t now = atomic_load_explicit(&hist[b], memory_order_relaxed);
        window[b] = now - reported[b];
        reported[b] = now;
        total += window[b];
    }
    return total;
}

uint64_t tdm_latency_quantile_ns(const uint32_t counts[TDM_LATENCY_BUCKETS], double q)
{
    uint64_t total = 0, seen = 0;

    for (unsigned b = 0; b < TDM_LATENCY_BUCKETS; b++)
        total += counts[b];
    if (total == 0)
        return 0;
    /* The smallest bucket that holds the rank-th call, rank = ceil(q * total). */
    uint64_t rank = (uint64_t)(q * (double)total);
    if ((double)rank < q * (double)total)
        rank++;
    if (rank == 0)
        rank = 1;
    for (unsigned b = 0; b < TDM_LATENCY_BUCKETS; b++) {
        seen += counts[b];
        if (seen >= rank)
            return tdm_latency_bucket_mid_ns(b);
    }
    return tdm_latency_bucket_mid_ns(TDM_LATENCY_BUCKETS - 1);
}
