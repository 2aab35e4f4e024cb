/* POST /v1/place over HTTP with libcurl: bounded in time (connect and total) and in the bytes
 * of the answer kept, since the program's first CUDA call waits on it and the answer is
 * untrusted.
 *
 * libcurl is loaded here, when a program on-boards, and not linked into the guest libraries:
 * it brings TLS, Kerberos, LDAP and p11-kit with their constructors and destructors into every
 * process that loads them, which is every CUDA program (under the sanitizers p11-kit's
 * destructor deadlocks at exit on the locale lock). */
#include <curl/curl.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onboard_http.h"

#define CONNECT_TIMEOUT_MS 2000L   /* an orchestrator that does not accept in 2 s is unreachable */
#define TOTAL_TIMEOUT_MS 10000L    /* placing may wait for a node agent's reservation */

/* The libcurl entry points on-boarding uses. */
typedef struct curl_api {
    CURL *(*easy_init)(void);
    CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
    CURLcode (*easy_perform)(CURL *);
    CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
    void (*easy_cleanup)(CURL *);
    const char *(*easy_strerror)(CURLcode);
    struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
    void (*slist_free_all)(struct curl_slist *);
} curl_api;

/* Loads libcurl (left loaded: on-boarding is once a process, and unloading a library with
 * threads and handlers of its own is not safe).  0, or -1 with why. */
static int load_curl(curl_api *api, char *why, size_t whylen)
{
    void *h = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);

    if (!h) {
        snprintf(why, whylen, "cannot load libcurl.so.4 (install libcurl4): %s", dlerror());
        return -1;
    }
    *(void **)&api->easy_init = dlsym(h, "curl_easy_init");
    *(void **)&api->easy_setopt = dlsym(h, "curl_easy_setopt");
    *(void **)&api->easy_perform = dlsym(h, "curl_easy_perform");
    *(void **)&api->easy_getinfo = dlsym(h, "curl_easy_getinfo");
    *(void **)&api->easy_cleanup = dlsym(h, "curl_easy_cleanup");
    *(void **)&api->easy_strerror = dlsym(h, "curl_easy_strerror");
    *(void **)&api->slist_append = dlsym(h, "curl_slist_append");
    *(void **)&api->slist_free_all = dlsym(h, "curl_slist_free_all");
    if (!api->easy_init || !api->easy_setopt || !api->easy_perform || !api->easy_getinfo || !api->easy_cleanup ||
        !api->easy_strerror || !api->slist_append || !api->slist_free_all) {
        snprintf(why, whylen, "libcurl.so.4 lacks an entry point on-boarding uses");
        return -1;
    }
    return 0;
}

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
    curl_api api;
    CURL *c = NULL;
    struct curl_slist *headers = NULL;
    sink s = { .buf = NULL };
    char err[CURL_ERROR_SIZE] = "";
    CURLcode rc;
    int ret = -1;

    memset(out, 0, sizeof(*out));
    if (load_curl(&api, why, whylen) != 0)
        return -1;
    c = api.easy_init();
    s.buf = malloc(TDM_ONBOARD_ANSWER_MAX);
    headers = api.slist_append(NULL, "Content-Type: application/json");
    if (!c || !s.buf || !headers) {
        snprintf(why, whylen, "out of memory");
        goto out;
    }
    api.easy_setopt(c, CURLOPT_URL, url);
    api.easy_setopt(c, CURLOPT_POSTFIELDS, body);
    api.easy_setopt(c, CURLOPT_HTTPHEADER, headers);
    api.easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, CONNECT_TIMEOUT_MS);
    api.easy_setopt(c, CURLOPT_TIMEOUT_MS, TOTAL_TIMEOUT_MS);
    /* The program may have threads: no SIGALRM for name resolution timeouts. */
    api.easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    /* Plain HTTP to the address given, nothing else: no redirects, no proxy from the
     * environment (the orchestrator is on the cluster's own network). */
    api.easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http");
    api.easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
    api.easy_setopt(c, CURLOPT_PROXY, "");
    api.easy_setopt(c, CURLOPT_WRITEFUNCTION, keep);
    api.easy_setopt(c, CURLOPT_WRITEDATA, &s);
    api.easy_setopt(c, CURLOPT_ERRORBUFFER, err);
    rc = api.easy_perform(c);
    if (s.overflow) {
        snprintf(why, whylen, "gave a malformed answer: longer than %d bytes", TDM_ONBOARD_ANSWER_MAX);
        out->reached = true;
        goto out;
    }
    if (rc != CURLE_OK) {
        snprintf(why, whylen, "%s", err[0] ? err : api.easy_strerror(rc));
        out->reached = rc != CURLE_COULDNT_CONNECT && rc != CURLE_COULDNT_RESOLVE_HOST &&
                       rc != CURLE_OPERATION_TIMEDOUT;
        goto out;
    }
    out->reached = true;
    api.easy_getinfo(c, CURLINFO_RESPONSE_CODE, &out->status);
    out->body = s.buf;
    out->len = s.len;
    s.buf = NULL;
    ret = 0;
out:
    free(s.buf);
    api.slist_free_all(headers);
    if (c)
        api.easy_cleanup(c);
    return ret;
}
