/* Node agents: POST /v1/nodes/register, /v1/nodes/telemetry, /v1/nodes/NODE/drain, and the
 * node-lost check (orch_daemon.h). */
#include "orch_daemon.h"

#include <stdio.h>
#include <string.h>

#include "clock.h"
#include "log.h"
#include "orch_elastic.h"

#define MAX_SESSIONS_PER_SERVER 1024

/* A node's name goes in a URL path and a comma-joined list: letters, digits, '-', '_', '.'. */
static bool plain_name(const char *s)
{
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '-' ||
              *s == '_' || *s == '.'))
            return false;
    return true;
}

static json_object *array_of(json_object *o, const char *key, int max, char *why, size_t whylen)
{
    json_object *a = NULL;

    if (!json_object_object_get_ex(o, key, &a) || !json_object_is_type(a, json_type_array)) {
        snprintf(why, whylen, "'%s' must be an array", key);
        return NULL;
    }
    if ((int)json_object_array_length(a) > max) {
        snprintf(why, whylen, "'%s' has %zu entries: at most %d", key, json_object_array_length(a), max);
        return NULL;
    }
    return a;
}

static int parse_server(json_object *o, orch_server *s, char *why, size_t whylen)
{
    char role[16];

    memset(s, 0, sizeof(*s));
    if (!json_object_is_type(o, json_type_object)) {
        snprintf(why, whylen, "a server is not an object");
        return -1;
    }
    if (orch_json_string(o, "id", true, s->id, sizeof(s->id), why, whylen) ||
        orch_json_string(o, "role", true, role, sizeof(role), why, whylen) ||
        orch_json_string(o, "tcp", true, s->tcp, sizeof(s->tcp), why, whylen) ||
        orch_json_string(o, "shm", false, s->shm, sizeof(s->shm), why, whylen) ||
        orch_json_string(o, "standby", false, s->standby, sizeof(s->standby), why, whylen))
        return -1;
    if (strcmp(role, "active") != 0 && strcmp(role, "standby") != 0) {
        snprintf(why, whylen, "server %s: 'role' must be active or standby", s->id);
        return -1;
    }
    s->standby_role = role[0] == 's';
    s->alive = true;
    return 0;
}

static int parse_gpu(json_object *o, orch_gpu *g, char *why, size_t whylen)
{
    json_object *servers;

    memset(g, 0, sizeof(*g));
    if (!json_object_is_type(o, json_type_object)) {
        snprintf(why, whylen, "a GPU is not an object");
        return -1;
    }
    if (orch_json_int(o, "index", true, 0, ORCH_MAX_GPUS - 1, &g->index, why, whylen) ||
        orch_json_string(o, "name", false, g->name, sizeof(g->name), why, whylen) ||
        orch_json_int(o, "sms", true, 1, 100000, &g->sms, why, whylen) ||
        orch_json_int(o, "memory_mib", true, 1, 16 * 1024 * 1024, &g->memory_mib, why, whylen) ||
        orch_json_int(o, "sm_budget_per_vm", false, 0, 100000, &g->sm_budget_per_vm, why, whylen) ||
        !(servers = array_of(o, "servers", ORCH_MAX_SERVERS, why, whylen)))
        return -1;
    for (size_t i = 0; i < json_object_array_length(servers); i++)
        if (parse_server(json_object_array_get_idx(servers, i), &g->servers[g->nservers++], why, whylen))
            return -1;
    return 0;
}

void orch_api_register(orch_daemon *d, json_object *body, orch_reply *r)
{
    orch_node n = { 0 };
    char why[300] = "";
    json_object *gpus;

    if (orch_json_string(body, "node", true, n.name, sizeof(n.name), why, sizeof(why)) ||
        orch_json_string(body, "agent", true, n.agent, sizeof(n.agent), why, sizeof(why)) ||
        orch_json_string(body, "host", true, n.host, sizeof(n.host), why, sizeof(why)) ||
        !(gpus = array_of(body, "gpus", ORCH_MAX_GPUS, why, sizeof(why))))
        goto bad;
    if (!plain_name(n.name)) {
        snprintf(why, sizeof(why), "'node' must be letters, digits, '-', '_' or '.'");
        goto bad;
    }
    if (strncmp(n.agent, "http://", 7) != 0) {
        snprintf(why, sizeof(why), "'agent' must be http://HOST:PORT");
        goto bad;
    }
    for (size_t i = 0; i < json_object_array_length(gpus); i++) {
        if (parse_gpu(json_object_array_get_idx(gpus, i), &n.gpus[n.ngpus++], why, sizeof(why)))
            goto bad;
        for (int j = 0; j + 1 < n.ngpus; j++)
            if (n.gpus[j].index == n.gpus[n.ngpus - 1].index) {
                snprintf(why, sizeof(why), "GPU %d appears twice", n.gpus[j].index);
                goto bad;
            }
    }
    orch_node *old = orch_find_node(d->cluster, n.name);
    if (!old && d->cluster->nnodes == ORCH_MAX_NODES) {
        orch_reply_error(r, 507, "the orchestrator holds its most nodes (%d)", ORCH_MAX_NODES);
        return;
    }
    if (old) {
        if (old->state == ORCH_NODE_DRAINED)
            n.state = ORCH_NODE_DRAINED;   /* a re-registration does not undo an operator's drain */
        n.reports = old->reports;          /* nor forget its reports */
        n.last_report_ms = old->last_report_ms;
    } else {
        old = &d->cluster->nodes[d->cluster->nnodes++];
    }
    n.last_seen_ms = tdm_now_ms();
    *old = n;
    if (orch_store_put_node(d->store, old, (int)(old - d->cluster->nodes)) != 0)
        tdm_log("cannot store node %s: %s", n.name, orch_store_error(d->store));
    tdm_log("node %s registered: agent %s, host %s, %d GPUs", n.name, n.agent, n.host, n.ngpus);
    json_object *o = json_object_new_object();
    json_object_object_add(o, "telemetry_ms", json_object_new_int(d->cfg.telemetry_ms));
    orch_reply_json(r, 200, o);
    return;
bad:
    orch_reply_error(r, 400, "register: %s", why);
}

int orch_apply_share(orch_daemon *d, orch_placement *p, int sm, int64_t *applied_us, char *why, size_t whylen)
{
    orch_node *n = orch_find_node(d->cluster, p->node);
    json_object *req, *answer = NULL;
    int rc;

    if (!n) {
        snprintf(why, whylen, "placement %s's node %s is not registered", p->key, p->node);
        return -1;
    }
    req = json_object_new_object();
    json_object_object_add(req, "server", json_object_new_string(p->server));
    json_object_object_add(req, "placement", json_object_new_string(p->key));
    json_object_object_add(req, "sm", json_object_new_int(sm));
    rc = orch_agent_post(d, n->agent, "/v1/share", req, &answer, why, whylen);
    json_object_put(req);
    json_object *us = NULL;
    if (applied_us)
        *applied_us = rc == 0 && json_object_object_get_ex(answer, "applied_us", &us) ? json_object_get_int64(us) : 0;
    json_object_put(answer);
    if (rc)
        return rc;
    p->sm = sm;
    if (orch_store_put_placement(d->store, p) != 0)
        tdm_log("cannot store placement %s: %s", p->key, orch_store_error(d->store));
    return 0;
}

static void run_elasticity(orch_daemon *d, orch_placement *p, double p99_ms, double now)
{
    const orch_vm *vm = orch_config_vm(&d->cfg, p->tenant);
    orch_elastic_verdict v;
    orch_decision dec;
    char why[300];

    if (!vm)
        return;   /* a VM taken out of vms.conf since: its placement keeps its share */
    v = orch_elastic_feed(d->cluster, vm, p, p99_ms, now);
    if (v.action == ORCH_ACT_NONE)
        return;
    orch_elastic_describe(d->cluster, p, &v, &dec);
    dec.time = orch_wall_s();   /* decided now; the agent's part is agent_ms */
    if (v.action == ORCH_ACT_SCALE_UP || v.action == ORCH_ACT_SCALE_DOWN) {
        if (orch_apply_share(d, p, v.sm, NULL, why, sizeof(why)) != 0) {
            tdm_log("placement %s: %s to %d SMs not applied: %s", p->key, orch_action_name(v.action), v.sm, why);
            orch_elastic_applied(p, p->sm, now, d->cfg.cooldown_ms);   /* try again after a cool-down */
            return;
        }
        dec.agent_ms = (orch_wall_s() - dec.time) * 1e3;
    }
    orch_elastic_applied(p, p->sm, now, d->cfg.cooldown_ms);
    orch_decide(d, &dec);
}

/* A session reported by another server of its node than its placement names was resumed there
 * (a takeover: its standby, or a new active after a fail-back).  The placement follows it, and
 * its share is sent again: the server it moved to runs it with that server's default share. */
static void follow_takeover(orch_daemon *d, orch_placement *p, const char *server)
{
    char why[300], from[ORCH_NAME_MAX];

    snprintf(from, sizeof(from), "%s", p->server);
    snprintf(p->server, sizeof(p->server), "%s", server);
    tdm_log("placement %s: its session moved from server %s to %s (a takeover); its share of %d SMs is sent again",
            p->key, from, server, p->sm);
    if (orch_apply_share(d, p, p->sm, NULL, why, sizeof(why)) != 0)
        tdm_log("placement %s: its share of %d SMs could not be sent to %s: %s (the server's default applies)",
                p->key, p->sm, server, why);
    if (orch_store_put_placement(d->store, p) != 0)
        tdm_log("cannot store placement %s: %s", p->key, orch_store_error(d->store));
}

static int parse_session(orch_daemon *d, const char *server, json_object *s, double now, orch_report_seen *seen,
                         char *why, size_t whylen)
{
    char key[ORCH_NAME_MAX] = "";
    json_object *lat = NULL, *klat = NULL;
    double p50 = 0, p99 = 0, calls = 0, kp50 = 0, kp99 = 0, ksamples = 0;
    int mem = 0;

    if (!json_object_is_type(s, json_type_object)) {
        snprintf(why, whylen, "a session is not an object");
        return -1;
    }
    if (orch_json_string(s, "placement", false, key, sizeof(key), why, whylen) ||
        orch_json_double(s, "calls", false, 0, 1e18, &calls, why, whylen) ||
        orch_json_int(s, "memory_mib", false, 0, 16 * 1024 * 1024, &mem, why, whylen))
        return -1;
    if (json_object_object_get_ex(s, "latency_us", &lat) && json_object_is_type(lat, json_type_object) &&
        (orch_json_double(lat, "p50", false, 0, 1e12, &p50, why, whylen) ||
         orch_json_double(lat, "p99", false, 0, 1e12, &p99, why, whylen)))
        return -1;
    if (json_object_object_get_ex(s, "kernel_us", &klat) && json_object_is_type(klat, json_type_object) &&
        (orch_json_double(klat, "p50", false, 0, 1e12, &kp50, why, whylen) ||
         orch_json_double(klat, "p99", false, 0, 1e12, &kp99, why, whylen) ||
         orch_json_double(klat, "samples", false, 0, 1e18, &ksamples, why, whylen)))
        return -1;
    orch_placement *p = key[0] ? orch_find_placement(d->cluster, key) : NULL;
    if (!p)
        return 0;   /* a session without a key runs with the server's defaults: nothing to steer */
    seen->listed[p - d->cluster->placements] = true;
    if (strcmp(p->server, server) != 0)
        follow_takeover(d, p, server);
    if (p->stats_at_ms > 0 && now > p->stats_at_ms && calls >= (double)p->calls)
        p->call_rate = (calls - (double)p->calls) / ((now - p->stats_at_ms) / 1000.0);
    p->calls = (uint64_t)calls;
    p->p50_ms = p50 / 1000.0;
    p->p99_ms = p99 / 1000.0;
    if (ksamples > 0) {
        p->kernel_p50_ms = kp50 / 1000.0;
        p->kernel_p99_ms = kp99 / 1000.0;
    }
    p->memory_used_mib = mem;
    p->stats_at_ms = now;
    if (lat)
        run_elasticity(d, p, p->p99_ms, now);
    return 0;
}

static int parse_server_report(orch_daemon *d, orch_node *n, json_object *o, double now, orch_report_seen *seen,
                               char *why, size_t whylen)
{
    char id[ORCH_NAME_MAX];
    json_object *alive = NULL, *sessions;
    int takeovers = 0;

    if (!json_object_is_type(o, json_type_object) ||
        orch_json_string(o, "id", true, id, sizeof(id), why, whylen) ||
        orch_json_int(o, "takeovers", false, 0, 2000000000, &takeovers, why, whylen) ||
        !(sessions = array_of(o, "sessions", MAX_SESSIONS_PER_SERVER, why, whylen))) {
        if (!why[0])
            snprintf(why, whylen, "a server is not an object");
        return -1;
    }
    for (int g = 0; g < n->ngpus; g++)
        for (int s = 0; s < n->gpus[g].nservers; s++)
            if (strcmp(n->gpus[g].servers[s].id, id) == 0) {
                n->gpus[g].servers[s].takeovers = (uint64_t)takeovers;
                if (json_object_object_get_ex(o, "alive", &alive))
                    n->gpus[g].servers[s].alive = json_object_get_boolean(alive);
                /* An agent that says nothing of "alive" asked the server and got its sessions. */
                seen->answered[g][s] = !alive || json_object_get_boolean(alive);
            }
    /* Keys of sessions that closed since the server's last stats (optional): a guest that left
     * between two reports was never listed, and would hold its placement until the bound. */
    json_object *ended = NULL;
    if (json_object_object_get_ex(o, "ended", &ended)) {
        if (!json_object_is_type(ended, json_type_array) ||
            json_object_array_length(ended) > MAX_SESSIONS_PER_SERVER) {
            snprintf(why, whylen, "'ended' must be an array of at most %d placement keys", MAX_SESSIONS_PER_SERVER);
            return -1;
        }
        for (size_t i = 0; i < json_object_array_length(ended); i++) {
            json_object *k = json_object_array_get_idx(ended, i);
            orch_placement *p = json_object_is_type(k, json_type_string)
                                    ? orch_find_placement(d->cluster, json_object_get_string(k)) : NULL;
            if (p && strcmp(p->node, n->name) == 0)
                seen->ended[p - d->cluster->placements] = true;
        }
    }
    for (size_t i = 0; i < json_object_array_length(sessions); i++)
        if (parse_session(d, id, json_object_array_get_idx(sessions, i), now, seen, why, whylen))
            return -1;
    return 0;
}

void orch_api_telemetry(orch_daemon *d, json_object *body, orch_reply *r)
{
    char name[ORCH_NAME_MAX], why[300] = "";
    json_object *gpus, *servers;
    double now = tdm_now_ms();
    orch_node *n;
    orch_report_seen seen;

    if (orch_json_string(body, "node", true, name, sizeof(name), why, sizeof(why)))
        goto bad;
    if (!(n = orch_find_node(d->cluster, name))) {
        orch_reply_error(r, 404, "telemetry: node %s is not registered: register first", name);
        return;
    }
    if (!(gpus = array_of(body, "gpus", ORCH_MAX_GPUS, why, sizeof(why))) ||
        !(servers = array_of(body, "servers", ORCH_MAX_GPUS * ORCH_MAX_SERVERS, why, sizeof(why))))
        goto bad;
    for (size_t i = 0; i < json_object_array_length(gpus); i++) {
        json_object *o = json_object_array_get_idx(gpus, i);
        int index = -1, used = 0, reserved = 0;
        if (!json_object_is_type(o, json_type_object) ||
            orch_json_int(o, "index", true, 0, ORCH_MAX_GPUS - 1, &index, why, sizeof(why)) ||
            orch_json_int(o, "memory_used_mib", false, 0, 16 * 1024 * 1024, &used, why, sizeof(why)) ||
            orch_json_int(o, "sm_reserved", false, 0, 100000, &reserved, why, sizeof(why)))
            goto bad;
        orch_gpu *g = orch_find_gpu(n, index);
        if (g) {
            g->memory_used_mib = used;
            g->sm_reserved = reserved;
        }
    }
    if (n->state == ORCH_NODE_LOST) {
        n->state = ORCH_NODE_UP;
        tdm_log("node %s reports again: up", n->name);
        orch_store_put_node(d->store, n, (int)(n - d->cluster->nodes));
    }
    n->last_seen_ms = now;
    n->reports++;
    n->last_report_ms = now;
    memset(&seen, 0, sizeof(seen));
    for (size_t i = 0; i < json_object_array_length(servers); i++)
        if (parse_server_report(d, n, json_object_array_get_idx(servers, i), now, &seen, why, sizeof(why)))
            goto bad;
    orch_lifecycle_report(d, n, &seen);   /* only a report read whole: a malformed one releases nothing */
    orch_reply_json(r, 200, json_object_new_object());
    return;
bad:
    orch_reply_error(r, 400, "telemetry: %s", why[0] ? why : "malformed");
}

void orch_api_drain(orch_daemon *d, const char *node, orch_reply *r)
{
    orch_node *n = orch_find_node(d->cluster, node);
    orch_decision dec = { .action = ORCH_ACT_DRAIN };

    if (!n) {
        orch_reply_error(r, 404, "drain: no node %s", node);
        return;
    }
    snprintf(dec.placement, sizeof(dec.placement), "%s", n->name);
    snprintf(dec.from, sizeof(dec.from), "%s", orch_node_state_name(n->state));
    snprintf(dec.to, sizeof(dec.to), "drained");
    snprintf(dec.why, sizeof(dec.why), "an operator drained it: no new placement goes there");
    n->state = ORCH_NODE_DRAINED;
    orch_store_put_node(d->store, n, (int)(n - d->cluster->nodes));
    orch_decide(d, &dec);
    orch_reply_json(r, 200, json_object_new_object());
}

void orch_check_lost(orch_daemon *d, double now_ms)
{
    for (int i = 0; i < d->cluster->nnodes; i++) {
        orch_node *n = &d->cluster->nodes[i];
        if (n->state != ORCH_NODE_UP || now_ms - n->last_seen_ms < d->cfg.node_lost_ms)
            continue;
        orch_decision dec = { .action = ORCH_ACT_NODE_LOST };
        snprintf(dec.placement, sizeof(dec.placement), "%s", n->name);
        snprintf(dec.from, sizeof(dec.from), "up");
        snprintf(dec.to, sizeof(dec.to), "lost");
        snprintf(dec.why, sizeof(dec.why), "no telemetry for %.0f ms (node_lost_timeout_ms %d): its placements "
                 "stay, it gets no new one", now_ms - n->last_seen_ms, d->cfg.node_lost_ms);
        n->state = ORCH_NODE_LOST;
        orch_store_put_node(d->store, n, i);
        orch_decide(d, &dec);
    }
    orch_check_reserved(d, now_ms);   /* after: a node just found lost keeps its reserved placements */
}
