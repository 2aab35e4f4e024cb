/* The record stream of bulk data over TCP (proto/recstream.c): the same
 * records as libtirpc's xdrrec in both directions (each decodes what the
 * other encodes), payloads around the direct threshold and 4-byte padding,
 * a bounded reader that leaves the socket right after its record, and the
 * ends a guest can force: a record mark no stream may carry, a payload cut
 * short by a peer that went away. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "recstream.h"

/* One record: a word, an opaque of `size` bytes, a word. */
typedef struct rec {
    uint32_t a, b;
    u_int size;
    char *data;
} rec;

static bool_t xdr_rec(XDR *x, rec *r)
{
    u_int n = r->size;

    return xdr_uint32_t(x, &r->a) && xdr_bytes(x, &r->data, &n, ~0u) && (r->size = n, 1) &&
           xdr_uint32_t(x, &r->b);
}

static char *pattern(u_int size, unsigned seed)
{
    char *p = malloc(size ? size : 1);

    for (u_int i = 0; i < size; i++)
        p[i] = (char)(i * 31 + seed);
    return p;
}

typedef struct writer {
    int fd;
    bool use_xdrrec;        /* encode with libtirpc's xdrrec instead */
    const rec *recs;
    int n;
} writer;

static int fd_write(void *h, void *buf, int len)
{
    return (int)write(*(int *)h, buf, (size_t)len);
}

static int fd_read(void *h, void *buf, int len)
{
    ssize_t n = read(*(int *)h, buf, (size_t)len);

    return n > 0 ? (int)n : -1;
}

static void *write_main(void *arg)
{
    writer *w = arg;
    tdm_recstream rs;
    XDR x;

    if (w->use_xdrrec) {
        xdrrec_create(&x, 0, 0, (char *)&w->fd, fd_read, fd_write);
    } else {
        cr_assert_eq(tdm_recstream_create(&rs, &x, w->fd, 4096, false), 0);
    }
    x.x_op = XDR_ENCODE;
    for (int i = 0; i < w->n; i++) {
        rec r = w->recs[i];
        cr_assert(xdr_rec(&x, &r));
        cr_assert(w->use_xdrrec ? xdrrec_endofrecord(&x, TRUE) : tdm_recstream_end_record(&x));
    }
    if (w->use_xdrrec) {
        xdr_destroy(&x);
    } else {
        tdm_recstream_destroy(&rs);
    }
    return NULL;
}

static const u_int sizes[] = { 0, 3, 100, TDM_RECSTREAM_DIRECT - 1, TDM_RECSTREAM_DIRECT,
                               TDM_RECSTREAM_DIRECT + 1, (3u << 20) + 2 };
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

/* Writes a record of every size (encoder: xdrrec or recstream), reads
 * them back (decoder: xdrrec or recstream) and compares. */
static void round_trip(bool enc_xdrrec, bool dec_xdrrec, bool bounded)
{
    rec recs[NSIZES];
    int sv[2];
    pthread_t th;
    tdm_recstream rs;
    XDR x;

    for (size_t i = 0; i < NSIZES; i++)
        recs[i] = (rec){ .a = 0x1000u + (uint32_t)i, .b = 0xbeef0000u + (uint32_t)i, .size = sizes[i],
                         .data = pattern(sizes[i], (unsigned)i) };
    cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    writer w = { sv[0], enc_xdrrec, recs, (int)NSIZES };
    pthread_create(&th, NULL, write_main, &w);
    if (dec_xdrrec) {
        xdrrec_create(&x, 0, 0, (char *)&sv[1], fd_read, fd_write);
    } else {
        cr_assert_eq(tdm_recstream_create(&rs, &x, sv[1], 4096, bounded), 0);
    }
    x.x_op = XDR_DECODE;
    for (size_t i = 0; i < NSIZES; i++) {
        rec got = { 0 };
        cr_assert(dec_xdrrec ? xdrrec_skiprecord(&x) : tdm_recstream_next_record(&x), "record %zu", i);
        cr_assert(xdr_rec(&x, &got), "record %zu (size %u)", i, sizes[i]);
        cr_assert_eq(got.a, recs[i].a);
        cr_assert_eq(got.b, recs[i].b);
        cr_assert_eq(got.size, sizes[i]);
        cr_assert(sizes[i] == 0 || memcmp(got.data, recs[i].data, sizes[i]) == 0, "payload of %u bytes", sizes[i]);
        free(got.data);
    }
    pthread_join(th, NULL);
    if (!dec_xdrrec) {
        cr_assert(tdm_recstream_skip_record(&x));
        tdm_recstream_destroy(&rs);
    } else {
        xdr_destroy(&x);
    }
    for (size_t i = 0; i < NSIZES; i++)
        free(recs[i].data);
    close(sv[0]);
    close(sv[1]);
}

Test(recstream, decodes_its_own_records)
{
    round_trip(false, false, false);
}

Test(recstream, bounded_decodes_its_own_records)
{
    round_trip(false, false, true);
}

Test(recstream, decodes_xdrrec_records)
{
    round_trip(true, false, false);
    round_trip(true, false, true);
}

Test(recstream, xdrrec_decodes_its_records)
{
    round_trip(false, true, false);
}

/* A bounded reader takes one record and leaves what follows for another
 * reader on the same socket (the guest shares clnt_vc's). */
Test(recstream, bounded_reader_stops_at_the_end_of_its_record)
{
    rec recs[2] = { { 1, 2, TDM_RECSTREAM_DIRECT + 6, pattern(TDM_RECSTREAM_DIRECT + 6, 1) },
                    { 3, 4, 8, pattern(8, 2) } };
    writer w;
    tdm_recstream rs;
    rec got = { 0 };
    int sv[2];
    pthread_t th;
    XDR x;
    uint32_t mark;

    cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    w = (writer){ sv[0], false, recs, 2 };
    pthread_create(&th, NULL, write_main, &w);
    cr_assert_eq(tdm_recstream_create(&rs, &x, sv[1], 4096, true), 0);
    x.x_op = XDR_DECODE;
    cr_assert(tdm_recstream_next_record(&x));
    cr_assert(xdr_rec(&x, &got));
    cr_assert(tdm_recstream_skip_record(&x));
    /* The next bytes on the socket, once both records are written: the
     * second record's (only) mark.  Not waited for: a reader that took
     * them fails here rather than hangs. */
    pthread_join(th, NULL);
    cr_assert_eq(recv(sv[1], &mark, 4, MSG_DONTWAIT), 4);
    cr_assert_eq(ntohl(mark), 0x80000000u | 20u);   /* a, length, 8 bytes, b */
    tdm_recstream_destroy(&rs);
    free(got.data);
    free(recs[0].data);
    free(recs[1].data);
    close(sv[0]);
    close(sv[1]);
}

Test(recstream, refuses_an_empty_middle_fragment)
{
    uint32_t zero = 0;
    tdm_recstream rs;
    int sv[2];
    XDR x;

    cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    cr_assert_eq(write(sv[0], &zero, 4), 4);
    cr_assert_eq(tdm_recstream_create(&rs, &x, sv[1], 4096, false), 0);
    cr_assert_not(tdm_recstream_next_record(&x));
    /* Malformed, not a lost peer. */
    cr_assert_not(rs.eof || rs.error);
    tdm_recstream_destroy(&rs);
    close(sv[0]);
    close(sv[1]);
}

/* A payload announced at 1 MiB of which 100 KiB come, then the peer goes:
 * the decode fails, and it is seen as the input ending. */
Test(recstream, a_payload_cut_short_is_a_lost_peer)
{
    u_int n = 1u << 20, part = 100u << 10;
    char *data = pattern(part, 3), *dst = malloc(n);
    uint32_t hdr[3] = { htonl(0x80000000u | (8 + n + 4)), htonl(7), htonl(n) };
    tdm_recstream rs;
    int sv[2];
    uint32_t a;
    XDR x;

    cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    cr_assert_eq(write(sv[0], hdr, sizeof(hdr)), (ssize_t)sizeof(hdr));
    cr_assert_eq(write(sv[0], data, part), (ssize_t)part);
    close(sv[0]);
    cr_assert_eq(tdm_recstream_create(&rs, &x, sv[1], 4096, false), 0);
    x.x_op = XDR_DECODE;
    cr_assert(tdm_recstream_next_record(&x));
    cr_assert(xdr_uint32_t(&x, &a));
    cr_assert_eq(a, 7);
    cr_assert(xdr_uint32_t(&x, &a));
    cr_assert_not(xdr_opaque(&x, dst, n));
    cr_assert(rs.eof);
    tdm_recstream_destroy(&rs);
    free(data);
    free(dst);
    close(sv[1]);
}
