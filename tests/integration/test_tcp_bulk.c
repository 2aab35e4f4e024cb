/* Bulk data over TCP (docs/protocol.md, "Bulk data over TCP"): a
 * device-to-host copy of any size in one MEMCPY_DTOH_STREAM round trip,
 * uploads decoded into the session's staging, and what an untrusted guest
 * can do to them: ask for bytes outside its memory or on a stream it lacks,
 * or announce an upload and stop half way.  Each gets a clear error or a
 * closed connection, and other sessions keep working with their data. */
#include <criterion/criterion.h>
#include <arpa/inet.h>
#include <driver_types.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "harness.h"
#include "raw_calls.h"
#include "tandem_rpc.h"
#include "transport.h"
#include "xdr_extra.h"
#include "xdr_stream.h"

static th_server srv;

static void up(void)
{
    th_server_start(&srv, NULL);
}

static void down(void)
{
    cr_expect_eq(th_server_stop(&srv), 0, "tandem-server did not stop cleanly; see %s", srv.log);
}

static tdm_transport *guest_open(void)
{
    return th_guest_open(srv.endpoint, "tcp-bulk-test");
}

/* Sizes around the staging's chunk size and odd ones (padding on the wire),
 * at odd offsets. */
Test(tcp_bulk, stream_read_returns_every_byte, .init = up, .fini = down)
{
    const size_t total = 3 * (size_t)TDM_MAX_CHUNK + 4099;
    const struct { size_t off, n; } cases[] = {
        { 0, total }, { 1, 1 }, { 3, 5 }, { 0, TDM_MAX_CHUNK }, { 7, TDM_MAX_CHUNK + 1 },
        { 5, 2 * (size_t)TDM_MAX_CHUNK - 3 }, { 4096, 2 * (size_t)TDM_MAX_CHUNK + 4 }, { 0, 0 },
    };
    unsigned char *pattern = malloc(total), *back = malloc(total + 1);
    tdm_transport *t = guest_open();
    uint64_t dev = th_raw_malloc(t, total);

    cr_assert(pattern && back);
    th_fill(pattern, total, 14);
    th_raw_write(t, dev, pattern, total);
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        memset(back, 0xa5, total + 1);
        cr_assert_eq(th_raw_read(t, dev + cases[c].off, back, cases[c].n, 0), 0, "case %zu", c);
        cr_expect_eq(memcmp(back, pattern + cases[c].off, cases[c].n), 0, "case %zu: bytes differ", c);
        cr_expect_eq(back[cases[c].n], 0xa5, "case %zu: wrote past the end", c);
    }
    t->ops->close(t);
    free(pattern);
    free(back);
}

Test(tcp_bulk, stream_read_refuses_bad_ranges_and_streams, .init = up, .fini = down)
{
    tdm_transport *t = guest_open();
    uint64_t dev = th_raw_malloc(t, 1 << 20);
    unsigned char *back = calloc(1, 4 << 20);
    unsigned char pattern[64];

    th_fill(pattern, sizeof(pattern), 3);
    th_raw_write(t, dev, pattern, sizeof(pattern));
    /* Past the allocation's end, spanning it, nowhere at all: refused
     * before a byte is sent. */
    cr_expect_eq(th_raw_read(t, dev + 1, back, 1 << 20, 0), cudaErrorInvalidValue);
    cr_expect_eq(th_raw_read(t, dev, back, 4 << 20, 0), cudaErrorInvalidValue);
    cr_expect_eq(th_raw_read(t, 0x123456789ull, back, 16, 0), cudaErrorInvalidValue);
    cr_expect_eq(th_raw_read(t, dev, back, 16, 0x5300000100000007ull), cudaErrorInvalidResourceHandle);
    /* The session goes on. */
    cr_expect_eq(th_raw_read(t, dev, back, sizeof(pattern), 0), 0);
    cr_expect_eq(memcmp(back, pattern, sizeof(pattern)), 0);
    cr_expect(th_server_log_has(&srv, "outside the session's allocations"), "no clear error in the server log");
    t->ops->close(t);
    free(back);
}

/* An earlier one-way call's error comes back from the streamed read, as
 * from any synchronizing call. */
Test(tcp_bulk, stream_read_reports_a_deferred_error, .init = up, .fini = down)
{
    tdm_transport *t = guest_open();
    uint64_t dev = th_raw_malloc(t, 4096);
    unsigned char b[16] = { 0 };
    tdm_memcpy_htod_args bad = { .dst = 0x123456789ull, .stream = 0 };

    bad.data.data_val = (char *)b;
    bad.data.data_len = sizeof(b);
    cr_assert_eq(t->ops->post(t, TDM_MEMCPY_HTOD, (xdrproc_t)xdr_tdm_memcpy_htod_args, &bad), 0);
    cr_expect_eq(th_raw_read(t, dev, b, sizeof(b), 0), cudaErrorInvalidValue);
    cr_expect_eq(th_raw_read(t, dev, b, sizeof(b), 0), 0, "the error was reported twice");
    t->ops->close(t);
}

static int raw_connect(void)
{
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)srv.port) };
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    cr_assert_eq(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    return fd;
}

/* A guest that announces an 8 MiB upload, sends 1 MiB of it and vanishes:
 * its session ends (the log says why), and a session in the middle of its
 * own uploads and streamed reads does not notice. */
Test(tcp_bulk, upload_cut_short_harms_no_one_else, .init = up, .fini = down)
{
    const size_t n = 2 * (size_t)TDM_MAX_CHUNK + 12;
    unsigned char *pattern = malloc(n), *back = malloc(n);
    tdm_transport *t = guest_open();
    uint64_t dev = th_raw_malloc(t, n);
    int fd = raw_connect();
    uint32_t words[] = {
        /* record marker: a last fragment of the whole call, as announced */
        htonl(0x80000000u | (48 + 12 + TDM_MAX_CHUNK)),
        htonl(1), htonl(CALL), htonl(2), htonl(TANDEM_PROG), htonl(TANDEM_V1), htonl(TDM_MEMCPY_HTOD),
        0, 0, 0, 0,                                  /* no credentials, no verifier */
        htonl(0x2000), htonl(0),                      /* dst */
    };
    uint32_t rest[] = { 0, 0, htonl(TDM_MAX_CHUNK) }; /* stream 0; data: 8 MiB announced */
    char *junk = calloc(1, 1 << 20);

    th_fill(pattern, n, 9);
    th_raw_write(t, dev, pattern, n);
    cr_assert_eq(write(fd, words, sizeof(words)), (ssize_t)sizeof(words));
    cr_assert_eq(write(fd, rest, sizeof(rest)), (ssize_t)sizeof(rest));
    cr_assert_eq(write(fd, junk, (1 << 20) - 12), (ssize_t)(1 << 20) - 12);
    close(fd);
    usleep(300000);
    cr_expect_eq(th_raw_read(t, dev, back, n, 0), 0);
    cr_expect_eq(memcmp(back, pattern, n), 0, "the other session's data changed");
    cr_expect(th_server_log_has(&srv, "connection lost in the middle of a frame"),
              "no clear error in the server log");
    t->ops->close(t);
    free(junk);
    free(pattern);
    free(back);
}

/* simpleStreams' pattern through the guest library over TCP: pinned
 * uploads and downloads on four streams around work on each, every byte
 * checked by the program; a run of several reps gives the same checksums
 * each time (the pattern does not depend on the rep but for the memset). */
Test(tcp_bulk, streams_pattern_round_trips, .init = up, .fini = down)
{
    const char *argv[] = { th_bin("streams-copy-check"), "-m", "20", "-s", "4", "-r", "3", NULL };
    th_result *r = calloc(1, sizeof(*r));

    th_run_guest(srv.endpoint, argv, 120, r);
    cr_assert_eq(r->status, 0, "streams-copy-check exited %d:\n%s\n%s", r->status, r->out, r->err);
    cr_expect(strstr(r->out, "rep 2: 20 MiB over 4 streams") != NULL, "output:\n%s", r->out);
    cr_expect(strstr(r->out, "\nok\n") != NULL, "output:\n%s", r->out);
    free(r);
}

/* ---- tcp bulk data (issue 14): a download abandoned half way ---- */
/* A guest asks for a 64 MiB download, reads 1 MiB of the reply and goes
 * away: the server, in the middle of writing the payload straight from its
 * staging, ends that session only (the log says why), and a session busy
 * with its own uploads and downloads does not notice. */
Test(tcp_bulk, download_abandoned_harms_no_one_else, .init = up, .fini = down)
{
    const size_t n = 3 * (size_t)TDM_MAX_CHUNK + 8, big = 64u << 20;
    unsigned char *pattern = malloc(n), *back = malloc(n);
    char *junk = malloc(1 << 20), rec[256];
    tdm_transport *t = guest_open();
    uint64_t dev = th_raw_malloc(t, n);
    int fd = raw_connect();
    struct sockaddr_in sa;
    socklen_t salen = sizeof(sa);
    struct netbuf addr = { sizeof(sa), sizeof(sa), &sa };
    CLIENT *c;
    tdm_hello_args h = { TDM_PROTO_VERSION, (int)getpid(), "abandoning", TDM_RESUME_NONE, { 0, NULL },
                         { 0, NULL } };
    tdm_hello_res hr;
    tdm_malloc_res mr;
    u_quad_t sz = big;
    struct timeval tmo = { 10, 0 };
    struct rpc_msg msg;
    tdm_memcpy_dtoh_args a = { .size = big, .stream = 0 };
    uint32_t mark;
    XDR x;

    th_fill(pattern, n, 5);
    getpeername(fd, (struct sockaddr *)&sa, &salen);
    c = clnt_vc_create(fd, &addr, TANDEM_PROG, TANDEM_V1, 0, 0);
    cr_assert(c != NULL);
    memset(&hr, 0, sizeof(hr));
    cr_assert_eq(clnt_call(c, TDM_HELLO, (xdrproc_t)xdr_tdm_hello_args, (char *)&h, (xdrproc_t)xdr_tdm_hello_res,
                           (char *)&hr, tmo), RPC_SUCCESS);
    xdr_free((xdrproc_t)xdr_tdm_hello_res, (char *)&hr);
    memset(&mr, 0, sizeof(mr));
    cr_assert_eq(clnt_call(c, TDM_MALLOC, (xdrproc_t)xdr_u_quad_t, (char *)&sz, (xdrproc_t)xdr_tdm_malloc_res,
                           (char *)&mr, tmo), RPC_SUCCESS);
    cr_assert_eq(mr.err, 0);
    a.src = mr.addr;

    /* The download's call, written by hand after clnt_vc's (nothing of it
     * is left in clnt_vc's buffers: every call above was answered). */
    xdrmem_create(&x, rec + 4, sizeof(rec) - 4, XDR_ENCODE);
    tdm_rpc_call_msg(&msg, 77, TDM_MEMCPY_DTOH_STREAM);
    cr_assert(xdr_callmsg(&x, &msg) && xdr_tdm_memcpy_dtoh_args(&x, &a));
    mark = htonl(0x80000000u | xdr_getpos(&x));
    memcpy(rec, &mark, 4);
    cr_assert_eq(write(fd, rec, 4 + xdr_getpos(&x)), (ssize_t)(4 + xdr_getpos(&x)));
    for (size_t got = 0; got < (1u << 20);) {
        ssize_t r = read(fd, junk, (1u << 20) - got);
        cr_assert_gt(r, 0, "the download's reply stopped before 1 MiB");
        got += (size_t)r;
    }
    clnt_destroy(c);   /* leaves fd open: CLSET_FD_CLOSE was not asked for */
    close(fd);

    th_raw_write(t, dev, pattern, n);
    cr_expect_eq(th_raw_read(t, dev, back, n, 0), 0);
    cr_expect_eq(memcmp(back, pattern, n), 0, "the other session's data changed");
    /* The server notices when its next write fails: give it a moment. */
    for (int i = 0; i < 50 && !th_server_log_has(&srv, "cannot send reply: peer gone"); i++)
        usleep(100000);
    cr_expect(th_server_log_has(&srv, "cannot send reply: peer gone"), "no clear error in the server log");
    t->ops->close(t);
    free(junk);
    free(pattern);
    free(back);
}
