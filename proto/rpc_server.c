#include "rpc_server.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define REC_BUF_SIZE (1u << 20)

typedef struct conn_io {
    int fd;
    int saw_eof;
    int saw_error;
} conn_io;

/* xdrrec callbacks: -1 ends the record stream. */
static int conn_read(void *h, void *buf, int len)
{
    conn_io *io = h;

    for (;;) {
        ssize_t n = read(io->fd, buf, (size_t)len);
        if (n > 0)
            return (int)n;
        if (n == 0) {
            io->saw_eof = 1;
            return -1;
        }
        if (errno == EINTR)
            continue;
        io->saw_error = 1;
        return -1;
    }
}

static int conn_write(void *h, void *buf, int len)
{
    conn_io *io = h;
    const char *p = buf;
    int left = len;

    while (left > 0) {
        ssize_t n = write(io->fd, p, (size_t)left);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            io->saw_error = 1;
            return -1;
        }
        p += n;
        left -= (int)n;
    }
    return len;
}

static int send_reply(XDR *xdrs, uint32_t xid, enum accept_stat stat, xdrproc_t xres, void *res,
                      uint32_t low, uint32_t high)
{
    struct rpc_msg reply;

    memset(&reply, 0, sizeof(reply));
    reply.rm_xid = xid;
    reply.rm_direction = REPLY;
    reply.rm_reply.rp_stat = MSG_ACCEPTED;
    reply.acpted_rply.ar_verf = _null_auth;
    reply.acpted_rply.ar_stat = stat;
    if (stat == SUCCESS) {
        reply.acpted_rply.ar_results.where = res;
        reply.acpted_rply.ar_results.proc = xres;
    } else if (stat == PROG_MISMATCH) {
        reply.acpted_rply.ar_vers.low = low;
        reply.acpted_rply.ar_vers.high = high;
    }
    xdrs->x_op = XDR_ENCODE;
    if (!xdr_replymsg(xdrs, &reply))
        return -1;
    return xdrrec_endofrecord(xdrs, TRUE) ? 0 : -1;
}

tdm_rpc_end tdm_rpc_serve(const tdm_rpc_program *p, void *ctx, int fd, char *why, size_t whylen)
{
    conn_io io = { .fd = fd };
    char cred[2 * MAX_AUTH_BYTES], verf[MAX_AUTH_BYTES];
    size_t maxargs = 0, maxres = 0;
    void *args = NULL, *res = NULL;
    tdm_rpc_end end = TDM_RPC_CLOSED;
    XDR xdrs;

    for (size_t i = 0; i < p->nprocs; i++) {
        if (p->procs[i].args_size > maxargs)
            maxargs = p->procs[i].args_size;
        if (p->procs[i].res_size > maxres)
            maxres = p->procs[i].res_size;
    }
    args = calloc(1, maxargs ? maxargs : 1);
    res = calloc(1, maxres ? maxres : 1);
    if (!args || !res) {
        snprintf(why, whylen, "out of memory");
        end = TDM_RPC_IO_ERROR;
        goto out;
    }
    xdrrec_create(&xdrs, REC_BUF_SIZE, REC_BUF_SIZE, (char *)&io, conn_read, conn_write);
    snprintf(why, whylen, "peer closed the connection");

    for (;;) {
        struct rpc_msg msg;
        const tdm_rpc_proc *proc;

        xdrs.x_op = XDR_DECODE;
        if (!xdrrec_skiprecord(&xdrs))
            break;
        memset(&msg, 0, sizeof(msg));
        msg.rm_call.cb_cred.oa_base = cred;
        msg.rm_call.cb_verf.oa_base = verf;
        if (!xdr_callmsg(&xdrs, &msg)) {
            if (io.saw_eof || io.saw_error)
                break;
            snprintf(why, whylen, "malformed frame: not an ONC RPC call message");
            end = TDM_RPC_MALFORMED;
            goto destroy;
        }
        if (msg.rm_direction != CALL || msg.rm_call.cb_rpcvers != RPC_MSG_VERSION) {
            snprintf(why, whylen, "malformed frame: RPC version %u", (unsigned)msg.rm_call.cb_rpcvers);
            end = TDM_RPC_MALFORMED;
            goto destroy;
        }
        if (msg.rm_call.cb_prog != p->prog) {
            send_reply(&xdrs, msg.rm_xid, PROG_UNAVAIL, NULL, NULL, 0, 0);
            continue;
        }
        if (msg.rm_call.cb_vers != p->vers) {
            send_reply(&xdrs, msg.rm_xid, PROG_MISMATCH, NULL, NULL, p->vers, p->vers);
            continue;
        }
        proc = msg.rm_call.cb_proc < p->nprocs ? &p->procs[msg.rm_call.cb_proc] : NULL;
        if (!proc || !proc->handler) {
            send_reply(&xdrs, msg.rm_xid, PROC_UNAVAIL, NULL, NULL, 0, 0);
            continue;
        }

        memset(args, 0, proc->args_size);
        if (!proc->xargs(&xdrs, args)) {
            xdrs.x_op = XDR_FREE;
            proc->xargs(&xdrs, args);
            if (io.saw_eof || io.saw_error) {
                snprintf(why, whylen, "connection lost in the middle of a frame");
                break;
            }
            if (proc->xres)
                send_reply(&xdrs, msg.rm_xid, GARBAGE_ARGS, NULL, NULL, 0, 0);
            else if (p->on_garbage_oneway)
                p->on_garbage_oneway(ctx, msg.rm_call.cb_proc);
            continue;
        }

        bool keep;
        if (proc->xres)
            memset(res, 0, proc->res_size);
        keep = proc->handler(ctx, args, res);
        xdrs.x_op = XDR_FREE;
        proc->xargs(&xdrs, args);
        if (proc->xres) {
            int rc = send_reply(&xdrs, msg.rm_xid, SUCCESS, proc->xres, res, 0, 0);
            xdrs.x_op = XDR_FREE;
            proc->xres(&xdrs, res);
            if (rc != 0) {
                snprintf(why, whylen, "cannot send reply: peer gone");
                end = TDM_RPC_IO_ERROR;
                goto destroy;
            }
        }
        if (!keep) {
            snprintf(why, whylen, "session finished");
            end = TDM_RPC_FINISHED;
            goto destroy;
        }
    }
    if (io.saw_error)
        end = TDM_RPC_IO_ERROR;
destroy:
    xdr_destroy(&xdrs);
out:
    free(args);
    free(res);
    return end;
}
