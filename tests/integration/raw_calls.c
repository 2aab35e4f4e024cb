/* tests/integration/raw_calls.h */
#include <criterion/criterion.h>
#include <string.h>

#include "raw_calls.h"
#include "tandem_rpc.h"
#include "xdr_extra.h"
#include "xdr_stream.h"

uint64_t th_raw_malloc(tdm_transport *t, uint64_t size)
{
    tdm_malloc_res r;
    u_quad_t sz = size;

    memset(&r, 0, sizeof(r));
    cr_assert_eq(t->ops->call(t, TDM_MALLOC, (xdrproc_t)xdr_u_quad_t, &sz, (xdrproc_t)xdr_tdm_malloc_res, &r), 0);
    cr_assert_eq(r.err, 0);
    return r.addr;
}

void th_raw_write(tdm_transport *t, uint64_t dst, const unsigned char *src, size_t n)
{
    while (n > 0) {
        size_t chunk = n < TDM_MAX_CHUNK ? n : TDM_MAX_CHUNK;
        tdm_memcpy_htod_args a = { .dst = dst, .stream = 0 };
        a.data.data_val = (char *)src;
        a.data.data_len = (u_int)chunk;
        cr_assert_eq(t->ops->post(t, TDM_MEMCPY_HTOD, (xdrproc_t)xdr_tdm_memcpy_htod_args, &a), 0);
        dst += chunk;
        src += chunk;
        n -= chunk;
    }
}

int th_raw_read(tdm_transport *t, uint64_t src, void *dst, uint64_t n, uint64_t stream)
{
    tdm_memcpy_dtoh_args a = { .src = src, .size = n, .stream = stream };
    tdm_dtoh_stream_res r = { .size = n, .buf = dst };

    cr_assert_eq(t->ops->call(t, TDM_MEMCPY_DTOH_STREAM, (xdrproc_t)xdr_tdm_memcpy_dtoh_args, &a,
                              (xdrproc_t)xdr_tdm_dtoh_stream_res, &r), 0, "transport failed");
    if (r.err || r.copy_err)
        return r.err ? r.err : r.copy_err;
    cr_assert_eq(r.got, n, "no bytes came, and no error");
    return 0;
}

void th_fill(unsigned char *p, size_t n, unsigned seed)
{
    uint32_t x = seed * 2654435761u + 1;

    for (size_t i = 0; i < n; i++) {
        x = x * 1103515245u + 12345u;
        p[i] = (unsigned char)(x >> 24);
    }
}
