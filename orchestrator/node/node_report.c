/* Registering with the orchestrator and streaming telemetry (docs/adr/0002-control-plane.md):
 * libcurl with short timeouts, so an orchestrator that is away costs the agent a second, never
 * its servers. */
#include <curl/curl.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "node_agent.h"

#define REPORT_TIMEOUT_MS 2000
#define ANSWER_MAX (64 * 1024)

typedef struct answer_buf {
    char data[ANSWER_MAX];
    size_t len;
} answer_buf;

static size_t keep_answer(char *p, size_t size, size_t n, void *ctx)
{
    answer_buf *b = ctx;
    size_t take = size * n;

    if (take > sizeof(b->data) - 1 - b->len)
        return 0;   /* an answer past the bound ends the transfer */
    memcpy(b->data + b->len, p, take);
    b->len += take;
    b->data[b->len] = '\0';
    return take;
}

/* POSTs body to the orchestrator's path; the answer's JSON (the caller puts it) on a 2xx,
 * else NULL with why. */
static json_object *post(tdm_node_agent *a, const char *path, json_object *body, char *why, size_t whylen)
{
    answer_buf *ans = malloc(sizeof(*ans));
    char url[256];
    long status = 0;
    json_object *out = NULL;
    CURL *c = curl_easy_init();
    struct curl_slist *headers = curl_slist_append(NULL, "Content-Type: application/json");

    if (!c || !headers || !ans) {
        snprintf(why, whylen, "out of memory");
        goto out;
    }
    ans->len = 0;
    ans->data[0] = '\0';
    snprintf(url, sizeof(url), "http://%s%s", a->conf.orchestrator, path);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, json_object_to_json_string_ext(body, JSON_C_TO_STRING_PLAIN));
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)REPORT_TIMEOUT_MS);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, (long)REPORT_TIMEOUT_MS / 2);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, keep_answer);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, ans);
    CURLcode rc = curl_easy_perform(c);
    if (rc != CURLE_OK) {
        snprintf(why, whylen, "%s", curl_easy_strerror(rc));
        goto out;
    }
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    if (status < 200 || status > 299) {
        snprintf(why, whylen, "HTTP %ld: %.200s", status, ans->data);
        goto out;
    }
    out = json_tokener_parse(ans->data);
    if (!out)
        snprintf(why, whylen, "the answer is not JSON");
out:
    free(ans);
    curl_slist_free_all(headers);
    if (c)
        curl_easy_cleanup(c);
    return out;
}

/* Each server's stats answer, NULL for one that does not answer; the caller puts them. */
static void gather(tdm_node_agent *a, json_object **stats, bool *alive)
{
    for (int i = 0; i < a->servers.n; i++) {
        pthread_mutex_lock(&a->lock);
        tdm_node_server s = a->servers.list[i];
        pthread_mutex_unlock(&a->lock);
        stats[i] = s.pid > 0 ? tdm_node_control_ask(s.control, "{\"op\":\"stats\"}", 1000) : NULL;
        alive[i] = stats[i] != NULL;
    }
}

static int64_t get_int(json_object *o, const char *key)
{
    json_object *v;
    return o && json_object_object_get_ex(o, key, &v) ? json_object_get_int64(v) : 0;
}

json_object *tdm_node_register_body(tdm_node_agent *a)
{
    json_object *body = json_object_new_object(), *gpus = json_object_new_array();
    json_object *stats[TDM_NODE_MAX_SERVERS];
    bool alive[TDM_NODE_MAX_SERVERS];
    char agent[128], tcp[160], shm[160];

    gather(a, stats, alive);
    snprintf(agent, sizeof(agent), "http://%s", a->conf.listen);
    json_object_object_add(body, "node", json_object_new_string(a->conf.node));
    json_object_object_add(body, "agent", json_object_new_string(agent));
    json_object_object_add(body, "host", json_object_new_string(a->conf.host));
    for (int g = 0; g < a->conf.ngpus; g++) {
        const tdm_node_gpu *gpu = &a->conf.gpus[g];
        json_object *o = json_object_new_object(), *list = json_object_new_array();
        int64_t sms = 0;
        for (int i = 0; i < a->servers.n; i++) {
            const tdm_node_server *s = &a->servers.list[i];
            if (s->gpu != g)
                continue;
            if (!sms)
                sms = get_int(stats[i], "sms");
            json_object *so = json_object_new_object();
            snprintf(tcp, sizeof(tcp), "%s:%d", a->conf.server_host, s->port);
            snprintf(shm, sizeof(shm), "%s", s->shm);   /* the name: the orchestrator writes shm:NAME */
            json_object_object_add(so, "id", json_object_new_string(s->id));
            json_object_object_add(so, "role", json_object_new_string(s->is_standby ? "standby" : "active"));
            json_object_object_add(so, "tcp", json_object_new_string(tcp));
            json_object_object_add(so, "shm", json_object_new_string(shm));
            json_object_object_add(so, "standby", s->standby_id[0] ? json_object_new_string(s->standby_id) : NULL);
            json_object_array_add(list, so);
        }
        json_object_object_add(o, "index", json_object_new_int(gpu->index));
        json_object_object_add(o, "name", json_object_new_string(gpu->name));
        json_object_object_add(o, "sms", json_object_new_int64(sms));
        json_object_object_add(o, "memory_mib", json_object_new_int(gpu->memory_mib));
        json_object_object_add(o, "sm_budget_per_vm", json_object_new_int(gpu->sm_budget_per_vm));
        json_object_object_add(o, "servers", list);
        json_object_array_add(gpus, o);
    }
    json_object_object_add(body, "gpus", gpus);
    for (int i = 0; i < a->servers.n; i++)
        json_object_put(stats[i]);
    return body;
}

static json_object *telemetry_body(tdm_node_agent *a)
{
    json_object *body = json_object_new_object(), *gpus = json_object_new_array(), *servers = json_object_new_array();
    json_object *stats[TDM_NODE_MAX_SERVERS];
    bool alive[TDM_NODE_MAX_SERVERS];

    gather(a, stats, alive);
    for (int g = 0; g < a->conf.ngpus; g++) {
        int64_t used = 0, reserved = 0, sms = 0;
        for (int i = 0; i < a->servers.n; i++) {
            json_object *list;
            if (a->servers.list[i].gpu != g || !stats[i])
                continue;
            used += get_int(stats[i], "memory_used_mib");
            sms = sms ? sms : get_int(stats[i], "sms");
            if (json_object_object_get_ex(stats[i], "sessions", &list))
                for (size_t k = 0; k < json_object_array_length(list); k++)
                    reserved += get_int(json_object_array_get_idx(list, k), "sm");
        }
        json_object *o = json_object_new_object();
        json_object_object_add(o, "index", json_object_new_int(a->conf.gpus[g].index));
        json_object_object_add(o, "memory_used_mib", json_object_new_int64(used));
        /* Until sessions have shares each reports the whole GPU: the sum is capped there. */
        json_object_object_add(o, "sm_reserved", json_object_new_int64(sms && reserved > sms ? sms : reserved));
        json_object_array_add(gpus, o);
    }
    for (int i = 0; i < a->servers.n; i++) {
        json_object *o = json_object_new_object(), *list = NULL;
        json_object_object_add(o, "id", json_object_new_string(a->servers.list[i].id));
        json_object_object_add(o, "alive", json_object_new_boolean(alive[i]));
        json_object_object_add(o, "takeovers", json_object_new_int64(get_int(stats[i], "takeovers")));
        if (stats[i] && json_object_object_get_ex(stats[i], "sessions", &list))
            json_object_get(list);
        json_object_object_add(o, "sessions", list ? list : json_object_new_array());
        json_object *ended = NULL;   /* sessions closed since the last report: their placements end */
        if (stats[i] && json_object_object_get_ex(stats[i], "ended", &ended))
            json_object_object_add(o, "ended", json_object_get(ended));
        json_object_array_add(servers, o);
        json_object_put(stats[i]);
    }
    json_object_object_add(body, "node", json_object_new_string(a->conf.node));
    json_object_object_add(body, "gpus", gpus);
    json_object_object_add(body, "servers", servers);
    return body;
}

void tdm_node_report(tdm_node_agent *a)
{
    char why[300];
    json_object *body, *answer;

    if (!a->registered) {
        body = tdm_node_register_body(a);
        answer = post(a, "/v1/nodes/register", body, why, sizeof(why));
        if (answer) {
            int64_t ms = get_int(answer, "telemetry_ms");
            a->telemetry_ms = ms >= 100 && ms <= 600000 ? (int)ms : a->conf.telemetry_ms;
            a->registered = true;
            a->warned = false;
            tdm_log("registered with the orchestrator at %s: telemetry every %d ms", a->conf.orchestrator,
                    a->telemetry_ms);
        } else if (!a->warned) {
            a->warned = true;   /* said once: it is tried again every interval */
            tdm_log("cannot register with the orchestrator at %s (%s): the servers run on; trying every %d ms",
                    a->conf.orchestrator, why, a->conf.telemetry_ms);
        }
    } else {
        body = telemetry_body(a);
        answer = post(a, "/v1/nodes/telemetry", body, why, sizeof(why));
        if (!answer) {
            a->registered = false;
            tdm_log("orchestrator %s unreachable (%s): the servers and their sessions keep running; registering "
                    "again when it answers", a->conf.orchestrator, why);
        }
    }
    json_object_put(body);
    json_object_put(answer);
}
