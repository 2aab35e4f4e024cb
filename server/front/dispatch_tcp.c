/* Bulk data over TCP (docs/protocol.md, "Bulk data over TCP"): uploads
 * decoded straight into the session's staging, and MEMCPY_DTOH_STREAM,
 * whose reply carries any number of bytes copied while it is sent. */
#include "dispatch.h"

#include <driver_types.h>

#include "session.h"
#include "tandem_rpc.h"

void tdm_dispatch_prepare_args(void *ctx, uint32_t proc, void *args)
{
    if (proc == TDM_MEMCPY_HTOD) {
        tdm_memcpy_htod_args *a = args;
        /* NULL leaves it to xdr_bytes, which allocates. */
        a->data.data_val = tdm_session_htod_space(ctx);
    }
}

void tdm_dispatch_reclaim_args(void *ctx, uint32_t proc, void *args)
{
    if (proc == TDM_MEMCPY_HTOD) {
        tdm_memcpy_htod_args *a = args;
        /* Whatever the decoder did, the staging is the session's: only
         * a buffer xdr_bytes allocated may be freed. */
        if (tdm_session_is_staging(ctx, a->data.data_val))
            a->data.data_val = NULL;
    }
}

bool tdm_serve_MEMCPY_DTOH_STREAM(void *ctx, void *args, void *res)
{
    tdm_memcpy_dtoh_args *a = args;
    tdm_dtoh_stream_res *r = res;

    r->err = tdm_session_dtoh_stream_begin(ctx, a->src, a->size, a->stream, r);
    return true;
}
