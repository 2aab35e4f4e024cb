/* How the lanes' bytes leave for a socket (proto/tcp_send.c): every mode
 * delivers the same bytes in the same order (a header, then payloads at
 * odd sizes and alignments); splice and zerocopy fall back to plain sends
 * when the kernel or the memory refuses them (a vmsplice refused, no pipe
 * to be had), part of the way through a payload too, with the stream
 * unchanged; a peer that went and a peer that stopped reading are the
 * caller's errors; and, what the download acks exist for: a spliced
 * payload changed before the receiver read it arrives changed, a plain one
 * does not. */
#include <criterion/criterion.h>
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "tcp_send.h"

static void no_sigpipe(void)
{
    signal(SIGPIPE, SIG_IGN);
}

/* A connected loopback TCP pair: [0] sends, [1] receives. */
static void tcp_pair(int fds[2])
{
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t alen = sizeof(a);
    int l = socket(AF_INET, SOCK_STREAM, 0), one = 1;

    cr_assert(l >= 0);
    cr_assert_eq(bind(l, (struct sockaddr *)&a, sizeof(a)), 0);
    cr_assert_eq(listen(l, 1), 0);
    cr_assert_eq(getsockname(l, (struct sockaddr *)&a, &alen), 0);
    fds[0] = socket(AF_INET, SOCK_STREAM, 0);
    cr_assert_eq(connect(fds[0], (struct sockaddr *)&a, sizeof(a)), 0);
    fds[1] = accept(l, NULL, NULL);
    cr_assert(fds[1] >= 0);
    close(l);
    setsockopt(fds[0], IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

static void fill(unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)(i * 131 + seed + (i >> 12));
}

typedef struct reader {
    int fd;
    unsigned char *buf;
    size_t n;
    int err;
} reader;

static void *read_all(void *arg)
{
    reader *r = arg;

    for (size_t got = 0; got < r->n;) {
        ssize_t k = recv(r->fd, r->buf + got, r->n - got, 0);
        if (k <= 0) {
            r->err = k < 0 ? errno : EPIPE;
            return NULL;
        }
        got += (size_t)k;
    }
    return NULL;
}

static const size_t sizes[] = { 1, 4095, 4096, 65537, 1 << 20, (1 << 20) + 3, 3 * (1 << 20) + 4099, 16 };
#define NSIZES (int)(sizeof(sizes) / sizeof(sizes[0]))

/* Sends a header and each payload of `sizes` the `mode` way, every payload
 * from memory of its own (spliced pages are the sender's until read), the
 * first at `skew` bytes past a page boundary, `fail` vmsplice calls refused
 * first; checks what arrived byte for byte.  The tx's counters in *out. */
static void send_and_check(tdm_tx_mode mode, size_t skew, unsigned fail, tdm_tx *out)
{
    size_t total = 0, span = skew;
    int fds[2];
    pthread_t th;
    tdm_tx tx;

    for (int i = 0; i < NSIZES; i++) {
        total += 16 + sizes[i];
        span += sizes[i];
    }
    unsigned char *src = aligned_alloc(4096, (span + 4095) / 4096 * 4096);
    unsigned char *want = malloc(total), *got = malloc(total);
    reader r = { .buf = got, .n = total };
    cr_assert(src && want && got);
    fill(src, span, 7);
    tcp_pair(fds);
    r.fd = fds[1];
    cr_assert_eq(pthread_create(&th, NULL, read_all, &r), 0);
    tdm_tx_init(&tx, mode);
    tdm_tx_fail_splices(&tx, fail);
    size_t at = 0, from = skew;
    for (int i = 0; i < NSIZES; i++) {
        unsigned char head[16];
        fill(head, sizeof(head), 200 + (unsigned)i);
        memcpy(want + at, head, 16);
        memcpy(want + at + 16, src + from, sizes[i]);
        cr_assert_eq(tdm_tx_send(&tx, fds[0], head, sizeof(head), src + from, sizes[i]), 0, "payload %d", i);
        /* The header may not be referred to after the call: change it. */
        memset(head, 0xee, sizeof(head));
        at += 16 + sizes[i];
        from += sizes[i];
    }
    pthread_join(th, NULL);
    cr_expect_eq(r.err, 0);
    cr_expect_eq(memcmp(got, want, total), 0, "%s: the bytes that arrived are not those sent", tdm_tx_mode_name(mode));
    *out = tx;
    tdm_tx_fini(&tx);
    close(fds[0]);
    close(fds[1]);
    free(src);
    free(want);
    free(got);
}

static uint64_t payload_bytes(void)
{
    uint64_t n = 0;

    for (int i = 0; i < NSIZES; i++)
        n += sizes[i];
    return n;
}

Test(tcp_send, every_mode_delivers_the_same_bytes, .init = no_sigpipe)
{
    tdm_tx tx;

    for (size_t skew = 0; skew < 8192; skew += 4093) {
        send_and_check(TDM_TX_PLAIN, skew, 0, &tx);
        cr_expect_eq(tx.copied, payload_bytes());
        cr_expect_eq(tx.spliced + tx.zerocopied + tx.fallbacks, 0);
        send_and_check(TDM_TX_SPLICE, skew, 0, &tx);
        /* This kernel splices into TCP (Linux since 2.6.17): every byte went that way. */
        cr_expect_eq(tx.spliced, payload_bytes(), "spliced %llu", (unsigned long long)tx.spliced);
        cr_expect_eq(tx.fallbacks, 0);
        send_and_check(TDM_TX_ZEROCOPY, skew, 0, &tx);
        cr_expect_eq(tx.zerocopied + tx.copied, payload_bytes());
    }
}

/* A vmsplice refused at the first payload, and again in the middle of the
 * stream: those payloads go plainly from where splicing stopped. */
Test(tcp_send, a_refused_splice_falls_back_to_plain_sends, .init = no_sigpipe)
{
    tdm_tx tx;

    send_and_check(TDM_TX_SPLICE, 5, 1, &tx);
    cr_expect_eq(tx.fallbacks, 1);
    cr_expect_eq(tx.spliced + tx.copied, payload_bytes());
    cr_expect_gt(tx.spliced, 0, "splicing stopped for good after one refusal");
    send_and_check(TDM_TX_SPLICE, 0, 1000, &tx);
    cr_expect_eq(tx.spliced, 0);
    cr_expect_eq(tx.copied, payload_bytes());
}

/* No descriptor left for the pipe: plain sends, the same bytes. */
Test(tcp_send, no_pipe_to_be_had_means_plain_sends, .init = no_sigpipe)
{
    struct rlimit old, low;
    int fds[2], probe;
    unsigned char buf[70000], back[sizeof(buf) + 16], head[16] = { 1, 2, 3 };
    reader r = { .buf = back, .n = sizeof(back) };
    pthread_t th;
    tdm_tx tx;

    fill(buf, sizeof(buf), 3);
    tcp_pair(fds);
    r.fd = fds[1];
    cr_assert_eq(pthread_create(&th, NULL, read_all, &r), 0);
    /* The lowest free descriptor is the limit: a pipe needs two. */
    probe = dup(0);
    cr_assert(probe >= 0);
    close(probe);
    getrlimit(RLIMIT_NOFILE, &old);
    low = old;
    low.rlim_cur = (rlim_t)probe + 1;
    cr_assert_eq(setrlimit(RLIMIT_NOFILE, &low), 0);
    tdm_tx_init(&tx, TDM_TX_SPLICE);
    int rc = tdm_tx_send(&tx, fds[0], head, sizeof(head), buf, sizeof(buf));
    setrlimit(RLIMIT_NOFILE, &old);
    cr_expect_eq(rc, 0);
    pthread_join(th, NULL);
    cr_expect_eq(tx.fallbacks, 1);
    cr_expect_eq(tx.copied, sizeof(buf));
    cr_expect_eq(memcmp(back, head, 16), 0);
    cr_expect_eq(memcmp(back + 16, buf, sizeof(buf)), 0);
    tdm_tx_fini(&tx);
    close(fds[0]);
    close(fds[1]);
}

/* Why a download's spliced parts are acknowledged before the server reuses
 * its staging: the socket delivers the pages as they are when read. */
Test(tcp_send, spliced_bytes_are_read_as_they_are_when_the_receiver_reads_them, .init = no_sigpipe)
{
    const size_t n = 256 << 10;
    unsigned char *src = aligned_alloc(4096, n), *back = malloc(n);
    int fds[2];

    cr_assert(src && back);
    for (int m = 0; m < 2; m++) {
        tdm_tx tx;
        tdm_tx_init(&tx, m ? TDM_TX_SPLICE : TDM_TX_PLAIN);
        tcp_pair(fds);
        memset(src, 'a', n);
        /* Fits in the receiver's buffer: the send returns before any read. */
        cr_assert_eq(tdm_tx_send(&tx, fds[0], NULL, 0, src, n), 0);
        memset(src, 'b', n);
        cr_assert_eq(recv(fds[1], back, n, MSG_WAITALL), (ssize_t)n);
        if (m)
            cr_expect_eq(back[n / 2], 'b', "spliced bytes were copied at the send after all");
        else
            cr_expect_eq(back[n / 2], 'a', "plain bytes changed after the send");
        tdm_tx_fini(&tx);
        close(fds[0]);
        close(fds[1]);
    }
    free(src);
    free(back);
}

/* The socket's own failures are the caller's, whatever the mode. */
Test(tcp_send, a_peer_gone_or_stalled_is_an_error, .init = no_sigpipe)
{
    const size_t n = 64 << 20;
    unsigned char *src = aligned_alloc(4096, n);
    const struct timeval patience = { 0, 300000 };
    int fds[2];

    cr_assert(src);
    memset(src, 1, n);
    for (int m = 0; m < 3; m++) {
        tdm_tx tx;
        /* Gone: the receiver closed. */
        tcp_pair(fds);
        close(fds[1]);
        tdm_tx_init(&tx, (tdm_tx_mode)m);
        int rc = 0;
        for (int i = 0; i < 8 && rc == 0; i++)
            rc = tdm_tx_send(&tx, fds[0], NULL, 0, src, 1 << 20);
        cr_expect(rc == -EPIPE || rc == -ECONNRESET, "%s: %d", tdm_tx_mode_name((tdm_tx_mode)m), rc);
        tdm_tx_fini(&tx);
        close(fds[0]);
        /* Stalled: the receiver never reads; SO_SNDTIMEO runs out. */
        tcp_pair(fds);
        setsockopt(fds[0], SOL_SOCKET, SO_SNDTIMEO, &patience, sizeof(patience));
        tdm_tx_init(&tx, (tdm_tx_mode)m);
        cr_expect_eq(tdm_tx_send(&tx, fds[0], NULL, 0, src, n), -EAGAIN, "%s", tdm_tx_mode_name((tdm_tx_mode)m));
        tdm_tx_fini(&tx);
        close(fds[0]);
        close(fds[1]);
    }
    free(src);
}

Test(tcp_send, modes_by_name)
{
    tdm_tx_mode m;

    cr_expect_eq(tdm_tx_mode_parse("splice", &m), 0);
    cr_expect_eq(m, TDM_TX_SPLICE);
    cr_expect_eq(tdm_tx_mode_parse("zerocopy", &m), 0);
    cr_expect_eq(m, TDM_TX_ZEROCOPY);
    cr_expect_eq(tdm_tx_mode_parse("plain", &m), 0);
    cr_expect_eq(m, TDM_TX_PLAIN);
    cr_expect_eq(tdm_tx_mode_parse("Splice", &m), -EINVAL);
    cr_expect_eq(tdm_tx_mode_parse(NULL, &m), -EINVAL);
    cr_expect_str_eq(tdm_tx_mode_name(TDM_TX_SPLICE), "splice");
}
