/* User objects (docs/graphs.md "Event nodes, child graphs and user
 * objects"): cudaUserObjectCreate's objects, the references the program and
 * its graphs and executable graphs hold, and the destructor run when the
 * last goes.
 *
 * Everything lives in this process: the server never sees a user object.
 * The program's destructor is its own function, which only this process
 * can call; the references graphs hold follow the graph calls (clone,
 * instantiate, exec update, destroy), which all pass through here.  As
 * natively (cudaUserObjectNoDestructorSync), the destructor does not run
 * inside the call that drops the last reference: it is handed to the
 * callback thread (callbacks.c).  An executable graph's references go
 * only once the work queued on the streams it was launched into is done:
 * its destruction queues a host function on each of them, as natively the
 * driver holds them until its launches complete. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "guest.h"
#include "log.h"

/* At most this many live objects and reference entries per process. */
#define MAX_USER_OBJECTS 65536
#define MAX_HOLDS 65536
/* Streams remembered per executable graph (docs: beyond, the first ones). */
#define EXEC_STREAMS 16

struct CUuserObject_st {
    void *ptr;
    cudaHostFn_t destroy;
    uint64_t refs;
};

/* count references to obj held by a graph or an executable graph. */
typedef struct hold {
    uint64_t owner;
    bool exec;
    cudaUserObject_t obj;
    uint64_t count;
} hold;

/* The streams an executable graph was launched into. */
typedef struct exec_streams {
    uint64_t exec;
    cudaStream_t s[EXEC_STREAMS];
    size_t n;
} exec_streams;

/* References an executable graph gave up, released once the last of the
 * host functions queued for them has run. */
typedef struct deferred {
    hold *v;
    size_t n, cap;
    int waiting;
} deferred;

static struct {
    pthread_mutex_t lock;
    cudaUserObject_t *live;
    size_t nlive, livecap;
    hold *holds;
    size_t nholds, holdcap;
    exec_streams *execs;
    size_t nexecs, execcap;
} uo = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* uo.lock held. */
static size_t live_index(cudaUserObject_t o)
{
    for (size_t i = 0; i < uo.nlive; i++)
        if (uo.live[i] == o)
            return i;
    return SIZE_MAX;
}

/* uo.lock held.  Drops count references of o (there are that many); the
 * last one hands the destructor to the callback thread. */
static void unref_locked(cudaUserObject_t o, uint64_t count)
{
    size_t i;

    o->refs -= count;
    if (o->refs || (i = live_index(o)) == SIZE_MAX)
        return;
    uo.live[i] = uo.live[--uo.nlive];
    if (tdm_callback_post(o->destroy, o->ptr) != cudaSuccess)
        tdm_log("user object %p: its destructor could not be handed to the callback thread", (void *)o);
    free(o);
}

cudaError_t cudaUserObjectCreate(cudaUserObject_t *object_out, void *ptr, cudaHostFn_t destroy,
                                 unsigned int initialRefcount, unsigned int flags)
{
    cudaUserObject_t o;
    cudaError_t err = cudaSuccess;

    /* The runtime accepts only cudaUserObjectNoDestructorSync. */
    if (!object_out || !destroy || !initialRefcount || flags != cudaUserObjectNoDestructorSync)
        return tdm_ret(cudaErrorInvalidValue);
    if (!(o = malloc(sizeof(*o))))
        return tdm_ret(cudaErrorMemoryAllocation);
    *o = (struct CUuserObject_st){ ptr, destroy, initialRefcount };
    pthread_mutex_lock(&uo.lock);
    if (uo.nlive >= MAX_USER_OBJECTS || tdm_grow(&uo.live, &uo.livecap, uo.nlive + 1, sizeof(*uo.live), 16) != 0)
        err = cudaErrorMemoryAllocation;
    else
        uo.live[uo.nlive++] = o;
    pthread_mutex_unlock(&uo.lock);
    if (err)
        free(o);
    else
        *object_out = o;
    return tdm_ret(err);
}

cudaError_t cudaUserObjectRetain(cudaUserObject_t object, unsigned int count)
{
    cudaError_t err = cudaSuccess;

    if (!count)
        return tdm_ret(cudaErrorInvalidValue);
    pthread_mutex_lock(&uo.lock);
    if (live_index(object) == SIZE_MAX || object->refs > UINT32_MAX)
        err = cudaErrorInvalidValue;
    else
        object->refs += count;
    pthread_mutex_unlock(&uo.lock);
    return tdm_ret(err);
}

cudaError_t cudaUserObjectRelease(cudaUserObject_t object, unsigned int count)
{
    cudaError_t err = cudaSuccess;

    if (!count)
        return tdm_ret(cudaErrorInvalidValue);
    pthread_mutex_lock(&uo.lock);
    /* Releasing references the program does not hold is undefined natively:
     * refused here rather than freeing what a graph still holds. */
    if (live_index(object) == SIZE_MAX || object->refs < count)
        err = cudaErrorInvalidValue;
    else
        unref_locked(object, count);
    pthread_mutex_unlock(&uo.lock);
    return tdm_ret(err);
}

/* uo.lock held. */
static hold *hold_find_locked(uint64_t owner, bool exec, cudaUserObject_t o)
{
    for (size_t i = 0; i < uo.nholds; i++)
        if (uo.holds[i].owner == owner && uo.holds[i].exec == exec && uo.holds[i].obj == o)
            return &uo.holds[i];
    return NULL;
}

/* uo.lock held.  Whether exec holds a reference. */
static bool holds_any_locked(uint64_t exec)
{
    for (size_t i = 0; i < uo.nholds; i++)
        if (uo.holds[i].owner == exec && uo.holds[i].exec)
            return true;
    return false;
}

/* uo.lock held.  count more references of o held by owner (taken from the
 * object's count by the caller). */
static cudaError_t hold_add_locked(uint64_t owner, bool exec, cudaUserObject_t o, uint64_t count)
{
    hold *h = hold_find_locked(owner, exec, o);

    if (h) {
        h->count += count;
        return cudaSuccess;
    }
    if (uo.nholds >= MAX_HOLDS || tdm_grow(&uo.holds, &uo.holdcap, uo.nholds + 1, sizeof(*uo.holds), 16) != 0)
        return cudaErrorMemoryAllocation;
    uo.holds[uo.nholds++] = (hold){ owner, exec, o, count };
    return cudaSuccess;
}

/* Whether graph is a graph of the session (the server's answer). */
static cudaError_t graph_valid(cudaGraph_t graph)
{
    tdm_handle g = (uint64_t)(uintptr_t)graph;
    tdm_graph_nodes_res r;
    cudaError_t err;

    if (!graph)
        return cudaErrorInvalidValue;
    memset(&r, 0, sizeof(r));
    err = tdm_call(TDM_GRAPH_GET_NODES, &g, &r);
    if (!err)
        err = (cudaError_t)r.err;
    xdr_free((xdrproc_t)xdr_tdm_graph_nodes_res, (char *)&r);
    return err;
}

cudaError_t cudaGraphRetainUserObject(cudaGraph_t graph, cudaUserObject_t object, unsigned int count,
                                      unsigned int flags)
{
    cudaError_t err;

    if (!count || (flags & ~(unsigned)cudaGraphUserObjectMove))
        return tdm_ret(cudaErrorInvalidValue);
    if ((err = graph_valid(graph)) != cudaSuccess)
        return tdm_ret(err);
    pthread_mutex_lock(&uo.lock);
    if (live_index(object) == SIZE_MAX || object->refs > UINT32_MAX ||
        ((flags & cudaGraphUserObjectMove) && object->refs < count)) {
        err = cudaErrorInvalidValue;
    } else if (!(err = hold_add_locked((uint64_t)(uintptr_t)graph, false, object, count)) &&
               !(flags & cudaGraphUserObjectMove)) {
        object->refs += count;   /* new references; a move hands over the caller's */
    }
    pthread_mutex_unlock(&uo.lock);
    return tdm_ret(err);
}

cudaError_t cudaGraphReleaseUserObject(cudaGraph_t graph, cudaUserObject_t object, unsigned int count)
{
    cudaError_t err = cudaSuccess;
    hold *h;

    if (!count || !graph)
        return tdm_ret(cudaErrorInvalidValue);
    pthread_mutex_lock(&uo.lock);
    h = live_index(object) == SIZE_MAX ? NULL : hold_find_locked((uint64_t)(uintptr_t)graph, false, object);
    if (!h || h->count < count) {
        err = cudaErrorInvalidValue;   /* the graph does not hold that many */
    } else {
        h->count -= count;
        if (!h->count)
            *h = uo.holds[--uo.nholds];
        unref_locked(object, count);
    }
    pthread_mutex_unlock(&uo.lock);
    return tdm_ret(err);
}

/* uo.lock held.  Moves owner's references into *d (d->v NULL: released
 * at once). */
static void holds_take_locked(uint64_t owner, bool exec, deferred *d)
{
    for (size_t i = 0; i < uo.nholds;) {
        hold *h = &uo.holds[i];

        if (h->owner != owner || h->exec != exec) {
            i++;
            continue;
        }
        if (d && tdm_grow(&d->v, &d->cap, d->n + 1, sizeof(*d->v), 4) == 0) {
            d->v[d->n++] = *h;
        } else {
            unref_locked(h->obj, h->count);
        }
        *h = uo.holds[--uo.nholds];
    }
}

/* On the callback thread: one of the streams an exec's references waited
 * for is done; the last releases them. */
static void deferred_done(void *arg)
{
    deferred *d = arg;

    pthread_mutex_lock(&uo.lock);
    if (--d->waiting == 0) {
        for (size_t i = 0; i < d->n; i++)
            unref_locked(d->v[i].obj, d->v[i].count);
        free(d->v);
        free(d);
    }
    pthread_mutex_unlock(&uo.lock);
}

/* exec's references go once the work on the streams it was launched
 * into is done (at once if it never was, or those cannot be told). */
static void exec_release(uint64_t exec)
{
    deferred *d = calloc(1, sizeof(*d));
    exec_streams es = { 0 };

    pthread_mutex_lock(&uo.lock);
    for (size_t i = 0; i < uo.nexecs; i++)
        if (uo.execs[i].exec == exec) {
            es = uo.execs[i];
            uo.execs[i] = uo.execs[--uo.nexecs];
            break;
        }
    holds_take_locked(exec, true, d && es.n ? d : NULL);
    pthread_mutex_unlock(&uo.lock);
    if (!d || !d->n) {
        free(d);
        return;
    }
    /* One share per stream, and this call's own, dropped last: the
     * references cannot go before every host function is queued. */
    d->waiting = (int)es.n + 1;
    for (size_t i = 0; i < es.n; i++) {
        enum cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;

        /* On a capturing stream the function would become a node of its
         * graph: what was launched there before the capture is not waited
         * for then.  A stream gone (or this being the callback thread):
         * nothing to wait for. */
        if (cudaStreamIsCapturing(es.s[i], &cs) != cudaSuccess || cs != cudaStreamCaptureStatusNone ||
            tdm_callback_enqueue(es.s[i], deferred_done, NULL, d) != cudaSuccess)
            deferred_done(d);
    }
    deferred_done(d);
}

void tdm_user_objects_forget(uint64_t handle, bool exec)
{
    if (exec) {
        exec_release(handle);
        return;
    }
    pthread_mutex_lock(&uo.lock);
    holds_take_locked(handle, false, NULL);
    pthread_mutex_unlock(&uo.lock);
}

cudaError_t tdm_user_objects_copy(uint64_t from, uint64_t to, bool to_exec)
{
    cudaError_t err = cudaSuccess;
    size_t n;

    if (to_exec)
        exec_release(to);   /* an updated exec: the new graph's references replace its own */
    pthread_mutex_lock(&uo.lock);
    n = uo.nholds;
    for (size_t i = 0; i < n && !err; i++) {
        hold h = uo.holds[i];
        if (h.owner != from || h.exec)
            continue;
        if (!(err = hold_add_locked(to, to_exec, h.obj, h.count)))
            h.obj->refs += h.count;
    }
    pthread_mutex_unlock(&uo.lock);
    return err;
}

void tdm_user_objects_launched(uint64_t exec, cudaStream_t stream)
{
    exec_streams *e = NULL;

    pthread_mutex_lock(&uo.lock);
    for (size_t i = 0; i < uo.nexecs && !e; i++)
        if (uo.execs[i].exec == exec)
            e = &uo.execs[i];
    if (!e && holds_any_locked(exec) &&
        tdm_grow(&uo.execs, &uo.execcap, uo.nexecs + 1, sizeof(*uo.execs), 8) == 0) {
        e = &uo.execs[uo.nexecs++];
        *e = (exec_streams){ .exec = exec };
    }
    if (e) {
        bool known = false;
        for (size_t i = 0; i < e->n; i++)
            known |= e->s[i] == stream;
        if (!known && e->n < EXEC_STREAMS)
            e->s[e->n++] = stream;
    }
    pthread_mutex_unlock(&uo.lock);
}
