/* The HTTP server (libmicrohttpd): bodies gathered up to ORCH_MAX_BODY, parsed as JSON, routed
 * to the handlers under the daemon's lock (orch_daemon.h). */
#include "orch_daemon.h"

#include <arpa/inet.h>
#include <microhttpd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct request {
    char *body;
    size_t n;
    bool too_large;
} request;

static enum MHD_Result send_reply(struct MHD_Connection *conn, orch_reply *r)
{
    const char *body = r->body ? r->body : "";
    struct MHD_Response *resp = MHD_create_response_from_buffer(strlen(body), (void *)body, MHD_RESPMEM_MUST_COPY);
    enum MHD_Result rc;

    MHD_add_response_header(resp, "Content-Type", r->content_type ? r->content_type : "application/json");
    rc = MHD_queue_response(conn, r->status ? r->status : 500, resp);
    MHD_destroy_response(resp);
    free(r->body);
    return rc;
}

/* A POST's JSON object, or NULL with an error reply. */
static json_object *parse_body(const request *rq, orch_reply *r)
{
    enum json_tokener_error err;
    json_object *o;

    if (!rq->body) {
        orch_reply_error(r, 400, "the request has no body: a JSON object is expected");
        return NULL;
    }
    o = json_tokener_parse_verbose(rq->body, &err);
    if (!o || !json_object_is_type(o, json_type_object)) {
        orch_reply_error(r, 400, "the body is not a JSON object: %s",
                         o ? "another JSON value" : json_tokener_error_desc(err));
        json_object_put(o);
        return NULL;
    }
    return o;
}

static void route(orch_daemon *d, const char *method, const char *url, const request *rq, orch_reply *r)
{
    bool post = strcmp(method, "POST") == 0, get = strcmp(method, "GET") == 0;
    static const char drain_prefix[] = "/v1/nodes/";
    json_object *body = NULL;

    if (get && strcmp(url, "/") == 0)
        return orch_api_status_page(d, r);
    if (get && strcmp(url, "/metrics") == 0)
        return orch_api_metrics(d, r);
    if (get && strcmp(url, "/v1/state") == 0)
        return orch_api_state(d, r);
    if (get && strcmp(url, "/v1/decisions") == 0)
        return orch_api_decisions(d, r);
    if (!post) {
        orch_reply_error(r, get ? 404 : 405, "%s %s: no such resource (docs/orchestrator.md lists the API)", method, url);
        return;
    }
    size_t ul = strlen(url), pl = sizeof(drain_prefix) - 1;
    if (ul > pl + 6 && strncmp(url, drain_prefix, pl) == 0 && strcmp(url + ul - 6, "/drain") == 0) {
        char node[ORCH_NAME_MAX];
        if (ul - pl - 6 >= sizeof(node)) {
            orch_reply_error(r, 404, "no node of so long a name");
            return;
        }
        snprintf(node, sizeof(node), "%.*s", (int)(ul - pl - 6), url + pl);
        return orch_api_drain(d, node, r);
    }
    void (*fn)(orch_daemon *, json_object *, orch_reply *) =
        strcmp(url, "/v1/nodes/register") == 0 ? orch_api_register
        : strcmp(url, "/v1/nodes/telemetry") == 0 ? orch_api_telemetry
        : strcmp(url, "/v1/place") == 0 ? orch_api_place
        : strcmp(url, "/v1/share") == 0 ? orch_api_share : NULL;
    if (!fn) {
        orch_reply_error(r, 404, "POST %s: no such resource (docs/orchestrator.md lists the API)", url);
        return;
    }
    if (!(body = parse_body(rq, r)))
        return;
    fn(d, body, r);
    json_object_put(body);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
                                  const char *version, const char *data, size_t *size, void **con_cls)
{
    orch_daemon *d = cls;
    request *rq = *con_cls;
    orch_reply r = { 0 };

    (void)version;
    if (!rq) {
        rq = calloc(1, sizeof(*rq));
        if (!rq)
            return MHD_NO;
        *con_cls = rq;
        return MHD_YES;
    }
    if (*size) {
        if (rq->too_large || rq->n + *size > ORCH_MAX_BODY) {
            rq->too_large = true;   /* read on and drop, to answer 413 at the end */
        } else {
            char *grown = realloc(rq->body, rq->n + *size + 1);
            if (!grown)
                return MHD_NO;
            rq->body = grown;
            memcpy(rq->body + rq->n, data, *size);
            rq->n += *size;
            rq->body[rq->n] = 0;
        }
        *size = 0;
        return MHD_YES;
    }
    if (rq->too_large) {
        orch_reply_error(&r, 413, "the body is over %d bytes", ORCH_MAX_BODY);
        return send_reply(conn, &r);
    }
    pthread_mutex_lock(&d->lock);
    route(d, method, url, rq, &r);
    pthread_mutex_unlock(&d->lock);
    return send_reply(conn, &r);
}

static void on_done(void *cls, struct MHD_Connection *conn, void **con_cls, enum MHD_RequestTerminationCode toe)
{
    request *rq = *con_cls;
    (void)cls, (void)conn, (void)toe;
    if (rq) {
        free(rq->body);
        free(rq);
        *con_cls = NULL;
    }
}

struct MHD_Daemon *orch_http_start(orch_daemon *d, char *why, size_t whylen)
{
    struct sockaddr_in sa = { .sin_family = AF_INET };
    char host[ORCH_ADDR_MAX];
    const char *colon = strrchr(d->cfg.listen, ':');
    char *end = NULL;
    long port = colon ? strtol(colon + 1, &end, 10) : -1;

    if (!colon || !end || *end || port < 1 || port > 65535) {
        snprintf(why, whylen, "listen '%s' is not HOST:PORT", d->cfg.listen);
        return NULL;
    }
    snprintf(host, sizeof(host), "%.*s", (int)(colon - d->cfg.listen), d->cfg.listen);
    if (inet_pton(AF_INET, host, &sa.sin_addr) != 1) {
        snprintf(why, whylen, "listen '%s': %s is not an IPv4 address", d->cfg.listen, host);
        return NULL;
    }
    sa.sin_port = htons((uint16_t)port);
    struct MHD_Daemon *mhd = MHD_start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG, (uint16_t)port, NULL, NULL, on_request, d,
        MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa, MHD_OPTION_NOTIFY_COMPLETED, on_done, d,
        MHD_OPTION_CONNECTION_LIMIT, (unsigned)64, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)10,
        MHD_OPTION_LISTENING_ADDRESS_REUSE, (unsigned)1, MHD_OPTION_END);
    if (!mhd)
        snprintf(why, whylen, "cannot listen on %s (in use, or not this host's address)", d->cfg.listen);
    return mhd;
}
