/* GET /: a small status page listing nodes, GPUs and sessions (plain HTML, no script). */
#include "orch_daemon.h"

#include <stdio.h>
#include <stdlib.h>

/* Text from node agents and guests goes into the page escaped. */
static void text(FILE *f, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        default: fputc(*s, f);
        }
    }
}

static void cell(FILE *f, const char *s)
{
    fputs("<td>", f);
    text(f, s);
    fputs("</td>", f);
}

void orch_api_status_page(orch_daemon *d, orch_reply *r)
{
    const orch_cluster *c = d->cluster;
    char *page = NULL, num[64];
    size_t len = 0;
    FILE *f = open_memstream(&page, &len);

    if (!f) {
        orch_reply_error(r, 500, "out of memory");
        return;
    }
    fputs("<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>Tandem orchestrator</title></head><body>"
          "<h1>Tandem orchestrator</h1><h2>Nodes and GPUs</h2><table id=\"gpus\" border=\"1\">"
          "<tr><th>node</th><th>host</th><th>state</th><th>GPU</th><th>SMs placed / all</th>"
          "<th>memory placed / all (MiB)</th><th>servers</th></tr>", f);
    for (int i = 0; i < c->nnodes; i++) {
        const orch_node *n = &c->nodes[i];
        for (int g = 0; g < n->ngpus; g++) {
            const orch_gpu *gp = &n->gpus[g];
            fputs("<tr>", f);
            cell(f, n->name);
            cell(f, n->host);
            cell(f, orch_node_state_name(n->state));
            snprintf(num, sizeof(num), "%d", gp->index);
            cell(f, num);
            snprintf(num, sizeof(num), "%d / %d", orch_gpu_sm_used(c, n->name, gp->index, NULL), gp->sms);
            cell(f, num);
            snprintf(num, sizeof(num), "%d / %d", orch_gpu_memory_held(c, n->name, gp->index, NULL), gp->memory_mib);
            cell(f, num);
            fputs("<td>", f);
            for (int s = 0; s < gp->nservers; s++) {
                text(f, gp->servers[s].id);
                fprintf(f, " (%s%s) ", gp->servers[s].standby_role ? "standby" : "active",
                        gp->servers[s].alive ? "" : ", dead");
            }
            fputs("</td></tr>", f);
        }
    }
    fputs("</table><h2>Sessions</h2><table id=\"sessions\" border=\"1\"><tr><th>placement</th><th>tenant</th>"
          "<th>node/GPU</th><th>server</th><th>transport</th><th>rule</th><th>SMs</th><th>memory (MiB)</th>"
          "<th>p50 / p99 (ms)</th></tr>", f);
    for (int i = 0; i < c->nplacements; i++) {
        const orch_placement *p = &c->placements[i];
        fprintf(f, "<tr class=\"session\">");
        cell(f, p->key);
        cell(f, p->tenant);
        fputs("<td>", f);
        text(f, p->node);
        fprintf(f, "/gpu%d</td>", p->gpu);
        cell(f, p->server);
        cell(f, orch_transport_name(p->transport));
        cell(f, orch_rule_name(p->rule));
        fprintf(f, "<td>%d</td><td>%d</td><td>%.3f / %.3f</td></tr>", p->sm, p->memory_mib, p->p50_ms, p->p99_ms);
    }
    fprintf(f, "</table><p>%d decisions kept: <a href=\"/v1/decisions\">/v1/decisions</a>, "
            "<a href=\"/metrics\">/metrics</a></p></body></html>\n", d->ndecisions);
    fclose(f);
    free(r->body);
    r->status = 200;
    r->body = page;
    r->content_type = "text/html; charset=utf-8";
}
