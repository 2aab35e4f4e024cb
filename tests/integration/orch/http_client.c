/* See http_client.h. */
#include "http_client.h"

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct buf {
    char *p;
    size_t n;
} buf;

static size_t on_data(char *p, size_t size, size_t nmemb, void *user)
{
    buf *b = user;
    size_t n = size * nmemb;
    char *g = realloc(b->p, b->n + n + 1);
    if (!g)
        return 0;
    b->p = g;
    memcpy(b->p + b->n, p, n);
    b->n += n;
    b->p[b->n] = 0;
    return n;
}

long http_call(const char *url, const char *body, char **text)
{
    CURL *c = curl_easy_init();
    buf b = { calloc(1, 1), 0 };
    struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/json");
    long status = -1;

    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 10000L);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    if (body)
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
    if (curl_easy_perform(c) == CURLE_OK)
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    curl_slist_free_all(h);
    curl_easy_cleanup(c);
    *text = b.p;
    return status;
}
