/* What the guest asks the orchestrator: the URL of POST /v1/place and its JSON body (json-c
 * does the quoting: tenant names and tokens go in as given). */
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onboard.h"

/* A host name or IPv4 address as it may stand in a URL (letters, digits, '.', '-', '_'), or an
 * IPv6 address between brackets (hex digits, ':', '.'). */
static bool host_ok(const char *h, size_t n, bool bracketed)
{
    if (n == 0)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = h[i];
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                  (bracketed ? c == ':' : c == '-' || c == '_');
        if (!ok)
            return false;
    }
    return true;
}

int tdm_onboard_url(const char *hostport, char *url, size_t urllen, char *why, size_t whylen)
{
    const char *colon = strrchr(hostport, ':'), *host = hostport;
    size_t hostlen;
    bool bracketed = hostport[0] == '[';
    char *end = NULL;
    long port;

    if (bracketed) {
        const char *close = strchr(hostport, ']');
        if (!close || close[1] != ':') {
            snprintf(why, whylen, "TANDEM_ORCHESTRATOR=%s: an [IPv6] address must be followed by :PORT", hostport);
            return -1;
        }
        host = hostport + 1;
        hostlen = (size_t)(close - host);
        colon = close + 1;
    } else if (!colon) {
        snprintf(why, whylen, "TANDEM_ORCHESTRATOR=%s: not HOST:PORT", hostport);
        return -1;
    } else {
        hostlen = (size_t)(colon - hostport);
    }
    if (!host_ok(host, hostlen, bracketed) || hostlen > 253) {
        snprintf(why, whylen, "TANDEM_ORCHESTRATOR=%s: not HOST:PORT (a bad host)", hostport);
        return -1;
    }
    port = strtol(colon + 1, &end, 10);
    if (colon[1] < '0' || colon[1] > '9' || *end || port < 1 || port > 65535) {
        snprintf(why, whylen, "TANDEM_ORCHESTRATOR=%s: not HOST:PORT (the port must be 1 to 65535)", hostport);
        return -1;
    }
    if ((size_t)snprintf(url, urllen, "http://%s/v1/place", hostport) >= urllen) {
        snprintf(why, whylen, "TANDEM_ORCHESTRATOR=%s: too long", hostport);
        return -1;
    }
    return 0;
}

/* Adds key: v to o; false (v freed) when out of memory. */
static bool add(json_object *o, const char *key, json_object *v)
{
    if (!v || json_object_object_add(o, key, v) != 0) {
        json_object_put(v);
        return false;
    }
    return true;
}

/* The `app` object: the variables that were set, under the names of the ADR. */
static json_object *app_json(const tdm_app_params *p)
{
    json_object *a = json_object_new_object(), *nodes;
    bool ok = a != NULL;

    if (ok && p->has_sm_cores)
        ok = add(a, "sm_cores", json_object_new_int64(p->sm_cores));
    if (ok && p->has_gpu_memory)
        ok = add(a, "gpu_memory_mib", json_object_new_int64((int64_t)p->gpu_memory_mib));
    if (ok && p->has_scale_up)
        ok = add(a, "scale_up", json_object_new_int64(p->scale_up));
    if (ok && p->has_scale_down)
        ok = add(a, "scale_down", json_object_new_int64(p->scale_down));
    if (ok && p->has_latency_upper)
        ok = add(a, "latency_upper_ms", json_object_new_double(p->latency_upper_ms));
    if (ok && p->has_latency_lower)
        ok = add(a, "latency_lower_ms", json_object_new_double(p->latency_lower_ms));
    if (ok && p->has_sample_count)
        ok = add(a, "sample_count", json_object_new_int64(p->sample_count));
    if (ok && p->has_mode)
        ok = add(a, "mode", json_object_new_string(tdm_app_mode_name(p->mode)));
    if (ok && p->has_affinity) {
        const char *t = tdm_app_transport_name(p->affinity_transport);

        ok = add(a, "affinity", nodes = json_object_new_array());
        for (size_t i = 0; ok && i < p->naffinity; i++) {
            json_object *n = json_object_new_string(p->affinity[i]);
            ok = n && json_object_array_add(nodes, n) == 0;
            if (!ok)
                json_object_put(n);
        }
        /* null: the rule's choice (shm when co-located, TCP otherwise) */
        if (ok)
            ok = t ? add(a, "affinity_transport", json_object_new_string(t))
                   : json_object_object_add(a, "affinity_transport", NULL) == 0;
    }
    if (ok && p->has_metric_interval)
        ok = add(a, "metric_interval_s", json_object_new_double(p->metric_interval_s));
    if (!ok) {
        json_object_put(a);
        return NULL;
    }
    return a;
}

char *tdm_place_request_json(const tdm_place_request *r)
{
    json_object *o = json_object_new_object();
    char *text = NULL;

    if (!o)
        return NULL;
    if (add(o, "tenant", json_object_new_string(r->tenant)) &&
        add(o, "token", json_object_new_string_len(r->token->bytes, (int)r->token->len)) &&
        add(o, "host", json_object_new_string(r->host)) && add(o, "app", app_json(&r->app)))
        text = strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
    json_object_put(o);
    return text;
}
