/* Host callbacks on the GPU (issue 14, docs/runtime-api.md "Host
 * callbacks").  The stream is held by the device itself, not by a driver
 * thread: a stream callback tells the session the point is reached
 * (cuStreamAddCallback, which passes the stream's error), then the stream
 * waits for a word of pinned host memory to become 1
 * (cuStreamWaitValue32), which the release writes.  The driver runs every
 * host function of the context on one thread, so blocking there would hold
 * every session's callbacks behind one guest; here that thread only ever
 * runs two short functions.  A last host function puts the word back in
 * the pool once the wait has passed it.  The pool belongs to the backend,
 * as the context does: a rebuilt context gets a new one. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include "cuda_backend_internal.h"
#include "grow.h"

#define FLAGS_PER_PAGE 1024u   /* 4-byte words in one pinned 4 KiB page */

struct tdm_bhold {
    atomic_int refs;           /* due's, the release's and the reclaim's */
    tdm_backend *b;
    uint32_t slot;
    uint32_t *flag;            /* the stream waits until it holds 1 */
    CUdeviceptr dflag;
    void (*due)(void *arg, int status);
    void *arg;
};

typedef struct flag_page {
    uint32_t *host;
    CUdeviceptr dev;
} flag_page;

/* The words of one context, in pages pinned for the device. */
typedef struct tdm_cuda_holds {
    pthread_mutex_t lock;
    flag_page *pages;
    size_t npages, pages_cap;
    uint32_t *free;            /* slots not in use: page * FLAGS_PER_PAGE + word */
    size_t nfree, free_cap;
} tdm_cuda_holds;

int tdm_cuda_holds_init(tdm_backend *b)
{
    b->holds = calloc(1, sizeof(*b->holds));
    if (!b->holds || pthread_mutex_init(&b->holds->lock, NULL) != 0) {
        free(b->holds);
        b->holds = NULL;
        return cudaErrorMemoryAllocation;
    }
    return 0;
}

void tdm_cuda_holds_free(tdm_backend *b, bool lost)
{
    tdm_cuda_holds *p = b->holds;

    if (!p)
        return;
    if (lost) {
        /* The driver may still hold reclaims it will never run, or run
         * late: the pool stays (a few bytes per lost context). */
        return;
    }
    for (size_t i = 0; i < p->npages; i++)
        tdm_cuda_err(tdm_cu.cuMemFreeHost(p->pages[i].host), "cuMemFreeHost(callback words)");
    pthread_mutex_destroy(&p->lock);
    free(p->pages);
    free(p->free);
    free(p);
    b->holds = NULL;
}

/* p->lock held.  One more page of words. */
static int pool_grow_locked(tdm_cuda_holds *p)
{
    void *host = NULL;
    CUdeviceptr d = 0;
    int err;

    if (tdm_grow(&p->pages, &p->pages_cap, p->npages + 1, sizeof(*p->pages), 4) != 0 ||
        tdm_grow(&p->free, &p->free_cap, (p->npages + 1) * FLAGS_PER_PAGE, sizeof(*p->free), FLAGS_PER_PAGE) != 0)
        return cudaErrorMemoryAllocation;
    err = tdm_cuda_err(tdm_cu.cuMemHostAlloc(&host, FLAGS_PER_PAGE * sizeof(uint32_t),
                                             CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE),
                       "cuMemHostAlloc");
    if (err)
        return err;
    err = tdm_cuda_err(tdm_cu.cuMemHostGetDevicePointer(&d, host, 0), "cuMemHostGetDevicePointer");
    if (err) {
        tdm_cu.cuMemFreeHost(host);
        return err;
    }
    p->pages[p->npages] = (flag_page){ host, d };
    for (uint32_t i = 0; i < FLAGS_PER_PAGE; i++)
        p->free[p->nfree++] = (uint32_t)p->npages * FLAGS_PER_PAGE + i;
    p->npages++;
    return 0;
}

static int slot_get(tdm_bhold *h)
{
    tdm_cuda_holds *p = h->b->holds;
    int err = 0;

    pthread_mutex_lock(&p->lock);
    if (!p->nfree)
        err = pool_grow_locked(p);
    if (!err) {
        const flag_page *pg;

        h->slot = p->free[--p->nfree];
        pg = &p->pages[h->slot / FLAGS_PER_PAGE];
        h->flag = pg->host + h->slot % FLAGS_PER_PAGE;
        h->dflag = pg->dev + (h->slot % FLAGS_PER_PAGE) * sizeof(uint32_t);
    }
    pthread_mutex_unlock(&p->lock);
    return err;
}

static void slot_put(tdm_bhold *h)
{
    tdm_cuda_holds *p = h->b->holds;

    pthread_mutex_lock(&p->lock);
    p->free[p->nfree++] = h->slot;
    pthread_mutex_unlock(&p->lock);
}

static void unref(tdm_bhold *h, int n)
{
    if (atomic_fetch_sub(&h->refs, n) == n)
        free(h);
}

static void CUDA_CB on_due(CUstream hs, CUresult status, void *p)
{
    tdm_bhold *h = p;

    (void)hs;
    h->due(h->arg, tdm_cuda_map_error(status));
    unref(h, 1);
}

/* The wait has passed the word: it may serve another hold. */
static void CUDA_CB reclaim(void *p)
{
    tdm_bhold *h = p;

    slot_put(h);
    unref(h, 1);
}

int tdm_cuda_host_func_enqueue(tdm_backend *b, tdm_bstream *s, void (*due)(void *arg, int status), void *arg,
                               tdm_bhold **out)
{
    CUstream cs = tdm_cuda_stream(s);
    tdm_bhold *h;
    int err = tdm_cuda_enter(b);

    if (err)
        return err;
    h = calloc(1, sizeof(*h));
    if (!h)
        return cudaErrorMemoryAllocation;
    atomic_init(&h->refs, 3);
    h->b = b;
    h->due = due;
    h->arg = arg;
    err = slot_get(h);
    if (err) {
        free(h);
        return err;
    }
    __atomic_store_n(h->flag, 0, __ATOMIC_SEQ_CST);
    err = tdm_cuda_err(tdm_cu.cuStreamAddCallback(cs, on_due, h, 0), "cuStreamAddCallback");
    if (err) {
        slot_put(h);
        free(h);
        return err;
    }
    /* From here on_due will run (it holds its own reference), so the call
     * succeeds: if the stream cannot wait (logged), the function still
     * runs after the stream's earlier work, but later work does not wait
     * for it. */
    tdm_cuda_err(tdm_cu.cuStreamWaitValue32(cs, h->dflag, 1, CU_STREAM_WAIT_VALUE_GEQ), "cuStreamWaitValue32");
    if (tdm_cuda_err(tdm_cu.cuLaunchHostFunc(cs, reclaim, h), "cuLaunchHostFunc") != 0)
        unref(h, 1);   /* the word is lost to the pool; the hold still works */
    *out = h;
    return 0;
}

void tdm_cuda_host_func_release(tdm_backend *b, tdm_bhold *h)
{
    (void)b;
    __atomic_store_n(h->flag, 1, __ATOMIC_SEQ_CST);
    unref(h, 1);
}

/* ---- graph host nodes (issue 14, cuda_graph_host.c) ---- */

int tdm_cuda_hold_new(tdm_backend *b, tdm_bhold **out)
{
    tdm_bhold *h = calloc(1, sizeof(*h));
    int err;

    if (!h)
        return cudaErrorMemoryAllocation;
    atomic_init(&h->refs, 3);   /* the run's two (as due's and reclaim's) and the release's */
    h->b = b;
    if ((err = slot_get(h)) != 0) {
        free(h);
        return err;
    }
    __atomic_store_n(h->flag, 0, __ATOMIC_SEQ_CST);
    *out = h;
    return 0;
}

void tdm_cuda_hold_bind(tdm_bhold *h, void (*due)(void *arg, int status), void *arg)
{
    h->due = due;
    h->arg = arg;
}

void tdm_cuda_hold_drop(tdm_bhold *h, bool unbound)
{
    if (unbound) {   /* nobody else has it */
        slot_put(h);
        free(h);
        return;
    }
    /* The session's release still writes the word: it stays out of the
     * pool (a failed launch only). */
    unref(h, 2);
}

void tdm_cuda_hold_run(tdm_bhold *h)
{
    long backoff_us = 20;

    h->due(h->arg, 0);
    /* The guest's function runs meanwhile; the release writes 1. */
    while (!__atomic_load_n(h->flag, __ATOMIC_SEQ_CST)) {
        struct timespec ts = { 0, backoff_us * 1000 };

        nanosleep(&ts, NULL);
        backoff_us = backoff_us < 1000 ? backoff_us * 2 : 1000;
    }
    slot_put(h);
    unref(h, 2);
}
