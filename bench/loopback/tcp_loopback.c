/* The wire's ceiling for bulk copies over TCP on this machine: the same
 * bytes a Tandem copy moves, through a plain loopback TCP connection with
 * large send/recv and nothing else (no RPC, no device).  A Tandem tcp copy
 * cannot beat this; how close it comes is what the transport costs.
 *
 *   tcp-loopback [SIZE_MIB [REPS [CHUNK_KIB]]]
 *
 * Prints one JSON line per measurement like the micro benchmarks:
 * GB/s = SIZE / median time of one transfer of SIZE bytes (sent in writes
 * of CHUNK, received with reads of up to CHUNK straight into the
 * destination). */
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

typedef struct sender {
    int fd;
    const char *buf;
    size_t size, chunk;
    int reps;
} sender;

static double now_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static void *send_main(void *arg)
{
    sender *s = arg;

    for (int r = 0; r < s->reps; r++)
        for (size_t off = 0; off < s->size;) {
            size_t n = s->size - off < s->chunk ? s->size - off : s->chunk;
            ssize_t w = send(s->fd, s->buf + off, n, MSG_NOSIGNAL);
            if (w <= 0) {
                perror("send");
                return NULL;
            }
            off += (size_t)w;
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
    char *src = malloc(size), *dst = malloc(size);
    double *t = calloc((size_t)reps, sizeof(*t));
    sender s = { .size = size, .chunk = chunk, .reps = reps };
    pthread_t th;
    int fds[2];

    if (!src || !dst || !t || reps < 1 || chunk == 0 || tcp_pair(fds)) {
        fprintf(stderr, "tcp-loopback: cannot set up (size %zu, reps %d)\n", size, reps);
        return 1;
    }
    memset(src, 0x5a, size);
    memset(dst, 0, size);
    s.fd = fds[0];
    s.buf = src;
    pthread_create(&th, NULL, send_main, &s);
    for (int r = 0; r < reps; r++) {
        double t0 = now_us();
        for (size_t off = 0; off < size;) {
            size_t n = size - off < chunk ? size - off : chunk;
            ssize_t got = recv(fds[1], dst + off, n, 0);
            if (got <= 0) {
                perror("recv");
                return 1;
            }
            off += (size_t)got;
        }
        t[r] = now_us() - t0;
    }
    pthread_join(th, NULL);
    qsort(t, (size_t)reps, sizeof(*t), cmp);
    printf("{\"bench\":\"loopback\",\"id\":\"tcp.loopback.%zuM\",\"bytes\":%zu,\"unit\":\"GB/s\","
           "\"value\":%.3f,\"median_us\":%.1f,\"chunk\":%zu,\"reps\":%d}\n",
           size >> 20, size, (double)size / (t[reps / 2] * 1e3), t[reps / 2], chunk, reps);
    return memcmp(src, dst, size) != 0;
}
