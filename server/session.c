#include "session.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <driver_types.h>

#include "mirror.h"
#include "standby.h"
#include "tandem_rpc.h"

enum { TAG_STREAM = 0x53, TAG_EVENT = 0x45, TAG_MODULE = 0x4d, TAG_FUNC = 0x46 };

/* Errors that leave the device unusable for the session, as in CUDA: they
 * stay set instead of being reported once. */
static bool is_sticky(int err)
{
    return err == cudaErrorIllegalAddress || err == cudaErrorLaunchFailure ||
           err == cudaErrorHardwareStackError || err == cudaErrorIllegalInstruction ||
           err == cudaErrorMisalignedAddress || err == cudaErrorInvalidAddressSpace ||
           err == cudaErrorInvalidPc || err == cudaErrorAssert;
}

/* Beyond sticky: the device context itself is gone (under MPS, the MPS
 * server that held it). */
static bool is_context_fatal(int err)
{
    return is_sticky(err) || err == cudaErrorMpsConnectionFailed || err == cudaErrorMpsRpcFailure ||
           err == cudaErrorMpsServerNotReady || err == cudaErrorMpsClientTerminated ||
           err == cudaErrorECCUncorrectable || err == cudaErrorLaunchTimeout;
}

void tdm_session_check_fatal(tdm_session *s, int err)
{
    if (!is_context_fatal(err) || !tdm_session_protected(s))
        return;
    /* Fail-stop: every session of this process shares the dead context.
     * _exit skips the orderly session teardown, which would tell the
     * standby the sessions ended; the feed simply ends, and each guest
     * resumes its session there. */
    fprintf(stderr, "tandem-server: session %llu: the device context is lost (cudaError %d); stopping so that "
                    "guests resume on the standby\n",
            (unsigned long long)s->id, err);
    _exit(75);
}

void tdm_session_defer(tdm_session *s, int err)
{
    tdm_session_check_fatal(s, err);
    if (err && !s->deferred_err)
        s->deferred_err = err;
}

int tdm_session_sync_result(tdm_session *s, int err)
{
    tdm_session_check_fatal(s, err);
    if (err) {
        if (is_sticky(err))
            s->deferred_err = err;
        return err;
    }
    err = s->deferred_err;
    if (!is_sticky(err))
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
    tdm_range_map_init(&s->ranges);
    tdm_handles_init(&s->streams, TAG_STREAM);
    tdm_handles_init(&s->events, TAG_EVENT);
    tdm_handles_init(&s->modules, TAG_MODULE);
    tdm_handles_init(&s->funcs, TAG_FUNC);
    /* The session's null stream is a stream of its own, not the device's
     * legacy stream, so sessions never wait for each other's work. */
    err = srv->ops->stream_create(srv->be, 0, 0, &s->null_stream.bs);
    if (!err)
        err = srv->ops->event_create(srv->be, cudaEventDisableTiming, &s->null_stream.order_ev);
    if (err) {
        if (s->null_stream.bs)
            srv->ops->stream_destroy(srv->be, s->null_stream.bs);
        free(s);
        return err;
    }
    s->null_stream.blocking = true;
    atomic_fetch_add(&srv->live_sessions, 1);
    *out = s;
    return 0;
}

/* ---- the standby's mirror ---- */

void tdm_session_mirror(tdm_session *s, uint32_t type, uint64_t a, uint64_t b, uint64_t c, uint64_t d,
                        const void *payload, uint32_t len, int fd)
{
    tdm_mirror_hdr h = { .type = type, .len = len, .session = s->id, .a = a, .b = b, .c = c, .d = d };

    if (s->resume_token && s->srv->mirror)
        tdm_mirror_post(s->srv->mirror, s->mirror_gen, &h, payload, fd);
}

bool tdm_session_protected(tdm_session *s)
{
    return s->resume_token && s->srv->mirror && tdm_mirror_gen(s->srv->mirror) == s->mirror_gen;
}

void tdm_session_mirror_mem(tdm_session *s, uint32_t type, tdm_bmem *mem, uint64_t a, uint64_t b, uint64_t c,
                            uint64_t d)
{
    int fd = -1;

    if (!s->resume_token || !s->srv->mirror)
        return;
    int err = s->srv->ops->mem_export(s->srv->be, mem, &fd);
    if (err) {
        /* Without its memory the standby cannot resume this session. */
        char why[96];
        snprintf(why, sizeof(why), "cannot export %#llx for the standby (cudaError %d)", (unsigned long long)a, err);
        tdm_session_unprotect(s, why);
        return;
    }
    tdm_session_mirror(s, type, a, b, c, d, NULL, 0, fd);
    close(fd);
}

/* A new handle: the next of s->want_ids when a standby reproduces its
 * active's handles, else the table's own choice.  0 when it cannot. */
static uint64_t add_handle(tdm_session *s, tdm_handle_table *t, void *obj)
{
    uint64_t id;

    if (!s->n_want)
        return tdm_handles_add(t, obj);
    id = *s->want_ids++;
    s->n_want--;
    return tdm_handles_add_at(t, id, obj) == 0 ? id : 0;
}

/* ---- streams and legacy ordering ---- */

static tdm_stream_state *stream_of(tdm_session *s, uint64_t handle)
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

    if (st == &s->null_stream) {
        order_ctx oc = { s, 0 };
        tdm_handles_each(&s->streams, null_waits_for, &oc);
        err = oc.err;
    } else if (st->blocking && s->null_stream.epoch != st->null_epoch_seen) {
        err = ops(s)->event_record(be(s), s->null_stream.order_ev, s->null_stream.bs);
        if (!err)
            err = ops(s)->stream_wait_event(be(s), st->bs, s->null_stream.order_ev);
        st->null_epoch_seen = s->null_stream.epoch;
    }
    st->epoch++;
    return err;
}

/* Resolves a stream handle and orders it; NULL with *err set if unknown. */
static tdm_stream_state *stream_for_work(tdm_session *s, uint64_t handle, int *err)
{
    tdm_stream_state *st = stream_of(s, handle);

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
    st = calloc(1, sizeof(*st));
    if (!st)
        return cudaErrorMemoryAllocation;
    err = ops(s)->stream_create(be(s), flags, priority, &st->bs);
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
        tdm_session_mirror(s, TDM_M_STREAM_CREATE, *out, flags, (uint64_t)(int64_t)priority, 0, NULL, 0, -1);
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
    tdm_session_mirror(s, TDM_M_STREAM_DESTROY, stream, 0, 0, 0, NULL, 0, -1);
    return 0;
}

int tdm_session_stream_synchronize(tdm_session *s, uint64_t stream)
{
    tdm_stream_state *st = stream_of(s, stream);

    if (!st)
        return cudaErrorInvalidResourceHandle;
    return tdm_session_sync_result(s, ops(s)->stream_synchronize(be(s), st->bs));
}

int tdm_session_stream_query(tdm_session *s, uint64_t stream)
{
    tdm_stream_state *st = stream_of(s, stream);
    int err;

    if (!st)
        return cudaErrorInvalidResourceHandle;
    err = ops(s)->stream_query(be(s), st->bs);
    return err == cudaErrorNotReady ? err : tdm_session_sync_result(s, err);
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
    st = stream_for_work(s, stream, &err);
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
        tdm_session_mirror(s, TDM_M_EVENT_CREATE, *out, flags, 0, 0, NULL, 0, -1);
        return 0;
    }
    ops(s)->event_destroy(be(s), e->ev);
    free(e);
    return cudaErrorMemoryAllocation;
}

int tdm_session_event_destroy(tdm_session *s, uint64_t event)
{
    tdm_event_entry *e = tdm_handles_remove(&s->events, event);
    int err;

    if (!e)
        return cudaErrorInvalidResourceHandle;
    tdm_session_mirror(s, TDM_M_EVENT_DESTROY, event, 0, 0, 0, NULL, 0, -1);
    err = ops(s)->event_destroy(be(s), e->ev);
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
    st = stream_for_work(s, stream, &err);
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

int tdm_session_malloc(tdm_session *s, uint64_t size, uint64_t *addr)
{
    uint64_t quota = s->srv->cfg.session_mem_quota, rounded = 0;
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
    if (quota && (rounded > quota || s->mem_used > quota - rounded)) {
        fprintf(stderr, "tandem-server: session %llu: cudaMalloc(%llu) exceeds its quota of %llu bytes\n",
                (unsigned long long)s->id, (unsigned long long)size, (unsigned long long)quota);
        err = cudaErrorMemoryAllocation;
        goto fail_arena;
    }
    err = ops(s)->mem_map(be(s), *addr, rounded, &mem);
    if (err)
        goto fail_arena;
    r.addr = *addr;
    r.size = size;
    r.mapped = rounded;
    r.kind = TDM_RANGE_ALLOC;
    r.backing = mem;
    r.dev = r.addr;
    if (tdm_range_map_insert(&s->ranges, &r) != 0) {
        err = cudaErrorMemoryAllocation;
        goto fail_map;
    }
    s->mem_used += rounded;
    tdm_session_mirror_mem(s, TDM_M_MAP, mem, r.addr, r.mapped, r.size, 0);
    return 0;
fail_map:
    ops(s)->mem_unmap(be(s), *addr, rounded, mem);
fail_arena:
    tdm_arena_free(s->srv->arena, *addr, rounded);
    *addr = 0;
    return err;
}

static int release_alloc(tdm_session *s, tdm_range *r)
{
    tdm_shadow_drop(s, r);
    tdm_session_mirror(s, TDM_M_UNMAP, r->addr, 0, 0, 0, NULL, 0, -1);
    int err = ops(s)->mem_unmap(be(s), r->addr, r->mapped, r->backing);

    tdm_arena_free(s->srv->arena, r->addr, r->mapped);
    s->mem_used -= r->mapped;
    return err;
}

int tdm_session_free(tdm_session *s, uint64_t addr)
{
    const tdm_range *found;
    tdm_range r;
    int err;

    if (addr == 0)
        return 0;
    found = tdm_range_map_find(&s->ranges, addr);
    if (!found || found->addr != addr || found->kind != TDM_RANGE_ALLOC)
        return cudaErrorInvalidValue;
    /* cudaFree waits for work that may still use the memory. */
    err = tdm_session_device_synchronize(s);
    tdm_range_map_remove(&s->ranges, addr, &r);
    int uerr = release_alloc(s, &r);
    return err ? err : uerr;
}

int tdm_session_adopt_mem(tdm_session *s, uint64_t addr, uint64_t mapped, uint64_t size, tdm_bmem *mem)
{
    tdm_range r = { .addr = addr, .size = size, .mapped = mapped, .kind = TDM_RANGE_ALLOC,
                    .backing = mem, .dev = addr };

    if (size == 0 || size > mapped || tdm_range_map_insert(&s->ranges, &r) != 0)
        return cudaErrorInvalidValue;
    s->mem_used += mapped;
    return 0;
}

int tdm_session_mem_get_info(tdm_session *s, uint64_t *free_bytes, uint64_t *total)
{
    uint64_t quota = s->srv->cfg.session_mem_quota;
    int err = ops(s)->mem_get_info(be(s), free_bytes, total);

    if (err || !quota)
        return err;
    /* A session sees its quota as its device. */
    uint64_t left = quota - s->mem_used;
    *total = quota < *total ? quota : *total;
    *free_bytes = left < *free_bytes ? left : *free_bytes;
    return 0;
}

/* The range holding all of [addr, addr+n) and the device address of addr
 * (addr itself except in a variable a standby reloaded); NULL if none. */
static tdm_range *resolve(tdm_session *s, uint64_t addr, uint64_t n, uint64_t *dev)
{
    tdm_range *r = tdm_range_map_find_mut(&s->ranges, addr);

    if (!r || n > r->size - (addr - r->addr))
        return NULL;
    *dev = r->dev + (addr - r->addr);
    return r;
}

static void log_bad_range(tdm_session *s, const char *what, uint64_t addr, uint64_t n)
{
    fprintf(stderr, "tandem-server: session %llu: %s [%#llx, +%llu) is outside the session's allocations\n",
            (unsigned long long)s->id, what, (unsigned long long)addr, (unsigned long long)n);
}

static int htod(tdm_session *s, uint64_t dst, const void *src, uint64_t n, uint64_t stream, bool wait)
{
    tdm_stream_state *st;
    tdm_range *r;
    uint64_t dev;
    int err;

    if (n == 0)
        return 0;
    if (!(r = resolve(s, dst, n, &dev))) {
        log_bad_range(s, "memcpy destination", dst, n);
        return cudaErrorInvalidValue;
    }
    st = stream_for_work(s, stream, &err);
    if (!st)
        return err;
    err = tdm_shadow_before_write(s, r, st->bs);
    if (!err)
        err = ops(s)->memcpy_htod(be(s), dev, src, n, st->bs);
    return err || !wait ? err : ops(s)->stream_synchronize(be(s), st->bs);
}

int tdm_session_memcpy_htod(tdm_session *s, uint64_t dst, const void *src, uint64_t n, uint64_t stream)
{
    return htod(s, dst, src, n, stream, false);
}

int tdm_session_memcpy_htod_wait(tdm_session *s, uint64_t dst, const void *src, uint64_t n, uint64_t stream)
{
    return htod(s, dst, src, n, stream, true);
}

int tdm_session_memcpy_dtoh(tdm_session *s, void *dst, uint64_t src, uint64_t n, uint64_t stream)
{
    tdm_stream_state *st;
    uint64_t dev;
    int err;

    if (n == 0)
        return tdm_session_sync_result(s, 0);
    if (!resolve(s, src, n, &dev)) {
        log_bad_range(s, "memcpy source", src, n);
        return cudaErrorInvalidValue;
    }
    st = stream_for_work(s, stream, &err);
    if (!st)
        return err;
    return tdm_session_sync_result(s, ops(s)->memcpy_dtoh_sync(be(s), dst, dev, n, st->bs));
}

int tdm_session_memcpy_dtod(tdm_session *s, uint64_t dst, uint64_t src, uint64_t n, uint64_t stream)
{
    tdm_stream_state *st;
    tdm_range *r;
    uint64_t ddev, sdev;
    int err;

    if (n == 0)
        return 0;
    r = resolve(s, dst, n, &ddev);
    if (!r || !resolve(s, src, n, &sdev)) {
        log_bad_range(s, "device-to-device copy", r ? src : dst, n);
        return cudaErrorInvalidValue;
    }
    st = stream_for_work(s, stream, &err);
    if (!st)
        return err;
    err = tdm_shadow_before_write(s, r, st->bs);
    return err ? err : ops(s)->memcpy_dtod(be(s), ddev, sdev, n, st->bs);
}

int tdm_session_memset(tdm_session *s, uint64_t dst, uint8_t value, uint64_t n, uint64_t stream)
{
    tdm_stream_state *st;
    tdm_range *r;
    uint64_t dev;
    int err;

    if (n == 0)
        return 0;
    if (!(r = resolve(s, dst, n, &dev))) {
        log_bad_range(s, "memset", dst, n);
        return cudaErrorInvalidValue;
    }
    st = stream_for_work(s, stream, &err);
    if (!st)
        return err;
    err = tdm_shadow_before_write(s, r, st->bs);
    return err ? err : ops(s)->memset_d8(be(s), dev, value, n, st->bs);
}

/* ---- modules and launches ---- */

static void module_free(tdm_session *s, tdm_module_entry *m)
{
    for (uint32_t i = 0; i < m->nfuncs; i++)
        free(tdm_handles_remove(&s->funcs, m->funcs[i]));
    for (uint32_t i = 0; i < m->nglobals; i++) {
        tdm_range r;
        if (tdm_range_map_remove(&s->ranges, m->globals[i], &r) == 0)
            tdm_shadow_drop(s, &r);
    }
    if (m->bm)
        ops(s)->module_unload(be(s), m->bm);
    free(m->funcs);
    free(m->globals);
    free(m->mirror_msg);
    free(m);
}

/* The TDM_M_MODULE_LOAD payload (mirror_wire.h has the layout), kept with
 * the module: a standby connected later gets it too.  Fails only for want
 * of memory or past the mirror's limit; the module still works, it just
 * cannot be mirrored. */
static void keep_module_msg(tdm_module_entry *m, const void *image, uint64_t len, const char *const *func_names,
                            uint32_t nfuncs, const char *const *var_names, uint32_t nvars,
                            const uint64_t *func_handles, const uint64_t *var_addr)
{
    tdm_module_load_args a = { { (u_int)len, (char *)image }, { nfuncs, (tdm_name *)func_names },
                               { nvars, (tdm_name *)var_names } };
    unsigned long xlen = xdr_sizeof((xdrproc_t)xdr_tdm_module_load_args, &a);
    size_t total = xlen + 8 + (size_t)(nfuncs + nvars) * 8;
    char *buf = xlen && total <= TDM_MIRROR_MAX_PAYLOAD ? malloc(total) : NULL;
    XDR x;

    if (!buf)
        return;
    xdrmem_create(&x, buf, (u_int)xlen, XDR_ENCODE);
    if (!xdr_tdm_module_load_args(&x, &a)) {
        xdr_destroy(&x);
        free(buf);
        return;
    }
    xdr_destroy(&x);
    char *p = buf + xlen;
    memcpy(p, &nfuncs, 4);
    memcpy(p + 4, func_handles, (size_t)nfuncs * 8);
    p += 4 + (size_t)nfuncs * 8;
    memcpy(p, &nvars, 4);
    memcpy(p + 4, var_addr, (size_t)nvars * 8);
    m->mirror_msg = buf;
    m->mirror_len = (uint32_t)total;
}

void tdm_session_unprotect(tdm_session *s, const char *why)
{
    if (!s->resume_token)
        return;
    fprintf(stderr, "tandem-server: session %llu: %s: the session is no longer protected\n",
            (unsigned long long)s->id, why);
    tdm_session_mirror(s, TDM_M_SESSION_CLOSE, 0, 0, 0, 0, NULL, 0, -1);
    s->resume_token = 0;
}

int tdm_session_module_load(tdm_session *s, const void *image, uint64_t len,
                            const char *const *func_names, uint32_t nfuncs,
                            const char *const *var_names, uint32_t nvars, const uint64_t *var_logical,
                            uint64_t *module, uint64_t *func_handles, int *func_err,
                            uint64_t *var_addr, uint64_t *var_size, int *var_err)
{
    tdm_module_entry *m = calloc(1, sizeof(*m));
    int err;

    if (!m)
        return cudaErrorMemoryAllocation;
    m->funcs = calloc(nfuncs ? nfuncs : 1, sizeof(uint64_t));
    m->globals = calloc(nvars ? nvars : 1, sizeof(uint64_t));
    if (!m->funcs || !m->globals) {
        err = cudaErrorMemoryAllocation;
        goto fail;
    }
    err = ops(s)->module_load(be(s), image, len, &m->bm);
    if (err)
        goto fail;
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
        r.mapped = r.size;
        r.kind = TDM_RANGE_GLOBAL;
        r.backing = m;
        r.dev = r.addr;
        if (var_logical) {            /* a standby: the guest knows the active's address */
            if (!var_logical[i]) {
                var_err[i] = cudaErrorInvalidSymbol;
                continue;
            }
            r.addr = var_logical[i];
        }
        if (tdm_range_map_insert(&s->ranges, &r) != 0) {
            var_err[i] = cudaErrorInvalidSymbol;
            continue;
        }
        m->globals[m->nglobals++] = r.addr;
        var_addr[i] = r.addr;
        var_size[i] = r.size;
    }
    *module = add_handle(s, &s->modules, m);
    if (*module) {
        for (uint32_t i = 0; i < m->nfuncs; i++)
            ((tdm_func_entry *)tdm_handles_get(&s->funcs, m->funcs[i]))->module = *module;
        keep_module_msg(m, image, len, func_names, nfuncs, var_names, nvars, func_handles, var_addr);
        if (m->mirror_msg)
            tdm_session_mirror(s, TDM_M_MODULE_LOAD, *module, 0, 0, 0, m->mirror_msg, m->mirror_len, -1);
        else
            tdm_session_unprotect(s, "cannot mirror a module to the standby");
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
    tdm_session_mirror(s, TDM_M_MODULE_UNLOAD, module, 0, 0, 0, NULL, 0, -1);
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

int tdm_session_launch(tdm_session *s, uint64_t func, tdm_dim3 grid, tdm_dim3 block,
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
    st = stream_for_work(s, stream, &err);
    if (!st)
        return err;
    err = tdm_shadow_before_launch(s, &f->params, params, st->bs);
    return err ? err : ops(s)->launch(be(s), f->bf, grid, block, shared_mem, st->bs, params, params_len);
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

    while ((obj = tdm_handles_pop(&s->events, NULL))) {
        ops(s)->event_destroy(be(s), ((tdm_event_entry *)obj)->ev);
        free(obj);
    }
    while ((obj = tdm_handles_pop(&s->streams, NULL)))
        stream_free(s, obj);
    while ((obj = tdm_handles_pop(&s->modules, NULL)))
        module_free(s, obj);
    while (s->ranges.n) {
        r = s->ranges.v[s->ranges.n - 1];
        tdm_range_map_remove(&s->ranges, r.addr, NULL);
        if (r.kind == TDM_RANGE_ALLOC)
            release_alloc(s, &r);
    }
}

int tdm_session_reset(tdm_session *s)
{
    tdm_session_device_synchronize(s);
    release_all(s);
    tdm_session_mirror(s, TDM_M_RESET, 0, 0, 0, 0, NULL, 0, -1);
    s->deferred_err = 0;
    s->null_stream.epoch = 0;
    return 0;
}

void tdm_session_let_go(tdm_session *s)
{
    s->resume_token = 0;
    s->moved = true;
    tdm_session_device_synchronize(s);
    release_all(s);
    tdm_shadow_release_markers(s);
}

void tdm_session_heard(tdm_session *s)
{
    if (!s->resume_unheard)
        return;
    s->resume_unheard = false;
    tdm_standby_resume_done(s->srv->standby);
}

void tdm_session_destroy(tdm_session *s)
{
    if (!s)
        return;
    tdm_replay_gate_leave(&s->srv->replay_gate, s);
    tdm_session_heard(s);
    /* The guest is gone: the standby forgets the session first, and nothing
     * that follows needs mirroring. */
    tdm_session_mirror(s, TDM_M_SESSION_CLOSE, 0, 0, 0, 0, NULL, 0, -1);
    s->resume_token = 0;
    tdm_session_device_synchronize(s);
    release_all(s);
    tdm_shadow_release_markers(s);
    ops(s)->event_destroy(be(s), s->null_stream.order_ev);
    ops(s)->stream_destroy(be(s), s->null_stream.bs);
    tdm_handles_release(&s->streams);
    tdm_handles_release(&s->events);
    tdm_handles_release(&s->modules);
    tdm_handles_release(&s->funcs);
    tdm_range_map_release(&s->ranges);
    atomic_fetch_sub(&s->srv->live_sessions, 1);
    free(s);
}
