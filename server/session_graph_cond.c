/* Conditional handles of a session's graphs (docs/graphs.md, "Conditional
 * nodes").  The handle value is the backend's (on a GPU the driver's, which
 * the program's kernels set); the session keeps which graph made each, so
 * that a node names only a handle of its own graph or of a graph it is a
 * body of, and bounds how many there are. */
#include "session.h"

#include <stdlib.h>

#include <driver_types.h>

#include "grow.h"
#include "log.h"

typedef struct tdm_cond_handle {
    uint64_t value;
    uint64_t graph;
    bool used;               /* a node has it: a handle serves one conditional node */
} tdm_cond_handle;

int tdm_session_cond_handle_create(tdm_session *s, uint64_t graph, unsigned dflt, unsigned flags, uint64_t *handle)
{
    tdm_bgraph *bg = tdm_session_graph_backend(s, graph);
    int err;

    *handle = 0;
    if (!bg || (flags & ~(unsigned)cudaGraphCondAssignDefault))
        return cudaErrorInvalidValue;
    if (s->ncond_handles >= TDM_SESSION_MAX_COND_HANDLES) {
        tdm_log_session(s->id, "more than %d conditional handles", TDM_SESSION_MAX_COND_HANDLES);
        return cudaErrorMemoryAllocation;
    }
    if (tdm_grow(&s->cond_handles, &s->cond_handles_cap, s->ncond_handles + 1, sizeof(*s->cond_handles), 8) != 0)
        return cudaErrorMemoryAllocation;
    err = s->srv->ops->graph_cond_handle_create(s->srv->be, bg, dflt, flags, handle);
    if (err)
        return err;
    s->cond_handles[s->ncond_handles++] = (tdm_cond_handle){ *handle, graph, false };
    return 0;
}

static tdm_cond_handle *handle_find(tdm_session *s, uint64_t value)
{
    for (size_t i = 0; i < s->ncond_handles; i++)
        if (s->cond_handles[i].value == value)
            return &s->cond_handles[i];
    return NULL;
}

/* The body counts the driver allows per node type. */
static bool size_valid(int type, unsigned size)
{
    switch (type) {
    case cudaGraphCondTypeIf:
        return size == 1 || size == 2;
    case cudaGraphCondTypeWhile:
        return size == 1;
    case cudaGraphCondTypeSwitch:
        return size >= 1;
    default:
        return false;
    }
}

int tdm_session_cond_node_add(tdm_session *s, uint64_t graph, const uint64_t *deps, uint32_t ndeps, uint64_t handle,
                              int type, unsigned size, uint64_t *node, uint64_t *bodies)
{
    tdm_cond_handle *h = handle_find(s, handle);
    int err;

    *node = 0;
    if (!h || h->used || !tdm_session_graph_within(s, graph, h->graph) || !size_valid(type, size))
        return cudaErrorInvalidValue;
    err = tdm_session_graph_add_cond_node(s, graph, deps, ndeps, handle, type, size, node, bodies);
    if (!err)
        h->used = true;
    return err;
}

void tdm_session_graph_cond_dropped(tdm_session *s, uint64_t graph)
{
    for (size_t i = 0; i < s->ncond_handles;)
        if (s->cond_handles[i].graph == graph)
            s->cond_handles[i] = s->cond_handles[--s->ncond_handles];
        else
            i++;
}

void tdm_session_cond_release(tdm_session *s)
{
    free(s->cond_handles);
    s->cond_handles = NULL;
    s->ncond_handles = s->cond_handles_cap = 0;
}
