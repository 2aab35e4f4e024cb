/* The log-scale latency histogram the control plane reports from: the call
 * latency of each session and its sampled kernel latency (kernel_sampler.h) use the same
 * buckets. */
#ifndef TANDEM_SERVER_LATENCY_HIST_H
#define TANDEM_SERVER_LATENCY_HIST_H

#include <stdatomic.h>
#include <stdint.h>

/* Four buckets per octave of nanoseconds up to 2^40 ns (about 18 minutes); slower calls
 * count in the last one. */
#define TDM_LATENCY_BUCKETS 160

/* The bucket a latency of ns falls in, and the middle of bucket b's range, in ns. */
unsigned tdm_latency_bucket(uint64_t ns);
uint64_t tdm_latency_bucket_mid_ns(unsigned b);
/* The q-th quantile (0 < q <= 1) of the calls counted in counts, in ns; 0 when none. */
uint64_t tdm_latency_quantile_ns(const uint32_t counts[TDM_LATENCY_BUCKETS], double q);
/* What hist counted since the last report into window (now - reported), the report's baseline
 * moved up to now; the count in the window.  The reader's one report at a time. */
uint64_t tdm_latency_take_window(_Atomic uint32_t hist[TDM_LATENCY_BUCKETS], uint32_t reported[TDM_LATENCY_BUCKETS],
                                 uint32_t window[TDM_LATENCY_BUCKETS]);

#endif
