/* Graph memory of a session: allocation and free nodes, cudaMallocAsync and
 * cudaFreeAsync on a capturing stream, and the device's graph memory
 * attributes (docs/graphs.md, "Graph memory").
 *
 * An allocation node gets its memory when the node is made: an ordinary
 * allocation of the session's arena (tdm_session_malloc: the quota, the
 * range map, the hooks), so its address is fixed for the life of the graph
 * as natively, and copies, memsets and kernels naming it are accepted
 * wherever the program may name it.  In the backend's graph both kinds of
 * node are empty nodes: nothing happens on the device when they run, the
 * memory is simply there.  What the program can see of an allocation's life
 * is kept here: which graph, capture or executable graph has which
 * allocation and free nodes ("uses"), and which allocations a launch left
 * allocated for the program to free ("outstanding").  A block is released
 * once no use names it as an allocation and it is not outstanding.  For
 * the footprint attributes, the launches that may still be running on the
 * device are tracked by an event of the server's on their stream
 * (graph_mem_flight.h). */
#include "session.h"

#include <stdlib.h>
#include <string.h>

#include <driver_types.h>

#include "graph_mem_flight.h"
#include "grow.h"
#include "log.h"

/* Bounds: graph allocations, and uses (nodes, and their copies in
 * executable graphs), per session. */
enum { MAX_BLOCKS = 4096, MAX_USES = 65536 };

typedef struct gmem_block {
    uint64_t addr, size, mapped;
    uint32_t allocs;             /* allocation uses naming it */
    bool outstanding;            /* allocated by a launch, not freed since */
} gmem_block;

typedef struct gmem_use {
    int owner_kind;              /* TDM_GMEM_CAPTURE / _GRAPH / _EXEC */
    uint64_t owner;              /* the capture id, graph or exec handle */
    uint64_t node;               /* the graph's node handle (0 when captured) */
    bool free;
    bool autofree;               /* an exec instantiated with AutoFreeOnLaunch */
    uint64_t addr;
} gmem_use;

typedef struct tdm_session_graph_mem {
    gmem_block *blocks;
    size_t nblocks, cap_blocks;
    gmem_use *uses;
    size_t nuses, cap_uses;
    uint64_t outstanding_bytes;
    uint64_t footprint, footprint_high;
    /* Launches that may still run on the device (graph_mem_flight.h), and
     * each slot's event, made at its first use and recorded again by each
     * launch the slot takes. */
    tdm_gmem_flight flights[TDM_GMEM_FLIGHTS];
    tdm_bevent *flight_ev[TDM_GMEM_FLIGHTS];
} tdm_session_graph_mem;

static tdm_session_graph_mem *state_of(tdm_session *s)
{
    if (!s->graph_mem)
        s->graph_mem = calloc(1, sizeof(*s->graph_mem));
    return s->graph_mem;
}

static gmem_block *block_at(tdm_session_graph_mem *m, uint64_t addr)
{
    for (size_t i = 0; m && i < m->nblocks; i++)
        if (m->blocks[i].addr == addr)
            return &m->blocks[i];
    return NULL;
}

static bool same_owner(const gmem_use *u, int kind, uint64_t owner)
{
    return u->owner_kind == kind && u->owner == owner;
}

/* Allocation uses minus free uses of addr in one owner: > 0 means the
 * owner leaves it allocated. */
static long balance(const tdm_session_graph_mem *m, int kind, uint64_t owner, uint64_t addr)
{
    long n = 0;

    for (size_t i = 0; i < m->nuses; i++)
        if (same_owner(&m->uses[i], kind, owner) && m->uses[i].addr == addr)
            n += m->uses[i].free ? -1 : 1;
    return n;
}

static int add_use(tdm_session *s, tdm_session_graph_mem *m, gmem_use u)
{
    gmem_block *b = block_at(m, u.addr);

    if (m->nuses >= MAX_USES) {
        tdm_log_session(s->id, "graph memory: the session already has %d memory nodes", MAX_USES);
        return cudaErrorMemoryAllocation;
    }
    if (tdm_grow(&m->uses, &m->cap_uses, m->nuses + 1, sizeof(*m->uses), 16) != 0)
        return cudaErrorMemoryAllocation;
    m->uses[m->nuses++] = u;
    if (!u.free && b)
        b->allocs++;
    return 0;
}

/* The block's memory goes back to the arena once queued work that may
 * still touch it is done (the block record is gone already). */
static void release_range(tdm_session *s, uint64_t addr)
{
    tdm_range r;

    tdm_session_quiesce(s);
    if (tdm_range_map_remove(&s->ranges, addr, &r) == 0)
        tdm_session_release_alloc(s, &r);
}

static void drop_block(tdm_session_graph_mem *m, gmem_block *b)
{
    *b = m->blocks[--m->nblocks];
}

/* Releases the block at addr if nothing keeps it. */
static void settle(tdm_session *s, tdm_session_graph_mem *m, uint64_t addr)
{
    gmem_block *b = block_at(m, addr);

    /* Waiting for the session's work would synchronize a capturing
     * stream (and invalidate its capture): a block is released once no
     * capture is open, at the next settle. */
    if (!b || b->allocs || b->outstanding || s->ncaptures)
        return;
    drop_block(m, b);
    release_range(s, addr);
}

/* A new graph allocation of size bytes (the arena's, in the quota). */
static int block_new(tdm_session *s, tdm_session_graph_mem *m, uint64_t size, uint64_t *addr)
{
    const tdm_range *r;
    int err;

    if (m->nblocks >= MAX_BLOCKS) {
        tdm_log_session(s->id, "graph memory: the session already has %d graph allocations", MAX_BLOCKS);
        return cudaErrorMemoryAllocation;
    }
    if (tdm_grow(&m->blocks, &m->cap_blocks, m->nblocks + 1, sizeof(*m->blocks), 16) != 0)
        return cudaErrorMemoryAllocation;
    err = tdm_session_malloc(s, size, addr);
    if (err)
        return err;
    r = tdm_range_map_find(&s->ranges, *addr);
    m->blocks[m->nblocks++] = (gmem_block){ .addr = *addr, .size = size, .mapped = r->mapped };
    return 0;
}

/* An allocation the graph freed before the new node (one of its direct
 * dependencies frees it, and nothing allocated it again since): the node
 * takes its address, as the driver reuses a virtual address along a path. */
static uint64_t reusable(tdm_session_graph_mem *m, uint64_t graph, const uint64_t *deps, uint32_t ndeps,
                         uint64_t size)
{
    for (size_t i = 0; i < m->nuses; i++) {
        const gmem_use *u = &m->uses[i];
        gmem_block *b;

        if (!u->free || !same_owner(u, TDM_GMEM_GRAPH, graph) || !(b = block_at(m, u->addr)) || b->size < size)
            continue;
        for (uint32_t d = 0; d < ndeps; d++)
            if (deps[d] == u->node && balance(m, TDM_GMEM_GRAPH, graph, u->addr) <= 0)
                return u->addr;
    }
    return 0;
}

int tdm_session_graph_add_mem_node(tdm_session *s, uint64_t graph, const uint64_t *deps, uint32_t ndeps, bool free,
                                   uint64_t size, uint64_t *addr, uint64_t *node)
{
    tdm_session_graph_mem *m = state_of(s);
    tdm_node_request q = { .type = free ? cudaGraphNodeTypeMemFree : cudaGraphNodeTypeMemAlloc, .internal = true };
    bool made = false;
    int err;

    *node = 0;
    if (!m)
        return cudaErrorMemoryAllocation;
    if (!tdm_session_graph_exists(s, graph))
        return cudaErrorInvalidValue;
    /* ---- conditional graph nodes (issue 14): a body holds no memory nodes, as the driver says ---- */
    if (tdm_session_graph_depth(s, graph) > 0) {
        tdm_log_session(s->id, "a memory node in a conditional body");
        return cudaErrorNotSupported;
    }
    if (free) {
        if (!block_at(m, *addr)) {
            tdm_log_session(s->id, "graph free node: %#llx is not the start of a graph allocation",
                            (unsigned long long)*addr);
            return cudaErrorInvalidValue;
        }
    } else {
        if (size == 0)
            return cudaErrorInvalidValue;
        *addr = reusable(m, graph, deps, ndeps, size);
        if (!*addr) {
            err = block_new(s, m, size, addr);
            if (err)
                return err;
            made = true;
        }
    }
    err = tdm_session_graph_add_node(s, graph, deps, ndeps, &q, node);
    if (!err)
        err = add_use(s, m, (gmem_use){ .owner_kind = TDM_GMEM_GRAPH, .owner = graph, .node = *node, .free = free,
                                        .addr = *addr });
    if (err && made)
        settle(s, m, *addr);
    if (err && !free)
        *addr = 0;
    return err;
}

int tdm_session_graph_mem_node_params(tdm_session *s, uint64_t node, bool *free, uint64_t *addr, uint64_t *size)
{
    tdm_session_graph_mem *m = s->graph_mem;

    for (size_t i = 0; node && m && i < m->nuses; i++) {
        const gmem_use *u = &m->uses[i];
        if (u->owner_kind == TDM_GMEM_GRAPH && u->node == node) {
            gmem_block *b = block_at(m, u->addr);
            *free = u->free;
            *addr = u->addr;
            *size = b ? b->size : 0;
            return 0;
        }
    }
    return cudaErrorInvalidValue;
}

bool tdm_session_graph_mem_capture_alloc(tdm_session *s, uint64_t stream, uint64_t size, uint64_t *addr, int *err)
{
    uint64_t id = tdm_session_capture_id(s, stream);
    tdm_session_graph_mem *m;

    if (!id)
        return false;
    *addr = 0;
    if (!(m = state_of(s))) {
        *err = cudaErrorMemoryAllocation;
        return true;
    }
    if (size == 0) {
        *err = 0;                       /* a null pointer, as cudaMallocAsync */
        return true;
    }
    *err = block_new(s, m, size, addr);   /* relaxed: tdm_session_malloc says why */
    if (*err)
        return true;
    *err = add_use(s, m, (gmem_use){ .owner_kind = TDM_GMEM_CAPTURE, .owner = id, .addr = *addr });
    if (*err) {
        settle(s, m, *addr);
        *addr = 0;
    }
    return true;
}

bool tdm_session_graph_mem_capture_free(tdm_session *s, uint64_t stream, uint64_t addr, int *err)
{
    uint64_t id = tdm_session_capture_id(s, stream);
    tdm_session_graph_mem *m = s->graph_mem;

    if (!id)
        return false;
    /* A graph frees only what graphs allocate (ordinary allocations are
     * refused, as natively). */
    if (!block_at(m, addr)) {
        tdm_log_session(s->id, "captured cudaFreeAsync(%#llx): not a graph allocation", (unsigned long long)addr);
        *err = cudaErrorInvalidValue;
        return true;
    }
    *err = add_use(s, m, (gmem_use){ .owner_kind = TDM_GMEM_CAPTURE, .owner = id, .free = true, .addr = addr });
    return true;
}

bool tdm_session_graph_mem_user_free(tdm_session *s, uint64_t addr, bool sync, int *err)
{
    tdm_session_graph_mem *m = s->graph_mem;
    gmem_block *b = block_at(m, addr);

    if (!b)
        return false;
    /* Only what a launch left allocated is the program's to free. */
    if (!b->outstanding) {
        *err = cudaErrorInvalidValue;
        return true;
    }
    *err = sync ? tdm_session_device_synchronize(s) : 0;
    b->outstanding = false;
    m->outstanding_bytes -= b->mapped;
    if (b->allocs)
        return true;                    /* a graph still has it: kept for its next launch */
    drop_block(m, b);                   /* no graph left: an ordinary free from here */
    return false;
}

void tdm_session_graph_mem_moved(tdm_session *s, uint64_t capture, uint64_t graph)
{
    tdm_session_graph_mem *m = s->graph_mem;
    size_t kept = 0;

    for (size_t i = 0; m && i < m->nuses; i++) {
        gmem_use *u = &m->uses[i];
        if (!same_owner(u, TDM_GMEM_CAPTURE, capture)) {
            m->uses[kept++] = *u;
        } else if (graph) {
            u->owner_kind = TDM_GMEM_GRAPH;
            u->owner = graph;
            m->uses[kept++] = *u;
        } else if (!u->free) {
            gmem_block *b = block_at(m, u->addr);
            if (b)
                b->allocs--;
        }
    }
    if (!m)
        return;
    m->nuses = kept;
    if (!graph)
        for (size_t i = m->nblocks; i-- > 0;)
            settle(s, m, m->blocks[i].addr);
}

void tdm_session_graph_mem_dropped(tdm_session *s, int kind, uint64_t owner)
{
    tdm_session_graph_mem *m = s->graph_mem;
    size_t kept = 0;
    bool any = false;

    for (size_t i = 0; m && i < m->nuses; i++) {
        gmem_use *u = &m->uses[i];
        if (!same_owner(u, kind, owner)) {
            m->uses[kept++] = *u;
            continue;
        }
        if (!u->free) {
            gmem_block *b = block_at(m, u->addr);
            if (b)
                b->allocs--;
        }
        any = true;
    }
    if (!any)
        return;
    m->nuses = kept;
    for (size_t i = m->nblocks; i-- > 0;)
        settle(s, m, m->blocks[i].addr);
}

int tdm_session_graph_mem_instantiated(tdm_session *s, uint64_t graph, uint64_t exec, uint64_t flags)
{
    tdm_session_graph_mem *m = s->graph_mem;
    size_t n = m ? m->nuses : 0;
    int err = 0;

    for (size_t i = 0; i < n && !err; i++) {
        gmem_use u = m->uses[i];
        if (!same_owner(&u, TDM_GMEM_GRAPH, graph))
            continue;
        u.owner_kind = TDM_GMEM_EXEC;
        u.owner = exec;
        u.autofree = (flags & cudaGraphInstantiateFlagAutoFreeOnLaunch) != 0;
        err = add_use(s, m, u);
    }
    if (err)
        tdm_session_graph_mem_dropped(s, TDM_GMEM_EXEC, exec);
    return err;
}

/* How many allocation and free uses of addr the exec has. */
static void uses_of(const tdm_session_graph_mem *m, uint64_t exec, uint64_t addr, long *nalloc, long *nfree)
{
    *nalloc = *nfree = 0;
    for (size_t i = 0; i < m->nuses; i++)
        if (same_owner(&m->uses[i], TDM_GMEM_EXEC, exec) && m->uses[i].addr == addr)
            ++*(m->uses[i].free ? nfree : nalloc);
}

/* The first use of its address among the exec's (each address once). */
static bool first_of(const tdm_session_graph_mem *m, size_t i)
{
    for (size_t j = 0; j < i; j++)
        if (same_owner(&m->uses[j], m->uses[i].owner_kind, m->uses[i].owner) && m->uses[j].addr == m->uses[i].addr)
            return false;
    return true;
}

/* What a committed launch needs of graph memory. */
typedef struct launch_need {
    uint64_t peak;       /* everything outstanding before it, and each of its allocations */
    uint64_t holds;      /* what it holds while it runs and gives back by its end */
    bool allocates;
} launch_need;

/* Checks (commit false) or accounts for (commit true) a launch of exec, in
 * launch order: what it allocates must not be outstanding (unless it was
 * instantiated to free it on launch), what it frees of other graphs' must
 * be.  Committed, *l is what the launch needs. */
static int launch_pass(tdm_session *s, tdm_session_graph_mem *m, uint64_t exec, bool commit, launch_need *l)
{
    l->peak = m->outstanding_bytes;
    for (size_t i = 0; i < m->nuses; i++) {
        const gmem_use *u = &m->uses[i];
        gmem_block *b;
        long nalloc, nfree;
        bool was;

        if (!same_owner(u, TDM_GMEM_EXEC, exec) || !first_of(m, i))
            continue;
        if (!(b = block_at(m, u->addr)))
            return cudaErrorInvalidValue;       /* freed elsewhere since the node was made */
        uses_of(m, exec, u->addr, &nalloc, &nfree);
        if (!commit) {
            if (nalloc && b->outstanding && !u->autofree) {
                tdm_log_session(s->id, "graph launch: its allocation %#llx is still allocated from an earlier "
                                "launch (free it, or instantiate with cudaGraphInstantiateFlagAutoFreeOnLaunch)",
                                (unsigned long long)u->addr);
                return cudaErrorInvalidValue;
            }
            if (!nalloc && !b->outstanding) {
                tdm_log_session(s->id, "graph launch: it frees %#llx, which is not allocated",
                                (unsigned long long)u->addr);
                return cudaErrorInvalidValue;
            }
            continue;
        }
        was = b->outstanding;
        if (b->outstanding) {           /* freed on launch, or by this graph's free node */
            b->outstanding = false;
            m->outstanding_bytes -= b->mapped;
            l->peak -= nalloc ? b->mapped : 0;
        }
        if (nalloc)
            l->peak += b->mapped;
        if (nalloc > nfree) {           /* left to the program: counted as outstanding from here */
            b->outstanding = true;
            m->outstanding_bytes += b->mapped;
        } else if (nalloc || was) {
            l->holds += b->mapped;
        }
        l->allocates |= nalloc > 0;
    }
    return 0;
}

/* Frees the slots of launches the device has finished.  The queries run in
 * relaxed capture mode: they are the server's, not the program's, and a
 * global-mode capture of any session would otherwise forbid them. */
static void flights_prune(tdm_session *s, tdm_session_graph_mem *m)
{
    int saved;
    bool relaxed = tdm_session_capture_relax(s, &saved);

    for (size_t i = 0; i < TDM_GMEM_FLIGHTS; i++)
        /* An error (a lost context) ends the launch as surely as completion. */
        if (m->flights[i].running && s->srv->ops->event_query(s->srv->be, m->flight_ev[i]) != cudaErrorNotReady)
            m->flights[i].running = false;
    if (relaxed)
        tdm_session_capture_restore(s, saved);
}

/* Tracks a launch on bs until the device has finished it.  Not tracking it
 * (no event) only makes later launches' footprints smaller: the launch
 * itself went ahead, so it is no error of the program's. */
static void flight_enter(tdm_session *s, tdm_session_graph_mem *m, uint64_t stream, tdm_bstream *bs, uint64_t exec,
                         uint64_t holds)
{
    const tdm_backend_ops *ops = s->srv->ops;
    int slot = tdm_gmem_flight_enter(m->flights, TDM_GMEM_FLIGHTS, stream, exec, holds);
    int saved, err;
    bool relaxed;

    if (slot < 0)
        return;
    relaxed = tdm_session_capture_relax(s, &saved);
    err = m->flight_ev[slot] ? 0 : ops->event_create(s->srv->be, cudaEventDisableTiming, &m->flight_ev[slot]);
    if (!err)
        err = ops->event_record(s->srv->be, m->flight_ev[slot], bs);
    if (relaxed)
        tdm_session_capture_restore(s, saved);
    if (err) {
        m->flights[slot].running = false;
        tdm_log_session(s->id, "graph launch: its memory is not tracked until it ends (error %d)", err);
    }
}

int tdm_session_graph_mem_check_launch(tdm_session *s, uint64_t exec)
{
    tdm_session_graph_mem *m = s->graph_mem;
    launch_need l = { 0 };

    return m && m->nuses ? launch_pass(s, m, exec, false, &l) : 0;
}

/* The footprint grows to what the launch needs at its peak, beside what
 * launches still running in other streams hold (docs/graphs.md: launches
 * ordered by events count as concurrent). */
int tdm_session_graph_mem_launched(tdm_session *s, uint64_t exec, uint64_t stream)
{
    tdm_session_graph_mem *m = s->graph_mem;
    tdm_stream_state *st = tdm_session_stream_state(s, stream);
    launch_need l = { 0 };
    int err;

    if (!m || !m->nuses)
        return 0;
    err = launch_pass(s, m, exec, true, &l);
    if (!err && st && (l.allocates || l.holds)) {
        /* Every name of the null stream is one stream. */
        uint64_t key = st == &s->null_stream ? TDM_STREAM_NULL : stream;

        flights_prune(s, m);
        if (l.allocates)
            l.peak += tdm_gmem_flight_beside(m->flights, TDM_GMEM_FLIGHTS, key, exec);
        /* Captured, the launch is a node of the capture: nothing runs yet. */
        if (l.holds && !tdm_session_capturing(s, st))
            flight_enter(s, m, key, st->bs, exec, l.holds);
    }
    if (!err && l.peak > m->footprint)
        m->footprint = l.peak;
    if (m->footprint > m->footprint_high)
        m->footprint_high = m->footprint;
    /* What it freed of graphs that are gone. */
    for (size_t i = m->nblocks; i-- > 0;)
        settle(s, m, m->blocks[i].addr);
    return err;
}

int tdm_session_graph_mem_trim(tdm_session *s)
{
    tdm_session_graph_mem *m = s->graph_mem;

    /* What neither an outstanding allocation nor a launch still running
     * holds goes back to the device. */
    if (!m)
        return 0;
    flights_prune(s, m);
    m->footprint = m->outstanding_bytes + tdm_gmem_flight_beside(m->flights, TDM_GMEM_FLIGHTS, TDM_GMEM_NO_STREAM, 0);
    return 0;
}

int tdm_session_graph_mem_get_attr(tdm_session *s, int attr, uint64_t *value)
{
    tdm_session_graph_mem *m = s->graph_mem;

    *value = 0;
    switch (attr) {
    case cudaGraphMemAttrUsedMemCurrent:
    case cudaGraphMemAttrReservedMemCurrent:
        *value = m ? m->footprint : 0;
        return 0;
    case cudaGraphMemAttrUsedMemHigh:
    case cudaGraphMemAttrReservedMemHigh:
        *value = m ? m->footprint_high : 0;
        return 0;
    default:
        return cudaErrorInvalidValue;
    }
}

int tdm_session_graph_mem_set_attr(tdm_session *s, int attr, uint64_t value)
{
    tdm_session_graph_mem *m = s->graph_mem;

    /* Only the high-water marks can be set, and only reset (to 0, which
     * makes them the current value), as natively. */
    if ((attr != cudaGraphMemAttrUsedMemHigh && attr != cudaGraphMemAttrReservedMemHigh) || value != 0)
        return cudaErrorInvalidValue;
    if (m)
        m->footprint_high = m->footprint;
    return 0;
}

void tdm_session_graph_mem_release(tdm_session *s)
{
    tdm_session_graph_mem *m = s->graph_mem;

    /* The blocks are ranges of the session: released with its range map. */
    if (!m)
        return;
    /* A launch still queued keeps its event's record alive (as natively). */
    for (size_t i = 0; i < TDM_GMEM_FLIGHTS; i++)
        if (m->flight_ev[i])
            s->srv->ops->event_destroy(s->srv->be, m->flight_ev[i]);
    free(m->blocks);
    free(m->uses);
    free(m);
    s->graph_mem = NULL;
}

/* ---- event nodes, child graphs, user objects (issue 14) ---- */
bool tdm_session_graph_mem_has_nodes(tdm_session *s, uint64_t graph)
{
    for (size_t i = 0; s->graph_mem && i < s->graph_mem->nuses; i++)
        if (same_owner(&s->graph_mem->uses[i], TDM_GMEM_GRAPH, graph))
            return true;
    return false;
}
