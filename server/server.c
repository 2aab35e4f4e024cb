#include "server.h"

#include <stdio.h>
#include <string.h>

#include <driver_types.h>

#include "mirror.h"
#include "standby.h"

int tdm_server_start(tdm_server *srv, const tdm_server_config *cfg)
{
    tdm_backend_config bc;
    int err;

    memset(srv, 0, sizeof(*srv));
    srv->cfg = *cfg;
    srv->ops = tdm_backend_find(cfg->backend);
    if (!srv->ops) {
        fprintf(stderr, "tandem-server: unknown backend '%s' (have: cuda, sim)\n", cfg->backend);
        return cudaErrorInvalidValue;
    }
    bc.device = cfg->device;
    bc.arena_base = cfg->arena_base;
    bc.arena_size = cfg->arena_size;
    bc.sim_mps_domain = cfg->sim_mps_domain;
    err = srv->ops->init(&srv->be, &bc);
    if (err) {
        fprintf(stderr, "tandem-server: backend '%s' failed to start (cudaError %d)\n", srv->ops->name, err);
        return err;
    }
    err = srv->ops->arena_reserve(srv->be);
    if (err) {
        fprintf(stderr, "tandem-server: cannot reserve the logical arena at %#llx (%llu GiB): cudaError %d\n",
                (unsigned long long)cfg->arena_base, (unsigned long long)(cfg->arena_size >> 30), err);
        goto fail;
    }
    if (tdm_arena_create(&srv->arena, cfg->arena_base, cfg->arena_size, srv->ops->granularity(srv->be)) != 0) {
        fprintf(stderr, "tandem-server: arena base/size must be multiples of the granularity\n");
        err = cudaErrorInvalidValue;
        goto fail;
    }
    err = srv->ops->device_info(srv->be, &srv->info);
    if (!err)
        err = srv->ops->driver_version(srv->be, &srv->driver_version);
    if (err)
        goto fail;
    atomic_init(&srv->next_session_id, 1);
    atomic_init(&srv->live_sessions, 0);
    atomic_init(&srv->calls, 0);
    pthread_mutex_init(&srv->endpoint_lock, NULL);
    atomic_init(&srv->handing_off, false);
    tdm_replay_gate_init(&srv->replay_gate);
    /* An active told to have a standby refuses to run without one; a
     * standby's own standby may be started after it. */
    if (cfg->standby_sock && tdm_mirror_open(&srv->mirror, cfg->standby_sock, cfg->arena_base, cfg->arena_size,
                                             cfg->standby_listen == NULL) != 0) {
        err = cudaErrorDevicesUnavailable;
        goto fail;
    }
    if (cfg->standby_listen && tdm_standby_start(&srv->standby, srv, cfg->standby_listen) != 0) {
        err = cudaErrorDevicesUnavailable;
        goto fail;
    }
    if (cfg->failback_from && tdm_standby_ask_fail_back(cfg->failback_from, cfg->standby_listen) != 0) {
        err = cudaErrorDevicesUnavailable;
        goto fail;
    }
    return 0;
fail:
    tdm_mirror_close(srv->mirror);
    srv->mirror = NULL;
    tdm_arena_destroy(srv->arena);
    srv->arena = NULL;
    srv->ops->shutdown(srv->be);
    srv->be = NULL;
    return err;
}

int tdm_server_fail_back(tdm_server *srv, const char *path)
{
    if (!srv->mirror &&
        tdm_mirror_open(&srv->mirror, path, srv->cfg.arena_base, srv->cfg.arena_size, false) != 0)
        return -1;
    tdm_mirror_retarget(srv->mirror, path);
    atomic_store(&srv->handing_off, true);
    fprintf(stderr, "tandem-server: fail-back: sessions move to the server whose standby side is %s\n", path);
    return 0;
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

void tdm_server_stop(tdm_server *srv)
{
    tdm_standby_stop(srv->standby);
    srv->standby = NULL;
    tdm_mirror_close(srv->mirror);
    srv->mirror = NULL;
    if (srv->be)
        srv->ops->shutdown(srv->be);
    tdm_arena_destroy(srv->arena);
    srv->be = NULL;
    srv->arena = NULL;
}
