#include "recstream.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

#define LAST_FRAG 0x80000000u
/* A fragment's length has 31 bits; a direct payload larger than this goes
 * as several fragments. */
#define MAX_FRAG (1u << 30)

static tdm_recstream *rs_of(XDR *xdrs)
{
    return xdrs->x_private;
}

int tdm_recstream_send_all(int fd, struct iovec *iov, int n)
{
    while (n > 0) {
        struct msghdr m = { .msg_iov = iov, .msg_iovlen = (size_t)n };
        ssize_t w = sendmsg(fd, &m, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
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

/* SO_RCVTIMEO ran out with nothing received: true to wait on, false when
 * the wait has lasted past its limit (the input then ends). */
static bool wait_on(tdm_recstream *rs)
{
    tdm_wire_timeout w = tdm_wire_timed_out(rs->limits, !rs->between, tdm_wire_now_ns() - rs->since_ns);

    if (w == TDM_WIRE_IN_TIME)
        return true;
    rs->timed_out = w;
    rs->eof = true;
    return false;
}

/* One recv: > 0 bytes, or false with eof or error set. */
static bool recv_some(tdm_recstream *rs, char *buf, size_t n, int flags, size_t *got)
{
    for (;;) {
        ssize_t r = recv(rs->fd, buf, n, flags);
        if (r > 0) {
            *got = (size_t)r;
            if (rs->limits)
                rs->since_ns = tdm_wire_now_ns();
            return true;
        }
        if (r == 0) {
            rs->eof = true;
            return false;
        }
        if (errno == EINTR)
            continue;
        if ((errno == EAGAIN || errno == EWOULDBLOCK) && rs->limits) {
            if (wait_on(rs))
                continue;
            return false;
        }
        rs->error = true;
        return false;
    }
}

/* The buffer is empty: refills it.  A bounded stream reads no more than
 * `avail`, the bytes known to belong to the current record. */
static bool fill(tdm_recstream *rs, size_t avail)
{
    size_t n = rs->bounded && avail < rs->in_size ? avail : rs->in_size, got;

    if (!recv_some(rs, rs->in, n, 0, &got))
        return false;
    rs->in_pos = 0;
    rs->in_end = got;
    return true;
}

/* n bytes of the stream as they come (no fragment accounting) into dst, or
 * dropped when dst is NULL; avail >= n bytes are known to follow in the
 * record.  Bytes the buffer does not hold go straight from the socket to
 * dst when there are enough of them. */
static bool take(tdm_recstream *rs, char *dst, size_t n, size_t avail)
{
    while (n > 0) {
        size_t have = rs->in_end - rs->in_pos, c;
        if (have > 0) {
            c = n < have ? n : have;
            if (dst) {
                memcpy(dst, rs->in + rs->in_pos, c);
                dst += c;
            }
            rs->in_pos += c;
            n -= c;
            avail -= c;
        } else if (dst && n >= TDM_RECSTREAM_DIRECT) {
            /* MSG_WAITALL: one call for the whole payload where the
             * socket allows, not one per segment that arrives. */
            if (!recv_some(rs, dst, n, MSG_WAITALL, &c))
                return false;
            dst += c;
            n -= c;
            avail -= c;
        } else if (!fill(rs, avail)) {
            return false;
        }
    }
    return true;
}

/* Reads the next fragment's header.  A non-last fragment of length 0 is
 * refused as xdrrec refuses it (it could make a reader loop for ever). */
static bool next_fragment(tdm_recstream *rs)
{
    uint32_t h;

    if (!take(rs, (char *)&h, sizeof(h), sizeof(h)))
        return false;
    h = ntohl(h);
    if (h == 0)
        return false;
    rs->last_frag = (h & LAST_FRAG) != 0;
    rs->frag_left = h & ~LAST_FRAG;
    return true;
}

static bool_t rs_getbytes(XDR *xdrs, char *addr, u_int len)
{
    tdm_recstream *rs = rs_of(xdrs);

    while (len > 0) {
        u_int c;
        if (rs->frag_left == 0) {
            if (rs->last_frag || !next_fragment(rs))
                return FALSE;
            continue;
        }
        c = len < rs->frag_left ? len : rs->frag_left;
        if (!take(rs, addr, c, rs->frag_left))
            return FALSE;
        addr += c;
        len -= c;
        rs->frag_left -= c;
        rs->pos += c;
    }
    return TRUE;
}

static bool_t rs_getlong(XDR *xdrs, long *lp)
{
    tdm_recstream *rs = rs_of(xdrs);
    uint32_t v;

    /* Most words of a call: already buffered, inside the fragment. */
    if (rs->frag_left >= sizeof(v) && rs->in_end - rs->in_pos >= sizeof(v)) {
        memcpy(&v, rs->in + rs->in_pos, sizeof(v));
        rs->in_pos += sizeof(v);
        rs->frag_left -= (uint32_t)sizeof(v);
        rs->pos += (u_int)sizeof(v);
    } else if (!rs_getbytes(xdrs, (char *)&v, sizeof(v))) {
        return FALSE;
    }
    *lp = (long)(int32_t)ntohl(v);
    return TRUE;
}

/* Sends the buffered bytes as one fragment (nothing when there are none
 * and it is not the last). */
static bool flush(tdm_recstream *rs, bool last)
{
    uint32_t h = (uint32_t)(rs->out_len - 4) | (last ? LAST_FRAG : 0);
    struct iovec iov = { rs->out, rs->out_len };

    if (!last && rs->out_len == 4)
        return true;
    h = htonl(h);
    memcpy(rs->out, &h, sizeof(h));
    rs->out_len = 4;
    if (tdm_recstream_send_all(rs->fd, &iov, 1) != 0) {
        rs->error = true;
        return false;
    }
    return true;
}

static bool_t rs_putbytes(XDR *xdrs, const char *addr, u_int len)
{
    tdm_recstream *rs = rs_of(xdrs);

    rs->pos += len;
    if (len >= TDM_RECSTREAM_DIRECT) {
        /* What is buffered goes first, then the payload as fragments of
         * its own, from the caller's memory. */
        if (!flush(rs, false))
            return FALSE;
        while (len > 0) {
            u_int c = len < MAX_FRAG ? len : MAX_FRAG;
            uint32_t h = htonl(c);
            struct iovec iov[2] = { { &h, sizeof(h) }, { (char *)addr, c } };
            if (tdm_recstream_send_all(rs->fd, iov, 2) != 0) {
                rs->error = true;
                return FALSE;
            }
            addr += c;
            len -= c;
        }
        return TRUE;
    }
    while (len > 0) {
        size_t space = rs->out_size - rs->out_len, c;
        if (space == 0) {
            if (!flush(rs, false))
                return FALSE;
            continue;
        }
        c = len < space ? len : space;
        memcpy(rs->out + rs->out_len, addr, c);
        rs->out_len += c;
        addr += c;
        len -= (u_int)c;
    }
    return TRUE;
}

static bool_t rs_putlong(XDR *xdrs, const long *lp)
{
    tdm_recstream *rs = rs_of(xdrs);
    uint32_t v = htonl((uint32_t)*lp);

    if (rs->out_size - rs->out_len < sizeof(v))
        return rs_putbytes(xdrs, (const char *)&v, sizeof(v));
    memcpy(rs->out + rs->out_len, &v, sizeof(v));
    rs->out_len += sizeof(v);
    rs->pos += (u_int)sizeof(v);
    return TRUE;
}

static u_int rs_getpostn(XDR *xdrs)
{
    return rs_of(xdrs)->pos;
}

static bool_t rs_setpostn(XDR *xdrs, u_int pos)
{
    (void)xdrs;
    (void)pos;
    return FALSE;
}

/* No in-place access: the XDR routines that ask fall back to the calls
 * above. */
static int32_t *rs_inline(XDR *xdrs, u_int len)
{
    (void)xdrs;
    (void)len;
    return NULL;
}

static void rs_destroy(XDR *xdrs)
{
    (void)xdrs;   /* the storage is tdm_recstream_destroy's */
}

static bool_t rs_control(XDR *xdrs, int req, void *info)
{
    (void)xdrs;
    (void)req;
    (void)info;
    return FALSE;
}

static const struct xdr_ops rs_ops = {
    .x_getlong = rs_getlong,
    .x_putlong = rs_putlong,
    .x_getbytes = rs_getbytes,
    .x_putbytes = rs_putbytes,
    .x_getpostn = rs_getpostn,
    .x_setpostn = rs_setpostn,
    .x_inline = rs_inline,
    .x_destroy = rs_destroy,
    .x_control = rs_control,
};

int tdm_recstream_create(tdm_recstream *rs, XDR *xdrs, int fd, size_t bufsize, bool bounded)
{
    memset(rs, 0, sizeof(*rs));
    rs->fd = fd;
    rs->bounded = bounded;
    rs->in = malloc(bufsize);
    rs->out = malloc(bufsize);
    if (bufsize < 64 || !rs->in || !rs->out) {
        tdm_recstream_destroy(rs);
        return -1;
    }
    rs->in_size = rs->out_size = bufsize;
    rs->out_len = 4;
    rs->last_frag = true;   /* as if a record had just ended */
    memset(xdrs, 0, sizeof(*xdrs));
    xdrs->x_ops = &rs_ops;
    xdrs->x_private = rs;
    return 0;
}

void tdm_recstream_destroy(tdm_recstream *rs)
{
    free(rs->in);
    free(rs->out);
    rs->in = rs->out = NULL;
}

bool_t tdm_recstream_skip_record(XDR *xdrs)
{
    tdm_recstream *rs = rs_of(xdrs);

    while (rs->frag_left > 0 || !rs->last_frag) {
        if (rs->frag_left > 0) {
            if (!take(rs, NULL, rs->frag_left, rs->frag_left))
                return FALSE;
            rs->frag_left = 0;
        } else if (!next_fragment(rs)) {
            return FALSE;
        }
    }
    rs->pos = 0;
    return TRUE;
}

/* ---- time limits on the wire (issue 16) ---- */
void tdm_recstream_set_timeouts(tdm_recstream *rs, const tdm_wire_timeouts *t)
{
    rs->limits = t;
    rs->since_ns = tdm_wire_now_ns();
}

/* The socket's receive timeout follows the smaller limit, so that a recv
 * comes back to check them; the fast path costs no extra system call.  A
 * failed setsockopt leaves the recv blocking, as without limits. */
static void apply_timeouts(tdm_recstream *rs)
{
    uint32_t f = rs->limits->frame_s, i = rs->limits->idle_s, want = !f ? i : !i ? f : f < i ? f : i;

    if (want == rs->rcvtimeo_s)
        return;
    struct timeval tv = { .tv_sec = want };
    if (setsockopt(rs->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) == 0)
        rs->rcvtimeo_s = want;
}

bool_t tdm_recstream_next_record(XDR *xdrs)
{
    tdm_recstream *rs = rs_of(xdrs);
    bool ok;

    if (!tdm_recstream_skip_record(xdrs))
        return FALSE;
    if (rs->limits) {
        apply_timeouts(rs);
        rs->between = true;
        rs->since_ns = tdm_wire_now_ns();
    }
    /* The next record's first header now, so that a peer that went away
     * shows here rather than as a malformed call. */
    ok = next_fragment(rs);
    rs->between = false;
    return ok;
}

void tdm_recstream_drop_output(XDR *xdrs)
{
    tdm_recstream *rs = rs_of(xdrs);

    rs->out_len = 4;
    rs->pos = 0;
}

bool_t tdm_recstream_end_record(XDR *xdrs)
{
    tdm_recstream *rs = rs_of(xdrs);

    rs->pos = 0;
    return flush(rs, true);
}

/* ---- tcp lanes (issue 14) ---- */
int tdm_recstream_recv_all(int fd, void *p, size_t n)
{
    while (n > 0) {
        ssize_t got = recv(fd, p, n, MSG_WAITALL);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return -1;
        p = (char *)p + got;
        n -= (size_t)got;
    }
    return 0;
}
