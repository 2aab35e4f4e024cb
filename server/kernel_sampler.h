/* Per-session kernel latency, sampled (issue 17: node telemetry carries "per-session call and
 * kernel latency"; docs/node-agent.md, "stats").
 *
 * Every TDM_KSAMPLE_EVERY-th launch of a session is bracketed by two device events recorded on
 * its stream, before and after the kernel.  Nothing waits for them: the session's thread asks
 * (tdm_ksampler_poll, one event query per armed slot) at its later launches, and a completed
 * pair's elapsed time goes into a histogram of the call latency's buckets (latency_hist.h).
 * On the cuda backend the events are CUevents (cuEventQuery, cuEventElapsedTime): the kernel's
 * time on the GPU.  On the sim they are the sim's events, stamped when the stream's host
 * thread reaches them: the kernel's modelled duration at its SM share, as the sim runs it.
 *
 * Bounded: TDM_KSAMPLE_SLOTS pairs of events per session, made once and reused (a launch due
 * for a sample while every slot is armed is not sampled), and one histogram of
 * TDM_LATENCY_BUCKETS counters.  The device is reached through tdm_kprobe, which the session
 * fills from its backend's event ops (and a unit test from a fake). */
#ifndef TANDEM_SERVER_KERNEL_SAMPLER_H
#define TANDEM_SERVER_KERNEL_SAMPLER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "latency_hist.h"

#define TDM_KSAMPLE_EVERY 64
#define TDM_KSAMPLE_SLOTS 4

/* What the sampler needs of the device.  Errors are returned as values: create, record and
 * elapsed_ns answer 0 or an error; query answers 0 (complete), 1 (not yet) or an error. */
typedef struct tdm_kprobe {
    void *ctx;
    int (*create)(void *ctx, void **event);
    int (*record)(void *ctx, void *event, void *stream);
    int (*query)(void *ctx, void *event);
    int (*elapsed_ns)(void *ctx, void *begin, void *end, uint64_t *ns);
    void (*destroy)(void *ctx, void *event);
} tdm_kprobe;

typedef struct tdm_ksample_slot {
    void *begin, *end;     /* made at the slot's first use, kept until the session ends */
    bool armed;            /* both recorded around a launch; not yet read */
} tdm_ksample_slot;

typedef struct tdm_ksampler {
    /* The session's thread's alone. */
    uint64_t launches;
    tdm_ksample_slot slot[TDM_KSAMPLE_SLOTS];
    unsigned narmed;
    /* Written by the session's thread, read by the control socket's. */
    _Atomic uint64_t samples;
    _Atomic uint32_t hist[TDM_LATENCY_BUCKETS];
    /* The reader's (under the server's sessions lock): the histogram at its last report. */
    uint32_t reported[TDM_LATENCY_BUCKETS];
} tdm_ksampler;

/* Before a launch on stream: counts it, and when it is due for a sample and a slot is free,
 * records the slot's begin event.  Returns the slot (for tdm_ksampler_after) or -1. */
int tdm_ksampler_before(tdm_ksampler *k, const tdm_kprobe *p, void *stream);
/* After the launch: launched, the slot's end event is recorded and the slot armed; otherwise
 * (the launch failed) the slot is free again.  slot -1 does nothing. */
void tdm_ksampler_after(tdm_ksampler *k, const tdm_kprobe *p, int slot, void *stream, bool launched);
/* Reads every armed slot whose end event completed into the histogram; never waits. */
void tdm_ksampler_poll(tdm_ksampler *k, const tdm_kprobe *p);
/* Adds one kernel's duration (what poll does for a completed slot). */
void tdm_ksampler_record(tdm_ksampler *k, uint64_t ns);
/* The reader: p50 and p99 (ns) of the samples since its previous report, and how many there
 * were (0 and 0 when none).  Not thread-safe against another reader. */
void tdm_ksampler_report(tdm_ksampler *k, uint64_t *p50_ns, uint64_t *p99_ns, uint64_t *n);
/* At the session's end, its work drained: destroys the slots' events. */
void tdm_ksampler_release(tdm_ksampler *k, const tdm_kprobe *p);

#endif
