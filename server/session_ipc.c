/* CUDA IPC of a session (docs/ipc.md): exporting its allocations and
 * interprocess events into the server's table (ipc_exports.h), opening
 * other sessions' exports, and letting go of both.
 *
 * Every session of a server shares one device address space, so an
 * imported allocation is the exporter's own memory at the exporter's own
 * address: it enters the importer's range map as TDM_RANGE_IMPORT, which
 * copies, memsets and launches are checked against like any range, and
 * which cudaFree refuses (only an allocation is freed).  An imported event
 * is another entry of the importer's event table naming the same backend
 * event. */
#include "session.h"

#include <stdlib.h>
#include <string.h>

#include <driver_types.h>

#include "grow.h"
#include "log.h"

typedef struct ipc_import {
    tdm_ipc_export *e;
    uint64_t addr;
    uint32_t refs;               /* opens of it by this session (natively refcounted) */
} ipc_import;

typedef struct tdm_session_ipc {
    ipc_import *imports;
    size_t nimports, cap;
    uint32_t holds;              /* memory opens and event opens: bounded */
    bool exported;               /* it has exported memory: its frees ask the table */
} tdm_session_ipc;

static tdm_ipc_table *table(tdm_session *s)
{
    return &s->srv->ipc;
}

static tdm_session_ipc *ipc_of(tdm_session *s)
{
    if (!s->ipc)
        s->ipc = calloc(1, sizeof(*s->ipc));
    return s->ipc;
}

/* The export died holding memory nobody has any more: it goes back to the
 * device and the arena. */
static void release_kept(tdm_session *s, tdm_ipc_export *e)
{
    const tdm_range *r = &e->range;
    int err = s->srv->ops->mem_unmap(s->srv->be, r->addr, r->mapped, r->backing);

    if (err)
        tdm_log_session(s->id, "releasing exported memory %#llx that its owner freed: cudaError %d",
                        (unsigned long long)r->addr, err);
    tdm_arena_free(s->srv->arena, r->addr, r->mapped);
    tdm_ipc_export_free(e);
}

static bool may_hold_more(tdm_session *s, tdm_session_ipc *ipc)
{
    if (ipc->holds < TDM_SESSION_MAX_IPC_HOLDS)
        return true;
    tdm_log_session(s->id, "IPC: the session already holds %d opened handles", TDM_SESSION_MAX_IPC_HOLDS);
    return false;
}

int tdm_session_ipc_get_mem_handle(tdm_session *s, uint64_t addr, uint8_t handle[64])
{
    const tdm_range *r = tdm_range_map_find(&s->ranges, addr);
    tdm_session_ipc *ipc = ipc_of(s);
    tdm_ipc_export *e;
    int err;

    memset(handle, 0, 64);
    if (!ipc)
        return cudaErrorMemoryAllocation;
    /* The base of one of its own allocations, as the driver takes it (an
     * opened import cannot be exported again: it is not this session's). */
    if (!r || r->addr != addr || r->kind != TDM_RANGE_ALLOC)
        return cudaErrorInvalidValue;
    err = tdm_ipc_export_mem(table(s), s->id, r, handle, &e);
    if (err) {
        tdm_log_session(s->id, "cudaIpcGetMemHandle: no more exports (at most %d per session, %d per server)",
                        TDM_IPC_MAX_EXPORTS_PER_SESSION, TDM_IPC_MAX_EXPORTS);
        return err;
    }
    ipc->exported = true;
    return 0;
}

static ipc_import *import_of(tdm_session_ipc *ipc, uint64_t addr)
{
    for (size_t i = 0; ipc && i < ipc->nimports; i++)
        if (ipc->imports[i].addr == addr)
            return &ipc->imports[i];
    return NULL;
}

int tdm_session_ipc_open_mem(tdm_session *s, const uint8_t handle[64], unsigned flags, uint64_t *addr,
                             uint64_t *size)
{
    tdm_session_ipc *ipc = ipc_of(s);
    tdm_ipc_export *e;
    ipc_import *im;
    int err;

    *addr = *size = 0;
    if (!ipc)
        return cudaErrorMemoryAllocation;
    if (flags & ~(unsigned)cudaIpcMemLazyEnablePeerAccess)
        return cudaErrorInvalidValue;
    if (!may_hold_more(s, ipc))
        return cudaErrorMemoryAllocation;
    if (tdm_grow(&ipc->imports, &ipc->cap, ipc->nimports + 1, sizeof(*ipc->imports), 8) != 0)
        return cudaErrorMemoryAllocation;
    err = tdm_ipc_open(table(s), s->id, handle, TDM_IPC_MEM, &e);
    if (err)
        return err;
    /* Opened again: the same pointer, one more reference (as the driver
     * does for a handle its context has open). */
    im = import_of(ipc, e->range.addr);
    if (!im) {
        tdm_range r = { .addr = e->range.addr, .size = e->range.size, .mapped = e->range.mapped,
                        .kind = TDM_RANGE_IMPORT, .backing = e };
        if (tdm_session_ranges_add(s, &r) != 0) {
            if (tdm_ipc_close(table(s), e))
                release_kept(s, e);
            return cudaErrorMemoryAllocation;
        }
        im = &ipc->imports[ipc->nimports++];
        *im = (ipc_import){ .e = e, .addr = e->range.addr };
    }
    im->refs++;
    ipc->holds++;
    *addr = e->range.addr;
    *size = e->range.size;
    return 0;
}

/* One reference of the import goes; the last takes the range out of the
 * map and lets go of the export. */
static void drop_import(tdm_session *s, tdm_session_ipc *ipc, ipc_import *im)
{
    tdm_ipc_export *e = im->e;

    ipc->holds--;
    if (--im->refs)
        return;
    tdm_range_map_remove(&s->ranges, im->addr, NULL);
    tdm_session_revoke(s, im->addr);
    *im = ipc->imports[--ipc->nimports];
    if (tdm_ipc_close(table(s), e)) {
        /* The owner freed it already: the memory goes now, once this
         * session's queued work no longer touches it. */
        tdm_session_quiesce(s);
        release_kept(s, e);
    }
}

int tdm_session_ipc_close_mem(tdm_session *s, uint64_t addr)
{
    ipc_import *im = import_of(s->ipc, addr);

    if (!im)
        return cudaErrorInvalidValue;
    drop_import(s, s->ipc, im);
    return 0;
}

int tdm_session_ipc_get_event_handle(tdm_session *s, uint64_t event, uint8_t handle[64])
{
    tdm_event_entry *ev = tdm_handles_get(&s->events, event);
    tdm_ipc_export *e;
    int err;

    memset(handle, 0, 64);
    if (!ev)
        return cudaErrorInvalidResourceHandle;
    /* Only an event made with cudaEventInterprocess, and one of the
     * session's own (an opened one is the exporter's to export). */
    if (!(ev->flags & cudaEventInterprocess) || ev->ipc_imported)
        return cudaErrorInvalidResourceHandle;
    err = tdm_ipc_export_event(table(s), s->id, ev->ev, ev->flags, handle, &e);
    if (err) {
        tdm_log_session(s->id, "cudaIpcGetEventHandle: no more exports (at most %d per session, %d per server)",
                        TDM_IPC_MAX_EXPORTS_PER_SESSION, TDM_IPC_MAX_EXPORTS);
        return err;
    }
    ev->ipc = e;
    return 0;
}

int tdm_session_ipc_open_event(tdm_session *s, const uint8_t handle[64], uint64_t *event)
{
    tdm_session_ipc *ipc = ipc_of(s);
    tdm_event_entry *ev;
    tdm_ipc_export *e;
    int err;

    *event = 0;
    if (!ipc)
        return cudaErrorMemoryAllocation;
    if (!may_hold_more(s, ipc))
        return cudaErrorMemoryAllocation;
    ev = calloc(1, sizeof(*ev));
    if (!ev)
        return cudaErrorMemoryAllocation;
    err = tdm_ipc_open(table(s), s->id, handle, TDM_IPC_EVENT, &e);
    if (err) {
        free(ev);
        return err;
    }
    *ev = (tdm_event_entry){ .ev = e->ev, .flags = e->ev_flags, .ipc = e, .ipc_imported = true };
    *event = tdm_handles_add(&s->events, ev);
    if (!*event) {
        if (tdm_ipc_close(table(s), e)) {
            s->srv->ops->event_destroy(s->srv->be, e->ev);
            tdm_ipc_export_free(e);
        }
        free(ev);
        return cudaErrorMemoryAllocation;
    }
    ipc->holds++;
    return 0;
}

int tdm_session_ipc_event_put(tdm_session *s, tdm_event_entry *ev)
{
    tdm_ipc_export *e = ev->ipc;
    bool dead;
    int err;

    if (ev->ipc_imported) {
        if (s->ipc)
            s->ipc->holds--;
        dead = tdm_ipc_close(table(s), e);
    } else {
        dead = tdm_ipc_owner_drops(table(s), e);
    }
    if (!dead)
        return 0;
    err = s->srv->ops->event_destroy(s->srv->be, e->ev);
    tdm_ipc_export_free(e);
    return err;
}

bool tdm_session_ipc_keeps(tdm_session *s, const tdm_range *r)
{
    tdm_ipc_export *e;

    if (!s->ipc || !s->ipc->exported)
        return false;
    e = tdm_ipc_owned_mem(table(s), s->id, r->addr);
    if (!e)
        return false;
    if (tdm_ipc_owner_drops(table(s), e)) {
        tdm_ipc_export_free(e);      /* nobody had it open: released as usual */
        return false;
    }
    /* Natively undefined for the importers; here their mapping stays valid
     * until the last of them closes it, and its bytes stay in this
     * session's quota (tdm_session_ipc_kept) meanwhile. */
    tdm_session_mem_give(s, r->mapped);
    return true;
}

uint64_t tdm_session_ipc_kept(tdm_session *s)
{
    return s->ipc && s->ipc->exported ? tdm_ipc_kept_bytes(table(s), s->id) : 0;
}

void tdm_session_ipc_release_imports(tdm_session *s)
{
    tdm_session_ipc *ipc = s->ipc;

    while (ipc && ipc->nimports) {
        ipc_import *im = &ipc->imports[0];

        ipc->holds -= im->refs - 1;  /* every reference goes at once */
        im->refs = 1;
        drop_import(s, ipc, im);
    }
}

void tdm_session_ipc_ended(tdm_session *s)
{
    if (!s->ipc)
        return;
    tdm_ipc_owner_ended(table(s), s->id);
    free(s->ipc->imports);
    free(s->ipc);
    s->ipc = NULL;
}
