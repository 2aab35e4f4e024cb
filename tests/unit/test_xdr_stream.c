/* MEMCPY_DTOH_STREAM's reply coder (proto/xdr_stream.c), table-driven:
 * payload sizes around the source's chunk and 4-byte padding, a source that
 * fails half way (zeros for the rest, its error after the bytes), a refused
 * copy (no bytes, whatever err holds), and a decoder that refuses a size
 * other than the one it asked for or 0. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "xdr_stream.h"

typedef struct fake_source {
    const unsigned char *data;
    size_t chunk;           /* bytes per next() */
    uint64_t fail_at;       /* offset whose chunk fails; UINT64_MAX: never */
    int fail_err;
} fake_source;

static const void *fake_next(void *source, uint64_t off, size_t max, size_t *got, int *err)
{
    fake_source *f = source;

    if (off >= f->fail_at) {
        *err = f->fail_err;
        return NULL;
    }
    *got = max < f->chunk ? max : f->chunk;
    return f->data + off;
}

typedef struct row {
    const char *name;
    size_t size, chunk;
    uint64_t fail_at;
    int pre_err;            /* the result's err */
} row;

static const row rows[] = {
    { "empty", 0, 8, UINT64_MAX, 0 },
    { "one byte", 1, 8, UINT64_MAX, 0 },
    { "padded tail", 4099, 1024, UINT64_MAX, 0 },
    { "whole chunks", 4096, 1024, UINT64_MAX, 0 },
    { "fails half way", 4099, 1024, 2048, 0 },
    { "fails at once", 4096, 1024, 0, 0 },
    { "refused before the payload", 4096, 1024, UINT64_MAX, 1 },
};

Test(xdr_stream, encodes_and_decodes_every_row)
{
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        const row *r = &rows[i];
        size_t cap = r->size + 64;
        unsigned char *data = malloc(r->size + 1), *wire = malloc(cap), *back = malloc(r->size + 1);
        fake_source f = { data, r->chunk, r->fail_at, 719 };
        /* A refused copy sends no bytes (the server leaves size at 0). */
        tdm_dtoh_stream_res enc = { .err = r->pre_err, .size = r->pre_err ? 0 : r->size, .next = fake_next,
                                    .source = &f };
        tdm_dtoh_stream_res dec = { .size = r->size, .buf = (char *)back };
        XDR x;

        for (size_t k = 0; k < r->size; k++)
            data[k] = (unsigned char)(k * 7 + 1);
        xdrmem_create(&x, (char *)wire, (u_int)cap, XDR_ENCODE);
        cr_assert(xdr_tdm_dtoh_stream_res(&x, &enc), "%s: encode", r->name);
        u_int len = xdr_getpos(&x);
        xdr_destroy(&x);
        if (r->pre_err) {
            cr_expect_eq(len, 4 + 8 + 4, "%s: bytes followed the error", r->name);
        } else {
            cr_expect_eq(len, 4 + 8 + ((r->size + 3) & ~(size_t)3) + 4, "%s: wire size", r->name);
        }

        memset(back, 0xee, r->size + 1);
        xdrmem_create(&x, (char *)wire, len, XDR_DECODE);
        cr_assert(xdr_tdm_dtoh_stream_res(&x, &dec), "%s: decode", r->name);
        xdr_destroy(&x);
        cr_expect_eq(dec.err, r->pre_err, "%s", r->name);
        cr_expect_eq(dec.got, r->pre_err ? 0 : r->size, "%s: got", r->name);
        if (!r->pre_err) {
            size_t good = r->fail_at < r->size ? (size_t)r->fail_at : r->size;
            cr_expect_eq(dec.copy_err, r->fail_at < UINT64_MAX ? 719 : 0, "%s: copy_err", r->name);
            cr_expect_eq(memcmp(back, data, good), 0, "%s: bytes", r->name);
            for (size_t k = good; k < r->size; k++)
                cr_assert_eq(back[k], 0, "%s: byte %zu after the failure is not zero", r->name, k);
            cr_expect_eq(back[r->size], 0xee, "%s: wrote past the end", r->name);
        }
        free(data);
        free(wire);
        free(back);
    }
}

Test(xdr_stream, decoder_refuses_a_size_it_did_not_ask_for)
{
    unsigned char data[64] = { 0 }, wire[256], back[64];
    fake_source f = { data, 64, UINT64_MAX, 0 };
    tdm_dtoh_stream_res enc = { .size = 64, .next = fake_next, .source = &f };
    tdm_dtoh_stream_res dec = { .size = 32, .buf = (char *)back };
    XDR x;

    xdrmem_create(&x, (char *)wire, sizeof(wire), XDR_ENCODE);
    cr_assert(xdr_tdm_dtoh_stream_res(&x, &enc));
    xdr_destroy(&x);
    xdrmem_create(&x, (char *)wire, sizeof(wire), XDR_DECODE);
    cr_expect_not(xdr_tdm_dtoh_stream_res(&x, &dec), "a reply larger than asked for was taken");
    xdr_destroy(&x);
}
