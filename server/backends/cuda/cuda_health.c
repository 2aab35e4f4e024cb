/* The GPU context's loss (docs/health.md).  After a sticky error every call
 * of the context fails; the documented way back is a new context.  The
 * server rebuilds by shutting the backend down and starting a new one
 * (tdm_server_rebuild_context): this makes sure the primary context that
 * the new one retains is a fresh one, not the lost one kept alive by a
 * reference the driver still holds. */
#include "cuda_backend_internal.h"

bool tdm_cuda_stream_lost_context(tdm_backend *b, tdm_bstream *s)
{
    /* The driver reports a lost context to every stream alike: which
     * stream's kernel faulted is in the kernel log (Xid), not in any API. */
    (void)b;
    (void)s;
    return false;
}

void tdm_cuda_release_context(tdm_backend *b, bool lost)
{
    tdm_cuda_err(tdm_cu.cuDevicePrimaryCtxRelease(b->dev), "cuDevicePrimaryCtxRelease");
    if (lost)
        tdm_cuda_err(tdm_cu.cuDevicePrimaryCtxReset(b->dev), "cuDevicePrimaryCtxReset(lost context)");
}
