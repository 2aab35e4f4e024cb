/* Stream-ordered allocation and memory pools of a session
 * (docs/memory-models.md).
 *
 * Every allocation is a cudaMalloc of the session's logical arena
 * (tdm_session_malloc: the quota, the hooks and the range map as for any
 * allocation); a pool is an account over some of them.  cudaFreeAsync takes
 * the allocation out of the range map at once (the program may not name it
 * again) but keeps its memory until an event recorded on the stream after
 * the stream's earlier work has completed: the guest never waits, and the
 * memory is not reused while queued work may still touch it.  Such frees
 * are reaped whenever the session next allocates or asks a pool. */
#include "session.h"

#include <stdlib.h>
#include <string.h>

#include <driver_types.h>

#include "grow.h"
#include "log.h"
#include "shm_guest.h"
#include "tandem_rpc.h"

enum { TAG_POOL = 0x50 };

/* Bounds: a guest cannot make the server keep unbounded records. */
enum { MAX_POOLS = 1024 };

typedef struct tdm_pool {
    uint64_t max_size;           /* 0: no bound beyond the session's */
    uint64_t release_threshold;
    bool reuse_follow_events, reuse_opportunistic, reuse_internal;
    bool destroyed;              /* cudaMemPoolDestroy'd: freed once nothing is outstanding */
    uint64_t used, used_high;    /* bytes of live allocations */
    uint64_t pending;            /* bytes freed on a stream, not yet reaped */
    uint64_t reserved_high;
    uint64_t outstanding;        /* allocations and pending frees */
} tdm_pool;

typedef struct pool_alloc {
    uint64_t addr, mapped;
    tdm_pool *pool;
} pool_alloc;

typedef struct pending_free {
    tdm_range r;
    tdm_bevent *ev;
    tdm_pool *pool;              /* NULL: a cudaMalloc allocation */
} pending_free;

/* A block of the shm region mapped for kernels. */
typedef struct host_mapping {
    uint64_t off, size, dev;
    void *p;                     /* where the region holds it in this process */
} host_mapping;

typedef struct tdm_session_memory {
    host_mapping *maps;
    size_t nmaps, cap_maps;
    tdm_pool default_pool;
    tdm_handle_table pools;
    uint64_t current;            /* the device's current pool (cudaDeviceSetMemPool) */
    pool_alloc *allocs;
    size_t nallocs, cap_allocs;
    pending_free *pending;
    size_t npending, cap_pending;
} tdm_session_memory;

static const tdm_backend_ops *ops(tdm_session *s)
{
    return s->srv->ops;
}

static tdm_backend *be(tdm_session *s)
{
    return s->srv->be;
}

static void pool_init(tdm_pool *p, uint64_t max_size)
{
    memset(p, 0, sizeof(*p));
    p->max_size = max_size;
    p->reuse_follow_events = p->reuse_opportunistic = p->reuse_internal = true;
}

static tdm_session_memory *memory_of(tdm_session *s)
{
    if (!s->memory) {
        tdm_session_memory *m = calloc(1, sizeof(*m));
        if (!m)
            return NULL;
        pool_init(&m->default_pool, 0);
        tdm_handles_init(&m->pools, TAG_POOL);
        m->current = TDM_DEFAULT_MEM_POOL;
        s->memory = m;
    }
    return s->memory;
}

static tdm_pool *pool_of(tdm_session_memory *m, uint64_t handle)
{
    if (handle == TDM_DEFAULT_MEM_POOL)
        return &m->default_pool;
    return tdm_handles_get(&m->pools, handle);
}

static void pool_put(tdm_session_memory *m, tdm_pool *p)
{
    p->outstanding--;
    if (p->destroyed && p->outstanding == 0 && p != &m->default_pool)
        free(p);
}

static void note_reserved(tdm_pool *p)
{
    uint64_t reserved = p->used + p->pending;

    if (reserved > p->reserved_high)
        p->reserved_high = reserved;
    if (p->used > p->used_high)
        p->used_high = p->used;
}

/* Releases the frees whose stream has passed them (all of them with
 * `all`, when the session's work is known to be done). */
static void reap(tdm_session *s, tdm_session_memory *m, bool all)
{
    size_t kept = 0;

    for (size_t i = 0; i < m->npending; i++) {
        pending_free *f = &m->pending[i];
        if (!all && ops(s)->event_query(be(s), f->ev) == cudaErrorNotReady) {
            m->pending[kept++] = *f;
            continue;
        }
        /* An error other than not-ready is the stream's own, reported by
         * the next synchronizing call; the memory goes back either way. */
        ops(s)->event_destroy(be(s), f->ev);
        if (f->pool) {
            f->pool->pending -= f->r.mapped;
            pool_put(m, f->pool);
        }
        tdm_session_release_alloc(s, &f->r);
    }
    m->npending = kept;
}

static pool_alloc *alloc_of(tdm_session_memory *m, uint64_t addr)
{
    for (size_t i = 0; i < m->nallocs; i++)
        if (m->allocs[i].addr == addr)
            return &m->allocs[i];
    return NULL;
}

static void drop_alloc(tdm_session_memory *m, pool_alloc *a)
{
    *a = m->allocs[--m->nallocs];
}

int tdm_session_malloc_async(tdm_session *s, uint64_t size, uint64_t pool, uint64_t stream, uint64_t *addr)
{
    tdm_session_memory *m = memory_of(s);
    unsigned flags;
    tdm_pool *p;
    int err;

    *addr = 0;
    if (!m)
        return cudaErrorMemoryAllocation;
    /* ---- graph memory nodes (issue 14): captured, it is an allocation node ---- */
    if (tdm_session_graph_mem_capture_alloc(s, stream, size, addr, &err))
        return err;
    p = pool_of(m, pool ? pool : m->current);
    if (!p)
        return cudaErrorInvalidValue;
    err = tdm_session_stream_get_flags(s, stream, &flags);
    if (err)
        return err;
    reap(s, m, false);
    if (size == 0)
        return 0;                       /* a null pointer, as cudaMalloc */
    if (p->max_size && (size > p->max_size || p->used + p->pending > p->max_size - size))
        return cudaErrorMemoryAllocation;
    if (tdm_grow(&m->allocs, &m->cap_allocs, m->nallocs + 1, sizeof(*m->allocs), 16) != 0)
        return cudaErrorMemoryAllocation;
    err = tdm_session_malloc(s, size, addr);
    if (err)
        return err;
    const tdm_range *r = tdm_range_map_find(&s->ranges, *addr);
    m->allocs[m->nallocs++] = (pool_alloc){ .addr = *addr, .mapped = r->mapped, .pool = p };
    p->used += r->mapped;
    p->outstanding++;
    note_reserved(p);
    return 0;
}

int tdm_session_free_async(tdm_session *s, uint64_t addr, uint64_t stream)
{
    tdm_session_memory *m = memory_of(s);
    const tdm_range *found;
    tdm_bstream *bs;
    pending_free f = { 0 };
    pool_alloc *a;
    int err;

    if (!m)
        return cudaErrorMemoryAllocation;
    /* ---- graph memory nodes (issue 14): captured, a free node; graph memory, the program's free ---- */
    if (tdm_session_graph_mem_capture_free(s, stream, addr, &err) || tdm_session_graph_mem_user_free(s, addr, false, &err))
        return err;
    found = tdm_range_map_find(&s->ranges, addr);
    if (!found || found->addr != addr || found->kind != TDM_RANGE_ALLOC)
        return cudaErrorInvalidValue;
    if (tdm_grow(&m->pending, &m->cap_pending, m->npending + 1, sizeof(*m->pending), 16) != 0)
        return cudaErrorMemoryAllocation;
    err = ops(s)->event_create(be(s), cudaEventDisableTiming, &f.ev);
    if (err)
        return err;
    bs = tdm_session_work_stream(s, stream, &err);
    if (!bs)
        goto fail;
    err = ops(s)->event_record(be(s), f.ev, bs);
    if (err)
        goto fail;
    tdm_range_map_remove(&s->ranges, addr, &f.r);
    a = alloc_of(m, addr);
    if (a) {
        f.pool = a->pool;
        f.pool->used -= a->mapped;
        f.pool->pending += a->mapped;
        drop_alloc(m, a);
    }
    m->pending[m->npending++] = f;
    reap(s, m, false);
    return 0;
fail:
    ops(s)->event_destroy(be(s), f.ev);
    return err;
}

int tdm_session_mem_pool_create(tdm_session *s, uint64_t max_size, uint64_t *out)
{
    tdm_session_memory *m = memory_of(s);
    tdm_pool *p;

    if (!m)
        return cudaErrorMemoryAllocation;
    if (m->pools.live >= MAX_POOLS) {
        tdm_log_session(s->id, "cudaMemPoolCreate: the session already has %d pools", MAX_POOLS);
        return cudaErrorMemoryAllocation;
    }
    p = malloc(sizeof(*p));
    if (!p)
        return cudaErrorMemoryAllocation;
    pool_init(p, max_size);
    *out = tdm_handles_add(&m->pools, p);
    if (!*out) {
        free(p);
        return cudaErrorMemoryAllocation;
    }
    return 0;
}

int tdm_session_mem_pool_destroy(tdm_session *s, uint64_t pool)
{
    tdm_session_memory *m = memory_of(s);
    tdm_pool *p;

    if (!m)
        return cudaErrorMemoryAllocation;
    if (pool == TDM_DEFAULT_MEM_POOL)
        return cudaErrorInvalidValue;   /* the default pool cannot be destroyed */
    p = tdm_handles_remove(&m->pools, pool);
    if (!p)
        return cudaErrorInvalidValue;
    if (m->current == pool)
        m->current = TDM_DEFAULT_MEM_POOL;
    /* Outstanding allocations keep it until they are freed, as in CUDA. */
    p->destroyed = true;
    p->outstanding++;
    pool_put(m, p);
    return 0;
}

int tdm_session_mem_pool_set_attr(tdm_session *s, uint64_t pool, int attr, uint64_t value)
{
    tdm_session_memory *m = memory_of(s);
    tdm_pool *p = m ? pool_of(m, pool) : NULL;

    if (!p)
        return cudaErrorInvalidValue;
    switch (attr) {
    case cudaMemPoolReuseFollowEventDependencies: p->reuse_follow_events = value != 0; return 0;
    case cudaMemPoolReuseAllowOpportunistic: p->reuse_opportunistic = value != 0; return 0;
    case cudaMemPoolReuseAllowInternalDependencies: p->reuse_internal = value != 0; return 0;
    case cudaMemPoolAttrReleaseThreshold: p->release_threshold = value; return 0;
    /* The high-water marks can only be reset (to the current value). */
    case cudaMemPoolAttrReservedMemHigh:
        if (value)
            return cudaErrorInvalidValue;
        p->reserved_high = p->used + p->pending;
        return 0;
    case cudaMemPoolAttrUsedMemHigh:
        if (value)
            return cudaErrorInvalidValue;
        p->used_high = p->used;
        return 0;
    default:
        return cudaErrorInvalidValue;
    }
}

int tdm_session_mem_pool_get_attr(tdm_session *s, uint64_t pool, int attr, uint64_t *value)
{
    tdm_session_memory *m = memory_of(s);
    tdm_pool *p = m ? pool_of(m, pool) : NULL;

    if (!p)
        return cudaErrorInvalidValue;
    reap(s, m, false);
    switch (attr) {
    case cudaMemPoolReuseFollowEventDependencies: *value = p->reuse_follow_events; return 0;
    case cudaMemPoolReuseAllowOpportunistic: *value = p->reuse_opportunistic; return 0;
    case cudaMemPoolReuseAllowInternalDependencies: *value = p->reuse_internal; return 0;
    case cudaMemPoolAttrReleaseThreshold: *value = p->release_threshold; return 0;
    case cudaMemPoolAttrReservedMemCurrent: *value = p->used + p->pending; return 0;
    case cudaMemPoolAttrReservedMemHigh: *value = p->reserved_high; return 0;
    case cudaMemPoolAttrUsedMemCurrent: *value = p->used; return 0;
    case cudaMemPoolAttrUsedMemHigh: *value = p->used_high; return 0;
    default:
        return cudaErrorInvalidValue;
    }
}

int tdm_session_mem_pool_trim(tdm_session *s, uint64_t pool, uint64_t keep)
{
    tdm_session_memory *m = memory_of(s);

    (void)keep;   /* a pool keeps nothing beyond frees still queued on their stream */
    if (!m || !pool_of(m, pool))
        return cudaErrorInvalidValue;
    reap(s, m, false);
    return 0;
}

int tdm_session_set_mem_pool(tdm_session *s, uint64_t pool)
{
    tdm_session_memory *m = memory_of(s);

    if (!m || !pool_of(m, pool))
        return cudaErrorInvalidValue;
    m->current = pool;
    return 0;
}

int tdm_session_get_mem_pool(tdm_session *s, uint64_t *pool)
{
    tdm_session_memory *m = memory_of(s);

    if (!m)
        return cudaErrorMemoryAllocation;
    *pool = m->current;
    return 0;
}

void tdm_session_memory_forget(tdm_session *s, uint64_t addr)
{
    tdm_session_memory *m = s->memory;
    pool_alloc *a = m ? alloc_of(m, addr) : NULL;

    if (!a)
        return;
    a->pool->used -= a->mapped;
    pool_put(m, a->pool);
    drop_alloc(m, a);
}

void tdm_session_memory_release(tdm_session *s)
{
    tdm_session_memory *m = s->memory;
    void *p;

    if (!m)
        return;
    reap(s, m, true);
    for (size_t i = 0; i < m->nmaps; i++)
        ops(s)->host_unmap(be(s), m->maps[i].p, m->maps[i].size);
    free(m->maps);
    /* The allocations themselves are the range map's, released with it. */
    for (size_t i = 0; i < m->nallocs; i++)
        pool_put(m, m->allocs[i].pool);
    while ((p = tdm_handles_pop(&m->pools, NULL)))
        free(p);
    tdm_handles_release(&m->pools);
    free(m->allocs);
    free(m->pending);
    free(m);
    s->memory = NULL;
}

/* ---- mapped (zero-copy) host memory over shm ---- */

static bool block_registered(const tdm_shm_guest *g, uint64_t off, uint64_t size)
{
    for (size_t i = 0; i < g->nregs; i++)
        if (g->regs[i].off == off && g->regs[i].size == size)
            return true;
    return false;
}

int tdm_session_shm_host_map(tdm_session *s, uint64_t off, uint64_t size, uint64_t *dev)
{
    tdm_session_memory *m = memory_of(s);
    host_mapping h = { .off = off, .size = size };
    int err;

    *dev = 0;
    if (!m)
        return cudaErrorMemoryAllocation;
    /* Only pinned blocks of the region (cudaMallocHost/cudaHostAlloc):
     * their pages stay mapped here, and registered, until unregistered. */
    if (!s->shm || !block_registered(s->shm, off, size)) {
        tdm_log_session(s->id, "cannot map [%llu, +%llu) for the device: not a pinned block of the region",
                        (unsigned long long)off, (unsigned long long)size);
        return cudaErrorInvalidValue;
    }
    for (size_t i = 0; i < m->nmaps; i++)
        if (m->maps[i].off == off && m->maps[i].size == size) {
            *dev = m->maps[i].dev;
            return 0;
        }
    if (tdm_grow(&m->maps, &m->cap_maps, m->nmaps + 1, sizeof(*m->maps), 16) != 0)
        return cudaErrorMemoryAllocation;
    h.p = tdm_shm_at(&s->shm->conn.region, off);
    err = ops(s)->host_map(be(s), h.p, size, &h.dev);
    if (!err && (err = tdm_session_grant(s, h.dev)) != 0)
        ops(s)->host_unmap(be(s), h.p, size);
    if (err)
        return err;
    m->maps[m->nmaps++] = h;
    *dev = h.dev;
    return 0;
}

void tdm_session_shm_host_unmapping(tdm_session *s, uint64_t off, uint64_t size)
{
    tdm_session_memory *m = s->memory;

    for (size_t i = 0; m && i < m->nmaps; i++)
        if (m->maps[i].off == off && m->maps[i].size == size) {
            ops(s)->host_unmap(be(s), m->maps[i].p, size);
            m->maps[i] = m->maps[--m->nmaps];
            return;
        }
}

/* ---- peer and batch copies, pool selection and sharing (issue 14) ---- */

typedef struct pool_search {
    const tdm_pool *p;
    uint64_t id;
} pool_search;

static void match_pool(void *obj, uint64_t id, void *arg)
{
    pool_search *f = arg;

    if (obj == f->p)
        f->id = id;
}

int tdm_session_mem_pool_of(tdm_session *s, uint64_t addr, uint64_t *pool)
{
    tdm_session_memory *m = s->memory;
    pool_alloc *a = m ? alloc_of(m, addr) : NULL;
    pool_search f = { a ? a->pool : NULL, 0 };

    *pool = 0;
    if (!a)
        return cudaErrorInvalidValue;
    if (a->pool == &m->default_pool) {
        *pool = TDM_DEFAULT_MEM_POOL;
        return 0;
    }
    tdm_handles_each(&m->pools, match_pool, &f);
    *pool = f.id;             /* 0: its pool was destroyed */
    return f.id ? 0 : cudaErrorInvalidValue;
}
