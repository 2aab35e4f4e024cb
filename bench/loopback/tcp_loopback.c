/* The wire's ceiling for bulk copies over TCP on this machine: the same
 * bytes a Tandem copy moves, through plain loopback TCP connections with
 * large send/recv and nothing else (no RPC, no device).  A Tandem tcp copy
 * over one connection cannot beat the 1-stream figure; the figures for more
 * streams say what striping a copy over several connections could reach.
 *
 *   tcp-loopback [SIZE_MIB [REPS [CHUNK_KIB [STREAMS]]]]
 *
 * Defaults 64 MiB, 10, 8192 KiB, 1.  One JSON line: GB/s = SIZE / median
 * time of one transfer of SIZE bytes, split evenly over STREAMS connections
 * (a sender and a receiver thread each; writes of CHUNK, reads of up to
 * CHUNK straight into the destination).  Exit status 1 when the bytes that
 * arrived differ from those sent. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_STREAMS 16

typedef struct lane {
    int fd[2];              /* [0] sends, [1] receives */
    char *src, *dst;        /* this lane's part */
    size_t size, chunk;
    int reps;
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
            ssize_t w = send(l->fd[0], l->src + off, n, MSG_NOSIGNAL);
            if (w <= 0) {
                l->failed = 1;
                return NULL;
            }
            off += (size_t)w;
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

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

/* A connected loopback pair: [0] the sending end, [1] the receiving one. */
static int tcp_pair(int fds[2])
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
    return fds[1] < 0 ? -1 : 0;
}

int main(int argc, char **argv)
{
    size_t size = (argc > 1 ? strtoull(argv[1], NULL, 0) : 64) << 20;
    int reps = argc > 2 ? atoi(argv[2]) : 10;
    size_t chunk = (argc > 3 ? strtoull(argv[3], NULL, 0) : 8192) << 10;
    int nl = argc > 4 ? atoi(argv[4]) : 1, failed = 0;
    char *src = malloc(size), *dst = malloc(size);
    double *t = calloc((size_t)(reps > 0 ? reps : 1), sizeof(*t));
    lane lanes[MAX_STREAMS];
    pthread_t snd[MAX_STREAMS], rcv[MAX_STREAMS];
    pthread_barrier_t start, done;

    if (!src || !dst || !t || reps < 1 || chunk == 0 || nl < 1 || nl > MAX_STREAMS || size % (size_t)nl) {
        fprintf(stderr, "usage: tcp-loopback [SIZE_MIB [REPS [CHUNK_KIB [STREAMS (1..%d)]]]]\n", MAX_STREAMS);
        return 2;
    }
    for (size_t i = 0; i < size; i++)
        src[i] = (char)(i * 131 + 7);
    memset(dst, 0, size);
    pthread_barrier_init(&start, NULL, (unsigned)nl + 1);
    pthread_barrier_init(&done, NULL, (unsigned)nl + 1);
    for (int i = 0; i < nl; i++) {
        size_t part = size / (size_t)nl;
        lanes[i] = (lane){ .src = src + part * (size_t)i, .dst = dst + part * (size_t)i, .size = part,
                           .chunk = chunk, .reps = reps, .start = &start, .done = &done };
        if (tcp_pair(lanes[i].fd)) {
            perror("tcp-loopback: loopback connection");
            return 2;
        }
        pthread_create(&rcv[i], NULL, recv_main, &lanes[i]);
        pthread_create(&snd[i], NULL, send_main, &lanes[i]);
    }
    for (int r = 0; r < reps; r++) {
        double t0 = now_us();
        pthread_barrier_wait(&start);
        pthread_barrier_wait(&done);
        t[r] = now_us() - t0;
    }
    for (int i = 0; i < nl; i++) {
        pthread_join(snd[i], NULL);
        pthread_join(rcv[i], NULL);
        failed |= lanes[i].failed;
    }
    qsort(t, (size_t)reps, sizeof(*t), cmp);
    printf("{\"bench\":\"loopback\",\"id\":\"tcp.loopback.%dx.%zuM\",\"bytes\":%zu,\"streams\":%d,\"unit\":\"GB/s\","
           "\"value\":%.3f,\"median_us\":%.1f,\"chunk\":%zu,\"reps\":%d}\n",
           nl, size >> 20, size, nl, (double)size / (t[reps / 2] * 1e3), t[reps / 2], chunk, reps);
    return failed || memcmp(src, dst, size) != 0;
}
