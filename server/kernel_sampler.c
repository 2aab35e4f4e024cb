/* See kernel_sampler.h. */
#include "kernel_sampler.h"

#include <string.h>

int tdm_ksampler_before(tdm_ksampler *k, const tdm_kprobe *p, void *stream)
{
    int free_slot = -1;

    if (k->launches++ % TDM_KSAMPLE_EVERY != 0)
        return -1;
    if (k->narmed)
        tdm_ksampler_poll(k, p);   /* a slot read now is a slot free for this one */
    for (int i = 0; i < TDM_KSAMPLE_SLOTS && free_slot < 0; i++)
        if (!k->slot[i].armed)
            free_slot = i;
    if (free_slot < 0)
        return -1;
    tdm_ksample_slot *sl = &k->slot[free_slot];
    if (!sl->begin && p->create(p->ctx, &sl->begin) != 0) {
        sl->begin = NULL;
        return -1;
    }
    if (!sl->end && p->create(p->ctx, &sl->end) != 0) {
        sl->end = NULL;
        return -1;
    }
    return p->record(p->ctx, sl->begin, stream) == 0 ? free_slot : -1;
}

void tdm_ksampler_after(tdm_ksampler *k, const tdm_kprobe *p, int slot, void *stream, bool launched)
{
    if (slot < 0 || slot >= TDM_KSAMPLE_SLOTS)
        return;
    if (launched && p->record(p->ctx, k->slot[slot].end, stream) == 0) {
        k->slot[slot].armed = true;
        k->narmed++;
    }
}

void tdm_ksampler_record(tdm_ksampler *k, uint64_t ns)
{
    atomic_fetch_add_explicit(&k->hist[tdm_latency_bucket(ns)], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&k->samples, 1, memory_order_relaxed);
}

void tdm_ksampler_poll(tdm_ksampler *k, const tdm_kprobe *p)
{
    for (int i = 0; i < TDM_KSAMPLE_SLOTS && k->narmed; i++) {
        tdm_ksample_slot *sl = &k->slot[i];
        uint64_t ns = 0;
        int q;

        if (!sl->armed || (q = p->query(p->ctx, sl->end)) == 1)
            continue;
        /* complete: its time counts; an error (a faulted context) drops the sample */
        if (q == 0 && p->elapsed_ns(p->ctx, sl->begin, sl->end, &ns) == 0)
            tdm_ksampler_record(k, ns);
        sl->armed = false;
        k->narmed--;
    }
}

void tdm_ksampler_report(tdm_ksampler *k, uint64_t *p50_ns, uint64_t *p99_ns, uint64_t *n)
{
    uint32_t window[TDM_LATENCY_BUCKETS];
    uint64_t total = tdm_latency_take_window(k->hist, k->reported, window);

    *p50_ns = tdm_latency_quantile_ns(window, 0.50);
    *p99_ns = tdm_latency_quantile_ns(window, 0.99);
    *n = total;
}

void tdm_ksampler_release(tdm_ksampler *k, const tdm_kprobe *p)
{
    for (int i = 0; i < TDM_KSAMPLE_SLOTS; i++) {
        if (k->slot[i].begin)
            p->destroy(p->ctx, k->slot[i].begin);
        if (k->slot[i].end)
            p->destroy(p->ctx, k->slot[i].end);
    }
    memset(k->slot, 0, sizeof(k->slot));
    k->narmed = 0;
}
