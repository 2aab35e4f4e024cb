/* What the session core tells the layer above it (resilience: takeover
 * today, live migration and checkpoints next) about a session's life.  The
 * core declares these hooks and calls them; it knows nothing else of who
 * listens.  A server holds one table (tdm_server_set_hooks); with none, a
 * session simply has no one watching.
 *
 * Every hook gets the table's ctx and the session.  They run on the thread
 * serving the session, at the point the comment names, so a listener sees
 * the session's changes in the order they happen. */
#ifndef TANDEM_SERVER_SESSION_HOOKS_H
#define TANDEM_SERVER_SESSION_HOOKS_H

#include <stdbool.h>
#include <stdint.h>

#include "backend.h"
#include "range_map.h"

struct tdm_session;

/* A module the session just loaded, as the guest asked for it and with the
 * handles and addresses the session gave it (what reproduces it elsewhere). */
typedef struct tdm_module_made {
    uint64_t handle;
    const void *image;
    uint64_t len;
    const char *const *func_names;
    uint32_t nfuncs;
    const char *const *var_names;
    uint32_t nvars;
    const uint64_t *func_handles;   /* 0 where a kernel did not resolve */
    const uint64_t *var_addr;       /* 0 where a variable did not resolve */
} tdm_module_made;

typedef struct tdm_session_hooks {
    /* The session was created: the listener sets up its own state for it
     * (s->hook_state).  A cudaError_t; an error fails the creation. */
    int (*opened)(void *ctx, struct tdm_session *s);
    /* The guest is gone: called first in tdm_session_destroy, before the
     * session releases anything. */
    void (*closed)(void *ctx, struct tdm_session *s);
    /* Last: everything the session held is released; the listener frees
     * its state. */
    void (*ended)(void *ctx, struct tdm_session *s);

    /* A new handle is about to be given: true and *id to impose the handle
     * (a standby reproducing its active's handles), false to let the
     * session's table choose. */
    bool (*handle_wanted)(void *ctx, struct tdm_session *s, uint64_t *id);

    /* Resources made and freed, after the session's own bookkeeping. */
    void (*memory_made)(void *ctx, struct tdm_session *s, const tdm_range *r, tdm_bmem *mem);
    /* Before the backend lets go of r (an allocation, or a module's
     * variable when its module goes). */
    void (*range_freed)(void *ctx, struct tdm_session *s, const tdm_range *r);
    void (*module_made)(void *ctx, struct tdm_session *s, const tdm_module_made *m);
    void (*module_freed)(void *ctx, struct tdm_session *s, uint64_t handle);
    /* A library's variable, first asked for by name (cuLibraryGetGlobal): the guest now holds
     * addr for it. */
    void (*global_made)(void *ctx, struct tdm_session *s, uint64_t library, const char *name, uint64_t addr);
    void (*stream_made)(void *ctx, struct tdm_session *s, uint64_t handle, unsigned flags, int priority);
    void (*stream_freed)(void *ctx, struct tdm_session *s, uint64_t handle);
    void (*event_made)(void *ctx, struct tdm_session *s, uint64_t handle, unsigned flags);
    void (*event_freed)(void *ctx, struct tdm_session *s, uint64_t handle);
    /* cudaDeviceReset: everything of the session was released. */
    void (*reset)(void *ctx, struct tdm_session *s);

    /* Before work on stream bs that may write r (a copy or memset into
     * it).  A cudaError_t: an error fails the write. */
    int (*before_write)(void *ctx, struct tdm_session *s, const tdm_range *r, tdm_bstream *bs);
    /* Before a kernel launch on bs with these parameters. */
    int (*before_launch)(void *ctx, struct tdm_session *s, const tdm_param_info *pi, const void *params,
                         tdm_bstream *bs);

    /* A call failed with an error that leaves the device context unusable
     * (an MMU or SM fault, a lost MPS server). */
    void (*context_lost)(void *ctx, struct tdm_session *s, int err);
} tdm_session_hooks;

#endif
