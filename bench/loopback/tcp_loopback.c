/* The wire's ceiling for bulk copies over TCP on this machine: the same
 * bytes a Tandem copy moves, through plain loopback TCP connections with
 * large send/recv and nothing else (no RPC, no device).  A Tandem tcp copy
 * over one connection cannot beat the 1-stream figure; the figures for more
 * streams say what striping a copy over several connections could reach.
 *
 *   tcp-loopback [SIZE_MIB [REPS [CHUNK_KIB [STREAMS [MODES]]]]]
 *
 * Defaults 64 MiB, 10, 8192 KiB, 1, plain.  One JSON line per mode: GB/s =
 * SIZE / median time of one transfer of SIZE bytes, split evenly over
 * STREAMS connections (a sender and a receiver thread each; sends of CHUNK,
 * reads of up to CHUNK straight into the destination).  MODES is a comma
 * list of how the sender's bytes reach the socket (proto/tcp_send.h, the
 * code Tandem's lanes send with): plain (send: the kernel copies them),
 * splice (vmsplice + splice: it refers to the sender's pages, only the
 * receiver copies), zerocopy (MSG_ZEROCOPY); each mode gets connections of
 * its own.  TCP_LOOPBACK_SOCKBUF=BYTES sets SO_SNDBUF and SO_RCVBUF (left
 * to autotuning otherwise, as in Tandem).  Exit status 1 when the bytes
 * that arrived differ from those sent. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "tcp_send.h"

#define MAX_STREAMS 16

typedef struct lane {
    int fd[2];              /* [0] sends, [1] receives */
    char *src, *dst;        /* this lane's part */
    size_t size, chunk;
    int reps;
    tdm_tx tx;
    pthread_barrier_t *start, *done;
    int failed;
} lane;

static double now_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static void *send_main(void *arg)
{
    lane *l = arg;

    for (int r = 0; r < l->reps; r++)
        for (size_t off = 0; off < l->size;) {
            size_t n = l->size - off < l->chunk ? l->size - off : l->chunk;
            if (tdm_tx_send(&l->tx, l->fd[0], NULL, 0, l->src + off, n) != 0) {
                l->failed = 1;
                shutdown(l->fd[0], SHUT_RDWR);   /* the receiver must not wait for it */
                return NULL;
            }
            off += n;
        }
    return NULL;
}

/* Each rep: waits for the start, receives its part, meets the others. */
static void *recv_main(void *arg)
{
    lane *l = arg;

    for (int r = 0; r < l->reps; r++) {
        pthread_barrier_wait(l->start);
        for (size_t off = 0; off < l->size && !l->failed;) {
            size_t n = l->size - off < l->chunk ? l->size - off : l->chunk;
            ssize_t got = recv(l->fd[1], l->dst + off, n, 0);
            if (got <= 0)
                l->failed = 1;
            else
                off += (size_t)got;
        }
        pthread_barrier_wait(l->done);
    }
    return NULL;
}

/* CPU seconds this process has used, every thread together: on a machine
 * shared with other work the wall time is noise, the CPU a byte costs much
 * less so (and on a host with cores to spare, it is what limits the rate). */
static double cpu_s(void)
{
    struct rusage ru;

    getrusage(RUSAGE_SELF, &ru);
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) + (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

/* A connected loopback pair: [0] the sending end, [1] the receiving one. */
static int tcp_pair(int fds[2], int sockbuf)
{
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t alen = sizeof(a);
    int l = socket(AF_INET, SOCK_STREAM, 0), one = 1;

    if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) || listen(l, 1) ||
        getsockname(l, (struct sockaddr *)&a, &alen))
        return -1;
    fds[0] = socket(AF_INET, SOCK_STREAM, 0);
    if (fds[0] < 0 || connect(fds[0], (struct sockaddr *)&a, sizeof(a)))
        return -1;
    fds[1] = accept(l, NULL, NULL);
    close(l);
    setsockopt(fds[0], IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (sockbuf > 0)
        for (int i = 0; i < 2; i++) {
            setsockopt(fds[i], SOL_SOCKET, SO_SNDBUF, &sockbuf, sizeof(sockbuf));
            setsockopt(fds[i], SOL_SOCKET, SO_RCVBUF, &sockbuf, sizeof(sockbuf));
        }
    return fds[1] < 0 ? -1 : 0;
}

/* One mode's run: the median time of a transfer, or < 0 when it failed. */
static double run_mode(tdm_tx_mode mode, char *src, char *dst, size_t size, int reps, size_t chunk, int nl,
                       int sockbuf, double *t, uint64_t *spliced, double *cpu)
{
    lane lanes[MAX_STREAMS];
    pthread_t snd[MAX_STREAMS], rcv[MAX_STREAMS];
    pthread_barrier_t start, done;
    int failed = 0;

    memset(dst, 0, size);
    pthread_barrier_init(&start, NULL, (unsigned)nl + 1);
    pthread_barrier_init(&done, NULL, (unsigned)nl + 1);
    for (int i = 0; i < nl; i++) {
        size_t part = size / (size_t)nl;
        lanes[i] = (lane){ .src = src + part * (size_t)i, .dst = dst + part * (size_t)i, .size = part,
                           .chunk = chunk, .reps = reps, .start = &start, .done = &done };
        tdm_tx_init(&lanes[i].tx, mode);
        if (tcp_pair(lanes[i].fd, sockbuf)) {
            perror("tcp-loopback: loopback connection");
            exit(2);
        }
        pthread_create(&rcv[i], NULL, recv_main, &lanes[i]);
        pthread_create(&snd[i], NULL, send_main, &lanes[i]);
    }
    *cpu = cpu_s();
    for (int r = 0; r < reps; r++) {
        double t0 = now_us();
        pthread_barrier_wait(&start);
        pthread_barrier_wait(&done);
        t[r] = now_us() - t0;
    }
    *cpu = cpu_s() - *cpu;
    *spliced = 0;
    for (int i = 0; i < nl; i++) {
        pthread_join(snd[i], NULL);
        pthread_join(rcv[i], NULL);
        failed |= lanes[i].failed;
        *spliced += lanes[i].tx.spliced + lanes[i].tx.zerocopied;
        tdm_tx_fini(&lanes[i].tx);
        close(lanes[i].fd[0]);
        close(lanes[i].fd[1]);
    }
    pthread_barrier_destroy(&start);
    pthread_barrier_destroy(&done);
    if (failed || memcmp(src, dst, size) != 0)
        return -1;
    qsort(t, (size_t)reps, sizeof(*t), cmp);
    return t[reps / 2];
}

int main(int argc, char **argv)
{
    size_t size = (argc > 1 ? strtoull(argv[1], NULL, 0) : 64) << 20;
    int reps = argc > 2 ? atoi(argv[2]) : 10;
    size_t chunk = (argc > 3 ? strtoull(argv[3], NULL, 0) : 8192) << 10;
    int nl = argc > 4 ? atoi(argv[4]) : 1, failed = 0;
    char modes[256], *save = NULL;
    const char *sb = getenv("TCP_LOOPBACK_SOCKBUF");
    int sockbuf = sb ? atoi(sb) : 0;
    const char *thp = getenv("TCP_LOOPBACK_THP");
    char *src = NULL, *dst = NULL;
    double *t = calloc((size_t)(reps > 0 ? reps : 1), sizeof(*t));
    tdm_tx_mode m;

    /* 2 MiB aligned, so that TCP_LOOPBACK_THP=1 can make them huge pages. */
    if (posix_memalign((void **)&src, 2u << 20, size ? size : 1) || posix_memalign((void **)&dst, 2u << 20, size ? size : 1))
        src = dst = NULL;
    if (src && thp && *thp == '1') {
        madvise(src, size, MADV_HUGEPAGE);
        madvise(dst, size, MADV_HUGEPAGE);
    }
    snprintf(modes, sizeof(modes), "%s", argc > 5 ? argv[5] : "plain");
    if (!src || !dst || !t || reps < 1 || chunk == 0 || nl < 1 || nl > MAX_STREAMS || size % (size_t)nl) {
        fprintf(stderr, "usage: tcp-loopback [SIZE_MIB [REPS [CHUNK_KIB [STREAMS (1..%d) [MODES]]]]]\n",
                MAX_STREAMS);
        return 2;
    }
    for (char *w = strtok_r(modes, ",", &save); w; w = strtok_r(NULL, ",", &save))
        if (tdm_tx_mode_parse(w, &m) != 0) {
            fprintf(stderr, "tcp-loopback: mode '%s' is not plain, splice or zerocopy\n", w);
            return 2;
        }
    snprintf(modes, sizeof(modes), "%s", argc > 5 ? argv[5] : "plain");
    /* A splice into a socket whose peer went raises it. */
    signal(SIGPIPE, SIG_IGN);
    for (size_t i = 0; i < size; i++)
        src[i] = (char)(i * 131 + 7);
    for (char *w = strtok_r(modes, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
        uint64_t spliced = 0;
        double cpu = 0;
        tdm_tx_mode_parse(w, &m);
        double med = run_mode(m, src, dst, size, reps, chunk, nl, sockbuf, t, &spliced, &cpu);
        if (med < 0) {
            fprintf(stderr, "tcp-loopback: %s: the bytes that arrived are not those sent\n", w);
            failed = 1;
            continue;
        }
        /* The plain mode keeps the id it always had (older results compare). */
        char id[96];
        if (m == TDM_TX_PLAIN)
            snprintf(id, sizeof(id), "tcp.loopback.%dx.%zuM", nl, size >> 20);
        else
            snprintf(id, sizeof(id), "tcp.loopback.%s.%dx.%zuM", w, nl, size >> 20);
        printf("{\"bench\":\"loopback\",\"id\":\"%s\",\"mode\":\"%s\",\"bytes\":%zu,\"streams\":%d,\"unit\":\"GB/s\","
               "\"value\":%.3f,\"median_us\":%.1f,\"cpu_s_per_gb\":%.3f,\"chunk\":%zu,\"reps\":%d,"
               "\"sockbuf\":%d,\"mode_bytes\":%llu}\n",
               id, w, size, nl, (double)size / (med * 1e3), med, cpu / ((double)size * reps / 1e9), chunk, reps,
               sockbuf, (unsigned long long)spliced);
        fflush(stdout);
    }
    free(src);
    free(dst);
    free(t);
    return failed;
}
