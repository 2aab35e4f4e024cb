/* tandem-node's HTTP API (docs/adr/0002-control-plane.md): POST /v1/reserve and /v1/share go
 * to the named server's control socket, GET /v1/state says what runs.  Bodies are bounded; every
 * error is a 4xx/5xx with {"error": text}. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <json-c/json.h>
#include <microhttpd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "log.h"
#include "node_agent.h"

#define BODY_MAX (16 * 1024)
#define CONTROL_TIMEOUT_MS 3000

typedef struct body {
    double received_wall_ms;   /* when the request's headers came: the hop's stamp in the log */
    size_t len;
    bool too_big;
    char data[BODY_MAX + 1];
} body;

static enum MHD_Result reply(struct MHD_Connection *conn, unsigned status, json_object *o)
{
    const char *text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
    struct MHD_Response *r = MHD_create_response_from_buffer(strlen(text), (void *)text, MHD_RESPMEM_MUST_COPY);
    enum MHD_Result rc;

    MHD_add_response_header(r, "Content-Type", "application/json");
    rc = MHD_queue_response(conn, status, r);
    MHD_destroy_response(r);
    json_object_put(o);
    return rc;
}

static enum MHD_Result error(struct MHD_Connection *conn, unsigned status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static enum MHD_Result error(struct MHD_Connection *conn, unsigned status, const char *fmt, ...)
{
    char text[512];
    va_list ap;
    json_object *o = json_object_new_object();

    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    json_object_object_add(o, "error", json_object_new_string(text));
    return reply(conn, status, o);
}

static json_object *state(tdm_node_agent *a)
{
    json_object *o = json_object_new_object(), *gpus = json_object_new_array();
    char tcp[160], shm[160];

    pthread_mutex_lock(&a->lock);
    for (int g = 0; g < a->conf.ngpus; g++) {
        json_object *go = json_object_new_object(), *list = json_object_new_array();
        for (int i = 0; i < a->servers.n; i++) {
            const tdm_node_server *s = &a->servers.list[i];
            if (s->gpu != g)
                continue;
            json_object *so = json_object_new_object();
            snprintf(tcp, sizeof(tcp), "%s:%d", a->conf.server_host, s->port);
            snprintf(shm, sizeof(shm), "shm:%s", s->shm);
            json_object_object_add(so, "id", json_object_new_string(s->id));
            json_object_object_add(so, "role", json_object_new_string(s->is_standby ? "standby" : "active"));
            json_object_object_add(so, "pid", json_object_new_int(s->pid));
            json_object_object_add(so, "alive", json_object_new_boolean(s->pid > 0));
            json_object_object_add(so, "restarts", json_object_new_int(s->restart.restarts));
            json_object_object_add(so, "tcp", json_object_new_string(tcp));
            json_object_object_add(so, "shm", json_object_new_string(shm));
            json_object_array_add(list, so);
        }
        json_object_object_add(go, "index", json_object_new_int(a->conf.gpus[g].index));
        json_object_object_add(go, "servers", list);
        json_object_array_add(gpus, go);
    }
    pthread_mutex_unlock(&a->lock);
    json_object_object_add(o, "node", json_object_new_string(a->conf.node));
    json_object_object_add(o, "gpus", gpus);
    return o;
}

/* The control socket of server `id`, "" when there is no such server running. */
static bool control_of(tdm_node_agent *a, const char *id, char *sock, size_t len)
{
    bool found = false;

    pthread_mutex_lock(&a->lock);
    for (int i = 0; i < a->servers.n && !found; i++) {
        if (strcmp(a->servers.list[i].id, id) == 0) {
            found = true;
            snprintf(sock, len, "%s", a->servers.list[i].pid > 0 ? a->servers.list[i].control : "");
        }
    }
    pthread_mutex_unlock(&a->lock);
    return found;
}

/* Forwards a reserve or share request (its fields, op added) to its server's control socket. */
static enum MHD_Result forward(tdm_node_agent *a, struct MHD_Connection *conn, const body *b, const char *op,
                               const char *const *fields, size_t nfields)
{
    json_object *in = json_tokener_parse(b->data), *server, *req, *answer, *ok;
    char sock[TDM_NODE_SOCK_MAX], id[TDM_NODE_ID_MAX];
    enum MHD_Result rc;

    if (!in || !json_object_is_type(in, json_type_object)) {
        json_object_put(in);
        return error(conn, 400, "the body must be a JSON object");
    }
    if (!json_object_object_get_ex(in, "server", &server) || !json_object_is_type(server, json_type_string)) {
        json_object_put(in);
        return error(conn, 400, "\"server\" must be a string: the id of a server of this node");
    }
    snprintf(id, sizeof(id), "%s", json_object_get_string(server));
    req = json_object_new_object();
    json_object_object_add(req, "op", json_object_new_string(op));
    json_object_object_foreach(in, key, val) {
        bool known = strcmp(key, "server") == 0;
        for (size_t i = 0; i < nfields && !known; i++)
            if (strcmp(key, fields[i]) == 0) {
                known = true;
                json_object_object_add(req, key, json_object_get(val));
            }
        if (!known) {
            json_object_put(req);
            json_object_put(in);
            return error(conn, 400, "\"%s\" is not a field of this request", key);
        }
    }
    json_object_put(in);
    json_object *pl = json_object_object_get(req, "placement");
    char placement[96];
    snprintf(placement, sizeof(placement), "%s", pl ? json_object_get_string(pl) : "-");
    if (!control_of(a, id, sock, sizeof(sock))) {
        json_object_put(req);
        return error(conn, 404, "no server %s on node %s", id, a->conf.node);
    }
    if (!sock[0]) {
        json_object_put(req);
        return error(conn, 503, "server %s is not running (it is being restarted)", id);
    }
    answer = tdm_node_control_ask(sock, json_object_to_json_string_ext(req, JSON_C_TO_STRING_PLAIN),
                                  CONTROL_TIMEOUT_MS);
    json_object_put(req);
    if (!answer)
        return error(conn, 503, "server %s does not answer on its control socket", id);
    if (!json_object_object_get_ex(answer, "ok", &ok) || !json_object_get_boolean(ok)) {
        json_object *e = json_object_object_get(answer, "error");
        rc = error(conn, 400, "server %s: %s", id, e ? json_object_get_string(e) : "refused");
        json_object_put(answer);
        return rc;
    }
    json_object_object_del(answer, "ok");
    /* Wall-clock stamps: a script lines this hop up with the orchestrator's decision and the
     * server's own stamps (tests/gpu/run-control-plane-gpu.sh). */
    tdm_log("%s on %s: done (placement %s); wall-clock ms: received %.3f, answered %.3f", op, id, placement,
            b->received_wall_ms, tdm_wall_ms());
    return reply(conn, 200, answer);
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
                              const char *version, const char *upload, size_t *upload_size, void **state_ptr)
{
    static const char *const reserve_fields[] = { "placement", "tenant", "sm", "memory_mib" };
    static const char *const share_fields[] = { "placement", "sm" };
    tdm_node_agent *a = cls;
    body *b = *state_ptr;

    if (!b) {   /* the headers: the body comes in the next calls */
        b = calloc(1, sizeof(*b));
        if (!b)
            return MHD_NO;
        b->received_wall_ms = tdm_wall_ms();
        *state_ptr = b;
        return MHD_YES;
    }
    if (*upload_size) {
        if (b->len + *upload_size > BODY_MAX)
            b->too_big = true;
        else {
            memcpy(b->data + b->len, upload, *upload_size);
            b->len += *upload_size;
        }
        *upload_size = 0;
        return MHD_YES;
    }
    b->data[b->len] = '\0';
    if (b->too_big)
        return error(conn, 413, "the body is larger than %d bytes", BODY_MAX);
    bool get = strcmp(method, "GET") == 0, post = strcmp(method, "POST") == 0;
    if (strcmp(url, "/v1/state") == 0)
        return get ? reply(conn, 200, state(a)) : error(conn, 405, "GET only");
    if (strcmp(url, "/v1/reserve") == 0)
        return post ? forward(a, conn, b, "reserve", reserve_fields, 4) : error(conn, 405, "POST only");
    if (strcmp(url, "/v1/share") == 0)
        return post ? forward(a, conn, b, "set_share", share_fields, 2) : error(conn, 405, "POST only");
    return error(conn, 404, "no such path: %.100s (have /v1/state, /v1/reserve, /v1/share)", url);
}

static void completed(void *cls, struct MHD_Connection *conn, void **state_ptr, enum MHD_RequestTerminationCode t)
{
    free(*state_ptr);
    *state_ptr = NULL;
}

int tdm_node_http_start(tdm_node_agent *a)
{
    char host[TDM_NODE_NAME_MAX];
    struct sockaddr_in sa = { .sin_family = AF_INET };
    char *colon;

    snprintf(host, sizeof(host), "%s", a->conf.listen);
    colon = strrchr(host, ':');
    *colon = '\0';
    sa.sin_port = htons((uint16_t)atoi(colon + 1));
    if (inet_pton(AF_INET, host, &sa.sin_addr) != 1) {
        tdm_log("listen %s: the host must be an IPv4 address", a->conf.listen);
        return -EINVAL;
    }
    a->http = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG, 0, NULL, NULL, handle, a,
                               MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa, MHD_OPTION_NOTIFY_COMPLETED, completed,
                               NULL, MHD_OPTION_CONNECTION_LIMIT, (unsigned)64, MHD_OPTION_CONNECTION_TIMEOUT,
                               (unsigned)10, MHD_OPTION_END);
    if (!a->http) {
        tdm_log("cannot serve the HTTP API on %s (in use?)", a->conf.listen);
        return -EADDRINUSE;
    }
    return 0;
}

void tdm_node_http_stop(tdm_node_agent *a)
{
    if (a->http)
        MHD_stop_daemon(a->http);
    a->http = NULL;
}
