/* Issue 16, findings 3 and 4: the decisions behind the bounds on what a session holds
 * (session_bounds.c), the time limits on the wire (proto/wire_timeouts.c) and the XDR decoding
 * that allocates what arrives, not what a frame declares (proto/xdr_extra.c). */
#include <criterion/criterion.h>
#include <arpa/inet.h>
#include <malloc.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include "session.h"
#include "wire_timeouts.h"
#include "xdr_extra.h"

Test(host_bounds, a_bound_admits_up_to_its_limit_and_never_overflows)
{
    static const struct { uint64_t held, want, limit; bool admits; } rows[] = {
        { 0, 0, 0, true },                       /* 0: no bound */
        { UINT64_MAX, UINT64_MAX, 0, true },
        { 0, 10, 10, true },
        { 4, 6, 10, true },                      /* exactly at the limit */
        { 5, 6, 10, false },
        { 0, 11, 10, false },
        { 10, 0, 10, true },
        { 11, 0, 10, false },                    /* held past it already (admitted before the bound) */
        { 1, UINT64_MAX, UINT64_MAX, false },    /* held + want wraps */
        { UINT64_MAX - 1, 1, UINT64_MAX, true },
    };

    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
        cr_expect_eq(tdm_bound_admits(rows[i].held, rows[i].want, rows[i].limit), rows[i].admits,
                     "row %zu: %llu held, %llu more, limit %llu", i, (unsigned long long)rows[i].held,
                     (unsigned long long)rows[i].want, (unsigned long long)rows[i].limit);
}

Test(host_bounds, a_shared_total_takes_what_fits_and_leaves_itself_unchanged_on_refusal)
{
    _Atomic uint64_t total = 0;

    cr_expect(tdm_bound_take(&total, 600, 1024));
    cr_expect(!tdm_bound_take(&total, 600, 1024), "1200 bytes under 1024");
    cr_expect_eq(atomic_load(&total), 600, "a refusal changed the total");
    cr_expect(tdm_bound_take(&total, 424, 1024));
    cr_expect_eq(atomic_load(&total), 1024);
    cr_expect(tdm_bound_take(&total, 1u << 30, 0), "no bound refused");
}

Test(host_bounds, each_wait_on_the_wire_is_timed_by_its_own_limit)
{
    static const tdm_wire_timeouts both = { .frame_s = 30, .idle_s = 600 }, frame_only = { .frame_s = 30 };
    const uint64_t s = 1000000000u;
    static const struct { const tdm_wire_timeouts *t; int mid; uint64_t waited_s; tdm_wire_timeout want; } rows[] = {
        { NULL, 1, 1000000, TDM_WIRE_IN_TIME },          /* no limits */
        { &both, 1, 29, TDM_WIRE_IN_TIME },
        { &both, 1, 30, TDM_WIRE_STALLED },              /* in a frame: frame_s */
        { &both, 0, 30, TDM_WIRE_IN_TIME },              /* between frames: idle_s */
        { &both, 0, 600, TDM_WIRE_IDLE },
        { &frame_only, 0, 1000000, TDM_WIRE_IN_TIME },   /* idle 0: a guest may idle for good */
        { &frame_only, 1, 31, TDM_WIRE_STALLED },
    };

    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
        cr_expect_eq(tdm_wire_timed_out(rows[i].t, rows[i].mid, rows[i].waited_s * s), rows[i].want, "row %zu", i);
}

/* ---- XDR: allocation follows the bytes ---- */

/* An XDR stream that delivers `have` bytes and records the block the first opaque read went to. */
typedef struct stingy {
    const unsigned char *bytes;
    size_t have, pos;
    size_t first_block;       /* malloc_usable_size of the first getbytes' destination */
} stingy;

static bool_t st_getlong(XDR *x, long *lp)
{
    stingy *s = (stingy *)x->x_private;
    uint32_t v;

    if (s->have - s->pos < 4)
        return FALSE;
    memcpy(&v, s->bytes + s->pos, 4);
    s->pos += 4;
    *lp = (long)(int32_t)ntohl(v);
    return TRUE;
}

static bool_t st_getbytes(XDR *x, char *addr, u_int len)
{
    stingy *s = (stingy *)x->x_private;

    if (!s->first_block)
        s->first_block = malloc_usable_size(addr);
    if (s->have - s->pos < len)
        return FALSE;
    memcpy(addr, s->bytes + s->pos, len);
    s->pos += len;
    return TRUE;
}

static const struct xdr_ops stingy_ops = { .x_getlong = st_getlong, .x_getbytes = st_getbytes };

Test(host_bounds, a_declared_length_is_allocated_as_its_bytes_arrive)
{
    static const uint32_t declared = 256u << 20;
    unsigned char frame[40] = { 0 };
    stingy s = { .bytes = frame, .have = sizeof(frame) };
    XDR x = { .x_op = XDR_DECODE, .x_ops = &stingy_ops, .x_private = (char *)&s };
    char *val = NULL;
    u_int len = 0;
    uint32_t be = htonl(declared);

    memcpy(frame, &be, 4);
    cr_expect(!tdm_xdr_bytes(&x, &val, &len, declared), "36 bytes decoded as 256 MiB");
    cr_expect_null(val, "a failed decode left a buffer");
    cr_expect_leq(s.first_block, 2 * TDM_XDR_ALLOC_AHEAD, "%zu bytes allocated for a frame of 40", s.first_block);
}

Test(host_bounds, a_growing_decode_gives_back_every_byte_and_the_padding)
{
    const u_int n = TDM_XDR_ALLOC_AHEAD * 2 + 5;   /* two doublings, and 3 bytes of padding */
    size_t wire = 4 + n + 3;
    unsigned char *frame = calloc(1, wire);
    stingy s = { .bytes = frame, .have = wire };
    XDR x = { .x_op = XDR_DECODE, .x_ops = &stingy_ops, .x_private = (char *)&s };
    char *val = NULL;
    u_int len = 0;
    uint32_t be = htonl(n);

    cr_assert_not_null(frame);
    memcpy(frame, &be, 4);
    for (u_int i = 0; i < n; i++)
        frame[4 + i] = (unsigned char)(i * 7);
    cr_assert(tdm_xdr_bytes(&x, &val, &len, n));
    cr_expect_eq(len, n);
    cr_expect_eq(s.pos, wire, "the padding was not read");
    cr_expect_eq(memcmp(val, frame + 4, n), 0, "the bytes differ");
    free(val);
    free(frame);
}
