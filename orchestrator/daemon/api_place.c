/* Guests and operators: POST /v1/place and POST /v1/share (orch_daemon.h). */
#include "orch_daemon.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

#include "clock.h"
#include "log.h"
#include "orch_params.h"
#include "orch_place.h"

static const char *const app_keys[] = { "sm_cores", "gpu_memory_mib", "scale_up", "scale_down", "latency_upper_ms",
                                        "latency_lower_ms", "sample_count", "mode", "affinity",
                                        "affinity_transport", "metric_interval_s", NULL };

static int parse_affinity(json_object *app, orch_params *p, char *why, size_t whylen)
{
    json_object *a = NULL, *t = NULL;

    if (json_object_object_get_ex(app, "affinity", &a) && !json_object_is_type(a, json_type_null)) {
        if (!json_object_is_type(a, json_type_array) || json_object_array_length(a) > ORCH_MAX_AFFINITY) {
            snprintf(why, whylen, "'affinity' (GPU_AFFINITY_NODES) must be an array of at most %d node names",
                     ORCH_MAX_AFFINITY);
            return -1;
        }
        p->naffinity = 0;
        for (size_t i = 0; i < json_object_array_length(a); i++) {
            json_object *e = json_object_array_get_idx(a, i);
            const char *s = json_object_is_type(e, json_type_string) ? json_object_get_string(e) : NULL;
            if (!s || !s[0] || strlen(s) >= ORCH_NAME_MAX || strchr(s, ',')) {
                snprintf(why, whylen, "'affinity' (GPU_AFFINITY_NODES) entry %zu is not a node name", i + 1);
                return -1;
            }
            snprintf(p->affinity[p->naffinity++], sizeof(p->affinity[0]), "%s", s);
        }
    }
    if (json_object_object_get_ex(app, "affinity_transport", &t) && !json_object_is_type(t, json_type_null)) {
        const char *s = json_object_is_type(t, json_type_string) ? json_object_get_string(t) : "";
        if (strcmp(s, "shm") != 0 && strcmp(s, "tcp") != 0) {
            snprintf(why, whylen, "'affinity_transport' (GPU_AFFINITY_NODES) must be \"shm\", \"tcp\" or null");
            return -1;
        }
        p->affinity_transport = s[0] == 's' ? ORCH_TRANSPORT_SHM : ORCH_TRANSPORT_TCP;
    }
    return 0;
}

/* The application's parameters: the defaults, the VM's, then what the guest sent, each checked. */
static int parse_app(const orch_daemon *d, const orch_vm *vm, json_object *body, orch_params *p, char *why,
                     size_t whylen)
{
    json_object *app = NULL;
    char mode[32] = "";

    *p = d->cfg.defaults;
    p->mode = vm->mode;
    p->naffinity = vm->naffinity;
    memcpy(p->affinity, vm->affinity, sizeof(p->affinity));
    if (!json_object_object_get_ex(body, "app", &app) || json_object_is_type(app, json_type_null))
        return orch_params_check(p, vm, why, whylen);
    if (!json_object_is_type(app, json_type_object)) {
        snprintf(why, whylen, "'app' must be an object");
        return -1;
    }
    json_object_object_foreach(app, key, val) {
        (void)val;
        bool known = false;
        for (const char *const *k = app_keys; *k && !known; k++)
            known = strcmp(*k, key) == 0;
        if (!known) {
            snprintf(why, whylen, "'app' has an unknown key '%.64s'", key);
            return -1;
        }
    }
    if (orch_json_int(app, "sm_cores", false, 1, 100000, &p->sm_cores, why, whylen) ||
        orch_json_int(app, "gpu_memory_mib", false, 1, 16 * 1024 * 1024, &p->memory_mib, why, whylen) ||
        orch_json_int(app, "scale_up", false, 1, 100000, &p->scale_up, why, whylen) ||
        orch_json_int(app, "scale_down", false, 1, 100000, &p->scale_down, why, whylen) ||
        orch_json_double(app, "latency_upper_ms", false, 0, 3600000, &p->latency_upper_ms, why, whylen) ||
        orch_json_double(app, "latency_lower_ms", false, 0, 3600000, &p->latency_lower_ms, why, whylen) ||
        orch_json_int(app, "sample_count", false, 1, ORCH_WINDOW_MAX, &p->sample_count, why, whylen) ||
        /* seconds, a JSON number: the guest sends a double (GPU_METRIC_INTERVAL=0.5 is meaningful) */
        orch_json_double(app, "metric_interval_s", false, ORCH_PARAM_MIN_INTERVAL_S, ORCH_PARAM_MAX_INTERVAL_S,
                         &p->metric_interval_s, why, whylen) ||
        orch_json_string(app, "mode", false, mode, sizeof(mode), why, whylen) || parse_affinity(app, p, why, whylen))
        return -1;
    if (mode[0] && orch_mode_parse(mode, &p->mode) != 0) {
        snprintf(why, whylen, "'mode' (APP_MODE) must be \"vm-dedicated\" or \"app-scoped\"");
        return -1;
    }
    return orch_params_check(p, vm, why, whylen);
}

static void new_key(char *out, size_t outlen)
{
    unsigned char b[12] = { 0 };
    size_t n = 0;

    /* A key is guessable only by chance: it lets a HELLO take a reservation's share. */
    while (n < sizeof(b)) {
        ssize_t got = getrandom(b + n, sizeof(b) - n, 0);
        if (got > 0)
            n += (size_t)got;
    }
    snprintf(out, outlen, "pl-");
    for (size_t i = 0; i < sizeof(b); i++)
        snprintf(out + 3 + 2 * i, outlen - 3 - 2 * i, "%02x", b[i]);
}

static const orch_server *server_by_id(const orch_gpu *g, const char *id)
{
    for (int i = 0; i < g->nservers; i++)
        if (strcmp(g->servers[i].id, id) == 0)
            return &g->servers[i];
    return NULL;
}

static void endpoint_of(const orch_server *s, orch_transport t, char *out, size_t outlen)
{
    if (!s)
        out[0] = 0;
    else if (t == ORCH_TRANSPORT_SHM && s->shm[0])
        snprintf(out, outlen, "shm:%s", s->shm);
    else
        snprintf(out, outlen, "tcp://%s", s->tcp);
}

static int reserve(orch_daemon *d, const orch_node *n, const orch_placement *p, char *why, size_t whylen)
{
    json_object *req = json_object_new_object(), *answer = NULL;
    int rc;

    json_object_object_add(req, "server", json_object_new_string(p->server));
    json_object_object_add(req, "placement", json_object_new_string(p->key));
    json_object_object_add(req, "tenant", json_object_new_string(p->tenant));
    json_object_object_add(req, "sm", json_object_new_int(p->sm));
    json_object_object_add(req, "memory_mib", json_object_new_int(p->memory_mib));
    rc = orch_agent_post(d, n->agent, "/v1/reserve", req, &answer, why, whylen);
    json_object_put(req);
    json_object_put(answer);
    return rc;
}

static void answer_place(orch_reply *r, const orch_node *n, const orch_gpu *g, const orch_placement *p)
{
    char endpoint[ORCH_ADDR_MAX + 8], standby[ORCH_ADDR_MAX + 8];
    json_object *o = json_object_new_object();

    endpoint_of(server_by_id(g, p->server), p->transport, endpoint, sizeof(endpoint));
    endpoint_of(p->standby[0] ? server_by_id(g, p->standby) : NULL, p->transport, standby, sizeof(standby));
    json_object_object_add(o, "placement", json_object_new_string(p->key));
    json_object_object_add(o, "node", json_object_new_string(n->name));
    json_object_object_add(o, "gpu", json_object_new_int(g->index));
    json_object_object_add(o, "server", json_object_new_string(p->server));
    json_object_object_add(o, "endpoint", json_object_new_string(endpoint));
    json_object_object_add(o, "standby", json_object_new_string(standby));
    json_object_object_add(o, "transport", json_object_new_string(orch_transport_name(p->transport)));
    json_object_object_add(o, "sm", json_object_new_int(p->sm));
    json_object_object_add(o, "memory_mib", json_object_new_int(p->memory_mib));
    json_object_object_add(o, "rule", json_object_new_string(orch_rule_name(p->rule)));
    orch_reply_json(r, 200, o);
}

void orch_api_place(orch_daemon *d, json_object *body, orch_reply *r)
{
    char tenant[ORCH_NAME_MAX] = "", token[ORCH_TOKEN_MAX + 1] = "", host[ORCH_NAME_MAX] = "", why[300] = "";
    orch_params params;
    orch_choice ch;
    const orch_vm *vm;

    if (orch_json_string(body, "tenant", true, tenant, sizeof(tenant), why, sizeof(why)) ||
        orch_json_string(body, "token", true, token, sizeof(token), why, sizeof(why)) ||
        orch_json_string(body, "host", false, host, sizeof(host), why, sizeof(why))) {
        memset(token, 0, sizeof(token));
        orch_reply_error(r, 400, "place: %s", why);
        return;
    }
    bool ok = orch_tenants_check(&d->tenants, tenant, token);
    memset(token, 0, sizeof(token));
    if (!ok) {
        /* One answer for an unknown tenant and a wrong token: the reply does not say which names exist. */
        tdm_log("place: refused a token for tenant %s", tenant);
        orch_reply_error(r, 403, "place: tenant or token not accepted");
        return;
    }
    if (!(vm = orch_config_vm(&d->cfg, tenant))) {
        orch_reply_error(r, 403, "place: tenant %s has no VM in %s", tenant, d->cfg.vms_file);
        return;
    }
    if (parse_app(d, vm, body, &params, why, sizeof(why))) {
        orch_reply_error(r, 400, "place: %s", why);
        return;
    }
    if (d->cluster->nplacements == ORCH_MAX_PLACEMENTS) {
        orch_reply_error(r, 507, "place: the orchestrator holds its most placements (%d)", ORCH_MAX_PLACEMENTS);
        return;
    }
    if (orch_place(d->cluster, vm, &params, host, &ch) != 0) {
        orch_reply_error(r, 409, "place: %s", ch.why);
        return;
    }
    double decided = orch_wall_s();   /* the decision's time: before the agent reserves */
    orch_node *n = &d->cluster->nodes[ch.node];
    orch_gpu *g = &n->gpus[ch.gpu];
    const orch_server *s = &g->servers[ch.server];
    orch_placement *p = &d->cluster->placements[d->cluster->nplacements];
    memset(p, 0, sizeof(*p));
    new_key(p->key, sizeof(p->key));
    snprintf(p->tenant, sizeof(p->tenant), "%s", tenant);
    /* Same-sized name fields of one cluster: copied whole (snprintf between them trips -Wrestrict). */
    memcpy(p->node, n->name, sizeof(p->node));
    p->gpu = g->index;
    memcpy(p->server, s->id, sizeof(p->server));
    memcpy(p->standby, s->standby, sizeof(p->standby));
    p->transport = ch.transport;
    p->rule = ch.rule;
    p->sm = params.sm_cores;
    p->memory_mib = params.memory_mib;
    p->params = params;
    p->life = ORCH_LIFE_RESERVED;
    p->reserved_ms = tdm_now_ms();   /* its guest has reserved_timeout_ms from now to connect */
    if (reserve(d, n, p, why, sizeof(why)) != 0) {
        orch_reply_error(r, 502, "place: the node agent did not reserve: %s", why);
        return;
    }
    d->cluster->nplacements++;
    if (orch_store_put_placement(d->store, p) != 0)
        tdm_log("cannot store placement %s: %s", p->key, orch_store_error(d->store));
    orch_decision dec = { .action = ORCH_ACT_PLACE, .time = decided, .agent_ms = (orch_wall_s() - decided) * 1e3 };
    snprintf(dec.placement, sizeof(dec.placement), "%s", p->key);
    snprintf(dec.from, sizeof(dec.from), "%s", tenant);
    snprintf(dec.to, sizeof(dec.to), "%s/gpu%d %s %d SMs", n->name, g->index, orch_transport_name(p->transport), p->sm);
    snprintf(dec.why, sizeof(dec.why), "%s", ch.why);
    orch_decide(d, &dec);
    answer_place(r, n, g, p);
}

void orch_api_share(orch_daemon *d, json_object *body, orch_reply *r)
{
    char key[ORCH_NAME_MAX], why[300] = "";
    int sm = 0;
    orch_placement *p;

    if (orch_json_string(body, "placement", true, key, sizeof(key), why, sizeof(why)) ||
        orch_json_int(body, "sm", true, 1, 100000, &sm, why, sizeof(why))) {
        orch_reply_error(r, 400, "share: %s", why);
        return;
    }
    if (!(p = orch_find_placement(d->cluster, key))) {
        orch_reply_error(r, 404, "share: no placement %s", key);
        return;
    }
    const orch_vm *vm = orch_config_vm(&d->cfg, p->tenant);
    orch_node *n = orch_find_node(d->cluster, p->node);
    orch_gpu *g = n ? orch_find_gpu(n, p->gpu) : NULL;
    int others = orch_tenant_sm_used(d->cluster, p->tenant, p);
    if (vm && others + sm > vm->sm_budget) {
        orch_reply_error(r, 409, "share: VM %s's other placements hold %d of its %d SMs: %d do not fit", p->tenant,
                         others, vm->sm_budget, sm);
        return;
    }
    if (g && orch_gpu_sm_used(d->cluster, p->node, p->gpu, p) + sm > g->sms) {
        orch_reply_error(r, 409, "share: GPU %s/gpu%d has %d SMs free for it, not %d", p->node, p->gpu,
                         g->sms - orch_gpu_sm_used(d->cluster, p->node, p->gpu, p), sm);
        return;
    }
    int vm_left = g ? orch_gpu_vm_sm_left(d->cluster, p->node, g, p->tenant, p) : INT_MAX;
    if (sm > vm_left) {
        orch_reply_error(r, 409, "share: GPU %s/gpu%d's sm_budget_per_vm of %d SMs leaves VM %s %d for it, not %d",
                         p->node, p->gpu, g->sm_budget_per_vm, p->tenant, vm_left, sm);
        return;
    }
    int old = p->sm;
    int64_t applied_us = 0;
    double decided = orch_wall_s();
    if (orch_apply_share(d, p, sm, &applied_us, why, sizeof(why)) != 0) {
        orch_reply_error(r, 502, "share: %s", why);
        return;
    }
    orch_decision dec = { .action = ORCH_ACT_SET_SHARE, .time = decided,
                          .agent_ms = (orch_wall_s() - decided) * 1e3 };
    snprintf(dec.placement, sizeof(dec.placement), "%s", p->key);
    snprintf(dec.from, sizeof(dec.from), "%d", old);
    snprintf(dec.to, sizeof(dec.to), "%d", sm);
    snprintf(dec.why, sizeof(dec.why), "an operator set it");
    orch_decide(d, &dec);
    json_object *o = json_object_new_object();
    json_object_object_add(o, "sm", json_object_new_int(sm));
    json_object_object_add(o, "applied_us", json_object_new_int64(applied_us));
    orch_reply_json(r, 200, o);
}
