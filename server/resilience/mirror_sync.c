/* Protecting a session: the standby hears everything the session holds,
 * in the order its mirror needs (memory before the shadows of it, modules
 * before their variables' shadows), then the live feed goes on from there.
 * One sync serves a guest's hello (nothing held yet), a session resumed on
 * a standby that has a standby of its own, a standby that came back, and a
 * fail-back (docs/takeover.md). */
#include <stdio.h>
#include <unistd.h>

#include <driver_types.h>

#include "mirror.h"
#include "session.h"
#include "tandem_rpc.h"

static uint64_t random_token(void)
{
    uint64_t t = 0;
    FILE *f = fopen("/dev/urandom", "rb");

    if (f) {
        if (fread(&t, sizeof(t), 1, f) != 1)
            t = 0;
        fclose(f);
    }
    return t ? t : 0x9e3779b97f4a7c15ull ^ (uint64_t)getpid();
}

static void send_module(void *obj, uint64_t id, void *arg)
{
    tdm_module_entry *m = obj;
    tdm_session *s = arg;

    if (!s->resume_token)
        return;
    if (!m->mirror_msg) {
        tdm_session_unprotect(s, "a module could not be kept for the standby");
        return;
    }
    tdm_session_mirror(s, TDM_M_MODULE_LOAD, id, 0, 0, 0, m->mirror_msg, m->mirror_len, -1);
}

static void send_stream(void *obj, uint64_t id, void *arg)
{
    tdm_stream_state *st = obj;

    tdm_session_mirror(arg, TDM_M_STREAM_CREATE, id, st->flags, (uint64_t)(int64_t)st->priority, 0, NULL, 0, -1);
}

static void send_event(void *obj, uint64_t id, void *arg)
{
    tdm_event_entry *e = obj;

    tdm_session_mirror(arg, TDM_M_EVENT_CREATE, id, e->flags, 0, 0, NULL, 0, -1);
}

static void send_state(tdm_session *s)
{
    tdm_shadow_markers *mk = &s->markers;

    for (size_t i = 0; i < s->ranges.n; i++) {
        tdm_range *r = &s->ranges.v[i];
        if (r->kind == TDM_RANGE_ALLOC)
            tdm_session_mirror_mem(s, TDM_M_MAP, r->backing, r->addr, r->mapped, r->size, 0);
    }
    tdm_handles_each(&s->modules, send_module, s);
    tdm_handles_each(&s->streams, send_stream, s);
    tdm_handles_each(&s->events, send_event, s);
    if (mk->mem)
        tdm_session_mirror_mem(s, TDM_M_MARKERS, mk->mem, mk->addr, mk->mapped, 0, 0);
    if (mk->gmem)
        tdm_session_mirror_mem(s, TDM_M_GLOBALS_AREA, mk->gmem, mk->gaddr, mk->gmapped, 0, 0);
    for (size_t i = 0; i < s->ranges.n; i++) {
        tdm_range *r = &s->ranges.v[i];
        const tdm_shadow *sh = r->shadow;
        if (!sh)
            continue;
        if (r->kind == TDM_RANGE_ALLOC)
            tdm_session_mirror_mem(s, TDM_M_SHADOW, sh->mem, sh->addr, sh->mapped, r->addr, sh->slot);
        else
            tdm_session_mirror(s, TDM_M_GLOBAL_SHADOW, sh->addr, sh->mapped, r->addr,
                               (uint64_t)sh->slot | (uint64_t)sh->slot_odd << 32, NULL, 0, -1);
    }
    tdm_session_mirror(s, TDM_M_EPOCH, s->epoch, 0, 0, 0, NULL, 0, -1);
}

bool tdm_session_protect(tdm_session *s, int policy)
{
    char ep[256];
    uint64_t gen;

    if (!s->srv->mirror || policy == TDM_RESUME_NONE || s->moved)
        return false;
    if (tdm_session_protected(s))
        return true;
    gen = tdm_mirror_gen(s->srv->mirror);
    /* An shm guest resumes only on a standby that serves shm too. */
    if (!gen || !tdm_mirror_endpoint(s->srv->mirror, gen, s->shm != NULL, ep, sizeof(ep)))
        return false;
    s->resume_policy = policy == TDM_RESUME_REPLAY ? TDM_RESUME_REPLAY : TDM_RESUME_EXACT;
    s->resume_token = random_token();
    s->mirror_gen = gen;
    tdm_session_mirror(s, TDM_M_SESSION_OPEN, s->resume_token, (uint64_t)s->resume_policy, 0, 0, NULL, 0, -1);
    send_state(s);
    /* A send that failed hung up the connection: not protected after all. */
    return tdm_session_protected(s);
}

bool tdm_session_handoff(tdm_session *s, uint64_t seq, int policy)
{
    if (s->moved || !s->srv->mirror || !tdm_mirror_gen(s->srv->mirror))
        return false;
    if (tdm_session_quiesce(s) != 0)
        return false;
    s->epoch = seq;
    /* A guest that asked for no protection moves too: at an idle point
     * nothing needs replaying, so the cheapest policy serves the move. */
    if (!tdm_session_protect(s, policy == TDM_RESUME_NONE ? TDM_RESUME_REPLAY : policy) ||
        tdm_shadow_begin_epoch(s, seq) != 0)
        return false;
    tdm_session_mirror(s, TDM_M_HANDOFF, seq, 0, 0, 0, NULL, 0, -1);
    return tdm_session_protected(s);
}
