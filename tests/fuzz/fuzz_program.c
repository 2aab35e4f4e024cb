#include "fuzz_program.h"

#include <stdlib.h>

#include "calls.h"

/* Keeps the connection: a fuzz input may hold any number of calls. */
static bool nothing(void *ctx, void *args, void *res)
{
    return true;
}

static void garbage_oneway(void *ctx, uint32_t proc)
{
}

const tdm_rpc_program *fuzz_program(void)
{
    static tdm_rpc_program p;
    static tdm_rpc_proc *procs;
    size_t n = 0;

    if (procs)
        return &p;
    for (size_t i = 0; i < tdm_ncalls; i++)
        if (tdm_calls[i].proc + 1 > n)
            n = tdm_calls[i].proc + 1;
    procs = calloc(n, sizeof(*procs));
    if (!procs)
        abort();
    for (size_t i = 0; i < tdm_ncalls; i++) {
        const tdm_call_info *c = &tdm_calls[i];

        /* A result of nothing: the zeroed result of the real type would not
         * always encode (a NULL string), which would end the connection at
         * the first reply instead of going on to the next call. */
        procs[c->proc] = (tdm_rpc_proc){ c->xargs, c->args_size,
                                         c->mode == TDM_CALL_SYNC ? (xdrproc_t)tdm_xdr_void : NULL, 1, nothing };
    }
    p = (tdm_rpc_program){ .prog = TANDEM_PROG, .vers = TANDEM_V1, .procs = procs, .nprocs = n,
                           .on_garbage_oneway = garbage_oneway };
    return &p;
}
