/* The elasticity loop of one placement (orch_elastic.h). */
#include "orch_elastic.h"
#include "orch_place.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int window_size(const orch_placement *p)
{
    int n = p->params.sample_count;
    return n < 1 ? 1 : n > ORCH_WINDOW_MAX ? ORCH_WINDOW_MAX : n;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double orch_window_median(const orch_placement *p)
{
    double sorted[ORCH_WINDOW_MAX];
    int n = p->nwindow;

    if (n == 0)
        return 0;
    memcpy(sorted, p->window, (size_t)n * sizeof(double));
    qsort(sorted, (size_t)n, sizeof(double), cmp_double);
    return n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
}

static void push_sample(orch_placement *p, double v)
{
    int n = window_size(p);

    if (p->nwindow >= n) {
        /* The oldest goes; a window shrunk by a changed sample_count keeps its newest. */
        int drop = p->nwindow - n + 1;
        memmove(p->window, p->window + drop, (size_t)(p->nwindow - drop) * sizeof(double));
        p->nwindow -= drop;
    }
    p->window[p->nwindow++] = v;
}

static const orch_gpu *gpu_of(const orch_cluster *c, const orch_placement *p)
{
    for (int i = 0; i < c->nnodes; i++)
        if (strcmp(c->nodes[i].name, p->node) == 0)
            for (int g = 0; g < c->nodes[i].ngpus; g++)
                if (c->nodes[i].gpus[g].index == p->gpu)
                    return &c->nodes[i].gpus[g];
    return NULL;
}

/* The GPU other than p's with the most free SMs that could hold p grown to sm SMs. */
static bool migration_target(const orch_cluster *c, const orch_placement *p, int sm, orch_elastic_verdict *v)
{
    int best = -1;

    for (int ni = 0; ni < c->nnodes; ni++) {
        const orch_node *n = &c->nodes[ni];
        for (int gi = 0; gi < n->ngpus; gi++) {
            const orch_gpu *g = &n->gpus[gi];
            int free_sms = g->sms - orch_gpu_sm_used(c, n->name, g->index, p);
            if ((strcmp(n->name, p->node) == 0 && g->index == p->gpu) || free_sms <= best ||
                !orch_gpu_has_room(c, n, g, p->tenant, sm, p->memory_mib, p))
                continue;
            best = free_sms;
            v->to_node = ni;
            v->to_gpu = gi;
        }
    }
    return best >= 0;
}

orch_elastic_verdict orch_elastic_feed(const orch_cluster *c, const orch_vm *vm, orch_placement *p,
                                       double p99_ms, double now_ms)
{
    orch_elastic_verdict v = { .action = ORCH_ACT_NONE, .sm = p->sm, .to_node = -1, .to_gpu = -1 };

    if (now_ms < p->cooldown_until_ms)
        return v;   /* measured before the last change settled: it says nothing of the new share */
    if (p->sampled_ms > 0 && now_ms - p->sampled_ms < p->params.metric_interval_s * 1e3 * ORCH_INTERVAL_SLACK)
        return v;   /* GPU_METRIC_INTERVAL: one sample per interval; the reports between are not counted */
    p->sampled_ms = now_ms;
    push_sample(p, p99_ms);
    if (p->nwindow < window_size(p))
        return v;
    v.median_ms = orch_window_median(p);

    if (v.median_ms > p->params.latency_upper_ms) {
        const orch_gpu *g = gpu_of(c, p);
        int budget_cap = vm->sm_budget - orch_tenant_sm_used(c, p->tenant, p);
        int gpu_cap = g ? g->sms - orch_gpu_sm_used(c, p->node, p->gpu, p) : 0;
        int vm_gpu_cap = g ? orch_gpu_vm_sm_left(c, p->node, g, p->tenant, p) : 0;   /* node.conf's per-VM bound */
        if (vm_gpu_cap < gpu_cap)
            gpu_cap = vm_gpu_cap;
        int want = p->sm + p->params.scale_up;
        int grown = want < budget_cap ? want : budget_cap;
        int sm = grown < gpu_cap ? grown : gpu_cap;

        if (sm > p->sm) {
            v.action = ORCH_ACT_SCALE_UP;
            v.sm = sm;
        } else if (grown > p->sm && migration_target(c, p, grown, &v)) {
            v.action = ORCH_ACT_MIGRATE;   /* the GPU, not the budget, stops the growth */
            v.sm = grown;
        } else {
            v.action = ORCH_ACT_HOLD;
        }
    } else if (v.median_ms < p->params.latency_lower_ms && p->sm > 1) {
        int sm = p->sm - p->params.scale_down;
        v.action = ORCH_ACT_SCALE_DOWN;
        v.sm = sm < 1 ? 1 : sm;
    }
    return v;
}

void orch_elastic_applied(orch_placement *p, int sm, double now_ms, double cooldown_ms)
{
    p->sm = sm;
    p->nwindow = 0;
    p->cooldown_until_ms = now_ms + cooldown_ms;
}

void orch_elastic_describe(const orch_cluster *c, const orch_placement *p, const orch_elastic_verdict *v,
                           orch_decision *d)
{
    const char *side = v->median_ms > p->params.latency_upper_ms ? "above APP_LATENCY_UPPER" : "below APP_LATENCY_LOWER";
    double bound = v->median_ms > p->params.latency_upper_ms ? p->params.latency_upper_ms : p->params.latency_lower_ms;

    memset(d, 0, sizeof(*d));
    d->action = v->action;
    snprintf(d->placement, sizeof(d->placement), "%s", p->key);
    snprintf(d->from, sizeof(d->from), "%d", p->sm);
    if (v->action == ORCH_ACT_MIGRATE) {
        const orch_node *n = &c->nodes[v->to_node];
        snprintf(d->from, sizeof(d->from), "%s/gpu%d", p->node, p->gpu);
        snprintf(d->to, sizeof(d->to), "%s/gpu%d", n->name, n->gpus[v->to_gpu].index);
        snprintf(d->why, sizeof(d->why), "median p99 of the last %d samples %.3f ms %s %.3f ms; GPU %s/gpu%d has no "
                 "SMs left for %d, GPU %s/gpu%d has", p->nwindow, v->median_ms, side, bound, p->node, p->gpu,
                 v->sm, n->name, n->gpus[v->to_gpu].index);
        return;
    }
    snprintf(d->to, sizeof(d->to), "%d", v->sm);
    if (v->action == ORCH_ACT_HOLD)
        snprintf(d->why, sizeof(d->why), "median p99 of the last %d samples %.3f ms %s %.3f ms, but neither the VM's "
                 "SM budget nor any GPU has room to grow", p->nwindow, v->median_ms, side, bound);
    else
        snprintf(d->why, sizeof(d->why), "median p99 of the last %d samples %.3f ms %s %.3f ms", p->nwindow,
                 v->median_ms, side, bound);
}
