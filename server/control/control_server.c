/* The control socket's target for a tandem-server (control_ops.h): statistics read from the
 * server's list of live sessions, and the way to a session's SM share. */
#include "control_server.h"

#include <driver_types.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "session.h"

/* The percentiles of the calls since the last report (the node agent asks every telemetry
 * interval), and that report's baseline moved up.  Under the sessions lock. */
static json_object *latency_since_last(tdm_session *s)
{
    uint32_t recent[TDM_LATENCY_BUCKETS];
    json_object *o = json_object_new_object();

    tdm_latency_take_window(s->stats.latency, s->stats.reported, recent);
    json_object_object_add(o, "p50", json_object_new_double(tdm_latency_quantile_ns(recent, 0.50) / 1000.0));
    json_object_object_add(o, "p99", json_object_new_double(tdm_latency_quantile_ns(recent, 0.99) / 1000.0));
    return o;
}

/* The same of its sampled kernels (every 64th launch's time on the device, kernel_sampler.h),
 * with how many were sampled since the last report.  Under the sessions lock. */
static json_object *kernel_latency_since_last(tdm_session *s)
{
    uint64_t p50 = 0, p99 = 0, n = 0;
    json_object *o = json_object_new_object();

    tdm_ksampler_report(&s->stats.kernels, &p50, &p99, &n);
    json_object_object_add(o, "p50", json_object_new_double(p50 / 1000.0));
    json_object_object_add(o, "p99", json_object_new_double(p99 / 1000.0));
    json_object_object_add(o, "samples", json_object_new_int64((int64_t)n));
    return o;
}

static json_object *name_or_null(const char *s)
{
    return s && *s ? json_object_new_string(s) : NULL;
}

static void add_key(void *ctx, const char *key)
{
    json_object_array_add(ctx, json_object_new_string(key));
}

static void server_stats(void *ctx, json_object *answer)
{
    tdm_server *srv = ctx;
    json_object *list = json_object_new_array(), *ended = json_object_new_array();
    uint64_t used = 0;
    int sms = tdm_control_device_sms(srv);

    pthread_mutex_lock(&srv->sessions_lock);
    for (tdm_session *s = srv->sessions; s; s = s->stats.next) {
        json_object *o = json_object_new_object();
        /* Written by the session's own thread; a report a call old is fine. */
        uint64_t mem = __atomic_load_n(&s->mem_used, __ATOMIC_RELAXED);
        used += mem;
        json_object_object_add(o, "session", json_object_new_int64((int64_t)s->id));
        json_object_object_add(o, "placement", name_or_null(s->placement));
        json_object_object_add(o, "tenant", name_or_null(s->tenant_name));
        json_object_object_add(o, "sm", json_object_new_int((int)tdm_session_sm_share(s)));
        json_object_object_add(o, "memory_mib", json_object_new_int64((int64_t)((mem + (1u << 20) - 1) >> 20)));
        json_object_object_add(o, "calls", json_object_new_int64(
                                               (int64_t)atomic_load_explicit(&s->stats.calls, memory_order_relaxed)));
        json_object_object_add(o, "latency_us", latency_since_last(s));
        json_object_object_add(o, "kernel_us", kernel_latency_since_last(s));
        json_object_array_add(list, o);
    }
    tdm_server_ended_keys_drain_locked(srv, add_key, ended);
    pthread_mutex_unlock(&srv->sessions_lock);
    json_object_object_add(answer, "sms", json_object_new_int(sms));
    json_object_object_add(answer, "memory_used_mib", json_object_new_int64((int64_t)((used + (1u << 20) - 1) >> 20)));
    json_object_object_add(answer, "takeovers", json_object_new_int64((int64_t)atomic_load(&srv->takeovers)));
    json_object_object_add(answer, "sessions", list);
    json_object_object_add(answer, "ended", ended);   /* placement keys of sessions closed since */
}

static int server_set_share(void *ctx, const char *placement, int *sm, uint64_t *applied_us, char *why,
                            size_t whylen)
{
    tdm_server *srv = ctx;
    tdm_session *found = NULL;
    int rc;

    pthread_mutex_lock(&srv->sessions_lock);
    for (tdm_session *s = srv->sessions; s && !found; s = s->stats.next)
        if (strcmp(s->placement, placement) == 0)
            found = s;
    if (!found) {
        snprintf(why, whylen, "no session of placement %s on this server", placement);
        rc = -ENOENT;
        goto out;
    }
    /* found stays valid while the sessions lock is held: the session cannot end meanwhile. */
    uint64_t ns = 0;
    int err = tdm_session_set_sm_share(found, (unsigned)*sm, &ns);
    if (err) {
        snprintf(why, whylen, "session %llu cannot run on %d SMs: cudaError %d (the server's log says why)",
                 (unsigned long long)found->id, *sm, err);
        rc = -EINVAL;
        goto out;
    }
    *sm = (int)tdm_session_sm_share(found);
    *applied_us = ns / 1000;
    rc = 0;
out:
    pthread_mutex_unlock(&srv->sessions_lock);
    return rc;
}

int tdm_control_device_sms(const tdm_server *srv)
{
    return srv->info.attrs[cudaDevAttrMultiProcessorCount];
}

void tdm_control_server_target(tdm_server *srv, tdm_reservations *reservations, tdm_control_target *t)
{
    *t = (tdm_control_target){ .ctx = srv, .reservations = reservations, .sms = tdm_control_device_sms(srv),
                               .stats = server_stats, .set_share = server_set_share };
}
