/* tandemctl [--orchestrator HOST:PORT] nodes | sessions | share PLACEMENT SM | drain NODE | decisions
 *           | json decisions|placements|gpus
 * Asks tandem-orchestrator's API (docs/adr/0002-control-plane.md) and prints tables, or, with json,
 * the API's objects one a line (for scripts: awk reads a line, and no curl is needed). */
#include <curl/curl.h>
#include <json-c/json.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct answer {
    char *text;
    size_t n;
} answer;

static size_t on_data(char *p, size_t size, size_t nmemb, void *user)
{
    answer *a = user;
    size_t n = size * nmemb;
    char *g = realloc(a->text, a->n + n + 1);
    if (!g)
        return 0;
    a->text = g;
    memcpy(a->text + a->n, p, n);
    a->n += n;
    a->text[a->n] = 0;
    return n;
}

/* GET (body NULL) or POST; the answer's JSON, or NULL after printing why. */
static json_object *ask(const char *orch, const char *path, const char *body)
{
    char url[512];
    answer a = { 0 };
    long status = 0;
    CURL *c = curl_easy_init();
    struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/json");
    json_object *o = NULL;

    snprintf(url, sizeof(url), "http://%s%s", orch, path);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 5000L);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &a);
    if (body)
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
    CURLcode cc = curl_easy_perform(c);
    if (cc != CURLE_OK) {
        fprintf(stderr, "tandemctl: the orchestrator at %s is unreachable: %s\n", orch, curl_easy_strerror(cc));
        goto out;
    }
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    o = json_tokener_parse(a.text ? a.text : "");
    if (status != 200) {
        json_object *e = NULL;
        fprintf(stderr, "tandemctl: %s\n",
                o && json_object_object_get_ex(o, "error", &e) ? json_object_get_string(e) : "the orchestrator refused");
        json_object_put(o);
        o = NULL;
    } else if (!o) {
        fprintf(stderr, "tandemctl: the orchestrator's answer is not JSON\n");
    }
out:
    curl_slist_free_all(h);
    curl_easy_cleanup(c);
    free(a.text);
    return o;
}

static const char *s(json_object *o, const char *key)
{
    json_object *v = NULL;
    return json_object_object_get_ex(o, key, &v) ? json_object_get_string(v) : "-";
}

static json_object *member(json_object *o, const char *key)
{
    json_object *v = NULL;
    json_object_object_get_ex(o, key, &v);
    return v;
}

static int nodes(const char *orch)
{
    json_object *st = ask(orch, "/v1/state", NULL), *ns;
    if (!st)
        return 1;
    ns = member(st, "nodes");
    printf("%-16s %-12s %-8s %-4s %-14s %-20s %s\n", "NODE", "HOST", "STATE", "GPU", "SMS PLACED/ALL",
           "MEMORY MIB PLACED/ALL", "SERVERS");
    for (size_t i = 0; i < json_object_array_length(ns); i++) {
        json_object *n = json_object_array_get_idx(ns, i), *gs = member(n, "gpus");
        for (size_t g = 0; g < json_object_array_length(gs); g++) {
            json_object *gp = json_object_array_get_idx(gs, g), *sv = member(gp, "servers");
            char sms[32], mem[48];
            snprintf(sms, sizeof(sms), "%s/%s", s(gp, "sm_placed"), s(gp, "sms"));
            snprintf(mem, sizeof(mem), "%s/%s", s(gp, "memory_placed_mib"), s(gp, "memory_mib"));
            printf("%-16s %-12s %-8s %-4s %-14s %-20s", s(n, "node"), s(n, "host"), s(n, "state"), s(gp, "index"),
                   sms, mem);
            for (size_t k = 0; k < json_object_array_length(sv); k++) {
                json_object *v = json_object_array_get_idx(sv, k), *alive = member(v, "alive");
                printf(" %s(%s%s)", s(v, "id"), s(v, "role"), alive && !json_object_get_boolean(alive) ? ",dead" : "");
            }
            printf("\n");
        }
    }
    json_object_put(st);
    return 0;
}

static int sessions(const char *orch)
{
    json_object *st = ask(orch, "/v1/state", NULL), *ps;
    if (!st)
        return 1;
    ps = member(st, "placements");
    printf("%-28s %-12s %-14s %-5s %-14s %-4s %-8s %-10s %-9s %-15s %s\n", "PLACEMENT", "TENANT", "NODE/GPU", "VIA",
           "RULE", "SM", "MEM MIB", "CALLS/S", "SAMPLE S", "P50/P99 MS", "KERNEL P50/P99 MS");
    for (size_t i = 0; i < json_object_array_length(ps); i++) {
        json_object *p = json_object_array_get_idx(ps, i), *lat = member(p, "latency"),
                    *klat = member(p, "kernel_latency");
        char calls[48];
        char where[96];
        snprintf(where, sizeof(where), "%s/gpu%s", s(p, "node"), s(p, "gpu"));
        snprintf(calls, sizeof(calls), "%.3f/%.3f", json_object_get_double(member(lat, "p50_ms")),
                 json_object_get_double(member(lat, "p99_ms")));
        printf("%-28s %-12s %-14s %-5s %-14s %-4s %-8s %-10.1f %-9g %-15s %.3f/%.3f\n", s(p, "placement"),
               s(p, "tenant"), where, s(p, "transport"), s(p, "rule"), s(p, "sm"), s(p, "memory_mib"),
               json_object_get_double(member(p, "call_rate")), json_object_get_double(member(p, "metric_interval_s")),
               calls, json_object_get_double(member(klat, "p50_ms")), json_object_get_double(member(klat, "p99_ms")));
    }
    json_object_put(st);
    return 0;
}

static int decisions(const char *orch)
{
    json_object *ds = ask(orch, "/v1/decisions", NULL);
    if (!ds)
        return 1;
    printf("%-20s %-28s %-11s %-16s %-22s %s\n", "TIME", "PLACEMENT/NODE", "ACTION", "FROM", "TO", "WHY");
    for (size_t i = 0; i < json_object_array_length(ds); i++) {
        json_object *d = json_object_array_get_idx(ds, i);
        time_t t = (time_t)json_object_get_double(member(d, "time"));
        char when[32];
        strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", localtime(&t));
        printf("%-20s %-28s %-11s %-16s %-22s %s\n", when, s(d, "placement"), s(d, "action"), s(d, "from"), s(d, "to"),
               s(d, "why"));
    }
    json_object_put(ds);
    return 0;
}

/* One JSON object a line: the decisions, the placements, or every GPU (with its node's name). */
static int json_lines(const char *orch, const char *what)
{
    bool gpus = strcmp(what, "gpus") == 0, placements = strcmp(what, "placements") == 0;
    if (!gpus && !placements && strcmp(what, "decisions") != 0) {
        fprintf(stderr, "tandemctl: json takes decisions, placements or gpus, not '%s'\n", what);
        return 2;
    }
    json_object *o = ask(orch, gpus || placements ? "/v1/state" : "/v1/decisions", NULL);
    if (!o)
        return 1;
    json_object *list = gpus || placements ? member(o, placements ? "placements" : "nodes") : o;
    for (size_t i = 0; list && i < json_object_array_length(list); i++) {
        json_object *x = json_object_array_get_idx(list, i);
        if (!gpus) {
            printf("%s\n", json_object_to_json_string_ext(x, JSON_C_TO_STRING_PLAIN));
            continue;
        }
        json_object *gs = member(x, "gpus");
        for (size_t g = 0; gs && g < json_object_array_length(gs); g++) {
            json_object *gpu = json_object_array_get_idx(gs, g);
            json_object_object_add(gpu, "node", json_object_new_string(s(x, "node")));
            json_object_object_add(gpu, "state", json_object_new_string(s(x, "state")));
            printf("%s\n", json_object_to_json_string_ext(gpu, JSON_C_TO_STRING_PLAIN));
        }
    }
    json_object_put(o);
    return 0;
}

static int share(const char *orch, const char *placement, const char *sm_text)
{
    char *end = NULL;
    long sm = strtol(sm_text, &end, 10);
    if (!end || *end || sm < 1 || sm > 100000) {
        fprintf(stderr, "tandemctl: SM '%s' is not a count of 1 or more\n", sm_text);
        return 2;
    }
    json_object *req = json_object_new_object();
    json_object_object_add(req, "placement", json_object_new_string(placement));
    json_object_object_add(req, "sm", json_object_new_int((int)sm));
    json_object *o = ask(orch, "/v1/share", json_object_to_json_string(req));
    json_object_put(req);
    if (!o)
        return 1;
    printf("%s: %s SMs, applied in %s us\n", placement, s(o, "sm"), s(o, "applied_us"));
    json_object_put(o);
    return 0;
}

static int drain(const char *orch, const char *node)
{
    char path[256];
    if (strchr(node, '/') || strlen(node) > 63) {
        fprintf(stderr, "tandemctl: '%s' is not a node name\n", node);
        return 2;
    }
    snprintf(path, sizeof(path), "/v1/nodes/%s/drain", node);
    json_object *o = ask(orch, path, "{}");
    if (!o)
        return 1;
    printf("%s drained: no new placement goes there\n", node);
    json_object_put(o);
    return 0;
}

static int usage(void)
{
    fprintf(stderr, "usage: tandemctl [--orchestrator HOST:PORT] nodes | sessions | share PLACEMENT SM | "
                    "drain NODE | decisions | json decisions|placements|gpus\n");
    return 2;
}

int main(int argc, char **argv)
{
    const char *orch = getenv("TANDEM_ORCHESTRATOR") ? getenv("TANDEM_ORCHESTRATOR") : "127.0.0.1:7070";
    int i = 1, rc;

    if (argc > 2 && strcmp(argv[1], "--orchestrator") == 0) {
        orch = argv[2];
        i = 3;
    }
    if (i >= argc)
        return usage();
    curl_global_init(CURL_GLOBAL_DEFAULT);
    const char *cmd = argv[i];
    int rest = argc - i - 1;
    if (strcmp(cmd, "nodes") == 0 && rest == 0)
        rc = nodes(orch);
    else if (strcmp(cmd, "sessions") == 0 && rest == 0)
        rc = sessions(orch);
    else if (strcmp(cmd, "decisions") == 0 && rest == 0)
        rc = decisions(orch);
    else if (strcmp(cmd, "share") == 0 && rest == 2)
        rc = share(orch, argv[i + 1], argv[i + 2]);
    else if (strcmp(cmd, "json") == 0 && rest == 1)
        rc = json_lines(orch, argv[i + 1]);
    else if (strcmp(cmd, "drain") == 0 && rest == 1)
        rc = drain(orch, argv[i + 1]);
    else
        rc = usage();
    curl_global_cleanup();
    return rc;
}
