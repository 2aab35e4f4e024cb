#include "session.h"

#include <stdlib.h>
#include <string.h>

#include <driver_types.h>

#include "device_output.h"
#include "health.h"
#include "log.h"
#include "tandem_rpc.h"

enum { TAG_STREAM = 0x53, TAG_EVENT = 0x45, TAG_MODULE = 0x4d, TAG_FUNC = 0x46 };

/* Tells the server's hooks (session_hooks.h), when it has them. */
#define HOOK(s, name, ...)                                                                                  \
    do {                                                                                                    \
        const tdm_session_hooks *hk_ = (s)->srv->hooks;                                                    \
        if (hk_ && hk_->name)                                                                              \
            hk_->name((s)->srv->hooks_ctx, (s), __VA_ARGS__);                                              \
    } while (0)
#define HOOK0(s, name)                                                                                      \
    do {                                                                                                    \
        const tdm_session_hooks *hk_ = (s)->srv->hooks;                                                    \
        if (hk_ && hk_->name)                                                                              \
            hk_->name((s)->srv->hooks_ctx, (s));                                                           \
    } while (0)

/* A hook that may refuse: its cudaError_t, 0 with no hook. */
#define HOOK_ERR(s, name, ...)                                                                              \
    ((s)->srv->hooks && (s)->srv->hooks->name ? (s)->srv->hooks->name((s)->srv->hooks_ctx, (s), __VA_ARGS__) : 0)

static void check_fatal(tdm_session *s, int err)
{
    if (tdm_health_classify(err) != TDM_ERR_CONTEXT_FATAL)
        return;
    HOOK(s, context_lost, err);       /* a standby takes the sessions: does not return */
    tdm_session_health_lost(s, err);
}

void tdm_session_defer(tdm_session *s, int err)
{
    check_fatal(s, err);
    if (err && !s->deferred_err)
        s->deferred_err = err;
}

int tdm_session_sync_result(tdm_session *s, int err)
{
    check_fatal(s, err);
    /* A session of a lost context gets its error whatever this call did
     * (natively every call of a lost context fails). */
    if (!err)
        err = tdm_session_health_err(s);
    if (err) {
        if (tdm_health_is_sticky(err))
            s->deferred_err = err;
        return err;
    }
    err = s->deferred_err;
    if (!tdm_health_is_sticky(err))
        s->deferred_err = 0;
    return err;
}

static const tdm_backend_ops *ops(tdm_session *s)
{
    return s->srv->ops;
}

static tdm_backend *be(tdm_session *s)
{
    return s->srv->be;
}

int tdm_session_create(tdm_server *srv, tdm_session **out)
{
    tdm_session *s = calloc(1, sizeof(*s));
    int err;

    if (!s)
        return cudaErrorMemoryAllocation;
    s->srv = srv;
    s->id = atomic_fetch_add(&srv->next_session_id, 1);
    s->bounds = (tdm_session_bounds){ .mem_quota = srv->cfg.session_mem_quota,
                                      .streams = srv->cfg.session_streams,
                                      .events = srv->cfg.session_events,
                                      .modules = srv->cfg.session_modules,
                                      .host_memory = srv->cfg.session_host_memory,
                                      .idle_timeout_s = srv->cfg.idle_timeout_s };
    s->wire = (tdm_wire_timeouts){ .frame_s = srv->cfg.frame_timeout_s, .idle_s = srv->cfg.idle_timeout_s };
    s->peer_uid = -1;
    err = tdm_session_health_admit(s);
    if (err) {
        free(s);
        return err;
    }
    tdm_range_map_init(&s->ranges);
    tdm_handles_init(&s->streams, TAG_STREAM);
    tdm_handles_init(&s->events, TAG_EVENT);
    tdm_handles_init(&s->modules, TAG_MODULE);
    tdm_handles_init(&s->funcs, TAG_FUNC);
    tdm_session_graphs_init(s);
    err = srv->ops->space_create ? srv->ops->space_create(srv->be, &s->space) : 0;
    if (err)
        goto fail;
    /* The session's null stream is a stream of its own, not the device's
     * legacy stream, so sessions never wait for each other's work. */
    err = tdm_session_share_init(s);   /* ---- SM shares (issue 17) ---- */
    if (!err)
        err = tdm_session_share_stream_create(s, 0, 0, &s->null_stream.bs);
    if (!err)
        err = srv->ops->event_create(srv->be, cudaEventDisableTiming, &s->null_stream.order_ev);
    if (err) {
        if (s->null_stream.bs)
            srv->ops->stream_destroy(srv->be, s->null_stream.bs);
        goto fail;
    }
    s->null_stream.blocking = true;
    if (tdm_device_output_create(s->id, TDM_OUTPUT_MAX, TDM_OUTPUT_MAX_CHUNKS, &s->output) != 0) {
        srv->ops->event_destroy(srv->be, s->null_stream.order_ev);
        srv->ops->stream_destroy(srv->be, s->null_stream.bs);
        err = cudaErrorMemoryAllocation;
        goto fail;
    }
    err = srv->hooks && srv->hooks->opened ? srv->hooks->opened(srv->hooks_ctx, s) : 0;
    if (err) {
        tdm_device_output_destroy(s->output);
        srv->ops->event_destroy(srv->be, s->null_stream.order_ev);
        srv->ops->stream_destroy(srv->be, s->null_stream.bs);
        goto fail;
    }
    atomic_fetch_add(&srv->live_sessions, 1);
    tdm_session_stats_join(s);   /* ---- control plane (issue 17) ---- */
    *out = s;
    return 0;
fail:
    tdm_session_share_release(s);   /* ---- SM shares (issue 17) ---- */
    if (s->space)
        srv->ops->space_destroy(srv->be, s->space);
    tdm_session_health_ended(s);
    free(s);
    return err;
}

/* A new handle: the one the hooks want (a standby reproducing its
 * active's handles), else the table's own choice.  0 when it cannot. */
static uint64_t add_handle(tdm_session *s, tdm_handle_table *t, void *obj)
{
    const tdm_session_hooks *hk = s->srv->hooks;
    uint64_t id;

    if (!hk || !hk->handle_wanted || !hk->handle_wanted(s->srv->hooks_ctx, s, &id))
        return tdm_handles_add(t, obj);
    return tdm_handles_add_at(t, id, obj) == 0 ? id : 0;
}

/* ---- streams and legacy ordering ---- */

tdm_stream_state *tdm_session_stream_state(tdm_session *s, uint64_t handle)
{
    if (handle == TDM_STREAM_NULL || handle == TDM_STREAM_LEGACY || handle == TDM_STREAM_PER_THREAD)
        return &s->null_stream;
    return tdm_handles_get(&s->streams, handle);
}

typedef struct order_ctx {
    tdm_session *s;
    int err;
} order_ctx;

static void null_waits_for(void *obj, uint64_t id, void *arg)
{
    tdm_stream_state *u = obj;
    order_ctx *oc = arg;
    tdm_session *s = oc->s;

    if (oc->err || !u->blocking || u->epoch == u->epoch_seen_by_null)
        return;
    if (tdm_session_capturing(s, u)) {
        /* As native: the legacy stream would wait for work being captured. */
        oc->err = cudaErrorStreamCaptureImplicit;
        return;
    }
    oc->err = ops(s)->event_record(be(s), u->order_ev, u->bs);
    if (!oc->err)
        oc->err = ops(s)->stream_wait_event(be(s), s->null_stream.bs, u->order_ev);
    u->epoch_seen_by_null = u->epoch;
}

/* Legacy default-stream semantics, emulated per session: work on the null
 * stream waits for prior work on every blocking stream, and work on a blocking
 * stream waits for prior work on the null stream.  Costs nothing while a
 * program uses one stream. */
static int order_before(tdm_session *s, tdm_stream_state *st)
{
    int err = 0;

    if (tdm_session_capturing(s, st)) {
        /* Captured work is ordered by the capture's own edges; an internal
         * event here would be captured too (docs/graphs.md). */
        st->epoch++;
        return 0;
    }
    if (st == &s->null_stream) {
        order_ctx oc = { s, 0 };
        tdm_handles_each(&s->streams, null_waits_for, &oc);
        err = oc.err;
    } else if (st->blocking && s->null_stream.epoch != st->null_epoch_seen &&
               !tdm_session_capturing(s, &s->null_stream)) {
        err = ops(s)->event_record(be(s), s->null_stream.order_ev, s->null_stream.bs);
        if (!err)
            err = ops(s)->stream_wait_event(be(s), st->bs, s->null_stream.order_ev);
        st->null_epoch_seen = s->null_stream.epoch;
    }
    st->epoch++;
    return err;
}

/* Resolves a stream handle and orders it; NULL with *err set if unknown. */
tdm_stream_state *tdm_session_stream_for_work(tdm_session *s, uint64_t handle, int *err)
{
    tdm_session_share_apply(s);      /* ---- SM shares (issue 17): a share asked for since ---- */
    tdm_stream_state *st = tdm_session_stream_state(s, handle);

    if (!st) {
        *err = cudaErrorInvalidResourceHandle;
        return NULL;
    }
    *err = order_before(s, st);
    return *err ? NULL : st;
}

int tdm_session_stream_create(tdm_session *s, unsigned flags, int priority, uint64_t *out)
{
    tdm_stream_state *st;
    int err;

    if (flags & ~(unsigned)cudaStreamNonBlocking)
        return cudaErrorInvalidValue;
    /* ---- per-session bounds (issue 16): a stream is a server thread ---- */
    if (s->bounds.streams && s->streams.live >= s->bounds.streams)
        return tdm_session_refuse_at_bound(s, "cudaStreamCreate", s->streams.live, "streams", "streams");
    st = calloc(1, sizeof(*st));
    if (!st)
        return cudaErrorMemoryAllocation;
    err = tdm_session_share_stream_create(s, flags, priority, &st->bs);   /* ---- SM shares (issue 17) ---- */
    if (err)
        goto fail;
    err = ops(s)->event_create(be(s), cudaEventDisableTiming, &st->order_ev);
    if (err)
        goto fail_stream;
    st->blocking = !(flags & cudaStreamNonBlocking);
    st->flags = flags;
    st->priority = priority;
    /* A new blocking stream still follows earlier null-stream work. */
    st->null_epoch_seen = 0;
    *out = add_handle(s, &s->streams, st);
    if (*out) {
        HOOK(s, stream_made, *out, flags, priority);
        return 0;
    }
    err = cudaErrorMemoryAllocation;
    ops(s)->event_destroy(be(s), st->order_ev);
fail_stream:
    ops(s)->stream_destroy(be(s), st->bs);
fail:
    free(st);
    return err;
}

static void stream_free(tdm_session *s, tdm_stream_state *st)
{
    ops(s)->stream_destroy(be(s), st->bs);
    ops(s)->event_destroy(be(s), st->order_ev);
    free(st);
}

int tdm_session_stream_destroy(tdm_session *s, uint64_t stream)
{
    tdm_stream_state *st = tdm_handles_remove(&s->streams, stream);

    if (!st)
        return cudaErrorInvalidResourceHandle;
    /* CUDA lets queued work finish after destroy; the backend's destroy
     * drains the stream first. */
    stream_free(s, st);
    HOOK(s, stream_freed, stream);
    return 0;
}

int tdm_session_stream_synchronize(tdm_session *s, uint64_t stream)
{
    tdm_stream_state *st = tdm_session_stream_state(s, stream);

    if (!st)
        return cudaErrorInvalidResourceHandle;
    return tdm_session_sync_result(s, ops(s)->stream_synchronize(be(s), st->bs));
}

int tdm_session_stream_query(tdm_session *s, uint64_t stream)
{
    tdm_stream_state *st = tdm_session_stream_state(s, stream);
    int err;

    if (!st)
        return cudaErrorInvalidResourceHandle;
    err = ops(s)->stream_query(be(s), st->bs);
    return err == cudaErrorNotReady ? err : tdm_session_sync_result(s, err);
}

int tdm_session_stream_get_flags(tdm_session *s, uint64_t stream, unsigned *flags)
{
    tdm_stream_state *st = tdm_session_stream_state(s, stream);

    if (!st)
        return cudaErrorInvalidResourceHandle;
    *flags = st->flags;
    return 0;
}

static tdm_bevent *event_of(tdm_session *s, uint64_t event)
{
    tdm_event_entry *e = tdm_handles_get(&s->events, event);

    return e ? e->ev : NULL;
}

int tdm_session_stream_wait_event(tdm_session *s, uint64_t stream, uint64_t event)
{
    tdm_bevent *ev = event_of(s, event);
    tdm_stream_state *st;
    int err;

    if (!ev)
        return cudaErrorInvalidResourceHandle;
    st = tdm_session_stream_for_work(s, stream, &err);
    if (!st)
        return err;
    return ops(s)->stream_wait_event(be(s), st->bs, ev);
}

/* ---- events ---- */

int tdm_session_event_create(tdm_session *s, unsigned flags, uint64_t *out)
{
    tdm_event_entry *e;
    int err;

    if (flags & ~(unsigned)(cudaEventBlockingSync | cudaEventDisableTiming | cudaEventInterprocess))
        return cudaErrorInvalidValue;
    /* ---- ipc (issue 14): an interprocess event cannot time, as natively ---- */
    if ((flags & cudaEventInterprocess) && !(flags & cudaEventDisableTiming))
        return cudaErrorInvalidValue;
    /* ---- per-session bounds (issue 16) ---- */
    if (s->bounds.events && s->events.live >= s->bounds.events)
        return tdm_session_refuse_at_bound(s, "cudaEventCreate", s->events.live, "events", "events");
    e = calloc(1, sizeof(*e));
    if (!e)
        return cudaErrorMemoryAllocation;
    e->flags = flags;
    err = ops(s)->event_create(be(s), flags, &e->ev);
    if (err) {
        free(e);
        return err;
    }
    *out = add_handle(s, &s->events, e);
    if (*out) {
        HOOK(s, event_made, *out, flags);
        return 0;
    }
    ops(s)->event_destroy(be(s), e->ev);
    free(e);
    return cudaErrorMemoryAllocation;
}

/* ---- ipc (issue 14): an exported or opened event is shared ---- */
static int event_release(tdm_session *s, tdm_event_entry *e)
{
    return e->ipc ? tdm_session_ipc_event_put(s, e) : ops(s)->event_destroy(be(s), e->ev);
}

int tdm_session_event_destroy(tdm_session *s, uint64_t event)
{
    tdm_event_entry *e = tdm_handles_remove(&s->events, event);
    int err;

    if (!e)
        return cudaErrorInvalidResourceHandle;
    HOOK(s, event_freed, event);
    err = event_release(s, e);
    free(e);
    return err;
}

int tdm_session_event_record(tdm_session *s, uint64_t event, uint64_t stream)
{
    tdm_bevent *ev = event_of(s, event);
    tdm_stream_state *st;
    int err;

    if (!ev)
        return cudaErrorInvalidResourceHandle;
    st = tdm_session_stream_for_work(s, stream, &err);
    if (!st)
        return err;
    return ops(s)->event_record(be(s), ev, st->bs);
}

int tdm_session_event_synchronize(tdm_session *s, uint64_t event)
{
    tdm_bevent *ev = event_of(s, event);

    if (!ev)
        return cudaErrorInvalidResourceHandle;
    return tdm_session_sync_result(s, ops(s)->event_synchronize(be(s), ev));
}

int tdm_session_event_query(tdm_session *s, uint64_t event)
{
    tdm_bevent *ev = event_of(s, event);
    int err;

    if (!ev)
        return cudaErrorInvalidResourceHandle;
    err = ops(s)->event_query(be(s), ev);
    return err == cudaErrorNotReady ? err : tdm_session_sync_result(s, err);
}

int tdm_session_event_elapsed(tdm_session *s, uint64_t start, uint64_t end, float *ms)
{
    tdm_bevent *a = event_of(s, start), *b = event_of(s, end);

    if (!a || !b)
        return cudaErrorInvalidResourceHandle;
    return ops(s)->event_elapsed_ms(be(s), a, b, ms);
}

/* ---- memory ---- */

bool tdm_session_capture_relax(tdm_session *s, int *saved)
{
    *saved = cudaStreamCaptureModeRelaxed;
    return ops(s)->capture_mode_exchange && ops(s)->capture_mode_exchange(be(s), saved) == 0;
}

void tdm_session_capture_restore(tdm_session *s, int saved)
{
    ops(s)->capture_mode_exchange(be(s), &saved);
}

/* The backend maps and zero-fills new memory (the fill waits on a stream) in relaxed mode: it
 * is the server's work, not the program's call, and PyTorch's caching allocator allocates
 * while it captures a CUDA graph (after switching its own thread to relaxed mode, which the
 * guest keeps to itself). */
static int mem_map_relaxed(tdm_session *s, uint64_t addr, uint64_t size, tdm_bmem **mem)
{
    int saved, err;
    bool relaxed = tdm_session_capture_relax(s, &saved);

    err = ops(s)->mem_map(be(s), addr, size, mem);
    if (relaxed)
        tdm_session_capture_restore(s, saved);
    return err;
}

int tdm_session_malloc(tdm_session *s, uint64_t size, uint64_t *addr)
{
    uint64_t quota = s->bounds.mem_quota, rounded = 0;
    tdm_range r = { 0 };
    tdm_bmem *mem = NULL;
    int err;

    *addr = 0;
    if (size == 0)
        return 0;                          /* CUDA returns a null pointer for size 0 */
    if (tdm_arena_alloc(s->srv->arena, size, addr, &rounded) != 0) {
        *addr = 0;
        return cudaErrorMemoryAllocation;
    }
    /* ---- ipc (issue 14): what it freed and importers keep counts too ---- */
    uint64_t used = s->mem_used + tdm_session_ipc_kept(s);
    if (quota && (rounded > quota || used > quota - rounded)) {
        if (s->bounds.mem_quota_placed)
            tdm_log_session(s->id, "cudaMalloc(%llu) exceeds its quota of %llu bytes (the memory of placement %s: "
                            "APP_GPU_MEMORY); it holds %llu", (unsigned long long)size, (unsigned long long)quota,
                            s->placement, (unsigned long long)used);
        else
            tdm_log_session(s->id, "cudaMalloc(%llu) exceeds its quota of %llu bytes (%s%s)", (unsigned long long)size,
                            (unsigned long long)quota, s->tenant_name ? "session_quota of tenant " : "--session-quota",
                            s->tenant_name ? s->tenant_name : "");
        err = cudaErrorMemoryAllocation;
        goto fail_arena;
    }
    /* ---- tenants (issue 16): its tenant's sessions' memory added up ---- */
    err = tdm_session_mem_take(s, rounded, "cudaMalloc");
    if (err)
        goto fail_arena;
    err = mem_map_relaxed(s, *addr, rounded, &mem);
    if (err)
        goto fail_taken;
    r.addr = *addr;
    r.size = size;
    r.mapped = rounded;
    r.kind = TDM_RANGE_ALLOC;
    r.backing = mem;
    if (tdm_session_ranges_add(s, &r) != 0) {
        err = cudaErrorMemoryAllocation;
        goto fail_map;
    }
    HOOK(s, memory_made, &r, mem);
    return 0;
fail_map:
    ops(s)->mem_unmap(be(s), *addr, rounded, mem);
fail_taken:
    tdm_session_mem_give(s, rounded);
fail_arena:
    tdm_arena_free(s->srv->arena, *addr, rounded);
    *addr = 0;
    return err;
}

static int release_alloc(tdm_session *s, tdm_range *r)
{
    HOOK(s, range_freed, r);
    if (tdm_session_ipc_keeps(s, r))  /* ---- ipc (issue 14): other sessions have it open ---- */
        return 0;
    int err = ops(s)->mem_unmap(be(s), r->addr, r->mapped, r->backing);

    tdm_arena_free(s->srv->arena, r->addr, r->mapped);
    tdm_session_mem_give(s, r->mapped);
    return err;
}

int tdm_session_free(tdm_session *s, uint64_t addr)
{
    const tdm_range *found;
    tdm_range r;
    int err;

    if (addr == 0)
        return 0;
    if (tdm_session_graph_mem_user_free(s, addr, true, &err))   /* ---- graph memory nodes (issue 14) ---- */
        return err;
    found = tdm_range_map_find(&s->ranges, addr);
    if (!found || found->addr != addr || found->kind != TDM_RANGE_ALLOC)
        return cudaErrorInvalidValue;
    /* cudaFree waits for work that may still use the memory. */
    err = tdm_session_device_synchronize(s);
    tdm_range_map_remove(&s->ranges, addr, &r);
    tdm_session_revoke(s, addr);   /* importers that keep it open keep their grant */
    tdm_session_memory_forget(s, addr);
    int uerr = release_alloc(s, &r);
    return err ? err : uerr;
}

int tdm_session_adopt_mem(tdm_session *s, uint64_t addr, uint64_t mapped, uint64_t size, tdm_bmem *mem)
{
    tdm_range r = { .addr = addr, .size = size, .mapped = mapped, .kind = TDM_RANGE_ALLOC, .backing = mem };

    if (size == 0 || size > mapped || tdm_session_ranges_add(s, &r) != 0)
        return cudaErrorInvalidValue;
    tdm_session_mem_take(s, mapped, NULL);   /* held already: counted whatever the bound */
    return 0;
}

int tdm_session_ranges_add(tdm_session *s, const tdm_range *r)
{
    if (tdm_range_map_insert(&s->ranges, r) != 0)
        return -1;
    if (tdm_session_grant(s, tdm_session_range_dev(r)) != 0) {
        tdm_range_map_remove(&s->ranges, r->addr, NULL);
        return -1;
    }
    return 0;
}

int tdm_session_grant(tdm_session *s, uint64_t dev)
{
    return s->space ? ops(s)->space_grant(be(s), s->space, dev) : 0;
}

void tdm_session_revoke(tdm_session *s, uint64_t dev)
{
    if (s->space)
        ops(s)->space_revoke(be(s), s->space, dev);
}

int tdm_session_mem_get_info(tdm_session *s, uint64_t *free_bytes, uint64_t *total)
{
    uint64_t quota = s->bounds.mem_quota;
    int err = ops(s)->mem_get_info(be(s), free_bytes, total);

    if (err || !quota)
        return err;
    /* A session sees its quota as its device. */
    uint64_t left = quota - s->mem_used;
    *total = quota < *total ? quota : *total;
    *free_bytes = left < *free_bytes ? left : *free_bytes;
    return 0;
}

uint64_t tdm_session_range_dev(const tdm_range *r)
{
    return r->kind == TDM_RANGE_GLOBAL ? ((const tdm_var_entry *)r->backing)->dev : r->addr;
}

/* The range holding all of [addr, addr+n) and the device address of addr
 * (addr itself except in a variable a standby reloaded); NULL if none. */
const tdm_range *tdm_session_resolve(tdm_session *s, uint64_t addr, uint64_t n, uint64_t *dev)
{
    const tdm_range *r = tdm_range_map_find(&s->ranges, addr);

    if (!r || n > r->size - (addr - r->addr))
        return NULL;
    *dev = tdm_session_range_dev(r) + (addr - r->addr);
    return r;
}

static void log_bad_range(tdm_session *s, const char *what, uint64_t addr, uint64_t n)
{
    tdm_log_session(s->id, "%s [%#llx, +%llu) is outside the session's allocations", what,
                    (unsigned long long)addr, (unsigned long long)n);
}

/* Before work on st that may write r. */
static int before_write(tdm_session *s, const tdm_range *r, tdm_stream_state *st)
{
    /* A shadow copy queued on a capturing stream would become part of the
     * graph (and the session is unprotected once it captures anyway). */
    if (tdm_session_capturing(s, st))
        return 0;
    return HOOK_ERR(s, before_write, r, st->bs);
}

/* done, when given, is recorded on the stream after the copy: the caller
 * learns from it when src may be written again. */
static int htod(tdm_session *s, uint64_t dst, const void *src, uint64_t n, uint64_t stream, bool wait,
                tdm_bevent *done, bool pinned)
{
    tdm_stream_state *st;
    const tdm_range *r;
    uint64_t dev;
    int err;

    if (n == 0)
        return 0;
    if (!(r = tdm_session_resolve(s, dst, n, &dev))) {
        log_bad_range(s, "memcpy destination", dst, n);
        return cudaErrorInvalidValue;
    }
    st = tdm_session_stream_for_work(s, stream, &err);
    if (!st)
        return err;
    if (tdm_session_capturing(s, st)) {
        /* The graph reads src at each launch: unless it is the guest's
         * pinned memory, it must outlive this call (docs/graphs.md).  The
         * bytes are copied now, so src is free again at once: no fence
         * (which would be captured too). */
        if (!pinned && !(src = tdm_session_capture_keep(s, st, src, n, &err)))
            return err;
        wait = false;
        done = NULL;
    }
    err = before_write(s, r, st);
    if (!err)
        err = ops(s)->memcpy_htod(be(s), dev, src, n, st->bs);
    if (!err && done)
        err = ops(s)->event_record(be(s), done, st->bs);
    return err || !wait ? err : ops(s)->stream_synchronize(be(s), st->bs);
}

int tdm_session_memcpy_htod(tdm_session *s, uint64_t dst, const void *src, uint64_t n, uint64_t stream)
{
    return htod(s, dst, src, n, stream, false, NULL, false);
}

int tdm_session_memcpy_htod_pinned(tdm_session *s, uint64_t dst, const void *src, uint64_t n, uint64_t stream)
{
    return htod(s, dst, src, n, stream, false, NULL, true);
}

int tdm_session_memcpy_htod_wait(tdm_session *s, uint64_t dst, const void *src, uint64_t n, uint64_t stream)
{
    return htod(s, dst, src, n, stream, true, NULL, false);
}

int tdm_session_memcpy_dtoh(tdm_session *s, void *dst, uint64_t src, uint64_t n, uint64_t stream)
{
    tdm_stream_state *st;
    uint64_t dev;
    int err;

    if (n == 0)
        return tdm_session_sync_result(s, 0);
    if (!tdm_session_resolve(s, src, n, &dev)) {
        log_bad_range(s, "memcpy source", src, n);
        return cudaErrorInvalidValue;
    }
    st = tdm_session_stream_for_work(s, stream, &err);
    if (!st)
        return err;
    /* The bytes go back in this reply, which a graph cannot give: the
     * guest captures the copy through staging (docs/graphs.md). */
    if (tdm_session_capturing(s, st))
        return TDM_ERR_CAPTURE_STAGE;
    return tdm_session_sync_result(s, ops(s)->memcpy_dtoh_sync(be(s), dst, dev, n, st->bs));
}

/* ---- tcp bulk data (issue 14) ---- */

int tdm_session_memcpy_htod_fenced(tdm_session *s, uint64_t dst, const void *src, uint64_t n, uint64_t stream,
                                   tdm_bevent *done)
{
    return htod(s, dst, src, n, stream, false, done, false);
}

int tdm_session_memcpy_dtoh_queue(tdm_session *s, void *dst, uint64_t src, uint64_t n, uint64_t stream,
                                  tdm_bevent *done)
{
    tdm_stream_state *st;
    uint64_t dev;
    int err;

    if (!tdm_session_resolve(s, src, n, &dev)) {
        log_bad_range(s, "memcpy source", src, n);
        return cudaErrorInvalidValue;
    }
    st = tdm_session_stream_for_work(s, stream, &err);
    if (!st)
        return err;
    err = ops(s)->memcpy_dtoh_async(be(s), dst, dev, n, st->bs);
    if (!err)
        err = ops(s)->event_record(be(s), done, st->bs);
    return tdm_session_sync_result(s, err);
}

int tdm_session_check_copy(tdm_session *s, uint64_t addr, uint64_t n, uint64_t stream)
{
    uint64_t dev;

    if (n && !tdm_session_resolve(s, addr, n, &dev)) {
        log_bad_range(s, "memcpy source", addr, n);
        return cudaErrorInvalidValue;
    }
    if (!tdm_session_stream_state(s, stream))
        return cudaErrorInvalidResourceHandle;
    return tdm_session_sync_result(s, 0);
}

/* ---- end tcp bulk data ---- */

int tdm_session_memcpy_dtod(tdm_session *s, uint64_t dst, uint64_t src, uint64_t n, uint64_t stream)
{
    tdm_stream_state *st;
    const tdm_range *r;
    uint64_t ddev, sdev;
    int err;

    if (n == 0)
        return 0;
    r = tdm_session_resolve(s, dst, n, &ddev);
    if (!r || !tdm_session_resolve(s, src, n, &sdev)) {
        log_bad_range(s, "device-to-device copy", r ? src : dst, n);
        return cudaErrorInvalidValue;
    }
    st = tdm_session_stream_for_work(s, stream, &err);
    if (!st)
        return err;
    err = before_write(s, r, st);
    return err ? err : ops(s)->memcpy_dtod(be(s), ddev, sdev, n, st->bs);
}

int tdm_session_memset(tdm_session *s, uint64_t dst, uint8_t value, uint64_t n, uint64_t stream)
{
    tdm_stream_state *st;
    const tdm_range *r;
    uint64_t dev;
    int err;

    if (n == 0)
        return 0;
    if (!(r = tdm_session_resolve(s, dst, n, &dev))) {
        log_bad_range(s, "memset", dst, n);
        return cudaErrorInvalidValue;
    }
    st = tdm_session_stream_for_work(s, stream, &err);
    if (!st)
        return err;
    err = before_write(s, r, st);
    return err ? err : ops(s)->memset_d8(be(s), dev, value, n, st->bs);
}

/* ---- modules and launches ---- */

/* ---- host resources (issue 16) ---- */
int tdm_session_module_admit(tdm_session *s, uint64_t len, const char *call)
{
    if (s->bounds.modules && s->modules.live >= s->bounds.modules)
        return tdm_session_refuse_at_bound(s, call, s->modules.live, "modules and libraries", "modules");
    /* The image is kept for the session's life: a standby would need it (takeover_state.c). */
    return tdm_session_host_take(s, len, call);
}

static void module_free(tdm_session *s, tdm_module_entry *m)
{
    for (uint32_t i = 0; i < m->nfuncs; i++)
        free(tdm_handles_remove(&s->funcs, m->funcs[i]));
    for (uint32_t i = 0; i < m->nvars; i++) {
        tdm_range r;
        if (tdm_range_map_remove(&s->ranges, m->vars[i].addr, &r) == 0)
            HOOK(s, range_freed, &r);
    }
    if (m->bm)
        ops(s)->module_unload(be(s), m->bm);
    if (m->image_bytes)
        tdm_session_host_give(s, m->image_bytes);
    free(m->funcs);
    free(m->vars);
    free(m);
}

/* Gives variable m->vars[m->nvars], at device address dev (size bytes), its range: at `at`,
 * the address the guest holds (a standby reproducing its active's), or at dev itself.  0 with
 * *addr the range's address, or -1 when the range cannot be added.  The caller made room. */
int tdm_session_module_add_var(tdm_session *s, tdm_module_entry *m, uint64_t dev, uint64_t size, uint64_t at,
                               uint64_t *addr)
{
    tdm_var_entry *v = &m->vars[m->nvars];
    tdm_range r = { 0 };

    r.addr = at ? at : dev;
    r.size = size;
    r.mapped = size;
    r.kind = TDM_RANGE_GLOBAL;
    r.backing = v;
    v->dev = dev;
    if (tdm_session_ranges_add(s, &r) != 0)
        return -1;
    v->addr = r.addr;
    m->nvars++;
    *addr = r.addr;
    return 0;
}

int tdm_session_module_load(tdm_session *s, const void *image, uint64_t len,
                            const char *const *func_names, uint32_t nfuncs,
                            const char *const *var_names, uint32_t nvars, const uint64_t *var_logical,
                            uint64_t *module, uint64_t *func_handles, int *func_err,
                            uint64_t *var_addr, uint64_t *var_size, int *var_err)
{
    tdm_bmodule *bm = NULL;
    int err = tdm_session_module_admit(s, len, "cudaModuleLoad");

    if (err)
        return err;
    err = ops(s)->module_load(be(s), image, len, &bm);
    if (err) {
        tdm_session_host_give(s, len);
        return err;
    }
    return tdm_session_module_adopt(s, bm, image, len, func_names, nfuncs, var_names, nvars, var_logical, module,
                                    func_handles, func_err, var_addr, var_size, var_err);
}

/* ---- libraries (issue 14): the module is loaded; a library's kernels are
 * known only once it is (session_library.c) ---- */
int tdm_session_module_adopt(tdm_session *s, tdm_bmodule *bm, const void *image, uint64_t len,
                             const char *const *func_names, uint32_t nfuncs,
                             const char *const *var_names, uint32_t nvars, const uint64_t *var_logical,
                             uint64_t *module, uint64_t *func_handles, int *func_err,
                             uint64_t *var_addr, uint64_t *var_size, int *var_err)
{
    tdm_module_entry *m = calloc(1, sizeof(*m));
    int err;

    if (!m) {
        ops(s)->module_unload(be(s), bm);
        tdm_session_host_give(s, len);
        return cudaErrorMemoryAllocation;
    }
    m->bm = bm;
    m->image_bytes = len;     /* its charge (tdm_session_module_admit) goes with it */
    m->funcs = calloc(nfuncs ? nfuncs : 1, sizeof(uint64_t));
    m->vars = calloc(nvars ? nvars : 1, sizeof(*m->vars));
    if (!m->funcs || !m->vars) {
        err = cudaErrorMemoryAllocation;
        goto fail;
    }
    for (uint32_t i = 0; i < nfuncs; i++) {
        tdm_func_entry *f = calloc(1, sizeof(*f));
        func_handles[i] = 0;
        func_err[i] = f ? ops(s)->module_get_function(be(s), m->bm, func_names[i], &f->bf, &f->params)
                        : cudaErrorMemoryAllocation;
        if (!func_err[i] && f->params.count > TDM_MAX_KERNEL_PARAMS)
            func_err[i] = cudaErrorInvalidDeviceFunction;
        if (func_err[i]) {
            free(f);
            continue;
        }
        if (f->params.count)
            f->params_len = f->params.offset[f->params.count - 1] + f->params.size[f->params.count - 1];
        func_handles[i] = add_handle(s, &s->funcs, f);
        if (!func_handles[i]) {
            free(f);
            func_err[i] = cudaErrorMemoryAllocation;
            continue;
        }
        m->funcs[m->nfuncs++] = func_handles[i];
    }
    for (uint32_t i = 0; i < nvars; i++) {
        tdm_range r = { 0 };
        var_addr[i] = var_size[i] = 0;
        var_err[i] = ops(s)->module_get_global(be(s), m->bm, var_names[i], &r.addr, &r.size);
        if (var_err[i])
            continue;
        /* a standby: the guest knows the active's address */
        if (var_logical && !var_logical[i]) {
            var_err[i] = cudaErrorInvalidSymbol;
            continue;
        }
        if (tdm_session_module_add_var(s, m, r.addr, r.size, var_logical ? var_logical[i] : 0, &var_addr[i]) != 0) {
            var_err[i] = cudaErrorInvalidSymbol;
            continue;
        }
        var_size[i] = r.size;
    }
    *module = add_handle(s, &s->modules, m);
    if (*module) {
        for (uint32_t i = 0; i < m->nfuncs; i++)
            ((tdm_func_entry *)tdm_handles_get(&s->funcs, m->funcs[i]))->module = *module;
        tdm_module_made made = { *module, image, len, func_names, nfuncs, var_names, nvars, func_handles, var_addr };
        HOOK(s, module_made, &made);
        return 0;
    }
    err = cudaErrorMemoryAllocation;
fail:
    module_free(s, m);
    return err;
}

int tdm_session_module_unload(tdm_session *s, uint64_t module)
{
    tdm_module_entry *m = tdm_handles_remove(&s->modules, module);

    if (!m)
        return cudaErrorInvalidResourceHandle;
    tdm_session_device_synchronize(s);
    module_free(s, m);
    HOOK(s, module_freed, module);
    return 0;
}

const tdm_func_entry *tdm_session_func(tdm_session *s, uint64_t func)
{
    return tdm_handles_get(&s->funcs, func);
}

int tdm_session_func_attrs(tdm_session *s, uint64_t func, tdm_func_attrs *out)
{
    const tdm_func_entry *f = tdm_session_func(s, func);

    if (!f)
        return cudaErrorInvalidDeviceFunction;
    return ops(s)->func_get_attributes(be(s), f->bf, out);
}

typedef int (*launch_op)(tdm_backend *b, tdm_bfunc *f, tdm_dim3 grid, tdm_dim3 block, uint32_t shared_mem,
                         tdm_bstream *s, const void *params, size_t params_len);

static int launch_with(tdm_session *s, launch_op op, uint64_t func, tdm_dim3 grid, tdm_dim3 block,
                       uint32_t shared_mem, uint64_t stream, const void *params, uint32_t params_len)
{
    const tdm_func_entry *f = tdm_session_func(s, func);
    tdm_stream_state *st;
    int err;

    if (!f)
        return cudaErrorInvalidDeviceFunction;
    if (params_len != f->params_len)
        return cudaErrorInvalidValue;
    if (!grid.x || !grid.y || !grid.z || !block.x || !block.y || !block.z)
        return cudaErrorInvalidConfiguration;
    st = tdm_session_launch_stream(s, f, stream, params, &err);
    if (!st)
        return err;
    /* ---- control plane (issue 17): every 64th launch timed on the device ---- */
    int slot = tdm_session_kernel_sample_begin(s, st->bs, tdm_session_capturing(s, st));
    err = op(be(s), f->bf, grid, block, shared_mem, st->bs, params, params_len);
    tdm_session_kernel_sample_end(s, slot, st->bs, err);
    return err;
}

tdm_stream_state *tdm_session_launch_stream(tdm_session *s, const tdm_func_entry *f, uint64_t stream,
                                            const void *params, int *err)
{
    tdm_stream_state *st = tdm_session_stream_for_work(s, stream, err);

    if (!st)
        return NULL;
    /* The hooks see what a kernel is given, except in a capture, where
     * nothing runs yet. */
    *err = tdm_session_capturing(s, st) ? 0 : HOOK_ERR(s, before_launch, &f->params, params, st->bs);
    return *err ? NULL : st;
}

int tdm_session_launch(tdm_session *s, uint64_t func, tdm_dim3 grid, tdm_dim3 block,
                       uint32_t shared_mem, uint64_t stream, const void *params, uint32_t params_len)
{
    return launch_with(s, ops(s)->launch, func, grid, block, shared_mem, stream, params, params_len);
}

/* ---- runtime (issue 14) ---- */
int tdm_session_launch_cooperative(tdm_session *s, uint64_t func, tdm_dim3 grid, tdm_dim3 block,
                                   uint32_t shared_mem, uint64_t stream, const void *params, uint32_t params_len)
{
    return launch_with(s, ops(s)->launch_cooperative, func, grid, block, shared_mem, stream, params, params_len);
}

/* ---- whole device ---- */

typedef struct sync_ctx {
    tdm_session *s;
    int err;
} sync_ctx;

static void sync_one(void *obj, uint64_t id, void *arg)
{
    tdm_stream_state *st = obj;
    sync_ctx *sc = arg;
    int err = sc->s->srv->ops->stream_synchronize(sc->s->srv->be, st->bs);

    if (err && !sc->err)
        sc->err = err;
}

static int sync_all(tdm_session *s)
{
    sync_ctx sc = { s, 0 };

    sync_one(&s->null_stream, 0, &sc);
    tdm_handles_each(&s->streams, sync_one, &sc);
    return sc.err;
}

int tdm_session_device_synchronize(tdm_session *s)
{
    return tdm_session_sync_result(s, sync_all(s));
}

int tdm_session_quiesce(tdm_session *s)
{
    int err = sync_all(s);

    tdm_session_defer(s, err);
    return err ? err : s->deferred_err;
}

static void release_all(tdm_session *s)
{
    void *obj;
    tdm_range r;

    tdm_session_ipc_release_imports(s); /* ---- ipc (issue 14): before its own memory ---- */
    tdm_session_pool_share_ended(s);    /* ---- pool sharing (issue 14): before its pools ---- */
    tdm_session_memory_release(s);
    /* Graphs first: a capture ends on its stream, and a graph may hold
     * module references. */
    tdm_session_graphs_release(s);
    while ((obj = tdm_handles_pop(&s->events, NULL))) {
        event_release(s, obj);
        free(obj);
    }
    while ((obj = tdm_handles_pop(&s->streams, NULL)))
        stream_free(s, obj);
    while ((obj = tdm_handles_pop(&s->modules, NULL)))
        module_free(s, obj);
    tdm_session_layout_release(s);   /* ---- layout (issue 14) ---- */
    while (s->ranges.n) {
        r = s->ranges.v[s->ranges.n - 1];
        tdm_range_map_remove(&s->ranges, r.addr, NULL);
        if (r.kind == TDM_RANGE_ALLOC)
            release_alloc(s, &r);
    }
}

void tdm_session_release_all(tdm_session *s)
{
    tdm_session_device_synchronize(s);
    release_all(s);
}

int tdm_session_reset(tdm_session *s)
{
    tdm_session_release_all(s);
    HOOK0(s, reset);
    tdm_session_runtime_reset(s);
    s->deferred_err = 0;
    s->null_stream.epoch = 0;
    return 0;
}

void tdm_session_take_over(tdm_session *s, tdm_session *from)
{
    /* ---- tenants (issue 16): its tenant counts what s holds from now on ---- */
    tdm_tenant_usage *usage = s->usage;
    tdm_session_usage_leave(s);
    tdm_session_usage_leave(from);
    /* ---- control plane (issue 17): out of the list while their states swap ---- */
    tdm_session_stats_leave(s);
    tdm_session_stats_leave(from);
    tdm_session tmp = *s;

    *s = *from;
    *from = tmp;
    s->shm = tmp.shm;
    from->shm = NULL;
    /* ---- tcp lanes (issue 14): the connection's, like its region ---- */
    s->lanes = tmp.lanes;
    from->lanes = NULL;
    /* ---- tenants (issue 16): who connected, admitted at RESUME, and so its bounds ---- */
    s->tenant = tmp.tenant;
    s->tenant_name = tmp.tenant_name;
    s->bounds = tmp.bounds;
    s->peer_uid = tmp.peer_uid;
    memcpy(s->peer, tmp.peer, sizeof(s->peer));
    from->tenant = NULL;
    from->tenant_name = NULL;
    /* ---- time limits (issue 16): the connection's ---- */
    s->wire = tmp.wire;
    /* ---- on-boarding (issue 17): the key RESUME presented, like the tenant ---- */
    memcpy(s->placement, tmp.placement, sizeof(s->placement));
    from->placement[0] = 0;   /* the shell it leaves is not the guest's session: its end ends no placement */
    tdm_session_usage_enter(s, usage);
    /* ---- control plane (issue 17): its calls and placement are the connection's ---- */
    tdm_session_stats_swap(s, from);
    tdm_session_stats_join(s);
    tdm_session_stats_join(from);
}

void tdm_session_destroy(tdm_session *s)
{
    if (!s)
        return;
    tdm_session_stats_leave(s);   /* ---- control plane (issue 17): no longer listed ---- */
    tdm_session_stats_ended(s);   /* ... and the orchestrator hears that it ended */
    /* ---- host callbacks (issue 14): streams held for the guest go on ---- */
    tdm_session_callbacks_close(s);
    tdm_session_health_closing(s);
    HOOK0(s, closed);
    /* What its kernels print while its work drains is still its own: kept
     * out of the server's stdout, and dropped with its buffer. */
    tdm_device_output_serve(s->output);
    tdm_session_copy_staging_release(s);
    tdm_session_release_all(s);
    tdm_device_output_serve(NULL);
    tdm_session_managed_release(s);
    tdm_session_ipc_ended(s);        /* ---- ipc (issue 14) ---- */
    HOOK0(s, ended);
    tdm_session_kernel_samples_release(s);   /* ---- control plane (issue 17) ---- */
    ops(s)->event_destroy(be(s), s->null_stream.order_ev);
    ops(s)->stream_destroy(be(s), s->null_stream.bs);
    tdm_session_share_release(s);    /* ---- SM shares (issue 17) ---- */
    tdm_handles_release(&s->streams);
    tdm_handles_release(&s->events);
    tdm_handles_release(&s->modules);
    tdm_handles_release(&s->funcs);
    tdm_handles_release(&s->graphs);
    tdm_handles_release(&s->graph_execs);
    tdm_handles_release(&s->graph_nodes);
    free(s->captures);
    tdm_range_map_release(&s->ranges);
    if (s->space)
        ops(s)->space_destroy(be(s), s->space);
    tdm_device_output_destroy(s->output);
    atomic_fetch_sub(&s->srv->live_sessions, 1);
    tdm_session_health_ended(s);
    free(s);
}

/* ---- layout (issue 14): what session_layout.c shares of the core ---- */

int tdm_session_resolve_range(tdm_session *s, const char *what, uint64_t addr, uint64_t n, uint64_t *dev,
                              const tdm_range **range)
{
    const tdm_range *r = tdm_session_resolve(s, addr, n, dev);

    if (!r) {
        log_bad_range(s, what, addr, n);
        return cudaErrorInvalidValue;
    }
    if (range)
        *range = r;
    return 0;
}

int tdm_session_stream_work(tdm_session *s, uint64_t stream, const tdm_range *written, tdm_bstream **bs)
{
    int err;
    tdm_stream_state *st = tdm_session_stream_for_work(s, stream, &err);

    if (!st)
        return err;
    if (written && (err = before_write(s, written, st)) != 0)
        return err;
    *bs = st->bs;
    return 0;
}

/* ---- memory models (issue 14) ---- */

tdm_bstream *tdm_session_work_stream(tdm_session *s, uint64_t stream, int *err)
{
    tdm_stream_state *st = tdm_session_stream_for_work(s, stream, err);

    return st ? st->bs : NULL;
}

int tdm_session_release_alloc(tdm_session *s, tdm_range *r)
{
    return release_alloc(s, r);
}
