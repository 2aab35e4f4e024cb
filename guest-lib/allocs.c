/* The guest's allocation table: its device allocations.  It lets the library refuse
 * an out-of-range pointer at once, classify pointers for cudaMemcpyDefault
 * and cudaPointerGetAttributes, and is the record a session is rebuilt from.
 * The server checks every pointer again: this table is a convenience for
 * the application, not a security boundary. */
#include <pthread.h>

#include "guest.h"
#include "range_map.h"

static pthread_rwlock_t lock = PTHREAD_RWLOCK_INITIALIZER;
static tdm_range_map map;

/* ---- graph memory nodes (issue 14) ---- */
/* `backing` of a graph allocation's entry: the server keeps such memory
 * while a graph has it, whatever the program frees (docs/graphs.md). */
static char graph_marker;

/* Under lock: forgets allocations overlapping [addr, +size), which the
 * server has just handed out again: they were graph memory it released. */
static void drop_stale_locked(uint64_t addr, uint64_t size)
{
    for (size_t i = map.n; i-- > 0;) {
        const tdm_range *v = &map.v[i];
        if (v->kind == TDM_RANGE_ALLOC && v->addr < addr + size && addr < v->addr + v->size)
            tdm_range_map_remove(&map, v->addr, NULL);
    }
}

static void add(uint64_t addr, uint64_t size, bool global, void *backing)
{
    tdm_range r = { .addr = addr, .size = size, .mapped = size,
                    .kind = global ? TDM_RANGE_GLOBAL : TDM_RANGE_ALLOC, .backing = backing };

    pthread_rwlock_wrlock(&lock);
    if (!global)
        drop_stale_locked(addr, size);
    tdm_range_map_insert(&map, &r);
    pthread_rwlock_unlock(&lock);
}

void tdm_allocs_add(uint64_t addr, uint64_t size, bool global)
{
    add(addr, size, global, NULL);
}

void tdm_allocs_add_graph(uint64_t addr, uint64_t size)
{
    add(addr, size, false, &graph_marker);
}

/* Under lock: addr starts a device allocation (not a variable). */
static bool allocation_at_locked(uint64_t addr)
{
    const tdm_range *r = tdm_range_map_find(&map, addr);

    return r && r->addr == addr && r->kind == TDM_RANGE_ALLOC;
}

int tdm_allocs_remove(uint64_t addr)
{
    int rc = -1;

    pthread_rwlock_wrlock(&lock);
    if (allocation_at_locked(addr) && tdm_range_map_find(&map, addr)->backing != &graph_marker)
        rc = tdm_range_map_remove(&map, addr, NULL);
    pthread_rwlock_unlock(&lock);
    return rc;
}

bool tdm_allocs_covers(uint64_t addr, uint64_t len)
{
    bool ok;

    pthread_rwlock_rdlock(&lock);
    ok = tdm_range_map_covers(&map, addr, len);
    pthread_rwlock_unlock(&lock);
    return ok;
}

bool tdm_allocs_holds(uint64_t addr)
{
    bool held;

    pthread_rwlock_rdlock(&lock);
    held = allocation_at_locked(addr);
    pthread_rwlock_unlock(&lock);
    return held;
}

bool tdm_allocs_range(uint64_t addr, uint64_t *base, uint64_t *size)
{
    const tdm_range *r;
    bool found;

    pthread_rwlock_rdlock(&lock);
    r = tdm_range_map_find(&map, addr);
    found = r != NULL;
    if (found) {
        *base = r->addr;
        *size = r->size;
    }
    pthread_rwlock_unlock(&lock);
    return found;
}

bool tdm_allocs_is_device(const void *p)
{
    return tdm_allocs_covers((uint64_t)(uintptr_t)p, 0);
}

void tdm_allocs_clear(bool keep_globals)
{
    pthread_rwlock_wrlock(&lock);
    for (size_t i = map.n; i-- > 0;)
        if (!keep_globals || map.v[i].kind == TDM_RANGE_ALLOC)
            tdm_range_map_remove(&map, map.v[i].addr, NULL);
    pthread_rwlock_unlock(&lock);
}

/* ---- ipc (issue 14) ---- */
void tdm_allocs_add_import(uint64_t addr, uint64_t size)
{
    tdm_range r = { .addr = addr, .size = size, .mapped = size, .kind = TDM_RANGE_IMPORT };

    pthread_rwlock_wrlock(&lock);
    tdm_range_map_insert(&map, &r);
    pthread_rwlock_unlock(&lock);
}

void tdm_allocs_remove_import(uint64_t addr)
{
    const tdm_range *r;

    pthread_rwlock_wrlock(&lock);
    r = tdm_range_map_find(&map, addr);
    if (r && r->addr == addr && r->kind == TDM_RANGE_IMPORT)
        tdm_range_map_remove(&map, addr, NULL);
    pthread_rwlock_unlock(&lock);
}
