/* Device output of a session's kernels, delivered to its guest
 * (docs/device-output.md): flagged in the reply of the call during which
 * it arrived, taken by TDM_OUTPUT_FETCH. */
#include <stdlib.h>

#include <driver_types.h>

#include "device_output.h"
#include "dispatch.h"
#include "dispatch_output.h"
#include "session.h"
#include "tandem_rpc.h"

void tdm_output_call_begins(void *ctx)
{
    tdm_session *s = ctx;

    tdm_device_output_serve(s->output);
}

void tdm_output_call_ends(void *ctx, const tdm_call_info *call, void *res)
{
    tdm_session *s = ctx;

    tdm_device_output_serve(NULL);
    /* The common case costs one look at the buffer: no output, no flag,
     * no further round trip. */
    if (res && tdm_call_carries_output_flag(call))
        *(int *)res |= tdm_output_pending_flag(s->output);
}

int tdm_output_pending_flag(tdm_device_output *o)
{
    return tdm_device_output_pending(o) ? TDM_ERR_OUTPUT_PENDING : 0;
}

bool tdm_serve_OUTPUT_FETCH(void *ctx, void *args, void *res)
{
    tdm_session *s = ctx;
    tdm_output_res *r = res;
    tdm_output_piece *pieces;
    size_t n;
    uint64_t dropped;

    tdm_device_output_take(s->output, &pieces, &n, &dropped);
    r->dropped = dropped;
    if (!n)
        return true;
    r->chunks.chunks_val = calloc(n, sizeof(tdm_output_chunk));
    if (!r->chunks.chunks_val) {
        /* The output is lost; the guest hears why. */
        for (size_t i = 0; i < n; i++)
            free(pieces[i].bytes);
        free(pieces);
        r->err = cudaErrorMemoryAllocation;
        return true;
    }
    /* The pieces' bytes become the reply's: the RPC layer frees them. */
    for (size_t i = 0; i < n; i++) {
        r->chunks.chunks_val[i].fd = pieces[i].fd;
        r->chunks.chunks_val[i].bytes.bytes_val = pieces[i].bytes;
        r->chunks.chunks_val[i].bytes.bytes_len = (u_int)pieces[i].len;
    }
    r->chunks.chunks_len = (u_int)n;
    free(pieces);
    return true;
}
