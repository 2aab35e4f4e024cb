/* The server's dispatch table (server/front/dispatch.c) is expanded from the
 * procedure table (proto/calls.def): every row has a handler, one-way rows
 * have no result, and each procedure decodes and answers with exactly the
 * XDR types and sizes tdm_call_find says.  One case per row. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include "calls.h"
#include "dispatch.h"

ParameterizedTestParameters(dispatch_table, row)
{
    static size_t rows[512];

    cr_assert_leq(tdm_ncalls, sizeof(rows) / sizeof(rows[0]));
    for (size_t i = 0; i < tdm_ncalls; i++)
        rows[i] = i;
    return cr_make_param_array(size_t, rows, tdm_ncalls);
}

ParameterizedTest(size_t *i, dispatch_table, row)
{
    const tdm_call_info *c = &tdm_calls[*i];
    const tdm_rpc_proc *p;

    cr_assert_lt(c->proc, tdm_dispatch_program.nprocs, "%s is past the dispatch table", c->name);
    p = &tdm_dispatch_program.procs[c->proc];
    cr_assert_not_null(p->handler, "%s has no handler", c->name);
    cr_assert_eq(p->xargs, c->xargs, "%s decodes other arguments than calls.def says", c->name);
    cr_assert_eq(p->args_size, c->args_size, "%s", c->name);
    cr_assert_eq(p->xres, c->xres, "%s encodes another result than calls.def says", c->name);
    cr_assert_eq(p->res_size, c->res_size, "%s", c->name);
    if (c->mode == TDM_CALL_ONEWAY) {
        cr_assert_null(p->xres, "%s is one-way: no result", c->name);
        cr_assert_eq(p->res_size, 0, "%s is one-way: no result", c->name);
    }
}

/* Nothing is served that the procedure table does not describe: a slot
 * without a row stays empty (the RPC layer answers PROC_UNAVAIL). */
Test(dispatch_table, no_handler_without_a_row)
{
    for (size_t p = 0; p < tdm_dispatch_program.nprocs; p++) {
        const tdm_rpc_proc *e = &tdm_dispatch_program.procs[p];
        if (tdm_call_find((uint32_t)p))
            continue;
        cr_assert_null(e->handler, "procedure %zu has a handler but no row in calls.def", p);
        cr_assert_null(e->xargs, "procedure %zu", p);
    }
}
