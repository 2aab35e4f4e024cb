/* ONC RPC over TCP with libtirpc's client (clnt_vc) for synchronous calls.
 *
 * One-way calls are encoded here, not by clnt_vc: each is a standard call
 * record (call header with AUTH_NONE and an xid of raw_xid's sequence, the
 * arguments, one last fragment) appended to the transport's batch buffer
 * under io_lock, with no system call.  The buffer is shipped with one
 * send(MSG_NOSIGNAL) ahead of anything else that goes on the socket (every
 * clnt_vc call, a raw upload or download), when it fills, at close, and by
 * a flusher thread FLUSH_DELAY after the first post of a burst, so that
 * batched calls do not wait for the next synchronous call while the GPU
 * idles.  A burst of launches thus costs one write instead of one per
 * launch, and a post costs no signal-mask or clnt_vc lock traffic
 * (docs/protocol.md, on one-way calls).  Every use of the CLIENT
 * and of the batch holds io_lock. */
#include "transport.h"
#include "lane_gather.h"
#include "lanes_wire.h"
#include "recstream.h"
#include "tcp_lanes.h"
#include "xdr_extra.h"
#include "xdr_stream.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "tandem_rpc.h"

#define TCP_BUF_SIZE (1u << 20)

/* Long enough to gather a burst of launches, short next to a kernel a
 * program would wait for. */
#define FLUSH_DELAY_NS 20000

/* A piece of an upload in flight over the lanes: what it is, to send it
 * again on the main connection should the server not take it, and its
 * call's xid and lane transfer. */
typedef struct lane_piece {
    tdm_memcpy_htod_args a;
    uint32_t xid, xfer;
} lane_piece;

typedef struct tcp_transport {
    tdm_transport base;
    CLIENT *clnt;
    pthread_mutex_t io_lock;  /* every clnt_call */
    atomic_bool pending;      /* batched calls not yet sent */
    pthread_mutex_t lock;     /* for the flusher's sleep and stop */
    pthread_cond_t wake;
    bool stop, flusher_running;
    pthread_t flusher;
    uint32_t raw_xid;         /* xids of the calls sent around clnt_vc (one-way calls, bulk copies) */
    int fd;                   /* clnt_vc's socket */
    char *batch;              /* one-way call records not yet sent: batch[0, batch_len) */
    size_t batch_len;
    bool batch_broken;        /* a send of the batch failed: the connection is gone */
    tdm_recstream raw;        /* bulk downloads' replies, read around clnt_vc (made at the first) */
    XDR raw_xdrs;
    bool raw_open;
    /* ---- tcp lanes (issue 14) ---- */
    char host[256];
    int port;
    tdm_tcp_lanes *lanes;     /* NULL until the first large copy, and after lanes failed */
    unsigned lanes_want;      /* TANDEM_TCP_LANES */
    tdm_tx_mode lane_send;    /* TANDEM_TCP_SEND: how the lanes send uploads (tcp_send.h) */
    uint64_t lane_min;        /* TANDEM_TCP_LANE_MIN */
    bool lanes_off;           /* the server has none for us, or they failed too often */
    unsigned lane_failures;
    uint32_t lane_xfer;
    /* An upload's pieces sent over the lanes whose MEMCPY_HTOD_LANES calls
     * are not answered yet, oldest first (docs/protocol.md, "Pipelined
     * uploads"): their bytes are the program's until then. */
    lane_piece inflight[TDM_TCP_LANE_JOBS];
    unsigned ninflight;
    unsigned lane_depth;      /* TANDEM_TCP_UPLOAD_DEPTH: pieces in flight at most */
    /* Consecutive chunks of one upload gathered into its next lane piece,
     * not sent yet (docs/protocol.md, "Pieces of several chunks"); none
     * while acc.data.data_len is 0.  Anything else sent or read sends it
     * first (lane_collect), so the order of the program's calls holds. */
    tdm_memcpy_htod_args acc;
    uint64_t piece_max;       /* TANDEM_TCP_PIECE: an upload piece's bytes at most */
} tcp_transport;

/* Long enough for any synchronize; a dead server shows as a closed socket,
 * not as a time-out. */
static const struct timeval call_timeout = { 7 * 24 * 3600, 0 };

/* Sends the batched one-way calls (io_lock held).  A failed send breaks
 * the transport for good, as a failed write breaks clnt_vc's connection:
 * false, with the transport's why as a failed clnt_call gives it. */
static bool ship_batch(tcp_transport *tt)
{
    struct iovec iov = { tt->batch, tt->batch_len };

    atomic_store(&tt->pending, false);
    if (tt->batch_broken)
        return false;
    if (tt->batch_len == 0)
        return true;
    tt->batch_len = 0;
    if (tdm_recstream_send_all(tt->fd, &iov, 1) == 0)
        return true;
    tt->batch_broken = true;
    snprintf(tt->base.why, sizeof(tt->base.why), "%s", clnt_sperrno(RPC_CANTSEND));
    return false;
}

/* clnt_call under io_lock with SIGPIPE blocked: a server that died must
 * come back as an error (so the guest can resume elsewhere), not kill the
 * application with SIGPIPE.  The signal a failed write raised is taken
 * before the thread's own mask comes back. */
static enum clnt_stat guarded_call(tcp_transport *tt, uint32_t proc, xdrproc_t xargs, void *args,
                                   xdrproc_t xres, void *res, struct timeval timeout)
{
    sigset_t pipe_only, old;
    enum clnt_stat st;

    /* What is batched goes first: order on the socket is the program's. */
    if (!ship_batch(tt))
        return RPC_CANTSEND;
    sigemptyset(&pipe_only);
    sigaddset(&pipe_only, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_only, &old);
    st = clnt_call(tt->clnt, proc, xargs, args, xres, res, timeout);
    if (st != RPC_SUCCESS && st != RPC_TIMEDOUT && !sigismember(&old, SIGPIPE)) {
        const struct timespec none = { 0, 0 };
        sigset_t pending;
        sigpending(&pending);
        if (sigismember(&pending, SIGPIPE))
            sigtimedwait(&pipe_only, NULL, &none);
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return st;
}

static bool flush(tcp_transport *tt)
{
    bool ok;

    pthread_mutex_lock(&tt->io_lock);
    ok = ship_batch(tt);
    pthread_mutex_unlock(&tt->io_lock);
    return ok;
}

static void *flusher_main(void *arg)
{
    tcp_transport *tt = arg;
    const struct timespec delay = { 0, FLUSH_DELAY_NS };

    /* The default 50 us timer slack would dwarf the delay. */
    prctl(PR_SET_TIMERSLACK, 1000UL);
    pthread_mutex_lock(&tt->lock);
    while (!tt->stop) {
        if (!atomic_load(&tt->pending)) {
            pthread_cond_wait(&tt->wake, &tt->lock);
            continue;
        }
        pthread_mutex_unlock(&tt->lock);
        nanosleep(&delay, NULL);
        /* A failed send shows up again at the guest's next call. */
        if (atomic_exchange(&tt->pending, false))
            flush(tt);
        pthread_mutex_lock(&tt->lock);
    }
    pthread_mutex_unlock(&tt->lock);
    return NULL;
}

static int call_raw(tcp_transport *tt, uint32_t proc, xdrproc_t xargs, void *args, xdrproc_t xres, void *res);
static int lane_collect(tcp_transport *tt, unsigned keep);
static int lane_flush(tcp_transport *tt);

static int tcp_call(tdm_transport *t, uint32_t proc, xdrproc_t xargs, void *args,
                    xdrproc_t xres, void *res)
{
    tcp_transport *tt = (tcp_transport *)t;
    enum clnt_stat st;

    if (proc == TDM_MEMCPY_DTOH_STREAM && xres == (xdrproc_t)xdr_tdm_dtoh_stream_res)
        return call_raw(tt, proc, xargs, args, xres, res);
    pthread_mutex_lock(&tt->io_lock);
    /* clnt_vc takes the next reply as its call's: the answers to an
     * upload's pieces come first. */
    if (lane_collect(tt, 0) != TDM_T_OK) {
        pthread_mutex_unlock(&tt->io_lock);
        return TDM_T_BROKEN;
    }
    /* guarded_call ships whatever is batched ahead of this call. */
    st = guarded_call(tt, proc, xargs, args, xres, res, call_timeout);
    pthread_mutex_unlock(&tt->io_lock);

    if (st == RPC_SUCCESS)
        return TDM_T_OK;
    if (st == RPC_CANTDECODEARGS || st == RPC_PROCUNAVAIL || st == RPC_PROGVERSMISMATCH ||
        st == RPC_PROGUNAVAIL || st == RPC_CANTDECODERES)
        return TDM_T_REJECTED;
    snprintf(tt->base.why, sizeof(tt->base.why), "%s", clnt_sperrno(st));
    return TDM_T_BROKEN;
}

static int raw_send(tcp_transport *tt, uint32_t proc, xdrproc_t xargs, void *args, uint32_t *xid);

/* Appends a one-way call's record to the batch (io_lock held): its record
 * mark, then the call header and arguments encoded in place.  A full batch
 * is shipped first; a call too large for an empty one goes as raw_send's
 * record, after the batch.  TDM_T_OK, TDM_T_REJECTED (the arguments do
 * not encode) or TDM_T_BROKEN. */
static int batch_post(tcp_transport *tt, uint32_t proc, xdrproc_t xargs, void *args)
{
    uint32_t mark, xid;

    if (tt->batch_broken)
        return TDM_T_BROKEN;
    for (;;) {
        size_t space = TCP_BUF_SIZE - tt->batch_len, n;
        if (space > sizeof(mark) &&
            tdm_rpc_encode_call(tt->batch + tt->batch_len + sizeof(mark), space - sizeof(mark),
                                (tt->raw_xid + 1) | 0x80000000u, proc, xargs, args, &n)) {
            mark = htonl(0x80000000u | (uint32_t)n);
            memcpy(tt->batch + tt->batch_len, &mark, sizeof(mark));
            tt->batch_len += sizeof(mark) + n;
            tt->raw_xid++;
            return TDM_T_OK;
        }
        if (tt->batch_len == 0)
            return raw_send(tt, proc, xargs, args, &xid);
        if (!ship_batch(tt))
            return TDM_T_BROKEN;
    }
}

/* ---- tcp bulk data (issue 14) ---- */
/* An upload at least this large skips clnt_vc's send buffer: below it the
 * copy into that buffer costs less than the extra write. */
#define RAW_MIN_BYTES (64u << 10)

/* The buffer of the replies read around clnt_vc: only their headers and
 * small fields pass through it. */
#define RAW_REPLY_BUF (64u << 10)

/* Before a call goes around clnt_vc (io_lock held): ships the batch, so
 * that order is kept (clnt_vc itself holds nothing between calls), and
 * gives the socket, or -1 when the connection is gone. */
static int take_socket(tcp_transport *tt)
{
    return ship_batch(tt) ? tt->fd : -1;
}

/* MEMCPY_HTOD with its bytes written straight from the program's buffer:
 * the same record on the wire as clnt_vc would send (one last fragment:
 * call header, dst, stream, length, the bytes, padding), without copying
 * the bytes into the client's send buffer first.  Whatever clnt_vc still
 * holds is shipped ahead of it (a FLUSH) so that order is kept. */
static bool use_lanes(tcp_transport *tt, uint64_t n);
static bool piece_uses_lanes(tcp_transport *tt, uint64_t piece, uint64_t copy_bytes);
static int htod_lanes(tcp_transport *tt, const tdm_memcpy_htod_args *a, bool more);
static int dtoh_lanes(tcp_transport *tt, const tdm_memcpy_dtoh_args *a, tdm_dtoh_stream_res *r);

/* post_htod_raw with io_lock held. */
static int post_htod_raw_locked(tcp_transport *tt, const tdm_memcpy_htod_args *a)
{
    char hdr[128];
    static const char pad[4];
    struct rpc_msg msg;
    tdm_memcpy_htod_args head = *a;
    uint32_t marker, len_be;
    u_int len = a->data.data_len, padlen = (4 - len % 4) % 4, hlen;
    struct iovec iov[4];
    int fd = -1, rc = TDM_T_BROKEN;
    XDR x;

    /* The arguments' encoding up to the bytes: dst, stream, and the length
     * (written as an empty array, then set). */
    head.data.data_len = 0;
    head.data.data_val = NULL;
    xdrmem_create(&x, hdr, sizeof(hdr), XDR_ENCODE);
    /* An xid apart from clnt_vc's; never answered anyway. */
    tdm_rpc_call_msg(&msg, ++tt->raw_xid | 0x80000000u, TDM_MEMCPY_HTOD);
    if (!xdr_callmsg(&x, &msg) || !xdr_tdm_memcpy_htod_args(&x, &head)) {
        rc = TDM_T_REJECTED;
        goto out;
    }
    hlen = xdr_getpos(&x);
    len_be = htonl(len);
    memcpy(hdr + hlen - 4, &len_be, 4);
    marker = htonl(0x80000000u | (hlen + len + padlen));
    if ((fd = take_socket(tt)) < 0)
        goto out;
    iov[0] = (struct iovec){ &marker, sizeof(marker) };
    iov[1] = (struct iovec){ hdr, hlen };
    iov[2] = (struct iovec){ a->data.data_val, len };
    iov[3] = (struct iovec){ (void *)pad, padlen };
    rc = tdm_recstream_send_all(fd, iov, padlen ? 4 : 3) == 0 ? TDM_T_OK : TDM_T_BROKEN;
out:
    xdr_destroy(&x);
    return rc;
}

/* An upload piece on the main connection, as the MEMCPY_HTODs of its
 * chunks (a lane piece may be several).  io_lock held. */
static int post_htod_chunks_locked(tcp_transport *tt, const tdm_memcpy_htod_args *a)
{
    int rc = TDM_T_OK;

    for (u_int off = 0; off < a->data.data_len && rc == TDM_T_OK; off += TDM_MAX_CHUNK) {
        tdm_memcpy_htod_args c = *a;
        c.dst = a->dst + off;
        c.data.data_val = a->data.data_val + off;
        c.data.data_len = a->data.data_len - off < TDM_MAX_CHUNK ? a->data.data_len - off : TDM_MAX_CHUNK;
        rc = post_htod_raw_locked(tt, &c);
    }
    return rc;
}

/* MEMCPY_HTOD with its bytes written straight from the program's buffer:
 * the same record on the wire as clnt_vc would send (one last fragment:
 * call header, dst, stream, length, the bytes, padding), without copying
 * the bytes into the client's send buffer first.  Whatever clnt_vc still
 * holds is shipped ahead of it (a FLUSH) so that order is kept.  A piece
 * of a large copy goes over the lanes instead, when the session has them;
 * `more`: pieces of the same copy follow. */
static int post_htod_raw(tcp_transport *tt, const tdm_memcpy_htod_args *a, uint64_t copy_bytes, bool more)
{
    int rc;

    pthread_mutex_lock(&tt->io_lock);
    if (piece_uses_lanes(tt, a->data.data_len, copy_bytes))
        rc = htod_lanes(tt, a, more);
    else if ((rc = lane_collect(tt, 0)) == TDM_T_OK)
        rc = post_htod_raw_locked(tt, a);
    pthread_mutex_unlock(&tt->io_lock);
    return rc;
}

/* Sends a call around clnt_vc (its xid in *xid), whose reply raw_reply
 * reads: the same call record on the wire as clnt_vc would send.  io_lock
 * held. */
static int raw_send(tcp_transport *tt, uint32_t proc, xdrproc_t xargs, void *args, uint32_t *xid)
{
    XDR *x = &tt->raw_xdrs;
    struct rpc_msg msg;
    int fd = take_socket(tt);

    if (fd < 0)
        return TDM_T_BROKEN;
    if (!tt->raw_open) {
        if (tdm_recstream_create(&tt->raw, x, fd, RAW_REPLY_BUF, true) != 0)
            return TDM_T_BROKEN;
        tt->raw_open = true;
    }
    tt->raw.fd = fd;
    *xid = ++tt->raw_xid | 0x80000000u;
    x->x_op = XDR_ENCODE;
    tdm_rpc_call_msg(&msg, *xid, proc);
    if (!xdr_callmsg(x, &msg) || !xargs(x, args)) {
        tdm_recstream_drop_output(x);
        return tt->raw.error ? TDM_T_BROKEN : TDM_T_REJECTED;
    }
    return tdm_recstream_end_record(x) ? TDM_T_OK : TDM_T_BROKEN;
}

/* Reads the reply to raw_send's call xid, the next reply on the socket:
 * replies come in the order of the calls, and nothing that is answered
 * goes through clnt_vc while calls sent here wait for theirs
 * (lane_collect).  The stream is bounded: it never reads past the reply,
 * so clnt_vc finds the socket where it left it.  io_lock held. */
static int raw_reply(tcp_transport *tt, uint32_t xid, xdrproc_t xres, void *res)
{
    XDR *x = &tt->raw_xdrs;
    struct rpc_msg reply;

    x->x_op = XDR_DECODE;
    if (!tdm_recstream_next_record(x))
        return TDM_T_BROKEN;
    memset(&reply, 0, sizeof(reply));
    reply.acpted_rply.ar_verf = _null_auth;
    reply.acpted_rply.ar_results.where = NULL;
    reply.acpted_rply.ar_results.proc = (xdrproc_t)tdm_xdr_void;
    if (!xdr_replymsg(x, &reply) || reply.rm_xid != xid || reply.rm_reply.rp_stat != MSG_ACCEPTED)
        return TDM_T_BROKEN;
    if (reply.acpted_rply.ar_stat != SUCCESS) {
        /* As clnt_vc's answers map in tcp_call. */
        enum accept_stat a = reply.acpted_rply.ar_stat;
        if (!tdm_recstream_skip_record(x))
            return TDM_T_BROKEN;
        return a == GARBAGE_ARGS || a == PROC_UNAVAIL || a == PROG_MISMATCH || a == PROG_UNAVAIL
                   ? TDM_T_REJECTED : TDM_T_BROKEN;
    }
    if (!xres(x, res))
        return tt->raw.eof || tt->raw.error || !tdm_recstream_skip_record(x) ? TDM_T_BROKEN : TDM_T_REJECTED;
    return tdm_recstream_skip_record(x) ? TDM_T_OK : TDM_T_BROKEN;
}

/* A synchronous call whose reply is read here instead of by clnt_vc, so
 * that a large result (MEMCPY_DTOH_STREAM's payload) is received straight
 * into its destination (recstream.h) rather than through clnt_vc's buffer.
 * The same call and reply records on the wire.  io_lock held, no upload
 * piece in flight (lane_collect). */
static int call_raw_locked(tcp_transport *tt, uint32_t proc, xdrproc_t xargs, void *args, xdrproc_t xres,
                           void *res)
{
    uint32_t xid = 0;
    int rc = raw_send(tt, proc, xargs, args, &xid);

    return rc == TDM_T_OK ? raw_reply(tt, xid, xres, res) : rc;
}

static int call_raw(tcp_transport *tt, uint32_t proc, xdrproc_t xargs, void *args, xdrproc_t xres, void *res)
{
    int rc;

    pthread_mutex_lock(&tt->io_lock);
    if ((rc = lane_collect(tt, 0)) != TDM_T_OK)
        ;   /* the connection is gone */
    else if (proc == TDM_MEMCPY_DTOH_STREAM && use_lanes(tt, ((tdm_memcpy_dtoh_args *)args)->size))
        rc = dtoh_lanes(tt, args, res);
    else
        rc = call_raw_locked(tt, proc, xargs, args, xres, res);
    pthread_mutex_unlock(&tt->io_lock);
    return rc;
}

/* ---- tcp lanes (issue 14) ---- */
/* docs/protocol.md, "Striping over several connections".  Everything here
 * runs under io_lock: one copy at a time uses the lanes, and nothing else
 * is sent on the main connection meanwhile. */

#define LANES_DEFAULT 8   /* best of 4, 8, 16 on the H100 host (docs/protocol.md, "Measurements") */
#define LANE_MIN_DEFAULT ((uint64_t)8 << 20)
/* Lanes that failed this often stay off for the connection. */
#define LANE_MAX_FAILURES 3

/* The number in environment variable `name` if it is one in [lo, hi],
 * else dflt (unset, empty, not a number, out of range). */
static uint64_t env_in_range(const char *name, uint64_t lo, uint64_t hi, uint64_t dflt)
{
    const char *v = getenv(name);
    char *end;

    if (!v || !*v)
        return dflt;
    unsigned long long n = strtoull(v, &end, 10);
    return !*end && n >= lo && n <= hi ? n : dflt;
}

static void lanes_config(tcp_transport *tt, const char *host, int port)
{
    const char *v = getenv("TANDEM_TCP_LANES"), *send = getenv("TANDEM_TCP_SEND");
    char *end;

    snprintf(tt->host, sizeof(tt->host), "%s", host);
    tt->port = port;
    tt->lanes_want = LANES_DEFAULT;
    if (v && *v) {
        unsigned long n = strtoul(v, &end, 10);
        tt->lanes_want = *end ? LANES_DEFAULT : n > TDM_LANES_MAX ? TDM_LANES_MAX : (unsigned)n;
    }
    /* Plain unless asked: splice cost more CPU a byte than plain sends on
     * the machines measured so far (docs/protocol.md, "Send modes"). */
    tt->lane_send = TDM_TX_PLAIN;
    if (send && *send && tdm_tx_mode_parse(send, &tt->lane_send) != 0)
        tt->lane_send = TDM_TX_PLAIN;
    tt->lane_min = env_in_range("TANDEM_TCP_LANE_MIN", 1, UINT64_MAX, LANE_MIN_DEFAULT);
    /* TDM_MAX_CHUNK: each chunk its own piece, as before 2026-12-02; kept
     * to compare the two on a deployment. */
    tt->piece_max = env_in_range("TANDEM_TCP_PIECE", TDM_MAX_CHUNK, TDM_LANE_PIECE_MAX, TDM_LANE_PIECE_MAX);
    /* 1: each piece waits for its answer before the next is sent, as
     * before pipelining; kept to compare the two on a deployment. */
    tt->lane_depth = (unsigned)env_in_range("TANDEM_TCP_UPLOAD_DEPTH", 1, TDM_TCP_LANE_JOBS, TDM_TCP_LANE_JOBS);
}

static void lanes_drop(tcp_transport *tt, bool failed)
{
    tdm_tcp_lanes_close(tt->lanes);
    tt->lanes = NULL;
    if (failed && ++tt->lane_failures >= LANE_MAX_FAILURES)
        tt->lanes_off = true;
}

/* Whether a copy of n bytes goes over the lanes, opening them at the first
 * such copy.  An upload is judged by the whole copy's size (its pieces are
 * MEMCPY_HTODs of at most TDM_MAX_CHUNK), a download by its own. */
static bool use_lanes(tcp_transport *tt, uint64_t n)
{
    uint64_t min = tt->lane_min;
    tdm_lane_ticket_res r;
    enum clnt_stat st;
    char why[160];

    if (tt->lanes)
        return n >= min;
    if (n < min || tt->lanes_want == 0 || tt->lanes_off)
        return false;
    memset(&r, 0, sizeof(r));
    st = guarded_call(tt, TDM_LANE_TICKET, (xdrproc_t)tdm_xdr_void, NULL, (xdrproc_t)xdr_tdm_lane_ticket_res, &r,
                      call_timeout);
    if (st != RPC_SUCCESS || r.err) {
        /* A server without lanes (or an shm session): never again.  A lost
         * connection shows at the copy's own call. */
        tt->lanes_off = st != RPC_CANTRECV && st != RPC_CANTSEND;
        return false;
    }
    if (tdm_tcp_lanes_open(tt->host, tt->port, r.session_id, (const unsigned char *)r.secret,
                           tt->lanes_want < r.max_lanes ? tt->lanes_want : r.max_lanes, tt->lane_send, &tt->lanes, why,
                           sizeof(why)) == 0) {
        tt->lanes_off = ++tt->lane_failures >= LANE_MAX_FAILURES;
        return false;
    }
    return true;
}

/* An upload's piece goes over the lanes when its copy is large enough
 * (copy_bytes, or the piece itself when nobody said): the 1.2 MiB tail of
 * an 18 MB PyTorch batch went on the main connection at a third of the
 * lanes' rate on the H100 host.  Except a piece of one lane part or less:
 * it would travel on one lane anyway, and on the main connection it is a
 * one-way call, with no round trip to wait for. */
static bool piece_uses_lanes(tcp_transport *tt, uint64_t piece, uint64_t copy_bytes)
{
    return piece > TDM_LANE_PART && use_lanes(tt, copy_bytes > piece ? copy_bytes : piece);
}

/* The copy's call failed: the lanes stop, and the copy goes again on the
 * main connection, or the connection is gone. */
static int lanes_call_failed(tcp_transport *tt, enum clnt_stat st)
{
    tdm_tcp_lanes_abort(tt->lanes);
    tdm_tcp_lanes_wait(tt->lanes);
    lanes_drop(tt, true);
    if (st == RPC_PROCUNAVAIL || st == RPC_CANTDECODEARGS) {
        tt->lanes_off = true;
        return TDM_T_OK;   /* the caller copies on the main connection */
    }
    return TDM_T_BROKEN;
}

/* The lanes are done with the pieces in flight (every answer read): they
 * failed (`failed`: the server did not take some), or must be idle. */
static void lanes_settled(tcp_transport *tt, bool failed)
{
    if (!tt->lanes)
        return;
    if (failed)
        tdm_tcp_lanes_abort(tt->lanes);
    if (tdm_tcp_lanes_wait(tt->lanes) != 0 || failed)
        lanes_drop(tt, true);
}

/* Reads the answers to the oldest pieces in flight until at most `keep`
 * are.  A piece the server did not take (the lanes failed, or it has no
 * MEMCPY_HTOD_LANES) means that it takes none after it either (a failure
 * breaks the server's lanes until the next LANE_TICKET, which comes from
 * here only with nothing in flight): then every answer is read, and the
 * pieces not taken go again on the main connection, in order, after every
 * call in flight.  They are pieces of one copy (a copy's last piece waits
 * for all answers), apart from one another, so their order among the
 * pieces taken does not matter.  TDM_T_OK, or TDM_T_BROKEN: the connection
 * is gone (the journal has every piece for a takeover), the piece whose
 * answer did not come named in the transport's `why`. */
static int lane_collect(tcp_transport *tt, unsigned keep)
{
    lane_piece redo[TDM_TCP_LANE_JOBS];
    unsigned nredo = 0;
    bool unknown = false;
    int rc = lane_flush(tt);

    if (rc != TDM_T_OK || tt->ninflight <= keep)
        return rc;
    while (tt->ninflight > (nredo ? 0 : keep)) {
        lane_piece p = tt->inflight[0];
        int res = 0;
        tt->ninflight--;
        memmove(tt->inflight, tt->inflight + 1, tt->ninflight * sizeof(p));
        rc = raw_reply(tt, p.xid, (xdrproc_t)xdr_int, &res);
        if (rc == TDM_T_BROKEN) {
            snprintf(tt->base.why, sizeof(tt->base.why),
                     "no answer to upload piece %u (%u bytes to 0x%llx over the lanes)", p.xfer,
                     p.a.data.data_len, (unsigned long long)p.a.dst);
            tt->ninflight = 0;
            lanes_settled(tt, true);
            return TDM_T_BROKEN;
        }
        if (rc != TDM_T_OK || res != 0) {
            unknown |= rc == TDM_T_REJECTED;
            redo[nredo++] = p;
        }
    }
    if (tt->ninflight == 0)
        lanes_settled(tt, nredo > 0);
    if (unknown)
        tt->lanes_off = true;
    rc = TDM_T_OK;
    for (unsigned i = 0; i < nredo && rc == TDM_T_OK; i++)
        rc = post_htod_chunks_locked(tt, &redo[i].a);
    return rc == TDM_T_BROKEN ? rc : TDM_T_OK;
}

/* One upload piece (acc's chunks, or one): its bytes over the lanes,
 * after the parts of the pieces before it, while MEMCPY_HTOD_LANES asks the
 * server to take them.  The answer is read only when lane_depth pieces are
 * in flight, at the copy's last piece, or before anything else that reads a
 * reply: the program's buffer is free again when the copy returns, as after
 * a raw post, and the lanes do not idle for a round trip and a device copy
 * between pieces (docs/protocol.md, "Pipelined uploads"). */
static int send_piece(tcp_transport *tt, const tdm_memcpy_htod_args *a)
{
    lane_piece p = { .a = *a };
    tdm_htod_lanes_args la;
    int rc;

    if ((rc = lane_collect(tt, tt->lane_depth - 1)) != TDM_T_OK)
        return rc;
    if (!tt->lanes)   /* they failed meanwhile */
        return post_htod_chunks_locked(tt, a);
    la = (tdm_htod_lanes_args){ .dst = a->dst, .stream = a->stream, .size = a->data.data_len,
                                .xfer = ++tt->lane_xfer, .nlanes = tdm_tcp_lanes_count(tt->lanes) };
    p.xfer = la.xfer;
    tdm_tcp_lanes_send(tt->lanes, la.xfer, a->data.data_val, la.size);
    if (raw_send(tt, TDM_MEMCPY_HTOD_LANES, (xdrproc_t)xdr_tdm_htod_lanes_args, &la, &p.xid) != TDM_T_OK) {
        /* Part of a call may be on the wire: the connection is no use. */
        tt->ninflight = 0;
        lanes_settled(tt, true);
        return TDM_T_BROKEN;
    }
    tt->inflight[tt->ninflight++] = p;
    return TDM_T_OK;
}

/* Sends the gathered chunks, if any, as one piece. */
static int lane_flush(tcp_transport *tt)
{
    tdm_memcpy_htod_args a = tt->acc;

    if (a.data.data_len == 0)
        return TDM_T_OK;
    tt->acc.data.data_len = 0;
    return send_piece(tt, &a);
}

static tdm_gather_run run_of(const tdm_memcpy_htod_args *a)
{
    return (tdm_gather_run){ .dst = a->dst, .stream = a->stream, .src = a->data.data_val, .len = a->data.data_len };
}

/* One MEMCPY_HTOD chunk of an upload over the lanes (`more`: chunks of the
 * same copy follow): gathered with the chunks before it into a piece of up
 * to piece_max bytes, which goes once the next chunk could not join it or
 * the copy ends (lane_gather.h); the copy's last chunk waits for every
 * answer. */
static int htod_lanes(tcp_transport *tt, const tdm_memcpy_htod_args *a, bool more)
{
    tdm_gather_step step = tdm_lane_gather_step(run_of(&tt->acc), run_of(a), more, tt->piece_max, TDM_MAX_CHUNK);
    int rc = TDM_T_OK;

    if (step.join)
        tt->acc.data.data_len += a->data.data_len;
    else if ((rc = lane_flush(tt)) == TDM_T_OK)
        tt->acc = *a;
    if (rc != TDM_T_OK || step.hold)
        return rc;
    return more ? lane_flush(tt) : lane_collect(tt, 0);
}

/* MEMCPY_DTOH_STREAM's bytes over the lanes, received by the lanes' threads
 * straight into the program's buffer; MEMCPY_DTOH_LANES's reply comes once
 * the server has sent them all. */
static int dtoh_lanes(tcp_transport *tt, const tdm_memcpy_dtoh_args *a, tdm_dtoh_stream_res *r)
{
    tdm_dtoh_lanes_args la = { .src = a->src, .size = a->size, .stream = a->stream, .xfer = ++tt->lane_xfer,
                               .nlanes = tdm_tcp_lanes_count(tt->lanes) };
    tdm_dtoh_lanes_res res = { 0, 0 };
    enum clnt_stat st;
    int rc;

    tdm_tcp_lanes_recv(tt->lanes, la.xfer, r->buf, a->size);
    st = guarded_call(tt, TDM_MEMCPY_DTOH_LANES, (xdrproc_t)xdr_tdm_dtoh_lanes_args, &la,
                      (xdrproc_t)xdr_tdm_dtoh_lanes_res, &res, call_timeout);
    if (st != RPC_SUCCESS) {
        rc = lanes_call_failed(tt, st);
        return rc == TDM_T_OK ? call_raw_locked(tt, TDM_MEMCPY_DTOH_STREAM, (xdrproc_t)xdr_tdm_memcpy_dtoh_args,
                                                (void *)a, (xdrproc_t)xdr_tdm_dtoh_stream_res, r)
                              : rc;
    }
    if (res.err == TDM_ERR_LANE_FAILED)
        tdm_tcp_lanes_abort(tt->lanes);
    if (tdm_tcp_lanes_wait(tt->lanes) != 0 || res.err == TDM_ERR_LANE_FAILED) {
        /* Some bytes may be missing: all of them again, on the main connection. */
        lanes_drop(tt, true);
        return call_raw_locked(tt, TDM_MEMCPY_DTOH_STREAM, (xdrproc_t)xdr_tdm_memcpy_dtoh_args, (void *)a,
                               (xdrproc_t)xdr_tdm_dtoh_stream_res, r);
    }
    r->err = res.err;
    r->copy_err = res.copy_err;
    r->got = res.err || res.copy_err ? 0 : a->size;
    return TDM_T_OK;
}

static int tcp_post_piece(tdm_transport *t, uint32_t proc, xdrproc_t xargs, void *args, uint64_t copy_bytes,
                          bool more)
{
    tcp_transport *tt = (tcp_transport *)t;
    int rc;

    /* Only when args are what the row says (a test may send anything). */
    if (proc == TDM_MEMCPY_HTOD && xargs == (xdrproc_t)xdr_tdm_memcpy_htod_args && args &&
        ((tdm_memcpy_htod_args *)args)->data.data_len >= RAW_MIN_BYTES)
        return post_htod_raw(tt, args, copy_bytes, more);
    pthread_mutex_lock(&tt->io_lock);
    /* A copy's small last piece (or any other one-way call) returns once
     * the pieces in flight were taken: the program's buffer is free again
     * when its copy returns. */
    rc = more ? lane_flush(tt) : lane_collect(tt, 0);
    if (rc == TDM_T_OK)
        rc = batch_post(tt, proc, xargs, args);
    /* Without a flusher thread (it could not be started) every one-way
     * call is sent at once. */
    if (rc == TDM_T_OK && !tt->flusher_running && !ship_batch(tt))
        rc = TDM_T_BROKEN;
    pthread_mutex_unlock(&tt->io_lock);
    if (rc != TDM_T_OK || !tt->flusher_running)
        return rc;
    if (!atomic_exchange(&tt->pending, true)) {
        pthread_mutex_lock(&tt->lock);
        pthread_cond_signal(&tt->wake);
        pthread_mutex_unlock(&tt->lock);
    }
    return TDM_T_OK;
}

/* A call posted on its own: an upload is a copy of its one piece. */
static int tcp_post(tdm_transport *t, uint32_t proc, xdrproc_t xargs, void *args)
{
    return tcp_post_piece(t, proc, xargs, args, 0, false);
}

static void tcp_close(tdm_transport *t)
{
    tcp_transport *tt = (tcp_transport *)t;

    if (tt->flusher_running) {
        pthread_mutex_lock(&tt->lock);
        tt->stop = true;
        pthread_cond_signal(&tt->wake);
        pthread_mutex_unlock(&tt->lock);
        pthread_join(tt->flusher, NULL);
    }
    /* Whatever is still batched must reach the server before we go. */
    if (tt->clnt)
        flush(tt);
    tdm_tcp_lanes_close(tt->lanes);
    if (tt->clnt)
        clnt_destroy(tt->clnt);
    if (tt->raw_open)
        tdm_recstream_destroy(&tt->raw);
    free(tt->batch);
    pthread_cond_destroy(&tt->wake);
    pthread_mutex_destroy(&tt->lock);
    pthread_mutex_destroy(&tt->io_lock);
    free(tt);
}

static const tdm_transport_ops tcp_ops = { tcp_call, tcp_post, tcp_close, tcp_post_piece };

static int connect_tcp(const char *host, int port, char *err, size_t errlen)
{
    struct addrinfo hints = { 0 }, *res = NULL, *ai;
    char portstr[16];
    int fd = -1, rc;

    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    snprintf(portstr, sizeof(portstr), "%d", port);
    rc = getaddrinfo(host, portstr, &hints, &res);
    if (rc != 0) {
        snprintf(err, errlen, "cannot resolve %s: %s", host, gai_strerror(rc));
        return -1;
    }
    for (ai = res; ai; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
        if (fd < 0)
            continue;
        if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
            break;
        rc = errno;
        close(fd);
        fd = -1;
        errno = rc;
    }
    if (fd < 0)
        snprintf(err, errlen, "cannot connect to %s:%d: %s", host, port, strerror(errno));
    freeaddrinfo(res);
    if (fd >= 0) {
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
    }
    return fd;
}

int tdm_transport_tcp_open(const char *host, int port, tdm_transport **out, char *err, size_t errlen)
{
    tcp_transport *tt = calloc(1, sizeof(*tt));
    struct netbuf addr = { 0 };
    struct sockaddr_storage ss;
    socklen_t sslen = sizeof(ss);
    int fd = -1;

    if (!tt) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    pthread_mutex_init(&tt->lock, NULL);
    pthread_mutex_init(&tt->io_lock, NULL);
    pthread_cond_init(&tt->wake, NULL);
    atomic_init(&tt->pending, false);
    tt->batch = malloc(TCP_BUF_SIZE);
    if (!tt->batch) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    fd = connect_tcp(host, port, err, errlen);
    if (fd < 0)
        goto fail;
    lanes_config(tt, host, port);
    if (getpeername(fd, (struct sockaddr *)&ss, &sslen) == 0) {
        addr.buf = &ss;
        addr.len = addr.maxlen = sslen;
    }
    tt->clnt = clnt_vc_create(fd, &addr, TANDEM_PROG, TANDEM_V1, TCP_BUF_SIZE, TCP_BUF_SIZE);
    if (!tt->clnt) {
        snprintf(err, errlen, "cannot create RPC client for %s:%d: %s", host, port,
                 clnt_spcreateerror("clnt_vc_create"));
        goto fail;
    }
    clnt_control(tt->clnt, CLSET_FD_CLOSE, NULL);
    tt->fd = fd;
    /* A fixed reply timeout: otherwise clnt_vc takes it from each call. */
    clnt_control(tt->clnt, CLSET_TIMEOUT, (char *)&call_timeout);
    fd = -1;
    tt->base.ops = &tcp_ops;
    snprintf(tt->base.desc, sizeof(tt->base.desc), "tcp://%s:%d", host, port);
    tt->flusher_running = pthread_create(&tt->flusher, NULL, flusher_main, tt) == 0;
    *out = &tt->base;
    return 0;
fail:
    if (fd >= 0)
        close(fd);
    pthread_cond_destroy(&tt->wake);
    pthread_mutex_destroy(&tt->lock);
    pthread_mutex_destroy(&tt->io_lock);
    free(tt->batch);
    free(tt);
    return -1;
}
