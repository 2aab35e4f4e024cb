/* Host callbacks in the guest (issue 14, docs/runtime-api.md "Host
 * callbacks"): the program's functions, kept by key while their streams
 * get to them, and the callback thread that runs them.
 *
 * The server holds a stream at each callback and says when its earlier
 * work is done; the callback thread learns that by polling
 * (CALLBACK_POLL) while the session may have callbacks pending, runs the
 * functions in the order they became due, and reports them run in its next
 * poll, which lets their streams go on.  A call that may make the server
 * wait for the device (every synchronous call, and the shm copies the
 * server completes before taking the next call) waits first until no
 * callback is pending: the server serves a session from one thread, which
 * must stay free for the polls that release the streams.  So do
 * host-to-device copies (waits_among_oneway). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "calls.h"
#include "grow.h"
#include "guest.h"
#include "log.h"

typedef struct cb_entry {
    uint64_t key;
    cudaHostFn_t host;              /* cudaLaunchHostFunc */
    cudaStreamCallback_t stream_cb; /* cudaStreamAddCallback */
    void *data;
    cudaStream_t stream;            /* as the program named it */
    /* ---- graph host nodes (issue 14) ---- */
    bool node;                      /* a graph's host node: runs at each launch, kept */
    uint64_t node_handle;           /* cudaGraphAddHostNode's node (0: captured) */
} cb_entry;

/* The process's callbacks, as it has one session. */
static struct {
    pthread_mutex_t lock;
    pthread_cond_t wake;     /* the callback thread: work may be pending */
    pthread_cond_t idle;     /* callers waiting for busy to fall */
    cb_entry *v;             /* queued and not yet run */
    size_t n, cap;
    uint64_t next_key;
    int in_flight;           /* CALLBACK_ENQUEUE calls sent, not yet answered */
    uint64_t answered;       /* CALLBACK_ENQUEUE calls answered so far */
    bool busy;               /* the server may hold a stream for a callback */
    bool started;            /* the callback thread runs */
    bool dead;               /* the session is lost: nothing will run */
    size_t nodes;            /* entries that are graph host nodes */
    /* ---- event nodes, child graphs, user objects (issue 14) ---- */
    cb_entry *posted;        /* tdm_callback_post's functions, in order */
    size_t nposted, postcap;
} cbs = { .lock = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER, .idle = PTHREAD_COND_INITIALIZER };

static _Thread_local bool on_callback_thread;

/* The callback thread's own calls: its polls, and the device output a
 * poll's reply may say is waiting.  Neither waits for the device. */
static bool own_call(uint32_t proc)
{
    /* GRAPH_HOST_FETCH_NOW: a graph's staged output, taken before its host
     * node's function runs (docs/graphs.md "Host nodes"). */
    return proc == TDM_CALLBACK_POLL || proc == TDM_OUTPUT_FETCH || proc == TDM_GRAPH_HOST_FETCH_NOW;
}

bool tdm_callbacks_on_thread(void)
{
    return on_callback_thread;
}

bool tdm_callbacks_refuse(const tdm_call_info *call)
{
    return on_callback_thread && !own_call(call->proc);
}

/* One-way calls that must not pass a pending callback either: the shm
 * copies, which the server completes before it takes the next call, and
 * host-to-device copies over TCP, whose bytes travel in the call: natively
 * the copy reads them when the stream gets there, after an earlier
 * callback that may write them. */
static bool waits_among_oneway(uint32_t proc)
{
    /* GRAPH_HOST_UPLOAD (graph host nodes, issue 14): the server writes
     * the staging once the previous launch reading it is done, which may
     * wait for that launch's host nodes (docs/graphs.md "Host nodes"). */
    return proc == TDM_SHM_HTOD || proc == TDM_SHM_DTOH || proc == TDM_MEMCPY_HTOD || proc == TDM_MEMCPY_3D_HTOD ||
           proc == TDM_GRAPH_HOST_UPLOAD;
}

bool tdm_callbacks_must_wait(const tdm_call_info *call)
{
    bool wait;

    if (call->proc == TDM_CALLBACK_ENQUEUE || own_call(call->proc))
        return false;
    if (call->mode != TDM_CALL_SYNC && !waits_among_oneway(call->proc))
        return false;
    pthread_mutex_lock(&cbs.lock);
    wait = cbs.busy && !cbs.dead;
    pthread_mutex_unlock(&cbs.lock);
    return wait;
}

void tdm_callbacks_wait_idle(void)
{
    pthread_mutex_lock(&cbs.lock);
    while (cbs.busy && !cbs.dead)
        pthread_cond_wait(&cbs.idle, &cbs.lock);
    pthread_mutex_unlock(&cbs.lock);
}

/* cbs.lock held.  Takes the entry for key out of the table into *out; a
 * graph's host node stays (keep), as it runs at each launch. */
static bool take_locked(uint64_t key, cb_entry *out, bool keep)
{
    for (size_t i = 0; i < cbs.n; i++) {
        if (cbs.v[i].key != key)
            continue;
        *out = cbs.v[i];
        if (keep && out->node)
            return true;
        if (out->node)
            cbs.nodes--;
        cbs.v[i] = cbs.v[--cbs.n];
        return true;
    }
    return false;
}

/* ---- graph host nodes (issue 14) ---- */
/* Launched graphs' staged device-to-host bytes, as they are now, into the
 * program's memory (the fetch after the launch is left due). */
static void fetch_now(void)
{
    tdm_handle cursor = 0;

    for (;;) {
        tdm_graph_fetch_res r;

        memset(&r, 0, sizeof(r));
        if (tdm_call(TDM_GRAPH_HOST_FETCH_NOW, &cursor, &r) != cudaSuccess || r.err || !r.got) {
            xdr_free((xdrproc_t)xdr_tdm_graph_fetch_res, (char *)&r);
            return;
        }
        if (r.dst)
            memcpy((void *)(uintptr_t)r.dst, r.data.data_val, r.data.data_len);
        cursor += r.data.data_len;
        xdr_free((xdrproc_t)xdr_tdm_graph_fetch_res, (char *)&r);
    }
}

static void run(const tdm_callback_due *d)
{
    cb_entry e;
    bool found;

    pthread_mutex_lock(&cbs.lock);
    found = take_locked(d->fn, &e, true);
    pthread_mutex_unlock(&cbs.lock);
    /* A graph's device-to-host copy before the node may have written
     * staged memory: the function reads it (docs/graphs.md). */
    if (found && e.node && tdm_graph_host_fetch_due())
        fetch_now();
    if (!found) {
        /* Still reported done: its stream must not wait for good. */
        tdm_log("host callback %llu is due but unknown here", (unsigned long long)d->fn);
        return;
    }
    if (e.stream_cb)
        e.stream_cb(e.stream, (cudaError_t)d->status, e.data);
    else
        e.host(e.data);
}

static void sleep_us(long us)
{
    struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };

    nanosleep(&ts, NULL);
}

/* ---- event nodes, child graphs, user objects (issue 14) ---- */
/* cbs.lock held.  Runs the posted functions, in order, without the lock. */
static void run_posted_locked(void)
{
    while (cbs.nposted) {
        cb_entry e = cbs.posted[0];

        memmove(cbs.posted, cbs.posted + 1, --cbs.nposted * sizeof(*cbs.posted));
        pthread_mutex_unlock(&cbs.lock);
        e.host(e.data);
        pthread_mutex_lock(&cbs.lock);
    }
}

static void *callback_thread(void *unused)
{
    uint64_t done[TDM_MAX_CALLBACKS_POLLED];
    size_t ndone = 0;
    long backoff_us = 20;

    (void)unused;
    on_callback_thread = true;
    for (;;) {
        tdm_callback_poll_args a = { .done = { (u_int)ndone, done } };
        tdm_callback_poll_res r;
        cudaError_t err;

        uint64_t answered_before;

        pthread_mutex_lock(&cbs.lock);
        for (run_posted_locked(); !cbs.busy && !ndone; run_posted_locked())
            pthread_cond_wait(&cbs.wake, &cbs.lock);
        answered_before = cbs.answered;
        pthread_mutex_unlock(&cbs.lock);
        memset(&r, 0, sizeof(r));
        err = tdm_call(TDM_CALLBACK_POLL, &a, &r);
        if (err) {
            /* The session is lost: no stream is held any more, and no
             * function will be due; nobody may wait for them. */
            pthread_mutex_lock(&cbs.lock);
            cbs.dead = true;
            cbs.n = 0;
            pthread_cond_broadcast(&cbs.idle);
            pthread_mutex_unlock(&cbs.lock);
            return NULL;
        }
        if (r.err)
            tdm_log("the server refused a host callback report (cudaError %d)", r.err);
        ndone = 0;
        for (u_int i = 0; i < r.due.due_len; i++) {
            run(&r.due.due_val[i]);
            done[ndone++] = r.due.due_val[i].seq;
        }
        pthread_mutex_lock(&cbs.lock);
        /* Idle only if none is pending and this poll saw every enqueue:
         * none was on its way while it went, none answered since it
         * left (that one may have reached the server after it). */
        if (!ndone && r.pending == 0 && !cbs.in_flight && cbs.answered == answered_before) {
            cbs.busy = false;
            pthread_cond_broadcast(&cbs.idle);
        }
        bool waiting = cbs.busy && !ndone;
        pthread_mutex_unlock(&cbs.lock);
        xdr_free((xdrproc_t)xdr_tdm_callback_poll_res, (char *)&r);
        /* Nothing due yet: the stream is still working.  Poll again soon,
         * less often the longer it takes. */
        if (waiting) {
            sleep_us(backoff_us);
            backoff_us = backoff_us < 2000 ? backoff_us * 2 : 2000;
        } else {
            backoff_us = 20;
        }
    }
}

/* cbs.lock held. */
static cudaError_t start_locked(void)
{
    pthread_attr_t attr;
    pthread_t th;
    int rc;

    if (cbs.started)
        return cudaSuccess;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    rc = pthread_create(&th, &attr, callback_thread, NULL);
    pthread_attr_destroy(&attr);
    if (rc != 0)
        return cudaErrorMemoryAllocation;
    cbs.started = true;
    return cudaSuccess;
}

cudaError_t tdm_callback_enqueue(cudaStream_t stream, cudaHostFn_t host, cudaStreamCallback_t stream_cb,
                                 void *data)
{
    tdm_callback_args a = { .stream = tdm_stream_id(stream) };
    cudaError_t err;

    if (on_callback_thread)
        return cudaErrorNotPermitted;
    err = tdm_connect();
    if (err)
        return err;
    pthread_mutex_lock(&cbs.lock);
    err = cbs.dead ? cudaErrorDevicesUnavailable : start_locked();
    if (!err && tdm_grow(&cbs.v, &cbs.cap, cbs.n + 1, sizeof(*cbs.v), 16) != 0)
        err = cudaErrorMemoryAllocation;
    if (err) {
        pthread_mutex_unlock(&cbs.lock);
        return err;
    }
    a.fn = ++cbs.next_key;
    cbs.v[cbs.n++] = (cb_entry){ .key = a.fn, .host = host, .stream_cb = stream_cb, .data = data, .stream = stream };
    cbs.in_flight++;
    cbs.busy = true;
    pthread_cond_signal(&cbs.wake);
    pthread_mutex_unlock(&cbs.lock);
    err = tdm_call_err(TDM_CALLBACK_ENQUEUE, &a);
    pthread_mutex_lock(&cbs.lock);
    cbs.in_flight--;
    cbs.answered++;
    if ((int)err == TDM_ERR_CAPTURED_HOST) {
        /* The stream captures: the function is a host node of its graph
         * now, run at each launch (docs/graphs.md "Host nodes"). */
        for (size_t i = 0; i < cbs.n; i++)
            if (cbs.v[i].key == a.fn)
                cbs.v[i].node = true;
        cbs.nodes++;
        err = cudaSuccess;
    } else if (err) {
        cb_entry gone;

        take_locked(a.fn, &gone, false);
    }
    pthread_mutex_unlock(&cbs.lock);
    return err;
}

/* ---- graph host nodes (issue 14, docs/graphs.md "Host nodes") ---- */

cudaError_t tdm_callback_host_node(cudaHostFn_t fn, void *data, uint64_t *key)
{
    cudaError_t err = tdm_connect();

    if (err)
        return err;
    pthread_mutex_lock(&cbs.lock);
    if (cbs.dead)
        err = cudaErrorDevicesUnavailable;
    else if (cbs.nodes >= TDM_MAX_HOST_NODES)
        err = cudaErrorMemoryAllocation;   /* as the driver, out of host memory */
    else if (!(err = start_locked()) && tdm_grow(&cbs.v, &cbs.cap, cbs.n + 1, sizeof(*cbs.v), 16) != 0)
        err = cudaErrorMemoryAllocation;
    if (!err) {
        *key = ++cbs.next_key;
        cbs.v[cbs.n++] = (cb_entry){ .key = *key, .host = fn, .data = data, .node = true };
        cbs.nodes++;
    }
    pthread_mutex_unlock(&cbs.lock);
    return err;
}

void tdm_callback_host_node_named(uint64_t key, uint64_t node)
{
    pthread_mutex_lock(&cbs.lock);
    for (size_t i = 0; i < cbs.n; i++)
        if (cbs.v[i].key == key)
            cbs.v[i].node_handle = node;
    pthread_mutex_unlock(&cbs.lock);
}

void tdm_callback_host_node_drop(uint64_t key)
{
    cb_entry gone;

    pthread_mutex_lock(&cbs.lock);
    take_locked(key, &gone, false);
    pthread_mutex_unlock(&cbs.lock);
}

cudaError_t tdm_callback_host_node_params(uint64_t node, cudaHostFn_t *fn, void **data, bool set)
{
    cudaError_t err = cudaErrorInvalidValue;   /* not a host node this process added */

    pthread_mutex_lock(&cbs.lock);
    for (size_t i = 0; node && i < cbs.n; i++) {
        cb_entry *e = &cbs.v[i];

        if (!e->node || e->node_handle != node)
            continue;
        if (set) {
            e->host = *fn;
            e->data = *data;
        } else {
            *fn = e->host;
            *data = e->data;
        }
        err = cudaSuccess;
        break;
    }
    pthread_mutex_unlock(&cbs.lock);
    return err;
}

/* ---- graph node parameters (issue 14) ---- */
bool tdm_callback_host_key_update(uint64_t key, cudaHostFn_t fn, void *data)
{
    bool done = false;

    pthread_mutex_lock(&cbs.lock);
    /* While anything may be pending, an earlier launch's run of key may be
     * among it: it must keep the function it was launched with. */
    for (size_t i = 0; !cbs.busy && !cbs.dead && i < cbs.n && !done; i++) {
        if (cbs.v[i].key != key || !cbs.v[i].node)
            continue;
        cbs.v[i].host = fn;
        cbs.v[i].data = data;
        done = true;
    }
    pthread_mutex_unlock(&cbs.lock);
    return done;
}

bool tdm_callback_graph_launch_begin(void)
{
    bool nodes;

    pthread_mutex_lock(&cbs.lock);
    /* No launch while a callback may hold a stream (docs/graphs.md "Host
     * nodes", "the driver's host-function thread"): cuGraphLaunch may wait
     * in the driver for an earlier launch of the exec (its pageable copies
     * need the driver's one host-function thread, which an earlier launch's
     * host node holds until the guest reports it run), and that wait would
     * be the session thread's, which the report needs.  Not on the
     * callback thread: its launch is refused. */
    while (!on_callback_thread && cbs.busy && !cbs.dead)
        pthread_cond_wait(&cbs.idle, &cbs.lock);
    /* A launch of a graph with host nodes queues callbacks: the callback
     * thread polls for them, counted as an enqueue on its way. */
    nodes = cbs.nodes > 0 && !cbs.dead;
    if (nodes) {
        cbs.in_flight++;
        cbs.busy = true;
        pthread_cond_signal(&cbs.wake);
    }
    pthread_mutex_unlock(&cbs.lock);
    return nodes;
}

void tdm_callback_graph_launch_end(void)
{
    pthread_mutex_lock(&cbs.lock);
    cbs.in_flight--;
    cbs.answered++;
    pthread_mutex_unlock(&cbs.lock);
}

/* ---- event nodes, child graphs, user objects (issue 14) ---- */

cudaError_t tdm_callback_post(cudaHostFn_t fn, void *data)
{
    cudaError_t err;

    pthread_mutex_lock(&cbs.lock);
    err = cbs.dead ? cudaErrorDevicesUnavailable : start_locked();
    if (!err && tdm_grow(&cbs.posted, &cbs.postcap, cbs.nposted + 1, sizeof(*cbs.posted), 8) != 0)
        err = cudaErrorMemoryAllocation;
    if (!err) {
        cbs.posted[cbs.nposted++] = (cb_entry){ .host = fn, .data = data };
        pthread_cond_signal(&cbs.wake);
    }
    pthread_mutex_unlock(&cbs.lock);
    return err;
}
