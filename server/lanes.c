/* A session's TCP lanes, server side (lanes.h).
 *
 * Jobs: the session's thread posts them into a ring of TDM_LANE_JOBS; each
 * lane's thread does its part of each job in order, and goes on to the next
 * job as soon as it is done with its part of the last, without waiting for
 * the other lanes: a download's pieces stream back to back, and a slow lane
 * holds up only the jobs that need it.  A job is done when every lane is
 * done with it; jobs may finish out of order (a lane that took no part of a
 * download is done at once), `finished` counts those done in order. */
#include "lanes.h"

#include <driver_types.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <unistd.h>

#include "lanes_wire.h"
#include "log.h"
#include "recstream.h"
#include "tandem_rpc.h"

typedef enum { JOB_RECV, JOB_SEND, JOB_END } job_kind;

/* An upload's piece lands in staging buffers of TDM_MAX_CHUNK each: part
 * at offset o goes to seg[o / TDM_MAX_CHUNK] (a part never straddles two,
 * TDM_MAX_CHUNK being a multiple of TDM_LANE_PART). */
#define LANE_SEGS (TDM_LANE_PIECE_MAX / TDM_MAX_CHUNK)
_Static_assert(TDM_MAX_CHUNK % TDM_LANE_PART == 0, "a part would straddle two staging buffers");
_Static_assert(TDM_LANE_PIECE_MAX % TDM_MAX_CHUNK == 0, "a piece is whole staging buffers");

typedef struct lane_job {
    job_kind kind;
    uint32_t xfer;
    unsigned char *buf;   /* JOB_SEND: the piece: len bytes at off in the copy */
    unsigned char *seg[LANE_SEGS];  /* JOB_RECV: where its bytes go */
    uint64_t off, len;
    unsigned jn;          /* lanes the job is split over */
    unsigned left;        /* lanes not done with it */
    uint64_t next;        /* JOB_SEND: the piece's first byte no lane took yet */
    uint64_t got;         /* JOB_RECV: bit i: part i came (its header) */
    uint64_t landed;      /* JOB_RECV: bit i: part i's bytes are in place */
} lane_job;

/* An upload's piece is at most TDM_LANE_PIECE_MAX: its parts fit in `got`. */
_Static_assert(TDM_LANE_PIECE_MAX / TDM_LANE_PART <= 64, "more parts to a piece than bits to count them");

typedef struct lane {
    int fd;
    int wake;             /* eventfd: a job was posted while the lane waits for an ack */
    bool polling;         /* it does (mu held to change) */
    uint64_t mine;        /* the number of the next job it does (jobs before it joined are not its) */
    /* Jobs whose last part on this lane asked for an ack (splice), oldest first, with that part's
     * header as the ack must echo it. */
    uint64_t unacked[TDM_LANE_JOBS];
    tdm_lane_hdr ack_hdr[TDM_LANE_JOBS];
    unsigned nunacked;
    tdm_tx tx;
} lane;

struct tdm_lanes {
    pthread_mutex_t mu;
    pthread_cond_t work;  /* lanes wait for jobs (and for the end) */
    pthread_cond_t done;  /* the session's thread waits for jobs done, lanes out of buffers, threads gone */
    tdm_tx_mode send_mode;
    uint64_t session_id;
    unsigned char secret[TDM_LANE_SECRET_LEN];
    bool ticketed;
    lane lanes[TDM_LANES_MAX];
    unsigned n;           /* lanes attached; their indices are 0..n-1 */
    unsigned threads;     /* lane threads still in tdm_lanes_serve */
    unsigned busy;        /* lane threads inside a job's buffer (mu not held) */
    bool closing;         /* the session ends */
    bool broken;          /* a lane failed: the others leave, no job runs */
    /* Job k (1-based) is ring[(k - 1) % TDM_LANE_JOBS]. */
    lane_job ring[TDM_LANE_JOBS];
    uint64_t posted;      /* jobs posted */
    uint64_t finished;    /* jobs 1..finished are done */
    /* What the lanes carried, logged when they close: which copies took
     * them is how a deployment (and tests/integration/test_tcp_lanes.c)
     * sees that the guest's lane decision is the intended one. */
    uint64_t up_pieces, up_bytes, down_bytes;
    /* Upload pieces at whose answer the next piece's parts had come on a
     * lane already: the guest pipelines its pieces (docs/protocol.md,
     * "Pipelined uploads").  A guest that waits for each answer before
     * sending the next piece's parts never has any. */
    uint64_t up_ahead;
};

tdm_lanes *tdm_lanes_create(tdm_tx_mode send)
{
    tdm_lanes *l = calloc(1, sizeof(*l));

    if (!l)
        return NULL;
    pthread_mutex_init(&l->mu, NULL);
    pthread_cond_init(&l->work, NULL);
    pthread_cond_init(&l->done, NULL);
    l->send_mode = send;
    return l;
}

static lane_job *job_of(tdm_lanes *l, uint64_t k)
{
    return &l->ring[(k - 1) % TDM_LANE_JOBS];
}

/* mu held. */
static void shut_all(tdm_lanes *l)
{
    for (unsigned i = 0; i < l->n; i++)
        if (l->lanes[i].fd >= 0)
            shutdown(l->lanes[i].fd, SHUT_RDWR);
}

/* Wakes the lanes for a new job or a change of state (and, for the
 * latter, whoever waits for them).  mu held. */
static void wake_lanes(tdm_lanes *l)
{
    const uint64_t one = 1;

    pthread_cond_broadcast(&l->work);
    if (l->broken || l->closing)
        pthread_cond_broadcast(&l->done);
    for (unsigned i = 0; i < l->n; i++)
        if (l->lanes[i].polling && write(l->lanes[i].wake, &one, sizeof(one)) < 0) {
            /* Full (it never is: the lane reads it at each wake): the lane wakes anyway. */
        }
}

/* mu held. */
static void job_done(tdm_lanes *l, uint64_t k)
{
    uint64_t was = l->finished;

    job_of(l, k)->left--;
    while (l->finished < l->posted && job_of(l, l->finished + 1)->left == 0)
        l->finished++;
    if (l->finished != was)
        pthread_cond_broadcast(&l->done);
}

void tdm_lanes_close(tdm_lanes *l)
{
    if (!l)
        return;
    pthread_mutex_lock(&l->mu);
    if (l->up_pieces || l->down_bytes)
        tdm_log_session(l->session_id, "lanes carried %llu upload piece(s), %llu bytes, and %llu bytes of downloads; "
                        "%llu upload piece(s) met the next one's parts already sent (pipelined)",
                        (unsigned long long)l->up_pieces, (unsigned long long)l->up_bytes,
                        (unsigned long long)l->down_bytes, (unsigned long long)l->up_ahead);
    l->closing = true;
    shut_all(l);
    wake_lanes(l);
    while (l->threads > 0)
        pthread_cond_wait(&l->done, &l->mu);
    pthread_mutex_unlock(&l->mu);
    pthread_cond_destroy(&l->work);
    pthread_cond_destroy(&l->done);
    pthread_mutex_destroy(&l->mu);
    explicit_bzero(l->secret, sizeof(l->secret));
    free(l);
}

int tdm_lanes_ticket(tdm_lanes *l, uint64_t session_id, unsigned char *secret, unsigned *max_lanes)
{
    int err = 0;

    pthread_mutex_lock(&l->mu);
    /* The guest asks before it opens its lanes: any it opened before (and
     * gave up on, maybe while they were opening) go, and the new ones are
     * numbered from 0.  No job runs now: the session's thread is here. */
    l->broken = true;
    shut_all(l);
    wake_lanes(l);
    while (l->threads > 0)
        pthread_cond_wait(&l->done, &l->mu);
    l->n = 0;
    l->broken = false;
    l->posted = l->finished = 0;
    if (!l->ticketed) {
        if (getrandom(l->secret, sizeof(l->secret), 0) != (ssize_t)sizeof(l->secret))
            err = cudaErrorUnknown;
        l->ticketed = err == 0;
    }
    /* The id may change when the connection resumes a session. */
    l->session_id = session_id;
    if (!err)
        memcpy(secret, l->secret, sizeof(l->secret));
    *max_lanes = TDM_LANES_MAX;
    pthread_mutex_unlock(&l->mu);
    return err;
}

bool tdm_lanes_match(tdm_lanes *l, uint64_t session_id, const unsigned char *secret)
{
    unsigned char diff = 0;
    bool ok;

    pthread_mutex_lock(&l->mu);
    for (size_t i = 0; i < sizeof(l->secret); i++)
        diff |= (unsigned char)(l->secret[i] ^ secret[i]);
    ok = l->ticketed && l->session_id == session_id && diff == 0;
    pthread_mutex_unlock(&l->mu);
    return ok;
}

int tdm_lanes_attach(tdm_lanes *l, int fd, const char **why)
{
    int index = -1, wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);

    pthread_mutex_lock(&l->mu);
    if (wake < 0)
        *why = "out of descriptors";
    else if (l->closing)
        *why = "its session is ending";
    else if (l->broken)
        *why = "the session's lanes failed (its next LANE_TICKET starts new ones)";
    else if (l->n >= TDM_LANES_MAX)
        *why = "too many lanes";
    else {
        index = (int)l->n;
        l->lanes[l->n] = (lane){ .fd = fd, .wake = wake, .mine = l->posted + 1 };
        tdm_tx_init(&l->lanes[l->n].tx, l->send_mode);
        l->n++;
        l->threads++;
        wake = -1;
    }
    pthread_mutex_unlock(&l->mu);
    if (wake >= 0)
        close(wake);
    return index;
}

/* The next part of download job k for a lane: [*at, *at + return) of the
 * piece, 0 when every byte was taken.  mu held. */
static uint64_t take_part(tdm_lanes *l, uint64_t k, uint64_t *at)
{
    lane_job *j = job_of(l, k);
    uint64_t n = tdm_lane_part_len(j->len, j->next);

    *at = j->next;
    j->next += n;
    return n;
}

/* The parts of upload job k (a snapshot in j) that the guest sends on this
 * lane, until its end mark.  Each must be one of the piece's parts and come
 * once (the receiver's mask, under mu): the piece is copied to the device
 * only when every byte of it came, so nothing the buffer held before (in a
 * fresh allocation: anything) reaches the device.  0 or -1. */
static int recv_parts(tdm_lanes *l, lane *ln, uint64_t k, const lane_job *j)
{
    unsigned char h[TDM_LANE_HDR_LEN];

    for (;;) {
        if (tdm_recstream_recv_all(ln->fd, h, sizeof(h)) != 0)
            return -1;
        tdm_lane_hdr got = tdm_lane_hdr_get(h);
        if (got.xfer != j->xfer)
            return -1;
        if (got.len == 0)
            return got.off == 0 ? 0 : -1;
        if (got.off % TDM_LANE_PART || got.len != tdm_lane_part_len(j->len, got.off))
            return -1;
        uint64_t bit = 1ull << (got.off / TDM_LANE_PART);
        pthread_mutex_lock(&l->mu);
        bool again = (job_of(l, k)->got & bit) != 0;
        job_of(l, k)->got |= bit;
        pthread_mutex_unlock(&l->mu);
        if (again)
            return -1;
        unsigned char *to = j->seg[got.off / TDM_MAX_CHUNK] + got.off % TDM_MAX_CHUNK;
        if (tdm_recstream_recv_all(ln->fd, to, got.len) != 0)
            return -1;
        /* The session's thread may be waiting for its staging buffer to fill. */
        pthread_mutex_lock(&l->mu);
        job_of(l, k)->landed |= bit;
        pthread_cond_broadcast(&l->done);
        pthread_mutex_unlock(&l->mu);
    }
}

/* This lane's parts of download job k (a snapshot of it in j), taken as the
 * lane is free.  With acks, the last part it sends asks for one (*acked set,
 * its header in *last): to know that a part is the last, the lane takes the
 * next before sending it.  0 or -1 (mu not held). */
static int send_parts(tdm_lanes *l, lane *ln, uint64_t k, const lane_job *j, bool acks, bool *acked,
                      tdm_lane_hdr *last)
{
    unsigned char h[TDM_LANE_HDR_LEN];
    uint64_t at, n, next_at = 0, next_n;

    pthread_mutex_lock(&l->mu);
    n = take_part(l, k, &at);
    pthread_mutex_unlock(&l->mu);
    while (n > 0) {
        pthread_mutex_lock(&l->mu);
        next_n = take_part(l, k, &next_at);
        pthread_mutex_unlock(&l->mu);
        tdm_lane_hdr hdr = { j->xfer, (uint32_t)n, j->off + at };
        bool ask = acks && next_n == 0;
        tdm_lane_hdr_put(h, (tdm_lane_hdr){ hdr.xfer, hdr.len | (ask ? TDM_LANE_ACK : 0), hdr.off });
        int rc = tdm_tx_send(&ln->tx, ln->fd, h, sizeof(h), j->buf + at, n);
        if (rc != 0) {
            errno = -rc;
            return -1;
        }
        if (ask) {
            *acked = true;
            *last = hdr;
        }
        at = next_at;
        n = next_n;
    }
    return 0;
}

/* One lane's share of job k (a snapshot in j; mu not held).  0 or -1. */
static int do_job(tdm_lanes *l, lane *ln, uint64_t k, const lane_job *j, bool *acked, tdm_lane_hdr *last)
{
    unsigned char h[TDM_LANE_HDR_LEN];
    struct iovec iov[1];

    errno = 0;
    switch (j->kind) {
    case JOB_RECV:
        return recv_parts(l, ln, k, j);
    case JOB_SEND:
        return send_parts(l, ln, k, j, l->send_mode == TDM_TX_SPLICE, acked, last);
    case JOB_END:
        tdm_lane_hdr_put(h, (tdm_lane_hdr){ j->xfer, 0, 0 });
        iov[0] = (struct iovec){ h, sizeof(h) };
        return tdm_recstream_send_all(ln->fd, iov, 1);
    }
    return -1;
}

/* Takes the guest's ack of this lane's oldest unacked part, waiting for it
 * (at most the lane's receive timeout, --frame-timeout) unless `wait` is
 * false, and only until a job is posted (the lane's eventfd).  1: taken;
 * 0: none yet; -1: the lane failed.  mu not held. */
static int take_ack(lane *ln, tdm_lane_hdr want, bool wait)
{
    unsigned char h[TDM_LANE_HDR_LEN];
    struct timeval tv = { 0, 0 };
    socklen_t tl = sizeof(tv);
    ssize_t got;

    if (wait) {
        struct pollfd p[2] = { { .fd = ln->fd, .events = POLLIN }, { .fd = ln->wake, .events = POLLIN } };
        uint64_t count;
        getsockopt(ln->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, &tl);
        int ms = tv.tv_sec || tv.tv_usec ? (int)(tv.tv_sec * 1000 + tv.tv_usec / 1000) : -1;
        int pr = poll(p, 2, ms);
        if (pr < 0 && errno == EINTR)
            return 0;
        if (pr <= 0) {
            errno = pr == 0 ? ETIMEDOUT : errno;
            return -1;   /* a guest that does not acknowledge holds the staging: it fails */
        }
        if (p[1].revents & POLLIN)
            while (read(ln->wake, &count, sizeof(count)) > 0) {
            }
        if (!(p[0].revents & (POLLIN | POLLERR | POLLHUP)))
            return 0;
    }
    got = recv(ln->fd, h, sizeof(h), MSG_PEEK | MSG_DONTWAIT);
    if (got == 0 || (got < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
        return -1;
    if (got < (ssize_t)sizeof(h) && !wait)
        return 0;
    /* The rest of a started ack comes at once from a guest that follows
     * the protocol; the receive timeout bounds one that does not. */
    if (tdm_recstream_recv_all(ln->fd, h, sizeof(h)) != 0)
        return -1;
    tdm_lane_hdr a = tdm_lane_hdr_get(h);
    if (a.xfer != want.xfer || a.len != want.len || a.off != want.off) {
        errno = 0;
        return -1;
    }
    return 1;
}

void tdm_lanes_serve(tdm_lanes *l, int index, uint64_t session_id)
{
    lane *ln = &l->lanes[index];
    int rc = 0;

    pthread_mutex_lock(&l->mu);
    while (!l->closing && !l->broken) {
        if (ln->mine <= l->posted) {
            /* Its next job: a snapshot, since the ring's slot stays the
             * job's until every lane is done with it. */
            uint64_t k = ln->mine++;
            lane_job j = *job_of(l, k);
            tdm_lane_hdr last;
            bool acked = false;
            l->busy++;
            pthread_mutex_unlock(&l->mu);
            rc = do_job(l, ln, k, &j, &acked, &last);
            /* Acks that came meanwhile end older jobs early. */
            int taken = rc == 0 && ln->nunacked > 0 ? take_ack(ln, ln->ack_hdr[0], false) : 0;
            pthread_mutex_lock(&l->mu);
            l->busy--;
            if (l->busy == 0 && (l->broken || l->closing))
                pthread_cond_broadcast(&l->done);   /* failed() waits for the buffers to be free */
            if (rc != 0 || taken < 0) {
                rc = -1;
                break;
            }
            if (taken > 0) {
                job_done(l, ln->unacked[0]);
                ln->nunacked--;
                memmove(ln->unacked, ln->unacked + 1, ln->nunacked * sizeof(ln->unacked[0]));
                memmove(ln->ack_hdr, ln->ack_hdr + 1, ln->nunacked * sizeof(ln->ack_hdr[0]));
            }
            if (acked) {
                /* Never more than the ring's jobs: each is one of them. */
                ln->unacked[ln->nunacked] = k;
                ln->ack_hdr[ln->nunacked++] = last;
            } else {
                job_done(l, k);
            }
            continue;
        }
        if (ln->nunacked > 0) {
            /* Nothing to send: wait for an ack, or for a job to be posted. */
            tdm_lane_hdr want = ln->ack_hdr[0];
            ln->polling = true;
            pthread_mutex_unlock(&l->mu);
            int taken = take_ack(ln, want, true);
            pthread_mutex_lock(&l->mu);
            ln->polling = false;
            if (taken < 0) {
                rc = -1;
                break;
            }
            if (taken > 0) {
                job_done(l, ln->unacked[0]);
                ln->nunacked--;
                memmove(ln->unacked, ln->unacked + 1, ln->nunacked * sizeof(ln->unacked[0]));
                memmove(ln->ack_hdr, ln->ack_hdr + 1, ln->nunacked * sizeof(ln->ack_hdr[0]));
            }
            continue;
        }
        pthread_cond_wait(&l->work, &l->mu);
    }
    if (rc != 0 && !l->broken && !l->closing) {
        tdm_log_session(session_id, "lane %d failed in the middle of a copy (%s): the guest copies on "
                        "its main connection", index, errno ? strerror(errno) : "bad part header or ack");
        l->broken = true;
        shut_all(l);
        wake_lanes(l);
    }
    tdm_tx_fini(&ln->tx);
    close(ln->wake);
    ln->wake = -1;
    ln->fd = -1;
    l->threads--;
    pthread_cond_broadcast(&l->done);
    pthread_mutex_unlock(&l->mu);
}

/* The lanes failed: once no lane thread is inside a job's buffer (none
 * takes a new job once broken), the caller may reuse its buffers.  mu
 * held. */
static int failed(tdm_lanes *l)
{
    if (!l->broken && !l->closing) {
        l->broken = true;
        shut_all(l);
        wake_lanes(l);
    }
    while (l->busy > 0)
        pthread_cond_wait(&l->done, &l->mu);
    return TDM_ERR_LANE_FAILED;
}

static int post(tdm_lanes *l, unsigned nlanes, job_kind kind, uint32_t xfer, const void *buf,
                unsigned char *const *seg, uint64_t off, uint64_t len, uint64_t *job)
{
    int rc = 0;

    pthread_mutex_lock(&l->mu);
    if (l->broken || l->closing || nlanes == 0 || nlanes != l->n) {
        rc = failed(l);
        goto out;
    }
    while (!l->broken && !l->closing && l->posted - l->finished >= TDM_LANE_JOBS)
        pthread_cond_wait(&l->done, &l->mu);
    if (l->broken || l->closing) {
        rc = failed(l);
        goto out;
    }
    *job = ++l->posted;
    l->down_bytes += kind == JOB_SEND ? len : 0;
    *job_of(l, *job) = (lane_job){ .kind = kind, .xfer = xfer, .buf = (unsigned char *)buf, .off = off,
                                   .len = len, .jn = nlanes, .left = nlanes };
    for (uint64_t i = 0; seg && i * TDM_MAX_CHUNK < len; i++)
        job_of(l, *job)->seg[i] = seg[i];
    wake_lanes(l);
out:
    pthread_mutex_unlock(&l->mu);
    return rc;
}

int tdm_lanes_wait(tdm_lanes *l, uint64_t job)
{
    int rc = 0;

    pthread_mutex_lock(&l->mu);
    while (!l->broken && !l->closing && l->finished < job)
        pthread_cond_wait(&l->done, &l->mu);
    /* A lane that failed leaves its jobs undone: done or not, they failed. */
    if (l->broken || l->closing)
        rc = failed(l);
    pthread_mutex_unlock(&l->mu);
    return rc;
}

/* The bits of the parts of a piece of n bytes that lie in [from, to). */
static uint64_t parts_mask(uint64_t n, uint64_t from, uint64_t to)
{
    uint64_t first = from / TDM_LANE_PART, end = ((to < n ? to : n) + TDM_LANE_PART - 1) / TDM_LANE_PART;
    uint64_t upto = end >= 64 ? ~0ull : (1ull << end) - 1;

    return first >= 64 ? 0 : upto & ~((1ull << first) - 1);
}

int tdm_lanes_recv_start(tdm_lanes *l, unsigned nlanes, uint32_t xfer, unsigned char *const *seg, uint64_t n,
                         uint64_t *job)
{
    /* A piece has 1 to 64 parts (a bit each in the job's mask). */
    if (n == 0 || n > TDM_LANE_PIECE_MAX || !seg)
        nlanes = 0;
    return post(l, nlanes, JOB_RECV, xfer, NULL, seg, 0, n, job);
}

int tdm_lanes_recv_segment(tdm_lanes *l, uint64_t job, unsigned i)
{
    int rc;

    pthread_mutex_lock(&l->mu);
    lane_job *j = job_of(l, job);
    uint64_t want = parts_mask(j->len, (uint64_t)i * TDM_MAX_CHUNK, (uint64_t)(i + 1) * TDM_MAX_CHUNK);
    while (!l->broken && !l->closing && l->finished < job && (j->landed & want) != want)
        pthread_cond_wait(&l->done, &l->mu);
    rc = !l->broken && !l->closing && (j->landed & want) == want ? 0 : TDM_ERR_LANE_FAILED;
    pthread_mutex_unlock(&l->mu);
    return rc;
}

int tdm_lanes_recv_finish(tdm_lanes *l, uint64_t job)
{
    int rc = tdm_lanes_wait(l, job);

    if (rc)
        return rc;
    /* Every lane's end mark came: so must every part. */
    pthread_mutex_lock(&l->mu);
    lane_job *j = job_of(l, job);
    if (j->got != parts_mask(j->len, 0, j->len) || j->landed != j->got) {
        tdm_log_session(l->session_id, "an upload over the lanes missed some of its parts: the guest "
                        "copies on its main connection");
        rc = failed(l);
    } else {
        l->up_pieces++;
        l->up_bytes += j->len;
    }
    pthread_mutex_unlock(&l->mu);
    return rc;
}

int tdm_lanes_recv(tdm_lanes *l, unsigned nlanes, uint32_t xfer, unsigned char *const *seg, uint64_t n)
{
    uint64_t job = 0;
    int rc = tdm_lanes_recv_start(l, nlanes, xfer, seg, n, &job);

    return rc ? rc : tdm_lanes_recv_finish(l, job);
}

void tdm_lanes_note_answer(tdm_lanes *l)
{
    struct pollfd p[TDM_LANES_MAX];
    unsigned np = 0;

    pthread_mutex_lock(&l->mu);
    for (unsigned i = 0; i < l->n; i++)
        if (l->lanes[i].fd >= 0)
            p[np++] = (struct pollfd){ .fd = l->lanes[i].fd, .events = POLLIN };
    /* Only this thread posts jobs, and none is posted now: whatever a lane
     * has to read is the guest's next piece. */
    if (np > 0 && poll(p, np, 0) > 0)
        for (unsigned i = 0; i < np; i++)
            if (p[i].revents & POLLIN) {
                l->up_ahead++;
                break;
            }
    pthread_mutex_unlock(&l->mu);
}

int tdm_lanes_post_send(tdm_lanes *l, unsigned nlanes, uint32_t xfer, const void *buf, uint64_t off, uint64_t n,
                        uint64_t *job)
{
    return post(l, nlanes, JOB_SEND, xfer, buf, NULL, off, n, job);
}

int tdm_lanes_send_end(tdm_lanes *l, unsigned nlanes, uint32_t xfer)
{
    uint64_t job = 0;
    int rc = post(l, nlanes, JOB_END, xfer, NULL, NULL, 0, 0, &job);

    return rc ? rc : tdm_lanes_wait(l, job);
}
