/* The elasticity loop of one placement (Flyt 3.3): a sliding window of its last sample_count
 * tail-latency (p99) samples.  Once the window is full its statistic is the median: one outlier
 * (a page fault, a GC pause in the application) does not move a share, while a violation held
 * by more than half of the window does; a mean would let one 10x sample scale up alone.
 *   median > latency_upper_ms  scale up by scale_up SMs, within the VM's SM budget and the GPU's
 *                              free SMs; when the GPU has none left and the VM's budget would
 *                              allow more: migrate to the GPU with the most free SMs that can
 *                              hold the grown share (decided, not carried out here); when
 *                              nothing can: hold.
 *   median < latency_lower_ms  scale down by scale_down SMs, never under 1.
 * Every verdict other than none clears the window and starts a cool-down: samples before it
 * ends are dropped, so the next verdict sees only latencies measured at the new share.
 * The window counts one sample per metric_interval_s (GPU_METRIC_INTERVAL): a report that comes
 * sooner than ORCH_INTERVAL_SLACK of the interval after the last counted one is not counted (its
 * latencies are still shown), so the window spans sample_count intervals whatever the telemetry
 * rate; the slack keeps a report a little early by jitter from halving the sampling rate. */
#ifndef TANDEM_ORCH_ELASTIC_H
#define TANDEM_ORCH_ELASTIC_H

#include "orch_decision.h"
#include "orch_model.h"

#define ORCH_INTERVAL_SLACK 0.9

typedef struct orch_elastic_verdict {
    orch_action action;               /* NONE, SCALE_UP, SCALE_DOWN, MIGRATE or HOLD */
    int sm;                           /* the new share (SCALE_*); the share to move with (MIGRATE) */
    int to_node, to_gpu;              /* MIGRATE: indexes in the cluster */
    double median_ms;
} orch_elastic_verdict;

/* Adds sample p99_ms (taken at now_ms) to p's window and decides.  Does not change p's share:
 * the caller applies it (orch_elastic_applied) once the node agent confirmed. */
orch_elastic_verdict orch_elastic_feed(const orch_cluster *c, const orch_vm *vm, orch_placement *p,
                                       double p99_ms, double now_ms);
/* The verdict was carried out (or recorded): new share, cleared window, cool-down from now. */
void orch_elastic_applied(orch_placement *p, int sm, double now_ms, double cooldown_ms);
/* The median of p's window (0 when empty). */
double orch_window_median(const orch_placement *p);
/* Writes a decision record for verdict v of p ("why" names the statistic and thresholds). */
void orch_elastic_describe(const orch_cluster *c, const orch_placement *p, const orch_elastic_verdict *v,
                           orch_decision *d);

#endif
