/* How the bytes of a large copy leave for a TCP socket (tcp_send.h). */
#include "tcp_send.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/errqueue.h>
#include <netinet/in.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <unistd.h>

/* What the pipe holds: 1 MiB is the most an unprivileged process may ask
 * for (fs.pipe-max-size's default); less where the system allows less.
 * Larger means fewer vmsplice/splice pairs per byte. */
#define PIPE_WANT (1u << 20)

void tdm_tx_init(tdm_tx *tx, tdm_tx_mode mode)
{
    *tx = (tdm_tx){ .mode = mode, .pipe_r = -1, .pipe_w = -1 };
}

static void pipe_close(tdm_tx *tx)
{
    if (tx->pipe_r >= 0)
        close(tx->pipe_r);
    if (tx->pipe_w >= 0)
        close(tx->pipe_w);
    tx->pipe_r = tx->pipe_w = -1;
}

void tdm_tx_fini(tdm_tx *tx)
{
    pipe_close(tx);
}

int tdm_tx_mode_parse(const char *s, tdm_tx_mode *out)
{
    static const char *const names[] = { "plain", "splice", "zerocopy" };

    for (int i = 0; i < 3; i++)
        if (s && strcmp(s, names[i]) == 0) {
            *out = (tdm_tx_mode)i;
            return 0;
        }
    return -EINVAL;
}

const char *tdm_tx_mode_name(tdm_tx_mode m)
{
    return m == TDM_TX_SPLICE ? "splice" : m == TDM_TX_ZEROCOPY ? "zerocopy" : "plain";
}

void tdm_tx_fail_splices(tdm_tx *tx, unsigned n)
{
    tx->fail_vmsplice = n;
}

/* Sends iov in full with sendmsg: 0 or -errno. */
static int send_iov(int fd, struct iovec *iov, int n, int flags)
{
    while (n > 0) {
        struct msghdr m = { .msg_iov = iov, .msg_iovlen = (size_t)n };
        ssize_t w = sendmsg(fd, &m, flags | MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return errno == EWOULDBLOCK ? -EAGAIN : -errno;
        if (w == 0)
            return -EPIPE;
        while (n > 0 && (size_t)w >= iov->iov_len) {
            w -= (ssize_t)iov->iov_len;
            iov++;
            n--;
        }
        if (n > 0) {
            iov->iov_base = (char *)iov->iov_base + w;
            iov->iov_len -= (size_t)w;
        }
    }
    return 0;
}

/* Whether a splice error means "not here" (fall back to plain) rather than
 * a broken or stalled socket. */
static bool splice_unsupported(int err)
{
    return err == EINVAL || err == ENOSYS || err == EOPNOTSUPP || err == ENOMEM || err == EBADF;
}

/* ---- splice ---- */

static bool pipe_ready(tdm_tx *tx)
{
    int p[2];

    if (tx->pipe_r >= 0)
        return true;
    if (pipe2(p, O_CLOEXEC) != 0)
        return false;
    tx->pipe_r = p[0];
    tx->pipe_w = p[1];
    /* Where the system allows less, the default (64 KiB) still works. */
    int got = fcntl(tx->pipe_w, F_SETPIPE_SZ, (int)PIPE_WANT);
    if (got < 0)
        got = fcntl(tx->pipe_w, F_GETPIPE_SZ);
    tx->pipe_bytes = got > 0 ? (size_t)got : 65536;
    return true;
}

/* buf[*done..n) through the pipe into fd.  0 when all of it went; 1 when
 * splicing is not possible here (*done says how far it got: the rest goes
 * plainly); -errno when the socket failed.  The pipe is empty whenever this
 * returns: bytes left in it would otherwise go into the next send. */
static int send_spliced(tdm_tx *tx, int fd, const char *buf, size_t n, size_t *done)
{
    while (*done < n) {
        size_t want = n - *done < tx->pipe_bytes ? n - *done : tx->pipe_bytes;
        struct iovec iov = { (void *)(buf + *done), want };
        ssize_t in;

        if (tx->fail_vmsplice > 0) {
            tx->fail_vmsplice--;
            in = -1;
            errno = EINVAL;
        } else {
            in = vmsplice(tx->pipe_w, &iov, 1, 0);
        }
        if (in < 0 && errno == EINTR)
            continue;
        if (in <= 0)
            return 1;   /* memory or kernel that refuses: nothing is in the pipe */
        for (size_t left = (size_t)in; left > 0;) {
            unsigned fl = SPLICE_F_MOVE | (*done + left < n ? SPLICE_F_MORE : 0);
            ssize_t out = splice(tx->pipe_r, NULL, fd, NULL, left, fl);
            if (out < 0 && errno == EINTR)
                continue;
            if (out <= 0) {
                int err = out < 0 ? errno : EPIPE;
                /* What is still in the pipe never reaches the socket:
                 * a fresh pipe next time. */
                pipe_close(tx);
                if (splice_unsupported(err))
                    return 1;
                return err == EWOULDBLOCK ? -EAGAIN : -err;
            }
            left -= (size_t)out;
            *done += (size_t)out;
            tx->spliced += (uint64_t)out;
        }
    }
    return 0;
}

/* ---- zerocopy ---- */

/* Takes the completion reports waiting on fd's error queue; with `block`,
 * waits (up to SO_SNDTIMEO) until there is one.  0 or -errno. */
static int zc_reap(tdm_tx *tx, int fd, bool block)
{
    bool polled = false;

    for (;;) {
        char control[128];
        struct msghdr m = { .msg_control = control, .msg_controllen = sizeof(control) };
        ssize_t r = recvmsg(fd, &m, MSG_ERRQUEUE | MSG_DONTWAIT);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            if (!block)
                return 0;
            if (polled) {
                /* The error poll reported was the socket's own, not a report. */
                int err = 0;
                socklen_t el = sizeof(err);
                getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el);
                return err ? -err : -EPIPE;
            }
            struct timeval tv = { 0, 0 };
            socklen_t tl = sizeof(tv);
            getsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, &tl);
            int ms = tv.tv_sec || tv.tv_usec ? (int)(tv.tv_sec * 1000 + tv.tv_usec / 1000) : -1;
            struct pollfd p = { .fd = fd, .events = 0 };
            int pr = poll(&p, 1, ms);
            if (pr < 0 && errno == EINTR)
                continue;
            if (pr == 0)
                return -EAGAIN;
            if (pr < 0)
                return -errno;
            if (!(p.revents & POLLERR))
                return -EPIPE;   /* hung up with reports outstanding */
            polled = true;
            continue;
        }
        if (r < 0)
            return -errno;
        for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
            struct sock_extended_err ee;
            if (!((c->cmsg_level == SOL_IP && c->cmsg_type == IP_RECVERR) ||
                  (c->cmsg_level == SOL_IPV6 && c->cmsg_type == IPV6_RECVERR)))
                continue;
            memcpy(&ee, CMSG_DATA(c), sizeof(ee));
            if (ee.ee_origin != SO_EE_ORIGIN_ZEROCOPY)
                continue;
            /* [ee_info, ee_data]: the sends done, in order. */
            tx->zc_done += ee.ee_data - ee.ee_info + 1;
        }
        /* Something came: take what else is there, then go. */
        block = false;
        polled = false;
    }
}

/* buf[*done..n) with MSG_ZEROCOPY, then waits until the kernel is done with
 * every page: 0, 1 (not possible here: the rest goes plainly), -errno. */
static int send_zerocopy(tdm_tx *tx, int fd, const char *buf, size_t n, size_t *done)
{
    int one = 1, rc = 0;

    if (!tx->zc_on) {
        if (setsockopt(fd, SOL_SOCKET, SO_ZEROCOPY, &one, sizeof(one)) != 0)
            return 1;
        tx->zc_on = true;
    }
    while (*done < n) {
        ssize_t w = send(fd, buf + *done, n - *done, MSG_ZEROCOPY | MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && errno == ENOBUFS) {
            /* Too many reports outstanding (optmem): take some. */
            if (tx->zc_done == tx->zc_sent)
                return 1;
            if ((rc = zc_reap(tx, fd, true)) != 0)
                return rc;
            continue;
        }
        if (w < 0)
            return errno == EWOULDBLOCK ? -EAGAIN : -errno;
        if (w == 0)
            return -EPIPE;
        tx->zc_sent++;
        *done += (size_t)w;
        tx->zerocopied += (uint64_t)w;
        if ((rc = zc_reap(tx, fd, false)) != 0)
            return rc;
    }
    while (tx->zc_done != tx->zc_sent)
        if ((rc = zc_reap(tx, fd, true)) != 0)
            return rc;
    return 0;
}

int tdm_tx_send(tdm_tx *tx, int fd, const void *head, size_t hlen, const void *buf, size_t n)
{
    struct iovec iov[2];
    size_t done = 0;
    int rc = 1, k = 0;

    if (tx->mode == TDM_TX_PLAIN || n == 0) {
        if (hlen)
            iov[k++] = (struct iovec){ (void *)head, hlen };
        if (n)
            iov[k++] = (struct iovec){ (void *)buf, n };
        rc = send_iov(fd, iov, k, 0);
        if (rc == 0)
            tx->copied += n;
        return rc;
    }
    /* The head is copied: it must not be referred to after this returns. */
    if (hlen) {
        iov[0] = (struct iovec){ (void *)head, hlen };
        if ((rc = send_iov(fd, iov, 1, MSG_MORE)) != 0)
            return rc;
    }
    rc = 1;   /* unless a mode below sends it */
    if (tx->mode == TDM_TX_SPLICE && pipe_ready(tx))
        rc = send_spliced(tx, fd, buf, n, &done);
    else if (tx->mode == TDM_TX_ZEROCOPY)
        rc = send_zerocopy(tx, fd, buf, n, &done);
    if (rc <= 0)
        return rc;
    /* Not possible here: the rest as a plain send, the stream unchanged. */
    tx->fallbacks++;
    iov[0] = (struct iovec){ (void *)((const char *)buf + done), n - done };
    rc = send_iov(fd, iov, 1, 0);
    if (rc == 0)
        tx->copied += n - done;
    return rc;
}
