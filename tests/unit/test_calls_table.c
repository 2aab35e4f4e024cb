/* The procedure table (proto/calls.def, read through proto/calls.h): each
 * row, checked one case per row, and the lookups every layer relies on.
 * The rules a row must keep are also compile-time checks in proto/calls.c;
 * tests/build_checks/calls_table.sh proves those fail the build. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include <string.h>

#include "calls.h"

ParameterizedTestParameters(calls_table, row)
{
    static size_t rows[512];

    cr_assert_leq(tdm_ncalls, sizeof(rows) / sizeof(rows[0]));
    for (size_t i = 0; i < tdm_ncalls; i++)
        rows[i] = i;
    return cr_make_param_array(size_t, rows, tdm_ncalls);
}

/* Every row: found under its own number, encoders present, its stream read
 * from where the STREAM column says. */
ParameterizedTest(size_t *i, calls_table, row)
{
    const tdm_call_info *c = &tdm_calls[*i];
    unsigned char args[4096] = { 0 };
    uint64_t marker = 0x5354524541d00001ull + *i, got = 0;

    cr_assert_eq(strncmp(c->name, "TDM_", 4), 0, "%s", c->name);
    cr_assert_eq(tdm_call_find(c->proc), c, "%s is not found under its number %u", c->name, c->proc);
    cr_assert_not_null(c->xargs, "%s", c->name);
    cr_assert_leq(c->args_size, sizeof(args), "%s", c->name);
    if (c->mode == TDM_CALL_ONEWAY) {
        cr_assert_geq(c->proc, TDM_FIRST_ONEWAY_PROC, "%s", c->name);
        cr_assert_null(c->xres, "%s: a one-way call has no result", c->name);
        cr_assert_eq(c->res_size, 0, "%s", c->name);
    } else {
        cr_assert_lt(c->proc, TDM_FIRST_ONEWAY_PROC, "%s", c->name);
        cr_assert_not_null(c->xres, "%s", c->name);
        cr_assert_gt(c->res_size, 0, "%s", c->name);
    }
    if (c->stream_offset == TDM_STREAM_NONE) {
        cr_assert_not(tdm_call_stream(c, args, &got), "%s names no stream", c->name);
        return;
    }
    size_t at = c->stream_offset == TDM_STREAM_SELF ? 0 : (size_t)c->stream_offset;
    cr_assert_leq(at + sizeof(marker), c->args_size, "%s: stream field outside the arguments", c->name);
    memcpy(args + at, &marker, sizeof(marker));
    cr_assert(tdm_call_stream(c, args, &got), "%s", c->name);
    cr_assert_eq(got, marker, "%s: stream read from the wrong place", c->name);
}

Test(calls_table, names_and_numbers_are_unique)
{
    for (size_t i = 0; i < tdm_ncalls; i++)
        for (size_t j = i + 1; j < tdm_ncalls; j++) {
            cr_assert_neq(tdm_calls[i].proc, tdm_calls[j].proc, "%s and %s", tdm_calls[i].name, tdm_calls[j].name);
            cr_assert_str_neq(tdm_calls[i].name, tdm_calls[j].name);
        }
}

/* A procedure number the protocol lacks is no call: the server answers it
 * PROC_UNAVAIL and the guest never classifies it. */
Test(calls_table, unknown_numbers_find_nothing)
{
    size_t known = 0;

    for (uint32_t p = 0; p < 2 * TDM_FIRST_ONEWAY_PROC; p++)
        known += tdm_call_find(p) != NULL;
    cr_assert_eq(known, tdm_ncalls);
    cr_assert_null(tdm_call_find(UINT32_MAX));
    cr_assert_null(tdm_call_find(TDM_FIRST_ONEWAY_PROC - 1));
}

/* The feed message of a MIRROR_FEED row is named; no other row has one. */
Test(calls_table, feed_rows_name_their_message)
{
    for (size_t i = 0; i < tdm_ncalls; i++) {
        const tdm_call_info *c = &tdm_calls[i];
        if (c->mirror == TDM_MIRROR_ON_FEED)
            cr_assert(c->feed_msg && c->feed_msg[0], "%s", c->name);
        else
            cr_assert_null(c->feed_msg, "%s", c->name);
    }
}

/* Regression (3f14ace): every release empties the journal first, so the
 * table must mark each call that releases something a guest holds.  These
 * are the releases CUDA programs make; a row that stops saying so would let
 * journaled work on freed memory be replayed after a takeover. */
Test(calls_table, releases_are_marked)
{
    static const uint32_t releases[] = { TDM_FREE, TDM_SHM_HOST_UNREGISTER, TDM_STREAM_DESTROY,
                                         TDM_EVENT_DESTROY, TDM_MODULE_UNLOAD, TDM_DEVICE_RESET };

    for (size_t i = 0; i < sizeof(releases) / sizeof(releases[0]); i++) {
        const tdm_call_info *c = tdm_call_find(releases[i]);
        cr_assert_not_null(c);
        cr_assert_eq(c->effect, TDM_EFFECT_RELEASES, "%s", c->name);
        cr_assert_eq(c->mode, TDM_CALL_SYNC, "%s", c->name);
    }
}
