/* The per-session latency histogram (server/session_stats.c): buckets four per octave, their
 * middles, and the quantiles the control socket reports. */
#include <criterion/criterion.h>

#include "session_stats.h"

Test(latency, buckets_are_contiguous_and_ordered)
{
    unsigned last = 0;

    for (uint64_t ns = 0; ns < (1u << 20); ns++) {
        unsigned b = tdm_latency_bucket(ns);
        cr_assert(b == last || b == last + 1, "ns %llu: bucket %u after %u", (unsigned long long)ns, b, last);
        last = b;
    }
}

Test(latency, a_bucket_middle_lies_in_its_bucket)
{
    for (unsigned b = 0; b < TDM_LATENCY_BUCKETS - 1; b++)
        cr_expect_eq(tdm_latency_bucket(tdm_latency_bucket_mid_ns(b)), b, "bucket %u", b);
}

Test(latency, the_error_is_within_an_eighth)
{
    for (uint64_t ns = 8; ns < (1ull << 36); ns = ns * 3 / 2 + 1) {
        uint64_t mid = tdm_latency_bucket_mid_ns(tdm_latency_bucket(ns));
        double err = (double)(mid > ns ? mid - ns : ns - mid) / (double)ns;
        cr_expect_leq(err, 0.125, "ns %llu reported as %llu", (unsigned long long)ns, (unsigned long long)mid);
    }
}

Test(latency, huge_latencies_count_in_the_last_bucket)
{
    cr_expect_eq(tdm_latency_bucket(UINT64_MAX), TDM_LATENCY_BUCKETS - 1);
    cr_expect_eq(tdm_latency_bucket(1ull << 50), TDM_LATENCY_BUCKETS - 1);
}

typedef struct qrow {
    uint64_t fast_ns, slow_ns;
    uint32_t fast, slow;
    double q;
    uint64_t want_ns;            /* the latency the quantile must fall on */
} qrow;

Test(latency, quantiles_of_two_populations)
{
    static const qrow rows[] = {
        { 1000, 100000, 99, 1, 0.50, 1000 },     /* one slow call in a hundred: p50 fast */
        { 1000, 100000, 99, 1, 0.99, 1000 },     /* the 99th of 100 is still fast */
        { 1000, 100000, 98, 2, 0.99, 100000 },   /* two slow: the 99th is slow */
        { 1000, 100000, 0, 5, 0.50, 100000 },
        { 1000, 100000, 1, 0, 0.99, 1000 },
        { 1000, 100000, 0, 0, 0.50, 0 },         /* no calls: 0 */
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        uint32_t counts[TDM_LATENCY_BUCKETS] = { 0 };
        counts[tdm_latency_bucket(rows[i].fast_ns)] += rows[i].fast;
        counts[tdm_latency_bucket(rows[i].slow_ns)] += rows[i].slow;
        uint64_t got = tdm_latency_quantile_ns(counts, rows[i].q);
        uint64_t want = rows[i].want_ns ? tdm_latency_bucket_mid_ns(tdm_latency_bucket(rows[i].want_ns)) : 0;
        cr_expect_eq(got, want, "row %zu: %llu ns, want %llu", i, (unsigned long long)got, (unsigned long long)want);
    }
}
