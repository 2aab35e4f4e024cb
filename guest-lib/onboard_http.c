/* POST /v1/place over HTTP with libcurl: bounded in time (connect and total) and in the bytes
 * of the answer kept, since the program's first CUDA call waits on it and the answer is
 * untrusted. */
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onboard_http.h"

#define CONNECT_TIMEOUT_MS 2000L   /* an orchestrator that does not accept in 2 s is unreachable */
#define TOTAL_TIMEOUT_MS 10000L    /* placing may wait for a node agent's reservation */

typedef struct sink {
    char *buf;
    size_t len;
    bool overflow;
} sink;

static size_t keep(char *data, size_t size, size_t n, void *ctx)
{
    sink *s = ctx;
    size_t add = size * n;

    if (add > TDM_ONBOARD_ANSWER_MAX - s->len) {
        s->overflow = true;
        return 0;   /* curl stops with CURLE_WRITE_ERROR */
    }
    memcpy(s->buf + s->len, data, add);
    s->len += add;
    return add;
}

int tdm_onboard_post(const char *url, const char *body, tdm_http_answer *out, char *why, size_t whylen)
{
    CURL *c = curl_easy_init();
    struct curl_slist *headers = NULL;
    sink s = { .buf = malloc(TDM_ONBOARD_ANSWER_MAX) };
    char err[CURL_ERROR_SIZE] = "";
    CURLcode rc;
    int ret = -1;

    memset(out, 0, sizeof(*out));
    headers = curl_slist_append(NULL, "Content-Type: application/json");
    if (!c || !s.buf || !headers) {
        snprintf(why, whylen, "out of memory");
        goto out;
    }
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, CONNECT_TIMEOUT_MS);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, TOTAL_TIMEOUT_MS);
    /* The program may have threads: no SIGALRM for name resolution timeouts. */
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    /* Plain HTTP to the address given, nothing else: no redirects, no proxy from the
     * environment (the orchestrator is on the cluster's own network). */
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http");
    curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(c, CURLOPT_PROXY, "");
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, keep);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &s);
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, err);
    rc = curl_easy_perform(c);
    if (s.overflow) {
        snprintf(why, whylen, "gave a malformed answer: longer than %d bytes", TDM_ONBOARD_ANSWER_MAX);
        out->reached = true;
        goto out;
    }
    if (rc != CURLE_OK) {
        snprintf(why, whylen, "%s", err[0] ? err : curl_easy_strerror(rc));
        out->reached = rc != CURLE_COULDNT_CONNECT && rc != CURLE_COULDNT_RESOLVE_HOST &&
                       rc != CURLE_OPERATION_TIMEDOUT;
        goto out;
    }
    out->reached = true;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &out->status);
    out->body = s.buf;
    out->len = s.len;
    s.buf = NULL;
    ret = 0;
out:
    free(s.buf);
    curl_slist_free_all(headers);
    if (c)
        curl_easy_cleanup(c);
    return ret;
}
