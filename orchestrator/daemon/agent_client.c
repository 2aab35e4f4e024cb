/* Asking a node agent (orch_daemon.h): one POST with libcurl, bounded in time and answer size,
 * over a connection kept per agent: a share change is on the path from the orchestrator's
 * decision to the guest's first kernel at the new share, and a fresh connection each time added
 * a TCP connect and libcurl's set-up to it (docs/control-plane.md, "Resize latency"). */
#include "orch_daemon.h"

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define AGENT_ANSWER_MAX (64 * 1024)

typedef struct answer_buf {
    char data[AGENT_ANSWER_MAX + 1];
    size_t n;
    bool too_long;
} answer_buf;

static size_t on_data(char *p, size_t size, size_t nmemb, void *user)
{
    answer_buf *b = user;
    size_t n = size * nmemb;

    if (b->n + n > AGENT_ANSWER_MAX) {
        b->too_long = true;
        return 0;   /* ends the transfer */
    }
    memcpy(b->data + b->n, p, n);
    b->n += n;
    b->data[b->n] = 0;
    return n;
}

/* The kept handle for agent (its connection cache holds the open connection), made on first use;
 * NULL when none can be made.  With every slot taken (more agents than nodes ever registered,
 * e.g. agents that moved), the first slot is recycled. */
static CURL *conn_for(orch_daemon *d, const char *agent)
{
    orch_agent_conn *slot = NULL;

    for (int i = 0; i < d->nagent_conns && !slot; i++)
        if (strcmp(d->agent_conns[i].agent, agent) == 0)
            slot = &d->agent_conns[i];
    if (!slot) {
        if (d->nagent_conns < ORCH_MAX_NODES)
            slot = &d->agent_conns[d->nagent_conns++];
        else {
            slot = &d->agent_conns[0];
            curl_easy_cleanup(slot->curl);
            slot->curl = NULL;
        }
        snprintf(slot->agent, sizeof(slot->agent), "%s", agent);
    }
    if (!slot->curl)
        slot->curl = curl_easy_init();
    else
        curl_easy_reset(slot->curl);   /* options go; the open connection stays */
    return slot->curl;
}

void orch_agent_conns_close(orch_daemon *d)
{
    for (int i = 0; i < d->nagent_conns; i++)
        curl_easy_cleanup(d->agent_conns[i].curl);
    d->nagent_conns = 0;
}

int orch_agent_post(orch_daemon *d, const char *agent, const char *path, json_object *json,
                    json_object **answer, char *why, size_t whylen)
{
    answer_buf *buf = calloc(1, sizeof(*buf));
    char url[ORCH_ADDR_MAX + 64];
    struct curl_slist *headers = NULL;
    long status = 0;
    int rc = -1;
    CURL *c = conn_for(d, agent);

    *answer = NULL;
    if (!c || !buf) {
        snprintf(why, whylen, "cannot start an HTTP client");
        goto out;
    }
    snprintf(url, sizeof(url), "%s%s", agent, path);
    headers = curl_slist_append(headers, "Content-Type: application/json");
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, json_object_to_json_string_ext(json, JSON_C_TO_STRING_PLAIN));
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)d->cfg.agent_timeout_ms);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, buf);
    CURLcode cc = curl_easy_perform(c);
    if (cc != CURLE_OK) {
        snprintf(why, whylen, "node agent %s: %s", url, buf->too_long ? "answer too long" : curl_easy_strerror(cc));
        goto out;
    }
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    json_object *o = json_tokener_parse(buf->data);
    if (status != 200) {
        json_object *e = NULL;
        snprintf(why, whylen, "node agent %s answered %ld: %s", url, status,
                 o && json_object_object_get_ex(o, "error", &e) ? json_object_get_string(e) : "no error text");
        json_object_put(o);
        goto out;
    }
    if (!o || !json_object_is_type(o, json_type_object)) {
        snprintf(why, whylen, "node agent %s answered something other than a JSON object", url);
        json_object_put(o);
        goto out;
    }
    *answer = o;
    rc = 0;
out:
    if (c)   /* the headers list must not outlive the handle's reference to it */
        curl_easy_setopt(c, CURLOPT_HTTPHEADER, NULL);
    curl_slist_free_all(headers);
    free(buf);
    return rc;
}
