/* Memory pools shared between sessions of this server (docs/ipc.md,
 * "Sharing memory pools").
 *
 * Natively a pool created with a shareable handle type exports an OS
 * handle another process imports, and then single allocations of the pool
 * (cudaMemPoolExportPointer's 64 bytes) are imported from it.  Here both
 * processes are sessions of one server, as with CUDA IPC: a pool's export
 * is an entry of the server's IPC export table (kind TDM_IPC_POOL: a
 * server-minted handle carrying a random secret, compared in constant
 * time), and a pointer's export data is the allocation's IPC memory handle,
 * marked as belonging to the pool.  An imported pointer is an IPC import
 * (session_ipc.c), with its semantics when the owner frees first.
 *
 * A session keeps the handle types of its shareable pools (bounded as its
 * pools are), its pool exports (dropped when it lets go of the pool or
 * ends) and its imported pools (bounded; released on request or at end). */
#include "session.h"

#include <stdlib.h>
#include <string.h>

#include <driver_types.h>

#include "grow.h"
#include "log.h"
#include "tandem_rpc.h"

enum { TAG_POOL_IMPORT = 0x70, MAX_SHAREABLE = 1024 };

typedef struct shareable_pool {
    uint64_t pool;
    unsigned types;              /* cudaMemAllocationHandleType bits */
    tdm_ipc_export *export;      /* its export, once made */
} shareable_pool;

typedef struct tdm_session_pool_share {
    shareable_pool *pools;
    size_t npools, cap;
    tdm_handle_table imports;    /* tdm_ipc_export * of other sessions' pools */
} tdm_session_pool_share;

static tdm_ipc_table *table(tdm_session *s)
{
    return &s->srv->ipc;
}

static tdm_session_pool_share *share_of(tdm_session *s)
{
    if (!s->pool_share) {
        s->pool_share = calloc(1, sizeof(*s->pool_share));
        if (s->pool_share)
            tdm_handles_init(&s->pool_share->imports, TAG_POOL_IMPORT);
    }
    return s->pool_share;
}

/* The pool is one of the session's own, alive (the pool table answers). */
static bool live_pool(tdm_session *s, uint64_t pool)
{
    uint64_t v;

    return pool != TDM_DEFAULT_MEM_POOL &&
           tdm_session_mem_pool_get_attr(s, pool, cudaMemPoolAttrReleaseThreshold, &v) == 0;
}

static shareable_pool *shareable_of(tdm_session_pool_share *ps, uint64_t pool)
{
    for (size_t i = 0; ps && i < ps->npools; i++)
        if (ps->pools[i].pool == pool)
            return &ps->pools[i];
    return NULL;
}

/* The entry goes; its export, if any, is no longer the owner's. */
static void drop_shareable(tdm_session *s, tdm_session_pool_share *ps, shareable_pool *sp)
{
    if (sp->export && tdm_ipc_owner_drops(table(s), sp->export))
        tdm_ipc_export_free(sp->export);
    *sp = ps->pools[--ps->npools];
}

/* Entries of pools destroyed since: they make room. */
static void prune(tdm_session *s, tdm_session_pool_share *ps)
{
    for (size_t i = ps->npools; i-- > 0;)
        if (!live_pool(s, ps->pools[i].pool))
            drop_shareable(s, ps, &ps->pools[i]);
}

int tdm_session_pool_shareable(tdm_session *s, uint64_t pool, unsigned types)
{
    tdm_session_pool_share *ps = share_of(s);
    shareable_pool *sp;

    if (!ps)
        return cudaErrorMemoryAllocation;
    if (!live_pool(s, pool) || types == cudaMemHandleTypeNone)
        return cudaErrorInvalidValue;
    sp = shareable_of(ps, pool);
    if (sp) {                    /* a pool's handle types are fixed at its creation */
        return sp->types == types ? 0 : cudaErrorInvalidValue;
    }
    if (ps->npools >= MAX_SHAREABLE)
        prune(s, ps);
    if (ps->npools >= MAX_SHAREABLE ||
        tdm_grow(&ps->pools, &ps->cap, ps->npools + 1, sizeof(*ps->pools), 8) != 0)
        return cudaErrorMemoryAllocation;
    ps->pools[ps->npools++] = (shareable_pool){ .pool = pool, .types = types };
    return 0;
}

int tdm_session_pool_export(tdm_session *s, uint64_t pool, unsigned type, uint8_t handle[64])
{
    tdm_session_pool_share *ps = s->pool_share;
    shareable_pool *sp = shareable_of(ps, pool);
    int err;

    memset(handle, 0, 64);
    /* Only a live pool created with this handle type, and only the type
     * this host has: a file descriptor (the driver refuses the others on
     * Linux, and a pool made without a type). */
    if (!sp || !live_pool(s, pool) || type != cudaMemHandleTypePosixFileDescriptor || !(sp->types & type))
        return cudaErrorInvalidValue;
    err = tdm_ipc_export_pool(table(s), s->id, pool, handle, &sp->export);
    if (err)
        tdm_log_session(s->id, "cudaMemPoolExportToShareableHandle: no more exports (at most %d per session, %d "
                        "per server)", TDM_IPC_MAX_EXPORTS_PER_SESSION, TDM_IPC_MAX_EXPORTS);
    return err;
}

int tdm_session_pool_import(tdm_session *s, const uint8_t handle[64], uint64_t *pool)
{
    tdm_session_pool_share *ps = share_of(s);
    tdm_ipc_export *e;
    int err;

    *pool = 0;
    if (!ps)
        return cudaErrorMemoryAllocation;
    if (ps->imports.live >= TDM_SESSION_MAX_POOL_IMPORTS) {
        tdm_log_session(s->id, "cudaMemPoolImportFromShareableHandle: the session already holds %d imported pools",
                        TDM_SESSION_MAX_POOL_IMPORTS);
        return cudaErrorMemoryAllocation;
    }
    err = tdm_ipc_open(table(s), s->id, handle, TDM_IPC_POOL, &e);
    if (err == cudaErrorInvalidResourceHandle) {
        /* The driver answers an unusable handle with invalid value; the
         * log says why, as only a server can (an import from a process
         * served by another Tandem server lands here too). */
        tdm_log_session(s->id, "cudaMemPoolImportFromShareableHandle: the handle names no live pool export of this "
                        "server (another server's, a destroyed pool's, or not a pool handle)");
        return cudaErrorInvalidValue;
    }
    if (err)
        return err;
    *pool = tdm_handles_add(&ps->imports, e);
    if (!*pool) {
        if (tdm_ipc_close(table(s), e))
            tdm_ipc_export_free(e);
        return cudaErrorMemoryAllocation;
    }
    return 0;
}

int tdm_session_pool_share_release(tdm_session *s, uint64_t pool)
{
    tdm_session_pool_share *ps = s->pool_share;
    tdm_ipc_export *e = ps ? tdm_handles_remove(&ps->imports, pool) : NULL;
    shareable_pool *sp;

    if (e) {                     /* an imported pool: this session lets go */
        if (tdm_ipc_close(table(s), e))
            tdm_ipc_export_free(e);
        return 0;
    }
    sp = shareable_of(ps, pool);
    if (!sp)
        return cudaErrorInvalidValue;
    drop_shareable(s, ps, sp);   /* its owner destroys it: no new imports */
    return 0;
}

int tdm_session_pool_export_ptr(tdm_session *s, uint64_t addr, uint8_t data[64])
{
    shareable_pool *sp;
    tdm_ipc_export *e;
    uint64_t pool;
    int err;

    memset(data, 0, 64);
    err = tdm_session_mem_pool_of(s, addr, &pool);
    if (err)
        return err;
    sp = shareable_of(s->pool_share, pool);
    if (!sp)
        return cudaErrorInvalidValue;   /* a pool that cannot be shared */
    err = tdm_session_ipc_get_mem_handle(s, addr, data);
    if (err)
        return err;
    e = tdm_ipc_owned_mem(table(s), s->id, addr);
    if (!e || tdm_ipc_mark_pool_ptr(table(s), e, pool) != pool) {
        memset(data, 0, 64);
        return cudaErrorInvalidValue;
    }
    return 0;
}

int tdm_session_pool_import_ptr(tdm_session *s, uint64_t pool, const uint8_t data[64], uint64_t *addr,
                                uint64_t *size)
{
    tdm_session_pool_share *ps = s->pool_share;
    tdm_ipc_export *pe = ps ? tdm_handles_get(&ps->imports, pool) : NULL;
    const tdm_range *r;
    int err;

    *addr = *size = 0;
    if (!pe)
        return cudaErrorInvalidValue;   /* not a pool this session imported */
    err = tdm_session_ipc_open_mem(s, data, 0, addr, size);
    if (err)
        return err == cudaErrorInvalidResourceHandle ? cudaErrorInvalidValue : err;
    /* The pointer must be of that very pool: its owner's, exported from it. */
    r = tdm_range_map_find(&s->ranges, *addr);
    tdm_ipc_export *me = r ? r->backing : NULL;
    if (!me || me->owner != pe->owner || tdm_ipc_mark_pool_ptr(table(s), me, 0) != pe->pool) {
        tdm_session_ipc_close_mem(s, *addr);
        *addr = *size = 0;
        return cudaErrorInvalidValue;
    }
    return 0;
}

void tdm_session_pool_share_ended(tdm_session *s)
{
    tdm_session_pool_share *ps = s->pool_share;
    tdm_ipc_export *e;

    if (!ps)
        return;
    while (ps->npools)
        drop_shareable(s, ps, &ps->pools[0]);
    while ((e = tdm_handles_pop(&ps->imports, NULL)))
        if (tdm_ipc_close(table(s), e))
            tdm_ipc_export_free(e);
    tdm_handles_release(&ps->imports);
    free(ps->pools);
    free(ps);
    s->pool_share = NULL;
}
