/* SM shares on the GPU (issue 17, docs/sm-shares.md): green contexts.
 *
 * The device's SMs are split once into equal groups
 * (cuDevSmResourceSplitByCount); a share is a set of groups, and its green
 * context is made from them (cuDevResourceGenerateDesc, cuGreenCtxCreate).
 * Green contexts are kept in a cache by group set, so that a resize back to
 * a size seen before costs no context creation.  A session's streams in a
 * share are created in its green context (cuGreenCtxStreamCreate); the
 * memory the server maps in the primary context is usable there (the same
 * device address space: docs/sm-shares.md says what the documentation
 * says), and module functions are handled in cuda_launch.c. */
#include <pthread.h>
#include <stdlib.h>

#include "cuda_backend_internal.h"
#include "cuda_share_pick.h"

#define SHARE_CACHE_MAX 32   /* unused green contexts kept beyond this are destroyed */

struct tdm_bshare {
    CUgreenCtx g;
    uint64_t mask;           /* its groups */
    unsigned sms;
    int refs;                /* share_get calls not yet put */
    tdm_bshare *next;
};

struct tdm_cuda_shares {
    pthread_mutex_t lock;
    bool split;              /* groups made */
    CUdevResource groups[TDM_SHARE_MAX_GROUPS];
    unsigned ngroups, group_sms;
    uint64_t window;         /* the groups this server's shares may take (--sm-window) */
    unsigned use[TDM_SHARE_MAX_GROUPS];   /* references held on shares that hold group i */
    tdm_bshare *cache;
    unsigned ncache;
};

int tdm_cuda_shares_init(tdm_backend *b)
{
    b->shares = calloc(1, sizeof(*b->shares));
    if (!b->shares)
        return cudaErrorMemoryAllocation;
    pthread_mutex_init(&b->shares->lock, NULL);
    return cudaSuccess;
}

/* Splits the device's SMs into at most 64 equal groups, as small as the
 * driver allows without SM co-scheduling (large clusters need more: a
 * share is then no place for them, docs/sm-shares.md).  shares->lock held. */
static int split(tdm_backend *b, struct tdm_cuda_shares *sh)
{
    CUdevResource all;
    unsigned n = TDM_SHARE_MAX_GROUPS, min;
    int err;

    err = tdm_cuda_err(tdm_cu.cuDeviceGetDevResource(b->dev, &all, CU_DEV_RESOURCE_TYPE_SM),
                       "cuDeviceGetDevResource");
    if (err)
        return err;
    min = all.sm.smCount / TDM_SHARE_MAX_GROUPS + (all.sm.smCount % TDM_SHARE_MAX_GROUPS != 0);
    err = tdm_cuda_err(tdm_cu.cuDevSmResourceSplitByCount(sh->groups, &n, &all, NULL,
                                                          CU_DEV_SM_RESOURCE_SPLIT_IGNORE_SM_COSCHEDULING,
                                                          min ? min : 1),
                       "cuDevSmResourceSplitByCount");
    if (err)
        return err;
    if (n == 0 || sh->groups[0].sm.smCount == 0) {
        tdm_cuda_log("cuDevSmResourceSplitByCount made no groups of the device's %u SMs", all.sm.smCount);
        return cudaErrorNotSupported;
    }
    sh->ngroups = n;
    sh->group_sms = sh->groups[0].sm.smCount;
    sh->window = tdm_share_window(b->cfg.sm_window_first, b->cfg.sm_window_sms, sh->group_sms, n);
    if (!sh->window) {
        tdm_cuda_log("--sm-window %u:%u holds none of the %u groups of %u SMs", b->cfg.sm_window_first,
                     b->cfg.sm_window_sms, n, sh->group_sms);
        return cudaErrorInvalidValue;
    }
    sh->split = true;
    tdm_cuda_log("SM shares: %u groups of %u SMs (of %u; docs/sm-shares.md)%s", n, sh->group_sms, all.sm.smCount,
                 b->cfg.sm_window_sms ? "; this server's window:" : "");
    if (b->cfg.sm_window_sms)
        tdm_cuda_log("  groups %#llx, SMs %u..%u asked (whole groups)", (unsigned long long)sh->window,
                     b->cfg.sm_window_first, b->cfg.sm_window_first + b->cfg.sm_window_sms - 1);
    return cudaSuccess;
}

static int green_create(tdm_backend *b, struct tdm_cuda_shares *sh, uint64_t mask, CUgreenCtx *out)
{
    CUdevResource res[TDM_SHARE_MAX_GROUPS];
    CUdevResourceDesc desc = NULL;
    unsigned k = 0;
    int err;

    for (unsigned i = 0; i < sh->ngroups; i++)
        if (mask >> i & 1u)
            res[k++] = sh->groups[i];
    err = tdm_cuda_err(tdm_cu.cuDevResourceGenerateDesc(&desc, res, k), "cuDevResourceGenerateDesc");
    if (err)
        return err;
    return tdm_cuda_err(tdm_cu.cuGreenCtxCreate(out, desc, b->dev, CU_GREEN_CTX_DEFAULT_STREAM),
                        "cuGreenCtxCreate");
}

/* Destroys cached green contexts no one uses while the cache is too big:
 * their streams were destroyed with their work done (share_put's contract). */
static void trim(struct tdm_cuda_shares *sh)
{
    for (tdm_bshare **p = &sh->cache; *p && sh->ncache > SHARE_CACHE_MAX;) {
        tdm_bshare *e = *p;

        if (e->refs) {
            p = &e->next;
            continue;
        }
        *p = e->next;
        sh->ncache--;
        tdm_cuda_err(tdm_cu.cuGreenCtxDestroy(e->g), "cuGreenCtxDestroy");
        free(e);
    }
}

static void count_use(struct tdm_cuda_shares *sh, uint64_t mask, int by)
{
    for (unsigned i = 0; i < sh->ngroups; i++)
        if (mask >> i & 1u)
            sh->use[i] = (unsigned)((int)sh->use[i] + by);
}

int tdm_cuda_share_get(tdm_backend *b, unsigned sms, tdm_bshare **out, unsigned *granted)
{
    struct tdm_cuda_shares *sh = b->shares;
    tdm_bshare *e;
    uint64_t mask;
    int err = tdm_cuda_enter(b);

    *out = NULL;
    if (err)
        return err;
    pthread_mutex_lock(&sh->lock);
    if (!sh->split && (err = split(b, sh)) != cudaSuccess)
        goto out;
    mask = tdm_share_pick(sh->use, sh->ngroups,
                          tdm_share_groups_for(sms, sh->group_sms, (unsigned)__builtin_popcountll(sh->window)),
                          sh->window);
    for (e = sh->cache; e && e->mask != mask; e = e->next)
        ;
    if (!e) {
        e = calloc(1, sizeof(*e));
        if (!e) {
            err = cudaErrorMemoryAllocation;
            goto out;
        }
        err = green_create(b, sh, mask, &e->g);
        if (err) {
            free(e);
            goto out;
        }
        e->mask = mask;
        e->sms = (unsigned)__builtin_popcountll(mask) * sh->group_sms;
        e->next = sh->cache;
        sh->cache = e;
        sh->ncache++;
    }
    e->refs++;
    count_use(sh, mask, +1);
    *out = e;
    *granted = e->sms;
    trim(sh);
out:
    pthread_mutex_unlock(&sh->lock);
    return err;
}

void tdm_cuda_share_put(tdm_backend *b, tdm_bshare *e)
{
    struct tdm_cuda_shares *sh = b->shares;

    pthread_mutex_lock(&sh->lock);
    e->refs--;
    count_use(sh, e->mask, -1);
    trim(sh);
    pthread_mutex_unlock(&sh->lock);
}

int tdm_cuda_share_stream_create(tdm_backend *b, tdm_bshare *e, unsigned flags, int priority, tdm_bspace *sp,
                                 tdm_bstream **out)
{
    CUstream cs = NULL;
    int err = tdm_cuda_enter(b);

    (void)sp;                /* one context, one address space (cuda_stream.c) */
    *out = NULL;
    if (err)
        return err;
    if (flags & ~(unsigned)cudaStreamNonBlocking)
        return cudaErrorInvalidValue;
    /* A green context's streams must be non-blocking: no session stream
     * relies on the device's legacy stream (each session orders against its
     * own null stream, session.c), so the flag changes nothing for a guest. */
    err = tdm_cuda_err(tdm_cu.cuGreenCtxStreamCreate(&cs, e->g, CU_STREAM_NON_BLOCKING, priority),
                       "cuGreenCtxStreamCreate");
    if (err)
        return err;
    *out = (tdm_bstream *)cs;
    return cudaSuccess;
}

void tdm_cuda_shares_free(tdm_backend *b)
{
    struct tdm_cuda_shares *sh = b->shares;

    if (!sh)
        return;
    while (sh->cache) {
        tdm_bshare *e = sh->cache;

        sh->cache = e->next;
        tdm_cu.cuGreenCtxDestroy(e->g);
        free(e);
    }
    pthread_mutex_destroy(&sh->lock);
    free(sh);
    b->shares = NULL;
}
