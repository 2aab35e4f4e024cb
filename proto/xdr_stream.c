#include "xdr_stream.h"

#include <stdint.h>

static bool_t put_zeros(XDR *xdrs, uint64_t n)
{
    static const char zeros[4096];

    while (n > 0) {
        u_int piece = n < sizeof(zeros) ? (u_int)n : (u_int)sizeof(zeros);
        /* Pads only at the very end: every piece but the last is a
         * multiple of 4. */
        if (!xdr_opaque(xdrs, (char *)zeros, piece))
            return FALSE;
        n -= piece;
    }
    return TRUE;
}

static bool_t encode_payload(XDR *xdrs, tdm_dtoh_stream_res *r)
{
    uint64_t off = 0;

    while (off < r->size) {
        uint64_t left = r->size - off;
        size_t got = 0;
        const void *p = r->next(r->source, off, left < SIZE_MAX ? (size_t)left : SIZE_MAX, &got, &r->copy_err);
        if (!p || got == 0 || got > left || (got % 4 && got != left)) {
            if (!r->copy_err)
                r->copy_err = 999; /* cudaErrorUnknown: a source that broke its contract */
            return put_zeros(xdrs, left) && xdr_int(xdrs, &r->copy_err);
        }
        if (!xdr_opaque(xdrs, (char *)p, (u_int)got))
            return FALSE;
        off += got;
    }
    return xdr_int(xdrs, &r->copy_err);
}

bool_t xdr_tdm_dtoh_stream_res(XDR *xdrs, tdm_dtoh_stream_res *r)
{
    uint64_t size;

    switch (xdrs->x_op) {
    case XDR_FREE:
        return TRUE;   /* nothing of the payload is ever held by the result */
    case XDR_ENCODE:
        if (!xdr_int(xdrs, &r->err) || !xdr_uint64_t(xdrs, &r->size))
            return FALSE;
        return encode_payload(xdrs, r);
    case XDR_DECODE:
        /* Exactly what the guest asked for, or nothing: a server that
         * disagrees is not believed. */
        if (!xdr_int(xdrs, &r->err) || !xdr_uint64_t(xdrs, &size) || (size != r->size && size != 0))
            return FALSE;
        r->got = size;
        /* xdr_opaque takes a u_int: a payload past 4 GiB comes in pieces,
         * each a multiple of 4 but the last, which is the only padded one. */
        for (uint64_t off = 0; off < size;) {
            uint64_t left = size - off;
            u_int piece = left > (1u << 30) ? (1u << 30) : (u_int)left;
            if (!xdr_opaque(xdrs, r->buf + off, piece))
                return FALSE;
            off += piece;
        }
        return xdr_int(xdrs, &r->copy_err);
    }
    return FALSE;
}
