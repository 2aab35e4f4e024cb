/* The module's entry point (include/resilience.h): start and stop, the
 * session hooks the core calls, and the guest requests the RPC front
 * hands over. */
#include "resilience.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <driver_types.h>

#include "log.h"
#include "mirror_sync.h"
#include "mirror_wire.h"
#include "shadow.h"
#include "standby.h"
#include "takeover_state.h"
#include "tandem_rpc.h"

/* ---- session hooks ---- */

static int on_opened(void *ctx, tdm_session *s)
{
    s->hook_state = tdm_takeover_state_new(ctx);
    return s->hook_state ? 0 : cudaErrorMemoryAllocation;
}

static void on_closed(void *ctx, tdm_session *s)
{
    tdm_resilience *r = ctx;

    tdm_replay_gate_leave(&r->replay_gate, s);
    tdm_resilience_heard(s);
    /* The guest is gone: the standby forgets the session first, and nothing
     * that follows needs mirroring. */
    tdm_takeover_mirror(s, TDM_M_SESSION_CLOSE, 0, 0, 0, 0, NULL, 0, -1);
    tdm_takeover(s)->resume_token = 0;
}

static void on_ended(void *ctx, tdm_session *s)
{
    tdm_shadow_release_markers(s);
    tdm_takeover_state_free(s->hook_state);
    s->hook_state = NULL;
}

static bool on_handle_wanted(void *ctx, tdm_session *s, uint64_t *id)
{
    tdm_takeover_state *t = tdm_takeover(s);

    if (!t->n_want)
        return false;
    *id = *t->want_ids++;
    t->n_want--;
    return true;
}

static void on_memory_made(void *ctx, tdm_session *s, const tdm_range *r, tdm_bmem *mem)
{
    tdm_takeover_mirror_mem(s, TDM_M_MAP, mem, r->addr, r->mapped, r->size, 0);
}

static void on_range_freed(void *ctx, tdm_session *s, const tdm_range *r)
{
    tdm_shadow_drop(s, r->addr);
    if (r->kind == TDM_RANGE_ALLOC)
        tdm_takeover_mirror(s, TDM_M_UNMAP, r->addr, 0, 0, 0, NULL, 0, -1);
}

static void on_module_made(void *ctx, tdm_session *s, const tdm_module_made *m)
{
    const tdm_kept_module *k;

    if (!tdm_takeover_keep_module(tdm_takeover(s), m)) {
        tdm_takeover_unprotect(s, "cannot mirror a module to the standby");
        return;
    }
    k = tdm_takeover_kept_module(tdm_takeover(s), m->handle);
    tdm_takeover_mirror(s, TDM_M_MODULE_LOAD, m->handle, 0, 0, 0, k->msg, k->len, -1);
}

static void on_module_freed(void *ctx, tdm_session *s, uint64_t handle)
{
    tdm_takeover_forget_module(tdm_takeover(s), handle);
    tdm_takeover_mirror(s, TDM_M_MODULE_UNLOAD, handle, 0, 0, 0, NULL, 0, -1);
}

static void on_global_made(void *ctx, tdm_session *s, uint64_t library, const char *name, uint64_t addr)
{
    /* Kept for a standby that comes later (mirror_sync.c sends it after the library's load). */
    if (!tdm_takeover_keep_global(tdm_takeover(s), library, name, addr))
        tdm_resilience_unmirrorable(s, "cuLibraryGetGlobal (no memory to keep it for a standby)");
    tdm_takeover_mirror(s, TDM_M_LIBRARY_GLOBAL, library, 0, addr, 0, name, (uint32_t)strlen(name), -1);
}

static void on_stream_made(void *ctx, tdm_session *s, uint64_t handle, unsigned flags, int priority)
{
    tdm_takeover_mirror(s, TDM_M_STREAM_CREATE, handle, flags, (uint64_t)(int64_t)priority, 0, NULL, 0, -1);
}

static void on_stream_freed(void *ctx, tdm_session *s, uint64_t handle)
{
    tdm_takeover_mirror(s, TDM_M_STREAM_DESTROY, handle, 0, 0, 0, NULL, 0, -1);
}

static void on_event_made(void *ctx, tdm_session *s, uint64_t handle, unsigned flags)
{
    tdm_takeover_mirror(s, TDM_M_EVENT_CREATE, handle, flags, 0, 0, NULL, 0, -1);
}

static void on_event_freed(void *ctx, tdm_session *s, uint64_t handle)
{
    tdm_takeover_mirror(s, TDM_M_EVENT_DESTROY, handle, 0, 0, 0, NULL, 0, -1);
}

static void on_reset(void *ctx, tdm_session *s)
{
    tdm_takeover_forget_modules(tdm_takeover(s));
    tdm_takeover_mirror(s, TDM_M_RESET, 0, 0, 0, 0, NULL, 0, -1);
}

static int on_before_write(void *ctx, tdm_session *s, const tdm_range *r, tdm_bstream *bs)
{
    return tdm_shadow_before_write(s, r, bs);
}

static int on_before_launch(void *ctx, tdm_session *s, const tdm_param_info *pi, const void *params,
                            tdm_bstream *bs)
{
    return tdm_shadow_before_launch(s, pi, params, bs);
}

static void on_context_lost(void *ctx, tdm_session *s, int err)
{
    if (!tdm_takeover_protected(s))
        return;
    /* Fail-stop: every session of this process shares the dead context.
     * _exit skips the orderly session teardown, which would tell the
     * standby the sessions ended; the feed simply ends, and each guest
     * resumes its session there. */
    tdm_log_session(s->id, "the device context is lost (cudaError %d); stopping so that guests resume on the "
                           "standby", err);
    _exit(TDM_EXIT_HANDED_OFF);
}

static const tdm_session_hooks hooks = {
    .opened = on_opened,
    .closed = on_closed,
    .ended = on_ended,
    .handle_wanted = on_handle_wanted,
    .memory_made = on_memory_made,
    .range_freed = on_range_freed,
    .module_made = on_module_made,
    .global_made = on_global_made,
    .module_freed = on_module_freed,
    .stream_made = on_stream_made,
    .stream_freed = on_stream_freed,
    .event_made = on_event_made,
    .event_freed = on_event_freed,
    .reset = on_reset,
    .before_write = on_before_write,
    .before_launch = on_before_launch,
    .context_lost = on_context_lost,
};

/* ---- start and stop ---- */

/* A new active server asked for this server's sessions: mirror them to
 * the standby socket `path` and hand each over at its guest's next
 * protection check. */
static int fail_back(void *ctx, const char *path)
{
    tdm_resilience *r = ctx;
    tdm_server *srv = r->srv;

    if (!r->mirror && tdm_mirror_open(&r->mirror, path, srv->cfg.arena_base, srv->cfg.arena_size, false) != 0)
        return -1;
    tdm_mirror_retarget(r->mirror, path);
    atomic_store(&r->handing_off, true);
    tdm_log("fail-back: sessions move to the server whose standby side is %s", path);
    return 0;
}

int tdm_resilience_start(tdm_resilience **out, tdm_server *srv)
{
    const tdm_server_config *cfg = &srv->cfg;
    tdm_resilience *r = calloc(1, sizeof(*r));
    int rc;

    if (!r)
        return cudaErrorMemoryAllocation;
    r->srv = srv;
    tdm_replay_gate_init(&r->replay_gate);
    atomic_init(&r->handing_off, false);
    tdm_server_set_hooks(srv, &hooks, r);
    /* An active told to have a standby refuses to run without one; a
     * standby's own standby may be started after it. */
    if (cfg->standby_sock &&
        tdm_mirror_open(&r->mirror, cfg->standby_sock, cfg->arena_base, cfg->arena_size, cfg->standby_listen == NULL) !=
            0)
        goto fail;
    if (cfg->standby_listen && (rc = tdm_standby_start(&r->standby, srv, cfg->standby_listen, fail_back, r)) != 0) {
        if (rc == -ENAMETOOLONG)
            tdm_log("--standby-listen path too long: %s", cfg->standby_listen);
        else
            tdm_log("cannot listen for active servers on %s: %s", cfg->standby_listen, strerror(-rc));
        goto fail;
    }
    if (cfg->failback_from && tdm_standby_ask_fail_back(cfg->failback_from, cfg->standby_listen) != 0)
        goto fail;
    *out = r;
    return 0;
fail:
    tdm_resilience_stop(r);
    return cudaErrorDevicesUnavailable;
}

void tdm_resilience_stop(tdm_resilience *r)
{
    if (!r)
        return;
    /* A standby feed thread still running keeps using r (a fail-back
     * request): then r stays, as the standby does, until the process ends. */
    bool idle = tdm_standby_stop(r->standby);
    tdm_mirror_close(r->mirror);
    r->mirror = NULL;
    tdm_server_set_hooks(r->srv, NULL, NULL);
    if (idle)
        free(r);
}

/* ---- guest requests ---- */

void tdm_resilience_hello(tdm_session *s, int policy)
{
    tdm_mirror_sync_protect(s, policy);
}

void tdm_resilience_describe(tdm_session *s, tdm_protection *p)
{
    tdm_takeover_state *t = tdm_takeover(s);

    p->standby[0] = 0;
    /* An shm guest resumes on the standby's shm endpoint, with its region. */
    if (tdm_takeover_protected(s) &&
        !tdm_mirror_endpoint(t->res->mirror, t->mirror_gen, s->shm != NULL, p->standby, sizeof(p->standby)))
        p->standby[0] = 0;
    p->token = p->standby[0] ? t->resume_token : 0;
    p->policy = p->standby[0] ? t->resume_policy : TDM_RESUME_NONE;
}

int tdm_resilience_resume(tdm_session *s, uint64_t id, uint64_t token, uint64_t epoch, uint64_t epoch_sent,
                          uint64_t *resumed)
{
    tdm_resilience *r = tdm_takeover(s)->res;
    int policy = TDM_RESUME_NONE, err;

    if (!r->standby) {
        tdm_log("a guest asked to resume session %llu, but this server is no standby", (unsigned long long)id);
        return cudaErrorDevicesUnavailable;
    }
    err = tdm_standby_resume(r->standby, s, id, token, epoch, epoch_sent, resumed, &policy);
    if (err)
        return err;
    /* A standby with a standby of its own protects the session at once:
     * memory is back at the resumed epoch and idle, the next standby gets
     * it as it is now, and the guest keeps its journal from that epoch. */
    if (tdm_mirror_sync_protect(s, policy))
        tdm_session_defer(s, tdm_shadow_begin_epoch(s, tdm_takeover(s)->epoch));
    /* The standby's other sessions replay only once this guest has its
     * reply, which its next call proves (tdm_resilience_heard). */
    tdm_takeover(s)->resume_unheard = true;
    return 0;
}

/* After a hand-off: releases everything the session holds here at once,
 * telling no standby (the new server's standby, often this very process,
 * imports the same memory next), and mirrors nothing more. */
static void let_go(tdm_session *s)
{
    tdm_takeover_state *t = tdm_takeover(s);

    t->resume_token = 0;
    t->moved = true;
    tdm_session_release_all(s);
    tdm_shadow_release_markers(s);
    tdm_takeover_forget_modules(t);
}

int tdm_resilience_check(tdm_session *s, uint64_t seq, int policy, bool *moved, tdm_protection *to)
{
    tdm_takeover_state *t = tdm_takeover(s);
    tdm_resilience *r = t->res;
    int err;

    *moved = false;
    /* An shm session moves with its region (the guest hands it to the new
     * server); it moves only to a server that serves shm (protect says). */
    if (atomic_load(&r->handing_off) && !t->unmirrorable[0] && tdm_mirror_sync_handoff(s, seq, policy)) {
        to->standby[0] = 0;
        tdm_mirror_endpoint(r->mirror, t->mirror_gen, s->shm != NULL, to->standby, sizeof(to->standby));
        to->token = t->resume_token;
        to->policy = t->resume_policy;
        /* The session is the other server's now: this one lets go of it
         * before the guest can get there, without telling that server. */
        let_go(s);
        *moved = true;
        return 0;
    }
    if (!atomic_load(&r->handing_off) && policy != TDM_RESUME_NONE && !t->unmirrorable[0] &&
        !tdm_takeover_protected(s) && r->mirror &&
        tdm_mirror_gen(r->mirror)) {
        /* Every call up to seq is complete (the session is quiesced): seq is
         * the epoch a standby that hears of the session now starts from. */
        err = tdm_session_quiesce(s);
        if (err)
            return err;
        t->epoch = seq;
        if (tdm_mirror_sync_protect(s, policy))
            tdm_session_defer(s, tdm_shadow_begin_epoch(s, t->epoch));
    }
    return 0;
}

void tdm_resilience_unmirrorable(tdm_session *s, const char *call)
{
    tdm_takeover_state *t = tdm_takeover(s);
    char why[96];

    if (t->unmirrorable[0])
        return;
    snprintf(t->unmirrorable, sizeof(t->unmirrorable), "%s", call);
    snprintf(why, sizeof(why), "%s made state no standby can have", call);
    tdm_takeover_unprotect(s, why);
}

int tdm_resilience_epoch(tdm_session *s, uint64_t epoch)
{
    tdm_takeover(s)->epoch = epoch;
    return tdm_shadow_begin_epoch(s, epoch);
}

void tdm_resilience_replay_begin(tdm_session *s)
{
    tdm_resilience *r = tdm_takeover(s)->res;

    if (r->standby)
        tdm_standby_settle(r->standby, 0.5);
    tdm_replay_gate_enter(&r->replay_gate, s);
}

void tdm_resilience_replay_end(tdm_session *s)
{
    tdm_replay_gate_leave(&tdm_takeover(s)->res->replay_gate, s);
}

void tdm_resilience_heard(tdm_session *s)
{
    tdm_takeover_state *t = tdm_takeover(s);

    if (!t->resume_unheard)
        return;
    t->resume_unheard = false;
    tdm_standby_resume_done(t->res->standby);
}
