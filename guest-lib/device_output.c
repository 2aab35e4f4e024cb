/* Device output (docs/device-output.md): what the program's kernels
 * printed (device printf, a failing assert's message), written to the
 * program's own stdout and stderr when a synchronizing call's reply says
 * the server holds some, before that call returns, as CUDA prints it when
 * the program synchronizes. */
#include <stdio.h>
#include <string.h>

#include "calls.h"
#include "guest.h"

bool tdm_output_flag_take_err(int *err)
{
    if (!(*err & TDM_ERR_OUTPUT_PENDING))
        return false;
    *err &= ~TDM_ERR_OUTPUT_PENDING;
    return true;
}

/* Every reply that may carry the flag starts with its int err. */
bool tdm_output_flag_take(const tdm_call_info *call, void *res)
{
    return tdm_call_carries_output_flag(call) && tdm_output_flag_take_err(res);
}

void tdm_output_write(const tdm_output_res *r)
{
    /* The program's own buffered lines first: they were printed before the
     * kernels' output reached the host, so they come first, as natively. */
    fflush(stdout);
    for (u_int i = 0; i < r->chunks.chunks_len; i++) {
        const tdm_output_chunk *c = &r->chunks.chunks_val[i];
        FILE *f = c->fd == 2 ? stderr : stdout;

        fwrite(c->bytes.bytes_val, 1, c->bytes.bytes_len, f);
        fflush(f);
    }
}

void tdm_output_fetch(void)
{
    tdm_output_res r;

    memset(&r, 0, sizeof(r));
    if (tdm_call(TDM_OUTPUT_FETCH, NULL, &r) == cudaSuccess && r.err == cudaSuccess)
        tdm_output_write(&r);
    xdr_free((xdrproc_t)xdr_tdm_output_res, (char *)&r);
}
