/* Protecting a session: the standby hears everything the session holds,
 * in the order its mirror needs (memory before the shadows of it, modules
 * before their variables' shadows), then the live feed goes on from there.
 * One sync serves a guest's hello (nothing held yet), a session resumed on
 * a standby that has a standby of its own, a standby that came back, and a
 * fail-back (docs/takeover.md). */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <driver_types.h>

#include "log.h"
#include "mirror_sync.h"
#include "mirror_wire.h"
#include "takeover_state.h"
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
    tdm_session *s = arg;
    const tdm_kept_module *k = tdm_takeover_kept_module(tdm_takeover(s), id);

    if (!tdm_takeover(s)->resume_token)
        return;
    if (!k || !k->msg) {
        tdm_takeover_unprotect(s, "a module could not be kept for the standby");
        return;
    }
    tdm_takeover_mirror(s, TDM_M_MODULE_LOAD, id, 0, 0, 0, k->msg, k->len, -1);
    /* Its library globals, at the guest's addresses, before any shadow of one is sent. */
    for (size_t i = 0; i < k->nglobals; i++)
        tdm_takeover_mirror(s, TDM_M_LIBRARY_GLOBAL, id, 0, k->globals[i].addr, 0, k->globals[i].name,
                            (uint32_t)strlen(k->globals[i].name), -1);
}

static void send_stream(void *obj, uint64_t id, void *arg)
{
    tdm_stream_state *st = obj;

    tdm_takeover_mirror(arg, TDM_M_STREAM_CREATE, id, st->flags, (uint64_t)(int64_t)st->priority, 0, NULL, 0, -1);
}

static void send_event(void *obj, uint64_t id, void *arg)
{
    tdm_event_entry *e = obj;

    tdm_takeover_mirror(arg, TDM_M_EVENT_CREATE, id, e->flags, 0, 0, NULL, 0, -1);
}

static void send_state(tdm_session *s)
{
    tdm_takeover_state *t = tdm_takeover(s);
    tdm_shadow_markers *mk = &t->markers;

    for (size_t i = 0; i < s->ranges.n; i++) {
        tdm_range *r = &s->ranges.v[i];
        if (r->kind == TDM_RANGE_ALLOC)
            tdm_takeover_mirror_mem(s, TDM_M_MAP, r->backing, r->addr, r->mapped, r->size, 0);
    }
    tdm_handles_each(&s->modules, send_module, s);
    tdm_handles_each(&s->streams, send_stream, s);
    tdm_handles_each(&s->events, send_event, s);
    if (mk->mem)
        tdm_takeover_mirror_mem(s, TDM_M_MARKERS, mk->mem, mk->addr, mk->mapped, 0, 0);
    if (mk->gmem)
        tdm_takeover_mirror_mem(s, TDM_M_GLOBALS_AREA, mk->gmem, mk->gaddr, mk->gmapped, 0, 0);
    for (size_t i = 0; i < t->shadows.n; i++) {
        const tdm_shadow *sh = t->shadows.v[i].backing;
        if (!sh->global)
            tdm_takeover_mirror_mem(s, TDM_M_SHADOW, sh->mem, sh->addr, sh->mapped, sh->of_addr, sh->slot);
        else
            tdm_takeover_mirror(s, TDM_M_GLOBAL_SHADOW, sh->addr, sh->mapped, sh->of_addr,
                                (uint64_t)sh->slot | (uint64_t)sh->slot_odd << 32, NULL, 0, -1);
    }
    tdm_takeover_mirror(s, TDM_M_EPOCH, t->epoch, 0, 0, 0, NULL, 0, -1);
}

bool tdm_mirror_sync_protect(tdm_session *s, int policy)
{
    tdm_takeover_state *t = tdm_takeover(s);
    tdm_mirror *mirror = t->res->mirror;
    char ep[256];
    uint64_t gen;

    if (!mirror || policy == TDM_RESUME_NONE || t->moved)
        return false;
    if (tdm_takeover_protected(s))
        return true;
    gen = tdm_mirror_gen(mirror);
    /* An shm guest resumes only on a standby that serves shm too. */
    if (!gen || !tdm_mirror_endpoint(mirror, gen, s->shm != NULL, ep, sizeof(ep)))
        return false;
    t->resume_policy = policy == TDM_RESUME_REPLAY ? TDM_RESUME_REPLAY : TDM_RESUME_EXACT;
    t->resume_token = random_token();
    t->mirror_gen = gen;
    tdm_takeover_mirror(s, TDM_M_SESSION_OPEN, t->resume_token, (uint64_t)t->resume_policy, 0, 0, NULL, 0, -1);
    send_state(s);
    /* A send that failed hung up the connection: not protected after all. */
    if (!tdm_takeover_protected(s))
        return false;
    /* Said once per standby: tests and operators wait for this line, not
     * for the guest's next check to have happened by some time. */
    tdm_log_session(s->id, "protected: resumes at %s from epoch %llu", ep, (unsigned long long)t->epoch);
    return true;
}

bool tdm_mirror_sync_handoff(tdm_session *s, uint64_t seq, int policy)
{
    tdm_takeover_state *t = tdm_takeover(s);

    if (t->moved || !t->res->mirror || !tdm_mirror_gen(t->res->mirror))
        return false;
    if (tdm_session_quiesce(s) != 0)
        return false;
    t->epoch = seq;
    /* A guest that asked for no protection moves too: at an idle point
     * nothing needs replaying, so the cheapest policy serves the move. */
    if (!tdm_mirror_sync_protect(s, policy == TDM_RESUME_NONE ? TDM_RESUME_REPLAY : policy) ||
        tdm_shadow_begin_epoch(s, seq) != 0)
        return false;
    tdm_takeover_mirror(s, TDM_M_HANDOFF, seq, 0, 0, 0, NULL, 0, -1);
    return tdm_takeover_protected(s);
}
