/* Resilience's own state: one tdm_resilience per server process, and one
 * tdm_takeover_state per session (the session core holds it as an opaque
 * pointer, s->hook_state).  What a session needs to be resumed elsewhere
 * lives here, not in the session core: its resume token and policy, the
 * guest's acknowledged epoch, the standby connection it is synced to, its
 * shadows and marker table, the mirror messages of its modules. */
#ifndef TANDEM_RESILIENCE_TAKEOVER_STATE_H
#define TANDEM_RESILIENCE_TAKEOVER_STATE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mirror.h"
#include "range_map.h"
#include "replay_gate.h"
#include "session.h"
#include "shadow.h"

struct tdm_standby;

struct tdm_resilience {
    tdm_server *srv;
    tdm_mirror *mirror;          /* this server's standby, when it has one */
    struct tdm_standby *standby; /* when this server is a standby */
    tdm_replay_gate replay_gate; /* sessions resumed here replay one at a time */
    atomic_bool handing_off;     /* fail-back asked: sessions move to the mirror's server */
};

/* A library's global the guest was given (cuLibraryGetGlobal): a standby that
 * comes later must place it at the same address before any shadow names it. */
typedef struct tdm_kept_global {
    char *name;
    uint64_t addr;
} tdm_kept_global;

/* A module's TDM_M_MODULE_LOAD payload, kept for a standby that comes later,
 * and the library globals made since its load (TDM_M_LIBRARY_GLOBAL each). */
typedef struct tdm_kept_module {
    uint64_t handle;
    void *msg;                   /* NULL: it could not be kept, the session cannot be mirrored */
    uint32_t len;
    tdm_kept_global *globals;    /* at most TDM_LIBRARY_MAX_GLOBALS, as the library's vars */
    size_t nglobals, cap_globals;
} tdm_kept_module;

typedef struct tdm_takeover_state {
    struct tdm_resilience *res;
    uint64_t resume_token;       /* 0 until the guest's hello, when a standby protects it */
    int resume_policy;           /* TDM_RESUME_* granted */
    uint64_t epoch;              /* the guest's last acknowledged call number */
    uint64_t mirror_gen;         /* the standby connection it is synced to (mirror.h) */
    tdm_shadow_markers markers;  /* exact policy: shadow marker table */
    tdm_range_map shadows;       /* its shadows (backing: tdm_shadow *), by the shadowed range */
    tdm_kept_module *modules;
    size_t nmodules, cap_modules;
    bool moved;                  /* handed to another server (fail-back): mirror nothing more */
    char unmirrorable[64];       /* non-empty: the call (MIRROR_UNPROTECT) that gave it
                                  * state no standby can have; never protected again */
    bool resume_unheard;         /* resumed here, and its guest has not called since
                                  * (tdm_standby_settle waits for it) */
    const uint64_t *want_ids;    /* a standby reproducing handles: the ids to take next */
    size_t n_want;
} tdm_takeover_state;

static inline tdm_takeover_state *tdm_takeover(tdm_session *s)
{
    return s->hook_state;
}

tdm_takeover_state *tdm_takeover_state_new(struct tdm_resilience *res);
/* Frees the state (its shadows must be dropped and markers released). */
void tdm_takeover_state_free(tdm_takeover_state *t);

/* Sends one mirror message about this session to the standby, if the
 * session is protected (resume_token set); the fd is not closed. */
void tdm_takeover_mirror(tdm_session *s, uint32_t type, uint64_t a, uint64_t b, uint64_t c, uint64_t d,
                         const void *payload, uint32_t len, int fd);
/* As tdm_takeover_mirror for physical memory: exports it and sends the fd. */
void tdm_takeover_mirror_mem(tdm_session *s, uint32_t type, tdm_bmem *mem, uint64_t a, uint64_t b, uint64_t c,
                             uint64_t d);
/* True while the standby it was synced to is still connected. */
bool tdm_takeover_protected(tdm_session *s);
/* Stops mirroring the session (the standby forgets it), saying why. */
void tdm_takeover_unprotect(tdm_session *s, const char *why);

/* Keeps the TDM_M_MODULE_LOAD payload of a module the session loaded
 * (mirror_wire.h has the layout); false when it cannot be kept (no memory,
 * past the mirror's limit): the module works, but cannot be mirrored. */
bool tdm_takeover_keep_module(tdm_takeover_state *t, const tdm_module_made *m);
/* The kept payload of module `handle`, or NULL. */
const tdm_kept_module *tdm_takeover_kept_module(const tdm_takeover_state *t, uint64_t handle);
void tdm_takeover_forget_module(tdm_takeover_state *t, uint64_t handle);
/* Keeps library `handle`'s global `name` at addr (the guest's), for a later standby; false when
 * the module is not kept or there is no memory (the session cannot be mirrored whole). */
bool tdm_takeover_keep_global(tdm_takeover_state *t, uint64_t handle, const char *name, uint64_t addr);
/* Every module of the session went (a reset, a hand-off). */
void tdm_takeover_forget_modules(tdm_takeover_state *t);

#endif
