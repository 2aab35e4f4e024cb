/* Host memory of graphs the server cannot reach (docs/graphs.md, "Host
 * memory in graphs"): over TCP, and for pageable memory over shm, a memcpy
 * node's host side is staging on the server.  Before each launch this
 * process uploads the current bytes of every host-to-device node's source
 * (the graph reads them at launch, as natively); after a launch with
 * device-to-host nodes, the next call that synchronizes with the program's
 * work fetches their bytes into the program's memory before it returns.
 *
 * The per-process table of which executable graph reads which host
 * memory is the process's own, as the runtime's is. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "guest.h"

/* A host-to-device node's source: key is its node handle on the server. */
typedef struct host_src {
    uint64_t key;
    const void *src;
    uint64_t n;
} host_src;

/* The staged sources of one graph or executable graph. */
typedef struct owner {
    uint64_t handle;
    bool exec;
    host_src *v;
    size_t n, cap;
} owner;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static owner *owners;
static size_t nowners, owners_cap;
/* Some graph of this process writes staged host memory: launches need a fetch. */
static atomic_bool has_outputs;
/* A launch since the last complete fetch may have written some. */
static atomic_bool fetch_due;

/* lock held.  The owner record of (handle, exec), made if `make`. */
static owner *find(uint64_t handle, bool exec, bool make)
{
    for (size_t i = 0; i < nowners; i++)
        if (owners[i].handle == handle && owners[i].exec == exec)
            return &owners[i];
    if (!make || tdm_grow(&owners, &owners_cap, nowners + 1, sizeof(*owners), 8) != 0)
        return NULL;
    owners[nowners] = (owner){ .handle = handle, .exec = exec };
    return &owners[nowners++];
}

static void drop(uint64_t handle, bool exec)
{
    owner *o = find(handle, exec, false);

    if (!o)
        return;
    free(o->v);
    *o = owners[--nowners];
}

/* lock held.  to's sources become a copy of from's (none if from has none). */
static cudaError_t copy_sources(uint64_t from, bool from_exec, uint64_t to, bool to_exec)
{
    owner *f = find(from, from_exec, false), *t;

    drop(to, to_exec);
    if (!f || !f->n)
        return cudaSuccess;
    if (!(t = find(to, to_exec, true)))
        return cudaErrorMemoryAllocation;
    f = find(from, from_exec, false);   /* find may have moved the table */
    if (tdm_grow(&t->v, &t->cap, f->n, sizeof(*t->v), 4) != 0)
        return cudaErrorMemoryAllocation;
    memcpy(t->v, f->v, f->n * sizeof(*f->v));
    t->n = f->n;
    return cudaSuccess;
}

cudaError_t tdm_graph_host_source(uint64_t graph, uint64_t key, const void *src, uint64_t n)
{
    cudaError_t err = cudaErrorMemoryAllocation;
    owner *o;

    pthread_mutex_lock(&lock);
    if ((o = find(graph, false, true)) && tdm_grow(&o->v, &o->cap, o->n + 1, sizeof(*o->v), 4) == 0) {
        o->v[o->n++] = (host_src){ key, src, n };
        err = cudaSuccess;
    }
    pthread_mutex_unlock(&lock);
    return err;
}

/* ---- graph node parameters (issue 14) ---- */
void tdm_graph_host_retarget(uint64_t key, bool exec, uint64_t handle, const void *src)
{
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < nowners; i++) {
        owner *o = &owners[i];

        if (o->exec != exec || (exec && o->handle != handle))
            continue;
        for (size_t j = 0; j < o->n; j++)
            if (o->v[j].key == key)
                o->v[j].src = src;
    }
    pthread_mutex_unlock(&lock);
}

void tdm_graph_host_output(void)
{
    atomic_store(&has_outputs, true);
}

cudaError_t tdm_graph_host_copy(uint64_t from, bool from_exec, uint64_t to, bool to_exec)
{
    pthread_mutex_lock(&lock);
    cudaError_t err = copy_sources(from, from_exec, to, to_exec);
    pthread_mutex_unlock(&lock);
    return err;
}

void tdm_graph_host_forget(uint64_t handle, bool exec)
{
    pthread_mutex_lock(&lock);
    drop(handle, exec);
    pthread_mutex_unlock(&lock);
}

/* Sends the current bytes of each staged source of exec, in stream order
 * before its launch (one-way calls, as the launch). */
cudaError_t tdm_graph_host_before_launch(uint64_t exec)
{
    cudaError_t err = cudaSuccess;
    owner *o;

    pthread_mutex_lock(&lock);
    o = find(exec, true, false);
    for (size_t i = 0; o && i < o->n && !err; i++) {
        const host_src *h = &o->v[i];
        for (uint64_t off = 0; off < h->n && !err; off += TDM_MAX_CHUNK) {
            uint64_t len = h->n - off < TDM_MAX_CHUNK ? h->n - off : TDM_MAX_CHUNK;
            tdm_graph_upload_args a = { .exec = exec, .key = h->key, .offset = off };
            a.data.data_val = (char *)h->src + off;
            a.data.data_len = (u_int)len;
            err = tdm_post(TDM_GRAPH_HOST_UPLOAD, &a);
        }
    }
    pthread_mutex_unlock(&lock);
    if (!err && atomic_load(&has_outputs))
        atomic_store(&fetch_due, true);
    return err;
}

bool tdm_graph_host_fetch_due(void)
{
    return atomic_load(&fetch_due);
}

void tdm_graph_host_fetch(void)
{
    tdm_graph_fetch_res r;

    atomic_store(&fetch_due, false);
    for (;;) {
        memset(&r, 0, sizeof(r));
        if (tdm_call(TDM_GRAPH_HOST_FETCH, NULL, &r) != cudaSuccess || r.err) {
            atomic_store(&fetch_due, true);   /* try again at the next synchronizing call */
            xdr_free((xdrproc_t)xdr_tdm_graph_fetch_res, (char *)&r);
            return;
        }
        if (r.got && r.dst)
            memcpy((void *)(uintptr_t)r.dst, r.data.data_val, r.data.data_len);
        if (!r.got) {
            /* Launches still running deliver at a later synchronizing call. */
            if (r.more)
                atomic_store(&fetch_due, true);
            xdr_free((xdrproc_t)xdr_tdm_graph_fetch_res, (char *)&r);
            return;
        }
        xdr_free((xdrproc_t)xdr_tdm_graph_fetch_res, (char *)&r);
    }
}

cudaError_t tdm_graph_capture_dtoh(void *dst, uint64_t src, size_t n, uint64_t stream)
{
    tdm_graph_capture_dtoh_args a = { .stream = stream, .src = src, .size = n, .dst = (uint64_t)(uintptr_t)dst };
    cudaError_t err = tdm_call_err(TDM_GRAPH_CAPTURE_DTOH, &a);

    if (!err)
        tdm_graph_host_output();
    return err;
}

/* ---- captured host-to-device copies ---- */

static atomic_int open_captures;

/* A captured copy's staging, until its capture ends. */
typedef struct captured_src {
    uint64_t id;   /* the capture's */
    host_src h;
} captured_src;

static captured_src *captured;
static size_t ncaptured, captured_cap;

void tdm_graph_capture_opened(void)
{
    atomic_fetch_add(&open_captures, 1);
}

void tdm_graph_capture_closed(void)
{
    if (atomic_load(&open_captures) > 0)
        atomic_fetch_sub(&open_captures, 1);
}

bool tdm_graph_captures_open(void)
{
    return atomic_load(&open_captures) > 0;
}

cudaError_t tdm_graph_capture_htod(void *dst, const void *src, size_t n, uint64_t stream)
{
    const struct tdm_shm_region *shm = tdm_shm();
    tdm_graph_capture_htod_args a = { .stream = stream, .dst = (uint64_t)(uintptr_t)dst, .size = n,
                                      .src = (uint64_t)(uintptr_t)src };
    tdm_graph_capture_htod_res r;
    uint64_t off;
    cudaError_t err;

    /* Pinned memory over shm: the graph reads it in place at each launch. */
    if (shm && tdm_shm_host_offset(shm, src, n, &off))
        return (cudaError_t)TDM_ERR_NOT_CAPTURING;
    memset(&r, 0, sizeof(r));
    err = tdm_call(TDM_GRAPH_CAPTURE_HTOD, &a, &r);
    if (err || r.err)
        return err ? err : (cudaError_t)r.err;
    pthread_mutex_lock(&lock);
    if (tdm_grow(&captured, &captured_cap, ncaptured + 1, sizeof(*captured), 8) == 0)
        captured[ncaptured++] = (captured_src){ r.id, { r.key, src, n } };
    else
        err = cudaErrorMemoryAllocation;
    pthread_mutex_unlock(&lock);
    return err;
}

uint64_t tdm_graph_capture_ending(uint64_t stream)
{
    tdm_handle h = stream;
    tdm_capture_info_res r;
    bool any;

    pthread_mutex_lock(&lock);
    any = ncaptured > 0;
    pthread_mutex_unlock(&lock);
    if (!any)
        return 0;
    memset(&r, 0, sizeof(r));
    if (tdm_call(TDM_STREAM_CAPTURE_INFO, &h, &r) != cudaSuccess || r.err)
        return 0;
    return r.id;
}

void tdm_graph_capture_ended(uint64_t id, uint64_t graph)
{
    if (!id)
        return;
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < ncaptured;) {
        if (captured[i].id != id) {
            i++;
            continue;
        }
        owner *o = graph ? find(graph, false, true) : NULL;
        if (o && tdm_grow(&o->v, &o->cap, o->n + 1, sizeof(*o->v), 4) == 0)
            o->v[o->n++] = captured[i].h;
        captured[i] = captured[--ncaptured];
    }
    pthread_mutex_unlock(&lock);
}
