/* A guest's TCP lanes (tcp_lanes.h). */
#include "tcp_lanes.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "lanes_wire.h"
#include "recstream.h"
#include "tandem_rpc.h"
#include "tcp_send.h"

typedef enum { JOB_SEND, JOB_RECV } job_kind;

typedef struct lane {
    struct tdm_tcp_lanes *set;
    unsigned index;
    int fd;
    pthread_t th;
    tdm_tx tx;             /* how its upload parts leave (TANDEM_TCP_SEND) */
    uint64_t mine;         /* the number of the next job it does */
} lane;

/* A job: a piece to send or a download to receive.  Job k (1-based) is
 * ring[(k - 1) % TDM_TCP_LANE_JOBS]; its slot stays its own until every
 * lane is done with it. */
typedef struct lane_job {
    job_kind kind;
    uint32_t xfer;
    unsigned char *buf;
    uint64_t size;
    uint64_t next;         /* JOB_SEND: the first byte no lane took yet */
    unsigned left;         /* lanes not done with it */
} lane_job;

/* Each lane goes on to the next job as soon as it sent its part of the
 * last (and its end mark), without waiting for the other lanes: the parts
 * of an upload's next piece follow those of the piece before without a
 * pause (docs/protocol.md, "Pipelined uploads"). */
struct tdm_tcp_lanes {
    pthread_mutex_t mu;
    pthread_cond_t cv;     /* lanes wait for jobs, callers for jobs done or a free slot */
    unsigned n;
    lane lanes[TDM_LANES_MAX];
    bool stop;
    lane_job ring[TDM_TCP_LANE_JOBS];
    uint64_t posted;       /* jobs posted */
    uint64_t finished;     /* jobs 1..finished are done */
    bool failed;           /* a lane failed since the lanes were last idle */
};

static int connect_to(const char *host, int port)
{
    struct addrinfo hints = { 0 }, *res = NULL, *ai;
    char portstr[16];
    int fd = -1, one = 1;

    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    snprintf(portstr, sizeof(portstr), "%d", port);
    if (getaddrinfo(host, portstr, &hints, &res) != 0)
        return -1;
    for (ai = res; ai; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
        if (fd >= 0 && connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
            break;
        if (fd >= 0)
            close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    if (fd >= 0)
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    return fd;
}


static lane_job *job_of(tdm_tcp_lanes *l, uint64_t k)
{
    return &l->ring[(k - 1) % TDM_TCP_LANE_JOBS];
}

/* The next part of upload job k not yet taken: its offset in *off, its
 * length (0: none left). */
static uint64_t take_part(tdm_tcp_lanes *l, uint64_t k, uint64_t *off)
{
    lane_job *j;
    uint64_t n;

    pthread_mutex_lock(&l->mu);
    j = job_of(l, k);
    *off = j->next;
    n = tdm_lane_part_len(j->size, j->next);
    j->next += n;
    pthread_mutex_unlock(&l->mu);
    return n;
}

/* This lane's part of job k: 0 or -1. */
static int do_job(lane *ln, uint64_t k, job_kind kind, uint32_t xfer, unsigned char *buf, uint64_t size)
{
    unsigned char h[TDM_LANE_HDR_LEN];
    uint64_t off, n;

    if (kind == JOB_SEND) {
        /* Parts as this lane is free, then its end mark (lanes_wire.h).
         * Spliced, the socket refers to the program's pages until the
         * server has read them: it has once MEMCPY_HTOD_LANES is answered,
         * and the copy returns (the program may change the bytes) only once
         * every piece's call was. */
        while ((n = take_part(ln->set, k, &off)) > 0) {
            tdm_lane_hdr_put(h, (tdm_lane_hdr){ xfer, (uint32_t)n, off });
            if (tdm_tx_send(&ln->tx, ln->fd, h, sizeof(h), buf + off, n) != 0)
                return -1;
        }
        tdm_lane_hdr_put(h, (tdm_lane_hdr){ xfer, 0, 0 });
        return tdm_tx_send(&ln->tx, ln->fd, h, sizeof(h), NULL, 0) == 0 ? 0 : -1;
    }
    /* Parts until the end mark, each checked to lie inside the buffer:
     * the server is trusted no more than a reply's length would be. */
    for (;;) {
        if (tdm_recstream_recv_all(ln->fd, h, sizeof(h)) != 0)
            return -1;
        tdm_lane_hdr got = tdm_lane_hdr_get(h);
        bool ack = (got.len & TDM_LANE_ACK) != 0;
        got.len &= ~TDM_LANE_ACK;
        if (got.xfer != xfer || got.off > size || got.len > size - got.off)
            return -1;
        if (got.len == 0)
            return 0;
        if (tdm_recstream_recv_all(ln->fd, buf + got.off, got.len) != 0)
            return -1;
        /* The server spliced the part from its staging and reuses that once
         * we have the bytes: say so. */
        if (ack) {
            struct iovec iov[1] = { { h, sizeof(h) } };
            tdm_lane_hdr_put(h, got);
            if (tdm_recstream_send_all(ln->fd, iov, 1) != 0)
                return -1;
        }
    }
}

/* mu held.  Every lane does the jobs in order, so they end in order: the
 * last lane to finish job k finished every job before it already. */
static void job_done(tdm_tcp_lanes *l, uint64_t k)
{
    if (--job_of(l, k)->left == 0) {
        l->finished = k;
        pthread_cond_broadcast(&l->cv);
    }
}

static void *lane_main(void *arg)
{
    lane *ln = arg;
    tdm_tcp_lanes *l = ln->set;

    pthread_mutex_lock(&l->mu);
    for (;;) {
        while (!l->stop && ln->mine > l->posted)
            pthread_cond_wait(&l->cv, &l->mu);
        if (l->stop)
            break;
        uint64_t k = ln->mine++;
        lane_job j = *job_of(l, k);
        pthread_mutex_unlock(&l->mu);
        int rc = do_job(ln, k, j.kind, j.xfer, j.buf, j.size);
        pthread_mutex_lock(&l->mu);
        if (rc != 0) {
            /* The server then fails the copy, and the caller sees why.
             * The lane's later jobs fail at once on the shut socket. */
            l->failed = true;
            shutdown(ln->fd, SHUT_RDWR);
        }
        job_done(l, k);
    }
    pthread_mutex_unlock(&l->mu);
    return NULL;
}

/* Connects one lane and has the server admit it: its index, or -1. */
static int open_lane(const char *host, int port, uint64_t sid, const unsigned char *secret, int *fd_out)
{
    unsigned char pre[TDM_LANE_PREAMBLE_LEN], ack[4];
    int fd = connect_to(host, port);

    if (fd < 0)
        return -1;
    memcpy(pre, TDM_LANE_MAGIC, TDM_LANE_MAGIC_LEN);
    tdm_lane_put64(pre + TDM_LANE_MAGIC_LEN, sid);
    memcpy(pre + TDM_LANE_MAGIC_LEN + 8, secret, TDM_LANE_SECRET_LEN);
    if (send(fd, pre, sizeof(pre), MSG_NOSIGNAL) != (ssize_t)sizeof(pre) || tdm_recstream_recv_all(fd, ack, sizeof(ack)) != 0) {
        close(fd);
        return -1;
    }
    *fd_out = fd;
    return (int)tdm_lane_get32(ack);
}

int tdm_tcp_lanes_open(const char *host, int port, uint64_t sid, const unsigned char *secret, unsigned want,
                       tdm_tx_mode send, tdm_tcp_lanes **out, char *err, size_t errlen)
{
    tdm_tcp_lanes *l = calloc(1, sizeof(*l));

    *out = NULL;
    if (!l) {
        snprintf(err, errlen, "out of memory");
        return 0;
    }
    pthread_mutex_init(&l->mu, NULL);
    pthread_cond_init(&l->cv, NULL);
    if (want > TDM_LANES_MAX)
        want = TDM_LANES_MAX;
    while (l->n < want) {
        lane *ln = &l->lanes[l->n];
        int fd = -1, index = open_lane(host, port, sid, secret, &fd);
        if (index != (int)l->n) {
            snprintf(err, errlen, "the server did not admit lane %u (see its log)", l->n);
            if (fd >= 0)
                close(fd);
            break;
        }
        *ln = (lane){ .set = l, .index = l->n, .fd = fd, .mine = 1 };
        tdm_tx_init(&ln->tx, send);
        /* The program's signals are for its own threads, not for ours. */
        sigset_t all, old;
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        int rc = pthread_create(&ln->th, NULL, lane_main, ln);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        if (rc != 0) {
            snprintf(err, errlen, "cannot start a lane thread");
            tdm_tx_fini(&ln->tx);
            close(fd);
            break;
        }
        l->n++;
    }
    if (l->n == 0) {
        tdm_tcp_lanes_close(l);
        return 0;
    }
    *out = l;
    return (int)l->n;
}

unsigned tdm_tcp_lanes_count(const tdm_tcp_lanes *l)
{
    return l ? l->n : 0;
}

/* Posts a job, once the ring has a free slot (the oldest job done). */
static void start(tdm_tcp_lanes *l, job_kind kind, uint32_t xfer, void *buf, uint64_t n)
{
    pthread_mutex_lock(&l->mu);
    while (!l->stop && l->posted - l->finished >= TDM_TCP_LANE_JOBS)
        pthread_cond_wait(&l->cv, &l->mu);
    if (l->posted == l->finished)
        l->failed = false;
    *job_of(l, l->posted + 1) = (lane_job){ .kind = kind, .xfer = xfer, .buf = buf, .size = n, .left = l->n };
    l->posted++;
    pthread_cond_broadcast(&l->cv);
    pthread_mutex_unlock(&l->mu);
}

void tdm_tcp_lanes_send(tdm_tcp_lanes *l, uint32_t xfer, const void *buf, uint64_t n)
{
    start(l, JOB_SEND, xfer, (void *)buf, n);
}

void tdm_tcp_lanes_recv(tdm_tcp_lanes *l, uint32_t xfer, void *buf, uint64_t n)
{
    start(l, JOB_RECV, xfer, buf, n);
}

int tdm_tcp_lanes_wait(tdm_tcp_lanes *l)
{
    int rc;

    pthread_mutex_lock(&l->mu);
    while (l->finished < l->posted)
        pthread_cond_wait(&l->cv, &l->mu);
    rc = l->failed ? -1 : 0;
    pthread_mutex_unlock(&l->mu);
    return rc;
}

void tdm_tcp_lanes_abort(tdm_tcp_lanes *l)
{
    pthread_mutex_lock(&l->mu);
    for (unsigned i = 0; i < l->n; i++)
        shutdown(l->lanes[i].fd, SHUT_RDWR);
    pthread_mutex_unlock(&l->mu);
}

void tdm_tcp_lanes_close(tdm_tcp_lanes *l)
{
    if (!l)
        return;
    tdm_tcp_lanes_abort(l);
    pthread_mutex_lock(&l->mu);
    l->stop = true;
    pthread_cond_broadcast(&l->cv);
    pthread_mutex_unlock(&l->mu);
    for (unsigned i = 0; i < l->n; i++) {
        pthread_join(l->lanes[i].th, NULL);
        tdm_tx_fini(&l->lanes[i].tx);
        close(l->lanes[i].fd);
    }
    pthread_cond_destroy(&l->cv);
    pthread_mutex_destroy(&l->mu);
    free(l);
}
