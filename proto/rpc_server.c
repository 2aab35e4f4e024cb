#include "rpc_server.h"
#include "recstream.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Calls and replies go through this buffer; a bulk copy's payload does
 * not (recstream.h). */
#define REC_BUF_SIZE (256u << 10)

typedef struct conn_io {
    tdm_recstream rs;
    XDR xdrs;
} conn_io;

static int rec_send_reply(void *arg, struct rpc_msg *reply)
{
    conn_io *io = arg;

    io->xdrs.x_op = XDR_ENCODE;
    if (!xdr_replymsg(&io->xdrs, reply))
        return -1;
    return tdm_recstream_end_record(&io->xdrs) ? 0 : -1;
}

static bool rec_input_lost(void *arg)
{
    conn_io *io = arg;

    return io->rs.eof || io->rs.error;
}

static int send_reply(const tdm_rpc_io *io, uint32_t xid, enum accept_stat stat, xdrproc_t xres, void *res,
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
    return io->send_reply(io->arg, &reply);
}

int tdm_rpc_bufs_alloc(const tdm_rpc_program *p, tdm_rpc_bufs *b)
{
    size_t maxargs = 0, maxres = 0;

    for (size_t i = 0; i < p->nprocs; i++) {
        if (p->procs[i].args_size > maxargs)
            maxargs = p->procs[i].args_size;
        if (p->procs[i].res_size > maxres)
            maxres = p->procs[i].res_size;
    }
    b->args = calloc(1, maxargs ? maxargs : 1);
    b->res = calloc(1, maxres ? maxres : 1);
    if (!b->args || !b->res) {
        tdm_rpc_bufs_free(b);
        return -1;
    }
    return 0;
}

void tdm_rpc_bufs_free(tdm_rpc_bufs *b)
{
    free(b->args);
    free(b->res);
    b->args = b->res = NULL;
}

int tdm_rpc_serve_one(const tdm_rpc_program *p, void *ctx, const tdm_rpc_io *io, tdm_rpc_bufs *b,
                      char *why, size_t whylen)
{
    char cred[2 * MAX_AUTH_BYTES], verf[MAX_AUTH_BYTES];
    XDR *xdrs = io->in;
    struct rpc_msg msg;
    const tdm_rpc_proc *proc;
    bool keep;

    xdrs->x_op = XDR_DECODE;
    memset(&msg, 0, sizeof(msg));
    msg.rm_call.cb_cred.oa_base = cred;
    msg.rm_call.cb_verf.oa_base = verf;
    if (!xdr_callmsg(xdrs, &msg)) {
        if (io->input_lost(io->arg))
            return TDM_RPC_CLOSED;
        snprintf(why, whylen, "malformed frame: not an ONC RPC call message");
        return TDM_RPC_MALFORMED;
    }
    if (msg.rm_direction != CALL || msg.rm_call.cb_rpcvers != RPC_MSG_VERSION) {
        snprintf(why, whylen, "malformed frame: RPC version %u", (unsigned)msg.rm_call.cb_rpcvers);
        return TDM_RPC_MALFORMED;
    }
    if (msg.rm_call.cb_prog != p->prog) {
        send_reply(io, msg.rm_xid, PROG_UNAVAIL, NULL, NULL, 0, 0);
        return TDM_RPC_NEXT;
    }
    if (msg.rm_call.cb_vers != p->vers) {
        send_reply(io, msg.rm_xid, PROG_MISMATCH, NULL, NULL, p->vers, p->vers);
        return TDM_RPC_NEXT;
    }
    proc = msg.rm_call.cb_proc < p->nprocs ? &p->procs[msg.rm_call.cb_proc] : NULL;
    if (!proc || !proc->handler) {
        send_reply(io, msg.rm_xid, PROC_UNAVAIL, NULL, NULL, 0, 0);
        return TDM_RPC_NEXT;
    }

    if (p->admits && !p->admits(ctx, msg.rm_call.cb_proc)) {
        snprintf(why, whylen, "procedure %u refused: the session has not presented its credential",
                 (unsigned)msg.rm_call.cb_proc);
        return TDM_RPC_FINISHED;
    }
    memset(b->args, 0, proc->args_size);
    if (p->prepare_args)
        p->prepare_args(ctx, msg.rm_call.cb_proc, b->args);
    if (!proc->xargs(xdrs, b->args)) {
        if (p->reclaim_args)
            p->reclaim_args(ctx, msg.rm_call.cb_proc, b->args);
        xdrs->x_op = XDR_FREE;
        proc->xargs(xdrs, b->args);
        if (io->input_lost(io->arg)) {
            snprintf(why, whylen, "connection lost in the middle of a frame");
            return TDM_RPC_CLOSED;
        }
        if (proc->xres)
            send_reply(io, msg.rm_xid, GARBAGE_ARGS, NULL, NULL, 0, 0);
        else if (p->on_garbage_oneway)
            p->on_garbage_oneway(ctx, msg.rm_call.cb_proc);
        return TDM_RPC_NEXT;
    }

    if (proc->xres)
        memset(b->res, 0, proc->res_size);
    if (p->before_call)
        p->before_call(ctx, msg.rm_call.cb_proc);
    keep = proc->handler(ctx, b->args, b->res);
    if (p->after_call)
        p->after_call(ctx, msg.rm_call.cb_proc, proc->xres ? b->res : NULL);
    if (p->reclaim_args)
        p->reclaim_args(ctx, msg.rm_call.cb_proc, b->args);
    xdrs->x_op = XDR_FREE;
    proc->xargs(xdrs, b->args);
    if (proc->xres) {
        int rc = send_reply(io, msg.rm_xid, SUCCESS, proc->xres, b->res, 0, 0);
        xdrs->x_op = XDR_FREE;
        proc->xres(xdrs, b->res);
        if (rc != 0) {
            snprintf(why, whylen, "cannot send reply: peer gone, or the reply did not encode");
            return TDM_RPC_IO_ERROR;
        }
    }
    if (!keep) {
        snprintf(why, whylen, "session finished");
        return TDM_RPC_FINISHED;
    }
    return TDM_RPC_NEXT;
}

tdm_rpc_end tdm_rpc_serve(const tdm_rpc_program *p, void *ctx, int fd, char *why, size_t whylen)
{
    return tdm_rpc_serve_timed(p, ctx, fd, NULL, why, whylen);
}

tdm_rpc_end tdm_rpc_serve_timed(const tdm_rpc_program *p, void *ctx, int fd, const tdm_wire_timeouts *t, char *why,
                                size_t whylen)
{
    conn_io io;
    tdm_rpc_io rio = { &io.xdrs, rec_send_reply, rec_input_lost, &io };
    tdm_rpc_bufs b = { 0 };
    int end = TDM_RPC_CLOSED;

    if (tdm_rpc_bufs_alloc(p, &b) || tdm_recstream_create(&io.rs, &io.xdrs, fd, REC_BUF_SIZE, false)) {
        tdm_rpc_bufs_free(&b);
        snprintf(why, whylen, "out of memory");
        return TDM_RPC_IO_ERROR;
    }
    snprintf(why, whylen, "peer closed the connection");
    if (t)
        tdm_recstream_set_timeouts(&io.rs, t);

    for (;;) {
        io.xdrs.x_op = XDR_DECODE;
        if (!tdm_recstream_next_record(&io.xdrs)) {
            /* Not a lost peer: a fragment header no stream may carry. */
            if (!rec_input_lost(&io)) {
                snprintf(why, whylen, "malformed frame: bad record mark");
                end = TDM_RPC_MALFORMED;
            } else {
                end = TDM_RPC_CLOSED;
            }
            break;
        }
        end = tdm_rpc_serve_one(p, ctx, &rio, &b, why, whylen);
        if (end != TDM_RPC_NEXT)
            break;
    }
    if (end == TDM_RPC_CLOSED && io.rs.error)
        end = TDM_RPC_IO_ERROR;
    if (io.rs.timed_out) {
        char what[160];
        tdm_wire_timeout_why(t, io.rs.timed_out, what, sizeof(what));
        snprintf(why, whylen, "closed by the server: %s", what);
        end = TDM_RPC_FINISHED;
    }
    tdm_recstream_destroy(&io.rs);
    tdm_rpc_bufs_free(&b);
    return (tdm_rpc_end)end;
}
