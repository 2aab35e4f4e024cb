/* Host copies of device memory, kept coherent at synchronization points
 * (docs/memory-models.md, "How coherence works").  Managed memory and, over
 * TCP, mapped host memory are device memory D of the session's arena with
 * a host copy H in this process (managed: H == D, mapped at the same
 * address).  The copy is tracked in blocks of BLOCK bytes:
 *
 *   INVALID  PROT_NONE           the device may hold newer bytes
 *   CLEAN    PROT_READ           host and device agree
 *   DIRTY    PROT_READ|WRITE     the host wrote; the device has not seen it
 *
 * Before device work that may touch the memory (a launch, a graph launch, a
 * copy or memset naming it) the DIRTY blocks are uploaded ahead of it on the
 * same stream; a launch then makes every block INVALID.  A host access to an
 * INVALID block faults: the SIGSEGV handler fetches the block (and the
 * INVALID ones after it, up to FETCH_BLOCKS) with a synchronous
 * device-to-host copy on the legacy stream and maps it CLEAN; a write to a
 * CLEAN block makes it DIRTY.  This is the pre-Pascal contract
 * (concurrentManagedAccess 0): the host touches the memory only while no
 * kernel that may use it runs.
 *
 * Locking: `lock` is taken before the client's lock, never after.  The
 * library never touches a coherent block that it has not made accessible
 * under `lock` itself, so the fault handler, which takes `lock` and then
 * makes calls, never waits for a lock its own thread holds. */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>

#include "grow.h"
#include "guest.h"
#include "log.h"

#define BLOCK (64u * 1024u)
#define FETCH_BLOCKS 32u          /* one fault fetches up to 2 MiB */
#define MAX_CAPTURES 64

enum { INVALID = 0, CLEAN = 1, DIRTY = 2 };

typedef struct pair {
    uintptr_t host;               /* H: page-aligned */
    uint64_t dev;                 /* D */
    uint64_t size;                /* bytes the device holds */
    uint64_t span;                /* host bytes tracked: whole pages */
    uint32_t nblocks, valid;      /* valid: blocks not INVALID */
    uint8_t *state;
    int attach;                   /* cudaMemAttachGlobal/Host/Single */
    uint64_t attach_stream;       /* for cudaMemAttachSingle */
    bool pinned;                  /* pinned memory by its host pointer over TCP (H == D) */
    bool launched;                /* pinned: a launch may use it since the last wait */
} pair;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pair *pairs;
static size_t npairs, cap;
/* npairs, readable without the lock: launches and copies of a program
 * with no managed or mapped memory skip the lock. */
static atomic_size_t live;
/* Streams being captured into a graph: work on them is recorded, not run,
 * so it moves no data now (the graph's launch does). */
static uint64_t capturing[MAX_CAPTURES];
static size_t ncapturing;
static struct sigaction previous;
static pthread_once_t handler_once = PTHREAD_ONCE_INIT;
/* Pinned pairs a launch may use since the last wait: waits of a program
 * without them skip the lock. */
static atomic_size_t launched_pinned;
/* Whether this thread holds `lock`: a call made under it (a fetch) must
 * not run the wait hooks, which take it. */
static _Thread_local bool holding;

static void lock_pairs(void)
{
    pthread_mutex_lock(&lock);
    holding = true;
}

static void unlock_pairs(void)
{
    holding = false;
    pthread_mutex_unlock(&lock);
}

static uint64_t block_start(uint32_t k)
{
    return (uint64_t)k * BLOCK;
}

static uint64_t block_end(const pair *p, uint32_t k)
{
    uint64_t e = block_start(k) + BLOCK;

    return e < p->span ? e : p->span;
}

static void protect(const pair *p, uint32_t k0, uint32_t k1, int prot)
{
    mprotect((void *)(p->host + block_start(k0)), block_end(p, k1 - 1) - block_start(k0), prot);
}

/* Bytes [a, b) of the host span that the device holds. */
static uint64_t clip(const pair *p, uint64_t a, uint64_t b)
{
    if (a >= p->size)
        return 0;
    return (b < p->size ? b : p->size) - a;
}

/* Index of the pair whose host or device range contains addr, or -1; lock held. */
static long find(uintptr_t addr, bool *on_host)
{
    for (size_t i = 0; i < npairs; i++) {
        if (addr - pairs[i].host < pairs[i].span) {
            *on_host = true;
            return (long)i;
        }
        if ((uint64_t)addr - pairs[i].dev < pairs[i].size) {
            *on_host = false;
            return (long)i;
        }
    }
    return -1;
}

static bool is_capturing(uint64_t stream)
{
    for (size_t i = 0; i < ncapturing; i++)
        if (capturing[i] == stream)
            return true;
    return false;
}

/* flush() for pinned pairs before a wait: no stream to order after it. */
#define NO_STREAM UINT64_MAX
/* Pinned uploads went up since the last drain: a fetch waits for them. */
static bool uploads_pending;

/* Uploads the DIRTY blocks of [k0, k1) ahead of later work on `stream`;
 * they become CLEAN.  Write-protected first, so that a write racing the
 * upload faults and waits for `lock` instead of being lost.  A pinned
 * pair's uploads all go on the library's non-blocking stream, in order
 * with each other (one before a wait must not be overtaken by an older
 * one), and `stream` then waits for them. */
static cudaError_t flush(pair *p, uint32_t k0, uint32_t k1, uint64_t stream)
{
    cudaError_t err = cudaSuccess;
    uint64_t target = stream;
    bool any = false;

    if (p->pinned)
        stream = tdm_stream_id(tdm_host_upload_stream());

    for (uint32_t k = k0; k < k1 && !err;) {
        if (p->state[k] != DIRTY) {
            k++;
            continue;
        }
        uint32_t e = k;
        while (e < k1 && p->state[e] == DIRTY)
            p->state[e++] = CLEAN;
        protect(p, k, e, PROT_READ);
        uint64_t n = clip(p, block_start(k), block_end(p, e - 1));
        if (n)
            err = tdm_memcpy_direct((void *)(uintptr_t)(p->dev + block_start(k)),
                                    (const void *)(p->host + block_start(k)), n, cudaMemcpyHostToDevice,
                                    (cudaStream_t)(uintptr_t)stream, true);
        any = any || n;
        k = e;
    }
    if (p->pinned && any) {
        uploads_pending = true;
        if (!err && target != NO_STREAM)
            err = tdm_host_upload_fence(target);
    }
    return err;
}

static void invalidate(pair *p, uint32_t k0, uint32_t k1)
{
    for (uint32_t k = k0; k < k1 && p->valid;) {
        if (p->state[k] == INVALID) {
            k++;
            continue;
        }
        uint32_t e = k;
        while (e < k1 && p->state[e] != INVALID) {
            p->state[e++] = INVALID;
            p->valid--;
        }
        protect(p, k, e, PROT_NONE);
        k = e;
    }
}

/* Fetches the INVALID blocks of [k0, k1), synchronously on `stream`. */
static cudaError_t fetch(pair *p, uint32_t k0, uint32_t k1, uint64_t stream)
{
    cudaError_t err = cudaSuccess;

    /* The legacy stream does not wait for the non-blocking one. */
    if (p->pinned && uploads_pending) {
        err = tdm_host_upload_drain();
        uploads_pending = false;
    }

    for (uint32_t k = k0; k < k1;) {
        if (p->state[k] != INVALID) {
            k++;
            continue;
        }
        uint32_t e = k;
        while (e < k1 && p->state[e] == INVALID) {
            p->state[e++] = CLEAN;
            p->valid++;
        }
        protect(p, k, e, PROT_READ | PROT_WRITE);
        uint64_t n = clip(p, block_start(k), block_end(p, e - 1));
        cudaError_t e2 = n ? tdm_memcpy_direct((void *)(p->host + block_start(k)),
                                               (const void *)(uintptr_t)(p->dev + block_start(k)), n,
                                               cudaMemcpyDeviceToHost, (cudaStream_t)(uintptr_t)stream, false)
                           : cudaSuccess;
        if (e2 && !err)
            err = e2;
        protect(p, k, e, PROT_READ);
        k = e;
    }
    return err;
}

/* The blocks [*k0, *k1) of p covering [addr, addr+n) (addr on the side `on_host` says). */
static void blocks_of(const pair *p, uintptr_t addr, uint64_t n, bool on_host, uint32_t *k0, uint32_t *k1)
{
    uint64_t off = on_host ? addr - p->host : (uint64_t)addr - p->dev;
    uint64_t end = off + (n ? n : 1);

    if (end > p->span)
        end = p->span;
    *k0 = (uint32_t)(off / BLOCK);
    *k1 = (uint32_t)((end + BLOCK - 1) / BLOCK);
}

/* ---- the fault handler ---- */

static void chain(int sig, siginfo_t *si, void *uc)
{
    if (previous.sa_flags & SA_SIGINFO) {
        previous.sa_sigaction(sig, si, uc);
    } else if (previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN) {
        previous.sa_handler(sig);
    } else {
        /* Not ours: the access faults again with the default action. */
        signal(sig, SIG_DFL);
    }
}

/* Whether the faulting access was a write, where the CPU says so (x86-64:
 * the page-fault error code); elsewhere a write to a block just fetched
 * faults a second time, which makes it DIRTY. */
static bool fault_was_write(const void *uc)
{
#if defined(__x86_64__)
    return (((const ucontext_t *)uc)->uc_mcontext.gregs[REG_ERR] & 2) != 0;
#else
    (void)uc;
    return false;
#endif
}

/* True when addr is a block of ours, now accessible (or made so by
 * another thread meanwhile): the access is retried. */
static bool on_fault(uintptr_t addr, bool write)
{
    bool on_host = false, ours = false;
    cudaError_t err = cudaSuccess;

    lock_pairs();
    long i = find(addr, &on_host);
    if (i >= 0 && on_host) {
        pair *p = &pairs[i];
        uint32_t k = (uint32_t)((addr - p->host) / BLOCK), e = k + 1;
        bool was_invalid = p->state[k] == INVALID;

        ours = true;
        if (was_invalid) {
            while (e < p->nblocks && e < k + FETCH_BLOCKS && p->state[e] == INVALID)
                e++;
            err = fetch(p, k, e, 0);
        }
        /* A fault on a CLEAN block is a write; on an INVALID one, the CPU
         * may have said so (else the write faults again, now on CLEAN). */
        if (p->state[k] == CLEAN && (!was_invalid || write)) {
            p->state[k] = DIRTY;
            protect(p, k, k + 1, PROT_READ | PROT_WRITE);
        }
    }
    unlock_pairs();
    if (err)
        tdm_log("fetching %#lx from the device failed (cudaError %d): its host copy is stale",
                (unsigned long)addr, (int)err);
    return ours;
}

static void handler(int sig, siginfo_t *si, void *uc)
{
    if (!on_fault((uintptr_t)si->si_addr, fault_was_write(uc)))
        chain(sig, si, uc);
}

static void install_handler(void)
{
    struct sigaction sa;

    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = handler;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, &previous);
}

/* ---- the interface ---- */

cudaError_t tdm_coherent_add(uintptr_t host, uint64_t dev, uint64_t size, uint64_t span, int attach, bool valid)
{
    uint32_t nblocks = (uint32_t)((span + BLOCK - 1) / BLOCK);
    uint8_t *state = malloc(nblocks ? nblocks : 1);
    cudaError_t err = cudaSuccess;

    if (!state || span / BLOCK >= UINT32_MAX) {
        free(state);
        return cudaErrorMemoryAllocation;
    }
    memset(state, valid ? CLEAN : INVALID, nblocks);
    pthread_once(&handler_once, install_handler);
    lock_pairs();
    if (tdm_grow(&pairs, &cap, npairs + 1, sizeof(*pairs), 16) == 0) {
        pairs[npairs++] = (pair){ host, dev, size, span, nblocks, valid ? nblocks : 0, state, attach, 0, false, false };
        atomic_store(&live, npairs);
        mprotect((void *)host, span, valid ? PROT_READ : PROT_NONE);
    } else {
        free(state);
        err = cudaErrorMemoryAllocation;
    }
    unlock_pairs();
    return err;
}

void tdm_coherent_remove(uintptr_t host)
{
    lock_pairs();
    for (size_t i = 0; i < npairs; i++) {
        if (pairs[i].host == host) {
            mprotect((void *)host, pairs[i].span, PROT_READ | PROT_WRITE);
            if (pairs[i].launched)
                atomic_fetch_sub(&launched_pinned, 1);
            free(pairs[i].state);
            pairs[i] = pairs[--npairs];
            atomic_store(&live, npairs);
            break;
        }
    }
    unlock_pairs();
}

void tdm_coherent_clear(void)
{
    lock_pairs();
    for (size_t i = 0; i < npairs; i++) {
        mprotect((void *)pairs[i].host, pairs[i].span, PROT_READ | PROT_WRITE);
        free(pairs[i].state);
    }
    npairs = 0;
    atomic_store(&live, 0);
    atomic_store(&launched_pinned, 0);
    unlock_pairs();
}

int tdm_coherent_state(const void *addr)
{
    bool on_host = false;
    int st = -1;

    lock_pairs();
    long i = find((uintptr_t)addr, &on_host);
    if (i >= 0 && on_host)
        st = pairs[i].state[((uintptr_t)addr - pairs[i].host) / BLOCK];
    unlock_pairs();
    return st;
}

bool tdm_coherent_lookup(const void *addr, void **host, uint64_t *dev)
{
    bool on_host = false;

    lock_pairs();
    long i = find((uintptr_t)addr, &on_host);
    if (i >= 0) {
        if (host)
            *host = (void *)pairs[i].host;
        if (dev)
            *dev = pairs[i].dev;
    }
    unlock_pairs();
    return i >= 0;
}

cudaError_t tdm_coherent_attach(const void *host, int attach, uint64_t stream)
{
    bool on_host = false;
    cudaError_t err = cudaErrorInvalidValue;

    lock_pairs();
    long i = find((uintptr_t)host, &on_host);
    if (i >= 0) {
        pairs[i].attach = attach;
        pairs[i].attach_stream = stream;
        err = cudaSuccess;
    }
    unlock_pairs();
    return err;
}

/* Whether device work on `stream` may touch p.  Memory attached to one
 * stream (cudaMemAttachSingle) is left to that stream's work and the
 * legacy stream's, as on a device without concurrent managed access, so
 * host threads working on their own streams' memory do not disturb each
 * other.  cudaMemAttachHost memory is treated as global: native GPUs with
 * concurrent managed access let kernels reach it, and programs written for
 * them pass it to kernels unattached. */
static bool reachable(const pair *p, uint64_t stream)
{
    if (p->attach == cudaMemAttachSingle)
        return stream <= 2 || stream == p->attach_stream;   /* legacy, per-thread (the session's null stream) */
    return true;
}

cudaError_t tdm_coherent_before_launch(uint64_t stream, bool every_stream)
{
    cudaError_t err = cudaSuccess;

    if (atomic_load(&live) == 0)
        return cudaSuccess;
    lock_pairs();
    if (!is_capturing(stream)) {
        for (size_t i = 0; i < npairs && !err; i++) {
            pair *p = &pairs[i];

            if (p->pinned) {
                /* Left valid: the host may set a flag the kernel waits for
                 * while it runs; the wait after it invalidates. */
                err = flush(p, 0, p->nblocks, stream);
                if (!p->launched)
                    atomic_fetch_add(&launched_pinned, 1);
                p->launched = true;
                continue;
            }
            if (!p->valid || (!every_stream && !reachable(p, stream)))
                continue;
            err = flush(p, 0, p->nblocks, stream);
            invalidate(p, 0, p->nblocks);
        }
    }
    unlock_pairs();
    return err;
}

/* One side of a copy: translated to the device address when it names a
 * host copy; its blocks flushed (a source) or flushed and invalidated (a
 * destination).  *dev_side true when it is (now) device memory of a pair. */
static cudaError_t copy_side(const void **addr, size_t n, bool is_dst, uint64_t stream, bool *dev_side)
{
    bool on_host = false;
    cudaError_t err = cudaSuccess;
    long i = find((uintptr_t)*addr, &on_host);

    *dev_side = false;
    if (i < 0)
        return cudaSuccess;
    pair *p = &pairs[i];
    uint32_t k0, k1;
    uint64_t off = on_host ? (uintptr_t)*addr - p->host : (uint64_t)(uintptr_t)*addr - p->dev;

    if (off + n > p->size)
        return cudaErrorInvalidValue;
    blocks_of(p, (uintptr_t)*addr, n, on_host, &k0, &k1);
    if (!is_capturing(stream)) {
        err = flush(p, k0, k1, stream);
        if (is_dst)
            invalidate(p, k0, k1);
    }
    *addr = (const void *)(uintptr_t)(p->dev + off);
    *dev_side = true;
    return err;
}

cudaError_t tdm_coherent_copy(void **dst, const void **src, size_t n, enum cudaMemcpyKind *kind, uint64_t stream)
{
    bool d = false, s = false;
    const void *dp = *dst;
    cudaError_t err;

    if (n == 0 || atomic_load(&live) == 0)
        return cudaSuccess;
    lock_pairs();
    err = copy_side(src, n, false, stream, &s);
    if (!err)
        err = copy_side(&dp, n, true, stream, &d);
    unlock_pairs();
    if (err || (!d && !s))
        return err;
    *dst = (void *)dp;
    /* A side in a pair is device memory now; the other keeps its kind. */
    d = d || tdm_allocs_is_device(*dst);
    s = s || tdm_allocs_is_device(*src);
    *kind = d ? (s ? cudaMemcpyDeviceToDevice : cudaMemcpyHostToDevice)
              : (s ? cudaMemcpyDeviceToHost : cudaMemcpyHostToHost);
    return cudaSuccess;
}

cudaError_t tdm_coherent_device_write(void **dst, size_t n, uint64_t stream)
{
    bool d = false;
    const void *dp = *dst;
    cudaError_t err;

    if (atomic_load(&live) == 0)
        return cudaSuccess;
    lock_pairs();
    err = copy_side(&dp, n, true, stream, &d);
    unlock_pairs();
    *dst = (void *)dp;
    return err;
}

cudaError_t tdm_coherent_prefetch(const void *addr, size_t n, bool to_host, uint64_t stream)
{
    bool on_host = false;
    cudaError_t err = cudaErrorInvalidValue;
    uint32_t k0, k1;

    lock_pairs();
    long i = find((uintptr_t)addr, &on_host);
    if (i >= 0) {
        blocks_of(&pairs[i], (uintptr_t)addr, n, on_host, &k0, &k1);
        err = cudaSuccess;
        if (!is_capturing(stream))
            err = to_host ? fetch(&pairs[i], k0, k1, stream) : flush(&pairs[i], k0, k1, stream);
    }
    unlock_pairs();
    return err;
}

void tdm_coherent_capture(uint64_t stream, bool on)
{
    lock_pairs();
    if (on && !is_capturing(stream) && ncapturing < MAX_CAPTURES) {
        capturing[ncapturing++] = stream;
    } else if (!on) {
        for (size_t i = 0; i < ncapturing; i++)
            if (capturing[i] == stream) {
                capturing[i] = capturing[--ncapturing];
                break;
            }
    }
    unlock_pairs();
}

/* ---- pinned memory by its host pointer over TCP (issue 14) ---- */
/* A pinned block a kernel is given by its host pointer (hostmem.c): device
 * memory at the very address, the block its host copy.  Unlike managed
 * memory a launch leaves it valid, so that a host write while the kernel
 * runs (UnifiedMemoryPerf's latch) only marks it DIRTY instead of waiting
 * for the kernel; the program's next call that waits uploads DIRTY blocks
 * first, on a non-blocking stream the device runs beside the kernel, and
 * once the wait returns the blocks are INVALID (the kernel may have written
 * them).  All DIRTY at first: the host's bytes are the block's. */
cudaError_t tdm_coherent_add_pinned(uintptr_t host, uint64_t size, uint64_t span)
{
    cudaError_t err = tdm_coherent_add(host, (uint64_t)host, size, span, cudaMemAttachGlobal, true);

    if (err)
        return err;
    lock_pairs();
    for (size_t i = 0; i < npairs; i++)
        if (pairs[i].host == host) {
            pairs[i].pinned = true;
            memset(pairs[i].state, DIRTY, pairs[i].nblocks);
            mprotect((void *)host, span, PROT_READ | PROT_WRITE);
        }
    unlock_pairs();
    return cudaSuccess;
}

void tdm_coherent_before_wait(void)
{
    cudaError_t err = cudaSuccess;

    if (atomic_load(&launched_pinned) == 0 || holding)
        return;
    /* On the library's non-blocking stream (flush): the uploads do not
     * queue behind the kernel the wait is for. */
    lock_pairs();
    for (size_t i = 0; i < npairs && !err; i++)
        if (pairs[i].pinned && pairs[i].launched)
            err = flush(&pairs[i], 0, pairs[i].nblocks, NO_STREAM);
    unlock_pairs();
    if (err)
        tdm_log("uploading pinned memory before a wait failed (cudaError %d)", (int)err);
}

void tdm_coherent_after_wait(void)
{
    if (atomic_load(&launched_pinned) == 0 || holding)
        return;
    lock_pairs();
    for (size_t i = 0; i < npairs; i++) {
        pair *p = &pairs[i];

        if (!p->pinned || !p->launched)
            continue;
        /* CLEAN blocks may be stale now; a DIRTY one (the host wrote since
         * the upload before the wait) keeps the host's bytes, which the
         * next launch or wait uploads. */
        for (uint32_t k = 0; k < p->nblocks; k++)
            if (p->state[k] == CLEAN)
                invalidate(p, k, k + 1);
        p->launched = false;
        atomic_fetch_sub(&launched_pinned, 1);
    }
    unlock_pairs();
}
