/* See fake_agent.h. */
#include "fake_agent.h"

#include <json-c/json.h>
#include <microhttpd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct req {
    char body[512];
    size_t n;
} req;

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
                                  const char *version, const char *data, size_t *size, void **con_cls)
{
    fake_agent *a = cls;
    req *r = *con_cls;
    char answer[128] = "{}";

    (void)version, (void)method;
    if (!r) {
        *con_cls = calloc(1, sizeof(req));
        return *con_cls ? MHD_YES : MHD_NO;
    }
    if (*size) {
        size_t room = sizeof(r->body) - 1 - r->n, take = *size < room ? *size : room;
        memcpy(r->body + r->n, data, take);
        r->n += take;
        *size = 0;
        return MHD_YES;
    }
    pthread_mutex_lock(&a->lock);
    if (a->ncalls < FAKE_AGENT_MAX_CALLS) {
        snprintf(a->calls[a->ncalls].path, sizeof(a->calls[0].path), "%s", url);
        snprintf(a->calls[a->ncalls].body, sizeof(a->calls[0].body), "%s", r->body);
        a->ncalls++;
    }
    pthread_mutex_unlock(&a->lock);
    if (strcmp(url, "/v1/share") == 0) {
        json_object *o = json_tokener_parse(r->body), *sm = NULL;
        json_object_object_get_ex(o, "sm", &sm);
        snprintf(answer, sizeof(answer), "{\"sm\":%d,\"applied_us\":42}", sm ? json_object_get_int(sm) : 0);
        json_object_put(o);
    }
    struct MHD_Response *resp = MHD_create_response_from_buffer(strlen(answer), answer, MHD_RESPMEM_MUST_COPY);
    enum MHD_Result rc = MHD_queue_response(conn, 200, resp);
    MHD_destroy_response(resp);
    return rc;
}

static void on_done(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode t)
{
    (void)cls, (void)c, (void)t;
    free(*con_cls);
    *con_cls = NULL;
}

int fake_agent_start(fake_agent *a)
{
    memset(a, 0, sizeof(*a));
    pthread_mutex_init(&a->lock, NULL);
    a->mhd = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD, 0, NULL, NULL, on_request, a,
                              MHD_OPTION_NOTIFY_COMPLETED, on_done, a, MHD_OPTION_END);
    if (!a->mhd)
        return -1;
    a->port = MHD_get_daemon_info(a->mhd, MHD_DAEMON_INFO_BIND_PORT)->port;
    return 0;
}

void fake_agent_stop(fake_agent *a)
{
    if (a->mhd)
        MHD_stop_daemon(a->mhd);
    a->mhd = NULL;
}

int fake_agent_count(fake_agent *a, const char *path, const char *needle)
{
    int n = 0;
    pthread_mutex_lock(&a->lock);
    for (int i = 0; i < a->ncalls; i++)
        if (strcmp(a->calls[i].path, path) == 0 && (!needle || strstr(a->calls[i].body, needle)))
            n++;
    pthread_mutex_unlock(&a->lock);
    return n;
}
