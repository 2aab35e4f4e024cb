#include "endpoint.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int parse_host_port(const char *s, tdm_endpoint *ep, char *err, size_t errlen)
{
    const char *host = s, *colon;
    size_t hostlen;

    if (*s == '[') {                      /* [v6addr]:port */
        const char *close = strchr(s, ']');
        if (!close || close[1] != ':') {
            snprintf(err, errlen, "bad bracketed address in '%s'", s);
            return -1;
        }
        host = s + 1;
        hostlen = (size_t)(close - host);
        colon = close + 1;
    } else {
        colon = strrchr(s, ':');
        if (!colon) {
            snprintf(err, errlen, "missing ':PORT' in '%s'", s);
            return -1;
        }
        hostlen = (size_t)(colon - s);
    }
    if (hostlen == 0 || hostlen >= sizeof(ep->host)) {
        snprintf(err, errlen, "bad host in '%s'", s);
        return -1;
    }
    memcpy(ep->host, host, hostlen);
    ep->host[hostlen] = '\0';

    char *end = NULL;
    long port = strtol(colon + 1, &end, 10);
    if (end == colon + 1 || *end != '\0' || port <= 0 || port > 65535) {
        snprintf(err, errlen, "bad port in '%s'", s);
        return -1;
    }
    ep->port = (int)port;
    return 0;
}

int tdm_endpoint_parse(const char *text, tdm_endpoint *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof(*out));
    if (!text || !*text) {
        snprintf(err, errlen, "empty endpoint");
        return -1;
    }
    if (strncmp(text, "tcp://", 6) == 0) {
        out->kind = TDM_EP_TCP;
        return parse_host_port(text + 6, out, err, errlen);
    }
    if (strncmp(text, "rdma://", 7) == 0) {
        out->kind = TDM_EP_RDMA;
        return parse_host_port(text + 7, out, err, errlen);
    }
    if (strncmp(text, "shm:", 4) == 0) {
        const char *name = text + 4;
        size_t n = strlen(name);
        if (n == 0 || n >= sizeof(out->name) || strchr(name, '/')) {
            snprintf(err, errlen, "bad shm name in '%s'", text);
            return -1;
        }
        out->kind = TDM_EP_SHM;
        memcpy(out->name, name, n + 1);
        return 0;
    }
    snprintf(err, errlen, "unknown endpoint '%s' (want tcp://HOST:PORT, shm:NAME or rdma://HOST:PORT)", text);
    return -1;
}
