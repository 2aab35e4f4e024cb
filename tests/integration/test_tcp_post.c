/* One-way calls over TCP (docs/protocol.md, the paragraph on one-way calls): the
 * guest transport batches them in a buffer of its own and ships it ahead
 * of anything else on the socket.  A burst of uploads larger than the
 * buffer, followed by a synchronous call (through clnt_vc, or read around
 * it), a raw upload, or another burst, lands in the program's order; a
 * server that dies in the middle of a burst shows as a broken transport
 * with a reason, not as SIGPIPE, and every later call says so too. */
#include <criterion/criterion.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
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

static int post_write(tdm_transport *t, uint64_t dst, const unsigned char *src, size_t n)
{
    tdm_memcpy_htod_args a = { .dst = dst, .stream = 0 };

    a.data.data_val = (char *)src;
    a.data.data_len = (u_int)n;
    return t->ops->post(t, TDM_MEMCPY_HTOD, (xdrproc_t)xdr_tdm_memcpy_htod_args, &a);
}

/* MEMCPY_DTOH: a synchronous call that clnt_vc sends and answers. */
static void sync_read(tdm_transport *t, uint64_t src, unsigned char *dst, uint32_t n)
{
    tdm_memcpy_dtoh_args a = { .src = src, .size = n, .stream = 0 };
    tdm_memcpy_dtoh_res r;

    memset(&r, 0, sizeof(r));
    cr_assert_eq(t->ops->call(t, TDM_MEMCPY_DTOH, (xdrproc_t)xdr_tdm_memcpy_dtoh_args, &a,
                              (xdrproc_t)xdr_tdm_memcpy_dtoh_res, &r), 0);
    cr_assert_eq(r.err, 0);
    cr_assert_eq(r.data.data_len, n);
    memcpy(dst, r.data.data_val, n);
    xdr_free((xdrproc_t)xdr_tdm_memcpy_dtoh_res, (char *)&r);
}

/* A burst of small overlapping writes, some larger ones among them (more
 * than the batch holds in all), each mirrored on the host. */
static void burst(tdm_transport *t, uint64_t dev, unsigned char *mirror, size_t size, unsigned seed)
{
    unsigned char big[40 << 10];

    for (unsigned i = 0; i < 3000; i++) {
        size_t off, n;
        unsigned char v[8];
        if (i % 60 == 0) {
            n = sizeof(big);
            off = (i * 7919u) % (size - n);
            th_fill(big, n, seed + i);
            cr_assert_eq(post_write(t, dev + off, big, n), 0);
            memcpy(mirror + off, big, n);
            continue;
        }
        n = 1 + i % 8;
        off = ((size_t)i * 104729u + seed) % (size - n);
        for (size_t k = 0; k < n; k++)
            v[k] = (unsigned char)(i + k + seed);
        cr_assert_eq(post_write(t, dev + off, v, n), 0);
        memcpy(mirror + off, v, n);
    }
}

Test(tcp_post, burst_then_sync_call_arrives_in_order, .init = up, .fini = down)
{
    const size_t size = 256 << 10, raw = 96 << 10;
    unsigned char *mirror = calloc(1, size), *back = malloc(size), *up_bytes = malloc(raw);
    tdm_transport *t = th_guest_open(srv.endpoint, "tcp-post-test");
    uint64_t dev = th_raw_malloc(t, size);

    cr_assert(mirror && back && up_bytes);
    cr_assert_eq(post_write(t, dev, mirror, size / 2), 0);   /* zeroes, as a raw upload */
    cr_assert_eq(post_write(t, dev + size / 2, mirror, size / 2), 0);

    /* A burst, then a call through clnt_vc. */
    burst(t, dev, mirror, size, 1);
    sync_read(t, dev, back, 32 << 10);
    cr_expect_eq(memcmp(back, mirror, 32 << 10), 0, "a synchronous call overtook posted writes");

    /* A burst, then a download read around clnt_vc. */
    burst(t, dev, mirror, size, 2);
    cr_assert_eq(th_raw_read(t, dev, back, size, 0), 0);
    cr_expect_eq(memcmp(back, mirror, size), 0, "a streamed read overtook posted writes");

    /* A burst, then a raw upload over some of it, then a burst again. */
    burst(t, dev, mirror, size, 3);
    th_fill(up_bytes, raw, 4);
    cr_assert_eq(post_write(t, dev + 1000, up_bytes, raw), 0);
    memcpy(mirror + 1000, up_bytes, raw);
    burst(t, dev, mirror, size, 5);
    /* The flusher alone ships the last burst. */
    usleep(100000);
    cr_assert_eq(th_raw_read(t, dev, back, size, 0), 0);
    cr_expect_eq(memcmp(back, mirror, size), 0, "a raw upload and posted writes crossed");
    t->ops->close(t);
    free(mirror);
    free(back);
    free(up_bytes);
}

/* A server that takes the connection, reads some of a burst and dies. */
typedef struct dying {
    int lfd;
    size_t read_before_dying;
} dying;

static void *dying_server(void *arg)
{
    dying *d = arg;
    struct linger rst = { 1, 0 };
    char buf[16 << 10];
    size_t got = 0;
    int fd = accept(d->lfd, NULL, NULL);

    while (fd >= 0 && got < d->read_before_dying) {
        ssize_t r = recv(fd, buf, sizeof(buf), 0);
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    if (fd >= 0) {
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &rst, sizeof(rst));
        close(fd);
    }
    return NULL;
}

Test(tcp_post, server_dying_mid_burst_is_a_broken_transport)
{
    struct sockaddr_in a = { .sin_family = AF_INET };
    socklen_t alen = sizeof(a);
    dying d = { .read_before_dying = 200 << 10 };
    unsigned char chunk[4096] = { 0 };
    struct timespec start, now;
    tdm_transport *t = NULL;
    pthread_t th;
    char err[256];
    uint64_t sz = 4096;
    tdm_malloc_res mr;
    int rc = 0;

    /* The default: a write to the dead server must not reach it. */
    signal(SIGPIPE, SIG_DFL);
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    d.lfd = socket(AF_INET, SOCK_STREAM, 0);
    cr_assert(d.lfd >= 0);
    cr_assert_eq(bind(d.lfd, (struct sockaddr *)&a, sizeof(a)), 0);
    cr_assert_eq(listen(d.lfd, 1), 0);
    cr_assert_eq(getsockname(d.lfd, (struct sockaddr *)&a, &alen), 0);
    cr_assert_eq(pthread_create(&th, NULL, dying_server, &d), 0);
    cr_assert_eq(tdm_transport_tcp_open("127.0.0.1", ntohs(a.sin_port), &t, err, sizeof(err)), 0, "%s", err);

    clock_gettime(CLOCK_MONOTONIC, &start);
    for (unsigned i = 0; rc == TDM_T_OK; i++) {
        rc = post_write(t, 0x1000, chunk, sizeof(chunk));
        clock_gettime(CLOCK_MONOTONIC, &now);
        cr_assert(now.tv_sec - start.tv_sec < 20, "%u posts to a dead server all succeeded", i);
        if (i % 64 == 0)
            usleep(1000);   /* the flusher ships meanwhile */
    }
    pthread_join(th, NULL);
    close(d.lfd);
    cr_expect_eq(rc, TDM_T_BROKEN);
    cr_expect(strstr(t->why, "Unable to send") != NULL, "why: \"%s\"", t->why);
    /* Later calls, one-way or not, say the same. */
    cr_expect_eq(post_write(t, 0x1000, chunk, 8), TDM_T_BROKEN);
    memset(&mr, 0, sizeof(mr));
    cr_expect_eq(t->ops->call(t, TDM_MALLOC, (xdrproc_t)xdr_u_quad_t, &sz, (xdrproc_t)xdr_tdm_malloc_res, &mr),
                 TDM_T_BROKEN);
    t->ops->close(t);
}
