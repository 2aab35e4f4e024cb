/* Asking a node agent (orch_daemon.h): one POST with libcurl, bounded in time and answer size. */
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

int orch_agent_post(const orch_daemon *d, const char *agent, const char *path, json_object *json,
                    json_object **answer, char *why, size_t whylen)
{
    answer_buf *buf = calloc(1, sizeof(*buf));
    char url[ORCH_ADDR_MAX + 64];
    struct curl_slist *headers = NULL;
    long status = 0;
    int rc = -1;
    CURL *c = curl_easy_init();

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
    curl_slist_free_all(headers);
    curl_easy_cleanup(c);
    free(buf);
    return rc;
}
