/* A session's TCP lanes, server side (lanes.h). */
#include "lanes.h"

#include <driver_types.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "lanes_wire.h"
#include "log.h"
#include "recstream.h"
#include "tandem_rpc.h"

typedef enum { JOB_RECV, JOB_SEND, JOB_END } job_kind;

struct tdm_lanes {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    uint64_t session_id;
    unsigned char secret[TDM_LANE_SECRET_LEN];
    bool ticketed;
    int fds[TDM_LANES_MAX];
    uint64_t joined_at[TDM_LANES_MAX]; /* seq when the lane attached: it does the jobs after */
    unsigned n;           /* lanes attached; their indices are 0..n-1 */
    unsigned threads;     /* lane threads still in tdm_lanes_serve */
    bool closing;         /* the session ends */
    bool broken;          /* a lane failed: the others leave, no job runs */
    /* The job every lane does its slice of; seq counts jobs. */
    uint64_t seq;
    job_kind kind;
    uint32_t xfer;
    unsigned char *buf;   /* the piece: n bytes at off in the copy */
    uint64_t off, len;
    unsigned jn;          /* lanes the job is split over */
    unsigned pending;     /* lanes not done with the job */
};

tdm_lanes *tdm_lanes_create(void)
{
    tdm_lanes *l = calloc(1, sizeof(*l));

    if (!l)
        return NULL;
    pthread_mutex_init(&l->mu, NULL);
    pthread_cond_init(&l->cv, NULL);
    return l;
}

/* mu held. */
static void shut_all(tdm_lanes *l)
{
    for (unsigned i = 0; i < l->n; i++)
        if (l->fds[i] >= 0)
            shutdown(l->fds[i], SHUT_RDWR);
}

void tdm_lanes_close(tdm_lanes *l)
{
    if (!l)
        return;
    pthread_mutex_lock(&l->mu);
    l->closing = true;
    shut_all(l);
    pthread_cond_broadcast(&l->cv);
    while (l->threads > 0)
        pthread_cond_wait(&l->cv, &l->mu);
    pthread_mutex_unlock(&l->mu);
    pthread_cond_destroy(&l->cv);
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
    if (l->n > 0) {
        l->broken = true;
        shut_all(l);
        pthread_cond_broadcast(&l->cv);
        while (l->threads > 0)
            pthread_cond_wait(&l->cv, &l->mu);
        l->n = 0;
        l->broken = false;
    }
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
    int index = -1;

    pthread_mutex_lock(&l->mu);
    if (l->closing)
        *why = "its session is ending";
    else if (l->broken)
        *why = "the session's lanes failed (its next LANE_TICKET starts new ones)";
    else if (l->n >= TDM_LANES_MAX)
        *why = "too many lanes";
    else {
        index = (int)l->n;
        l->joined_at[l->n] = l->seq;
        l->fds[l->n++] = fd;
        l->threads++;
    }
    pthread_mutex_unlock(&l->mu);
    return index;
}


/* One lane's slice of the job (mu not held).  0 or -1. */
static int do_job(int fd, unsigned index, unsigned nlanes, job_kind kind, uint32_t xfer, unsigned char *buf,
                  uint64_t off, uint64_t len)
{
    unsigned char h[TDM_LANE_HDR_LEN];
    uint64_t at, n = tdm_lane_part(len, nlanes, index, &at);
    struct iovec iov[2];

    switch (kind) {
    case JOB_RECV: {
        if (n == 0)
            return 0;
        if (tdm_recstream_recv_all(fd, h, sizeof(h)) != 0)
            return -1;
        tdm_lane_hdr got = tdm_lane_hdr_get(h);
        /* The guest cuts the same slices: anything else is a desync. */
        if (got.xfer != xfer || got.len != n || got.off != off + at)
            return -1;
        return tdm_recstream_recv_all(fd, buf + at, n);
    }
    case JOB_SEND:
        if (n == 0)
            return 0;
        tdm_lane_hdr_put(h, (tdm_lane_hdr){ xfer, (uint32_t)n, off + at });
        iov[0] = (struct iovec){ h, sizeof(h) };
        iov[1] = (struct iovec){ buf + at, n };
        return tdm_recstream_send_all(fd, iov, 2);
    case JOB_END:
        tdm_lane_hdr_put(h, (tdm_lane_hdr){ xfer, 0, 0 });
        iov[0] = (struct iovec){ h, sizeof(h) };
        return tdm_recstream_send_all(fd, iov, 1);
    }
    return -1;
}

void tdm_lanes_serve(tdm_lanes *l, int index, uint64_t session_id)
{
    uint64_t seen;
    int fd;

    pthread_mutex_lock(&l->mu);
    /* Not l->seq: a job may have started since the lane attached. */
    seen = l->joined_at[index];
    fd = l->fds[index];
    while (!l->closing && !l->broken) {
        if (l->seq == seen) {
            pthread_cond_wait(&l->cv, &l->mu);
            continue;
        }
        seen = l->seq;
        job_kind kind = l->kind;
        uint32_t xfer = l->xfer;
        unsigned char *buf = l->buf;
        uint64_t off = l->off, len = l->len;
        unsigned nlanes = l->jn;
        pthread_mutex_unlock(&l->mu);
        int rc = do_job(fd, (unsigned)index, nlanes, kind, xfer, buf, off, len);
        pthread_mutex_lock(&l->mu);
        if (rc != 0 && !l->broken && !l->closing) {
            tdm_log_session(session_id, "lane %d failed in the middle of a copy (%s): the guest copies on "
                            "its main connection", index, errno ? strerror(errno) : "bad part header");
            l->broken = true;
            shut_all(l);
        }
        l->pending--;
        pthread_cond_broadcast(&l->cv);
    }
    /* A job this lane never took still waits for it. */
    if (l->seq != seen && l->pending > 0)
        l->pending--;
    l->fds[index] = -1;
    l->threads--;
    pthread_cond_broadcast(&l->cv);
    pthread_mutex_unlock(&l->mu);
}

static int run_job(tdm_lanes *l, unsigned nlanes, job_kind kind, uint32_t xfer, const void *buf, uint64_t off,
                   uint64_t len)
{
    int rc = 0;

    pthread_mutex_lock(&l->mu);
    if (l->broken || l->closing || nlanes == 0 || nlanes != l->n) {
        if (!l->broken && !l->closing) {
            l->broken = true;
            shut_all(l);
            pthread_cond_broadcast(&l->cv);
        }
        rc = TDM_ERR_LANE_FAILED;
        goto out;
    }
    l->kind = kind;
    l->xfer = xfer;
    l->buf = (unsigned char *)buf;
    l->off = off;
    l->len = len;
    l->jn = nlanes;
    l->pending = nlanes;
    l->seq++;
    pthread_cond_broadcast(&l->cv);
    /* A lane that failed counts itself done too; every lane thread has
     * left the buffer once pending is 0. */
    while (l->pending > 0)
        pthread_cond_wait(&l->cv, &l->mu);
    if (l->broken || l->closing)
        rc = TDM_ERR_LANE_FAILED;
out:
    pthread_mutex_unlock(&l->mu);
    return rc;
}

int tdm_lanes_recv(tdm_lanes *l, unsigned nlanes, uint32_t xfer, void *buf, uint64_t n)
{
    return run_job(l, nlanes, JOB_RECV, xfer, buf, 0, n);
}

int tdm_lanes_send(tdm_lanes *l, unsigned nlanes, uint32_t xfer, const void *buf, uint64_t off, uint64_t n)
{
    return run_job(l, nlanes, JOB_SEND, xfer, buf, off, n);
}

int tdm_lanes_send_end(tdm_lanes *l, unsigned nlanes, uint32_t xfer)
{
    return run_job(l, nlanes, JOB_END, xfer, NULL, 0, 0);
}
