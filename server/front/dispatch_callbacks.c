/* Handlers of the host callback calls (proto/calls.def, "host callbacks
 * (issue 14)"; docs/runtime-api.md "Host callbacks"). */
#include <stdlib.h>

#include <driver_types.h>

#include "dispatch.h"
#include "session.h"
#include "tandem_rpc.h"

bool tdm_serve_CALLBACK_ENQUEUE(void *ctx, void *args, void *res)
{
    tdm_callback_args *a = args;

    *(int *)res = tdm_session_callback_enqueue(ctx, a->stream, a->fn);
    return true;
}

bool tdm_serve_CALLBACK_POLL(void *ctx, void *args, void *res)
{
    tdm_callback_poll_args *a = args;
    tdm_callback_poll_res *r = res;
    tdm_cb_due_out due[TDM_CB_POLL_MAX];
    size_t n = 0;

    r->err = tdm_session_callback_poll(ctx, a->done.done_val, a->done.done_len, due, TDM_CB_POLL_MAX, &n,
                                       &r->pending);
    if (!n)
        return true;
    /* The RPC layer frees the reply's array after sending it. */
    r->due.due_val = calloc(n, sizeof(*r->due.due_val));
    if (!r->due.due_val) {
        /* Taken but not sent: the guest would never run them, and their
         * streams would wait for good; say so rather than lose them. */
        r->err = cudaErrorMemoryAllocation;
        return true;
    }
    for (size_t i = 0; i < n; i++)
        r->due.due_val[i] = (tdm_callback_due){ due[i].seq, due[i].fn, due[i].status };
    r->due.due_len = (u_int)n;
    return true;
}
