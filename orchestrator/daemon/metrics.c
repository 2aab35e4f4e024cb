/* GET /metrics: Prometheus text format (docs/orchestrator.md lists the series). */
#include "orch_daemon.h"

#include <stdio.h>
#include <stdlib.h>

/* A label value with '\' and '"' escaped (the format's rule; a newline cannot occur: the API
 * refuses control characters). */
static void label(FILE *f, const char *v)
{
    for (; *v; v++) {
        if (*v == '\\' || *v == '"')
            fputc('\\', f);
        fputc(*v, f);
    }
}

static void head(FILE *f, const char *name, const char *type, const char *help)
{
    fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void gpu_series(FILE *f, const orch_cluster *c, const char *name, int which)
{
    for (int i = 0; i < c->nnodes; i++) {
        const orch_node *n = &c->nodes[i];
        for (int g = 0; g < n->ngpus; g++) {
            const orch_gpu *gp = &n->gpus[g];
            double v = which == 0 ? gp->sms : which == 1 ? orch_gpu_sm_used(c, n->name, gp->index, NULL)
                     : which == 2 ? gp->memory_mib * 1048576.0 : gp->memory_used_mib * 1048576.0;
            fprintf(f, "%s{node=\"", name);
            label(f, n->name);
            fprintf(f, "\",gpu=\"%d\"} %.17g\n", gp->index, v);
        }
    }
}

static void session_labels(FILE *f, const orch_placement *p)
{
    fputs("{placement=\"", f);
    label(f, p->key);
    fputs("\",tenant=\"", f);
    label(f, p->tenant);
    fputs("\",node=\"", f);
    label(f, p->node);
    fprintf(f, "\",gpu=\"%d\"", p->gpu);
}

static void sessions(FILE *f, const orch_cluster *c)
{
    static const char *const names[] = { "tandem_orch_session_sm_share", "tandem_orch_session_memory_bytes",
                                         "tandem_orch_session_calls_per_second" };
    static const char *const helps[] = { "SMs the session's placement holds",
                                         "device memory reserved for the session", "the session's CUDA calls a second" };
    for (int k = 0; k < 3; k++) {
        head(f, names[k], "gauge", helps[k]);
        for (int i = 0; i < c->nplacements; i++) {
            const orch_placement *p = &c->placements[i];
            fputs(names[k], f);
            session_labels(f, p);
            fprintf(f, "} %.17g\n", k == 0 ? p->sm : k == 1 ? p->memory_mib * 1048576.0 : p->call_rate);
        }
    }
    /* Two gauges, not a summary: the servers report percentiles without the sum and count a
     * summary needs (promtool refuses a "quantile" label on anything else). */
    static const char *const lat_names[] = { "tandem_orch_session_latency_p50_seconds",
                                              "tandem_orch_session_latency_p99_seconds",
                                              "tandem_orch_session_kernel_latency_p50_seconds",
                                              "tandem_orch_session_kernel_latency_p99_seconds" };
    static const char *const lat_helps[] = { "the session's median call latency, last report",
                                              "the session's p99 call latency, last report",
                                              "the session's median sampled kernel time on the device, last report with samples",
                                              "the session's p99 sampled kernel time on the device, last report with samples" };
    for (int q = 0; q < 4; q++) {
        head(f, lat_names[q], "gauge", lat_helps[q]);
        for (int i = 0; i < c->nplacements; i++) {
            const orch_placement *p = &c->placements[i];
            double ms = q == 0 ? p->p50_ms : q == 1 ? p->p99_ms : q == 2 ? p->kernel_p50_ms : p->kernel_p99_ms;
            fputs(lat_names[q], f);
            session_labels(f, p);
            fprintf(f, "} %.17g\n", ms / 1000.0);
        }
    }
}

static void servers(FILE *f, const orch_cluster *c)
{
    for (int k = 0; k < 2; k++) {
        const char *name = k ? "tandem_orch_server_takeovers_total" : "tandem_orch_server_alive";
        head(f, name, k ? "counter" : "gauge", k ? "sessions the server's standby took over" : "1 when the server is alive");
        for (int i = 0; i < c->nnodes; i++)
            for (int g = 0; g < c->nodes[i].ngpus; g++)
                for (int s = 0; s < c->nodes[i].gpus[g].nservers; s++) {
                    const orch_server *v = &c->nodes[i].gpus[g].servers[s];
                    fprintf(f, "%s{node=\"", name);
                    label(f, c->nodes[i].name);
                    fprintf(f, "\",gpu=\"%d\",server=\"", c->nodes[i].gpus[g].index);
                    label(f, v->id);
                    fprintf(f, "\",role=\"%s\"} %llu\n", v->standby_role ? "standby" : "active",
                            k ? (unsigned long long)v->takeovers : (unsigned long long)v->alive);
                }
    }
}

void orch_api_metrics(orch_daemon *d, orch_reply *r)
{
    static const char *const gpu_names[] = { "tandem_orch_gpu_sms", "tandem_orch_gpu_sm_placed",
                                             "tandem_orch_gpu_memory_bytes", "tandem_orch_gpu_memory_used_bytes" };
    static const char *const gpu_helps[] = { "the GPU's SMs", "SMs placements hold on the GPU",
                                             "the GPU's device memory", "device memory in use, as the node reports" };
    const orch_cluster *c = d->cluster;
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    int state_count[3] = { 0 };

    if (!f) {
        orch_reply_error(r, 500, "out of memory");
        return;
    }
    head(f, "tandem_orch_nodes", "gauge", "nodes by state");
    for (int i = 0; i < c->nnodes; i++)
        state_count[c->nodes[i].state]++;
    for (int s = 0; s < 3; s++)
        fprintf(f, "tandem_orch_nodes{state=\"%s\"} %d\n", orch_node_state_name((orch_node_state)s), state_count[s]);
    for (int k = 0; k < 4; k++) {
        head(f, gpu_names[k], "gauge", gpu_helps[k]);
        gpu_series(f, c, gpu_names[k], k);
    }
    servers(f, c);
    sessions(f, c);
    head(f, "tandem_orch_decisions_total", "counter", "decisions taken since start, by action");
    for (int a = ORCH_ACT_PLACE; a < ORCH_ACT_COUNT; a++)
        fprintf(f, "tandem_orch_decisions_total{action=\"%s\"} %llu\n", orch_action_name((orch_action)a),
                (unsigned long long)d->decision_counts[a]);
    fclose(f);
    free(r->body);
    r->status = 200;
    r->body = text;
    r->content_type = "text/plain; version=0.0.4; charset=utf-8";
}
