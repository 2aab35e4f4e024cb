#include "server.h"

#include <stdio.h>
#include <string.h>

#include <driver_types.h>

#include "device_props.h"
#include "log.h"
#include "session_stats.h"

static void backend_config(const tdm_server_config *cfg, tdm_backend_config *bc)
{
    bc->device = cfg->device;
    bc->arena_base = cfg->arena_base;
    bc->arena_size = cfg->arena_size;
    bc->sim_mps_domain = cfg->sim_mps_domain;
    bc->sim_sms = cfg->sim_sms;            /* ---- SM shares (issue 17) ---- */
    bc->sim_wave_us = cfg->sim_wave_us;
    bc->sm_window_first = cfg->sm_window_first;
    bc->sm_window_sms = cfg->sm_window_sms;
}

int tdm_server_start(tdm_server *srv, const tdm_server_config *cfg)
{
    tdm_backend_config bc;
    int err;

    memset(srv, 0, sizeof(*srv));
    srv->cfg = *cfg;
    srv->ops = tdm_backend_find(cfg->backend);
    if (!srv->ops) {
        tdm_log("unknown backend '%s' (have: cuda, sim)", cfg->backend);
        return cudaErrorInvalidValue;
    }
    backend_config(cfg, &bc);
    err = srv->ops->init(&srv->be, &bc);
    if (err) {
        tdm_log("backend '%s' failed to start (cudaError %d)", srv->ops->name, err);
        return err;
    }
    err = srv->ops->arena_reserve(srv->be);
    if (err) {
        tdm_log("cannot reserve the logical arena at %#llx (%llu GiB): cudaError %d",
                (unsigned long long)cfg->arena_base, (unsigned long long)(cfg->arena_size >> 30), err);
        goto fail;
    }
    if (tdm_arena_create(&srv->arena, cfg->arena_base, cfg->arena_size, srv->ops->granularity(srv->be)) != 0) {
        tdm_log("arena base/size must be multiples of the granularity");
        err = cudaErrorInvalidValue;
        goto fail;
    }
    err = srv->ops->device_info(srv->be, &srv->info);
    if (!err)
        tdm_device_props_apply(&srv->info);
    if (!err)
        err = srv->ops->driver_version(srv->be, &srv->driver_version);
    if (err)
        goto fail;
    /* ---- SM shares (issue 17): a default no session could get stops the server now ---- */
    if (cfg->session_sms && (cfg->session_sms > (unsigned)srv->info.attrs[cudaDevAttrMultiProcessorCount] ||
                             !srv->ops->share_get)) {
        tdm_log("--session-sms %u: the %s backend's device has %d SMs%s", cfg->session_sms, srv->ops->name,
                srv->info.attrs[cudaDevAttrMultiProcessorCount], srv->ops->share_get ? "" : " and no shares");
        err = cudaErrorInvalidValue;
        goto fail;
    }
    /* A window past the device, or a default share larger than the window, would give no
     * session what it asks: refused at start, not at the first session. */
    if (cfg->sm_window_sms &&
        ((uint64_t)cfg->sm_window_first + cfg->sm_window_sms > (unsigned)srv->info.attrs[cudaDevAttrMultiProcessorCount] ||
         !srv->ops->share_get || cfg->session_sms > cfg->sm_window_sms)) {
        tdm_log("--sm-window %u:%u: the %s backend's device has %d SMs%s%s", cfg->sm_window_first, cfg->sm_window_sms,
                srv->ops->name, srv->info.attrs[cudaDevAttrMultiProcessorCount],
                srv->ops->share_get ? "" : " and no shares",
                cfg->session_sms > cfg->sm_window_sms ? ", and --session-sms asks more than the window" : "");
        err = cudaErrorInvalidValue;
        goto fail;
    }
    atomic_init(&srv->next_session_id, cfg->session_id_base ? cfg->session_id_base : 1);
    atomic_init(&srv->live_sessions, 0);
    atomic_init(&srv->calls, 0);
    tdm_server_sessions_init(srv);   /* ---- control plane (issue 17) ---- */
    pthread_mutex_init(&srv->endpoint_lock, NULL);
    tdm_health_init(&srv->health);
    /* ---- ipc (issue 14) ---- */
    if (tdm_ipc_table_init(&srv->ipc) != 0) {
        tdm_log("cannot make the IPC export table (no randomness for its nonce)");
        err = cudaErrorOperatingSystem;
        goto fail;
    }
    return 0;
fail:
    tdm_arena_destroy(srv->arena);
    srv->arena = NULL;
    srv->ops->shutdown(srv->be);
    srv->be = NULL;
    return err;
}

void tdm_server_set_hooks(tdm_server *srv, const tdm_session_hooks *hooks, void *ctx)
{
    srv->hooks = hooks;
    srv->hooks_ctx = ctx;
}

void tdm_server_set_endpoint(tdm_server *srv, const char *tcp, const char *shm)
{
    pthread_mutex_lock(&srv->endpoint_lock);
    snprintf(srv->shm_endpoint, sizeof(srv->shm_endpoint), "%s", shm ? shm : "");
    snprintf(srv->endpoint, sizeof(srv->endpoint), "%s", tcp);
    pthread_mutex_unlock(&srv->endpoint_lock);
}

bool tdm_server_endpoint(tdm_server *srv, char *tcp, char *shm, size_t len)
{
    pthread_mutex_lock(&srv->endpoint_lock);
    snprintf(tcp, len, "%s", srv->endpoint);
    snprintf(shm, len, "%s", srv->shm_endpoint);
    pthread_mutex_unlock(&srv->endpoint_lock);
    return tcp[0] != 0;
}

void tdm_server_init_front(tdm_server *srv, const tdm_server_config *cfg)
{
    memset(srv, 0, sizeof(*srv));
    srv->cfg = *cfg;
    pthread_mutex_init(&srv->endpoint_lock, NULL);
    tdm_server_sessions_init(srv);   /* ---- control plane (issue 17): none, but the list is there ---- */
}

void tdm_server_stop(tdm_server *srv)
{
    if (srv->be)
        srv->ops->shutdown(srv->be);
    tdm_arena_destroy(srv->arena);
    srv->be = NULL;
    srv->arena = NULL;
    tdm_health_destroy(&srv->health);
    tdm_ipc_table_destroy(&srv->ipc); /* ---- ipc (issue 14) ---- */
}

void tdm_server_end_work(tdm_server *srv, int sessions)
{
    tdm_backend *be = srv->be;

    if (sessions <= 0 || !be)
        return;
    if (srv->ops->end_work) {
        tdm_log("stopping: ending the device work of %d session(s): running kernels stop, queued work is dropped",
                sessions);
        srv->ops->end_work(be);
    } else {
        tdm_log("stopping: %d session(s) may still wait for their kernels; the server's exit ends them", sessions);
    }
}

/* ---- health (issue 14) ---- */

int tdm_server_rebuild_context(tdm_server *srv)
{
    tdm_backend_config bc;
    int err;

    /* Shutting the backend down releases the lost context (the documented
     * way back from a sticky error is a new context), init makes a new one
     * and the arena goes back at the same address. */
    srv->ops->shutdown(srv->be);
    srv->be = NULL;
    backend_config(&srv->cfg, &bc);
    err = srv->ops->init(&srv->be, &bc);
    if (!err)
        err = srv->ops->arena_reserve(srv->be);
    return err;
}
