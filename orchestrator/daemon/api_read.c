/* GET /v1/state and GET /v1/decisions (orch_daemon.h). */
#include "orch_daemon.h"
#include "clock.h"

static json_object *server_json(const orch_server *s)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, "id", json_object_new_string(s->id));
    json_object_object_add(o, "role", json_object_new_string(s->standby_role ? "standby" : "active"));
    json_object_object_add(o, "alive", json_object_new_boolean(s->alive));
    json_object_object_add(o, "tcp", json_object_new_string(s->tcp));
    json_object_object_add(o, "shm", json_object_new_string(s->shm));
    json_object_object_add(o, "standby", json_object_new_string(s->standby));
    json_object_object_add(o, "takeovers", json_object_new_int64((int64_t)s->takeovers));
    return o;
}

static json_object *node_json(const orch_cluster *c, const orch_node *n)
{
    json_object *o = json_object_new_object(), *gpus = json_object_new_array();

    json_object_object_add(o, "node", json_object_new_string(n->name));
    json_object_object_add(o, "agent", json_object_new_string(n->agent));
    json_object_object_add(o, "host", json_object_new_string(n->host));
    json_object_object_add(o, "state", json_object_new_string(orch_node_state_name(n->state)));
    /* telemetry reports since this orchestrator started, and how long ago the last came (-1: none) */
    json_object_object_add(o, "reports", json_object_new_int64((int64_t)n->reports));
    json_object_object_add(o, "last_report_ms_ago",
                           json_object_new_double(n->reports ? tdm_now_ms() - n->last_report_ms : -1));
    for (int i = 0; i < n->ngpus; i++) {
        const orch_gpu *g = &n->gpus[i];
        json_object *gj = json_object_new_object(), *servers = json_object_new_array();
        json_object_object_add(gj, "index", json_object_new_int(g->index));
        json_object_object_add(gj, "name", json_object_new_string(g->name));
        json_object_object_add(gj, "sms", json_object_new_int(g->sms));
        json_object_object_add(gj, "sm_placed", json_object_new_int(orch_gpu_sm_used(c, n->name, g->index, NULL)));
        json_object_object_add(gj, "sm_budget_per_vm", json_object_new_int(g->sm_budget_per_vm));
        json_object_object_add(gj, "memory_mib", json_object_new_int(g->memory_mib));
        json_object_object_add(gj, "memory_placed_mib",
                               json_object_new_int(orch_gpu_memory_held(c, n->name, g->index, NULL)));
        json_object_object_add(gj, "memory_used_mib", json_object_new_int(g->memory_used_mib));
        for (int s = 0; s < g->nservers; s++)
            json_object_array_add(servers, server_json(&g->servers[s]));
        json_object_object_add(gj, "servers", servers);
        json_object_array_add(gpus, gj);
    }
    json_object_object_add(o, "gpus", gpus);
    return o;
}

static json_object *placement_json(const orch_placement *p)
{
    json_object *o = json_object_new_object(), *lat = json_object_new_object();

    json_object_object_add(o, "placement", json_object_new_string(p->key));
    json_object_object_add(o, "tenant", json_object_new_string(p->tenant));
    json_object_object_add(o, "node", json_object_new_string(p->node));
    json_object_object_add(o, "gpu", json_object_new_int(p->gpu));
    json_object_object_add(o, "server", json_object_new_string(p->server));
    json_object_object_add(o, "standby", json_object_new_string(p->standby));
    json_object_object_add(o, "transport", json_object_new_string(orch_transport_name(p->transport)));
    json_object_object_add(o, "rule", json_object_new_string(orch_rule_name(p->rule)));
    json_object_object_add(o, "sm", json_object_new_int(p->sm));
    json_object_object_add(o, "memory_mib", json_object_new_int(p->memory_mib));
    json_object_object_add(o, "calls", json_object_new_int64((int64_t)p->calls));
    json_object_object_add(o, "call_rate", json_object_new_double(p->call_rate));
    json_object_object_add(lat, "p50_ms", json_object_new_double(p->p50_ms));
    json_object_object_add(lat, "p99_ms", json_object_new_double(p->p99_ms));
    json_object_object_add(o, "latency", lat);
    json_object *klat = json_object_new_object();   /* its sampled kernels' */
    json_object_object_add(klat, "p50_ms", json_object_new_double(p->kernel_p50_ms));
    json_object_object_add(klat, "p99_ms", json_object_new_double(p->kernel_p99_ms));
    json_object_object_add(o, "kernel_latency", klat);
    json_object_object_add(o, "latency_upper_ms", json_object_new_double(p->params.latency_upper_ms));
    json_object_object_add(o, "latency_lower_ms", json_object_new_double(p->params.latency_lower_ms));
    json_object_object_add(o, "sample_count", json_object_new_int(p->params.sample_count));
    json_object_object_add(o, "metric_interval_s", json_object_new_double(p->params.metric_interval_s));
    return o;
}

void orch_api_state(orch_daemon *d, orch_reply *r)
{
    json_object *o = json_object_new_object(), *nodes = json_object_new_array(), *pl = json_object_new_array();

    for (int i = 0; i < d->cluster->nnodes; i++)
        json_object_array_add(nodes, node_json(d->cluster, &d->cluster->nodes[i]));
    for (int i = 0; i < d->cluster->nplacements; i++)
        json_object_array_add(pl, placement_json(&d->cluster->placements[i]));
    json_object_object_add(o, "nodes", nodes);
    json_object_object_add(o, "placements", pl);
    orch_reply_json(r, 200, o);
}

void orch_api_decisions(orch_daemon *d, orch_reply *r)
{
    json_object *a = json_object_new_array();

    for (int i = 0; i < d->ndecisions; i++) {
        const orch_decision *x = &d->decisions[i];
        json_object *o = json_object_new_object();
        json_object_object_add(o, "time", json_object_new_double(x->time));
        /* decided at "time", carried out by the node agent agent_ms later: the first hops of a
         * share change (tests/gpu/run-control-plane-gpu.sh) */
        json_object_object_add(o, "agent_ms", json_object_new_double(x->agent_ms));
        json_object_object_add(o, "placement", json_object_new_string(x->placement));
        json_object_object_add(o, "action", json_object_new_string(orch_action_name(x->action)));
        json_object_object_add(o, "from", json_object_new_string(x->from));
        json_object_object_add(o, "to", json_object_new_string(x->to));
        json_object_object_add(o, "why", json_object_new_string(x->why));
        json_object_array_add(a, o);
    }
    orch_reply_json(r, 200, a);
}
