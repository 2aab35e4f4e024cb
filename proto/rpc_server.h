/* Server side of ONC RPC on one stream connection.
 *
 * libtirpc's svc_run() serves every connection from one thread, so one
 * session's cudaDeviceSynchronize would stall all others.  This loop speaks the
 * same wire format (RFC 5531 record marking, call and reply messages) for one
 * connection and is run by a thread per connection.  It reads and writes
 * through recstream.h rather than libtirpc's xdrrec, so that a bulk payload
 * goes straight between the socket and its storage (prepare_args). */
#ifndef TANDEM_PROTO_RPC_SERVER_H
#define TANDEM_PROTO_RPC_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <rpc/rpc.h>

#include "wire_timeouts.h"

typedef struct tdm_rpc_proc {
    xdrproc_t xargs;
    size_t args_size;
    xdrproc_t xres;      /* NULL for one-way procedures */
    size_t res_size;
    /* ctx is the connection's context (a session).  Returns false when the
     * connection must be closed after this call (the session is finished). */
    bool (*handler)(void *ctx, void *args, void *res);
} tdm_rpc_proc;

typedef struct tdm_rpc_program {
    uint32_t prog, vers;
    const tdm_rpc_proc *procs;   /* indexed by procedure number */
    size_t nprocs;
    /* One-way procedure whose arguments did not decode: the connection goes
     * on, and the program is told so that it can report the error later. */
    void (*on_garbage_oneway)(void *ctx, uint32_t proc);
    /* Called before each decoded call's handler, and after it (before the
     * reply is sent), when set; after_call sees the result about to be sent
     * (NULL for a one-way call). */
    void (*before_call)(void *ctx, uint32_t proc);
    void (*after_call)(void *ctx, uint32_t proc, void *res);
    /* ---- tcp bulk data (issue 14) ---- */
    /* When set: called on the zeroed arguments before they are decoded, so
     * that the program can point a variable-length field at storage of its
     * own (xdr_bytes then decodes into it instead of allocating); and
     * before every XDR_FREE of them, to take such storage back (set the
     * field to NULL) so that it is not freed. */
    void (*prepare_args)(void *ctx, uint32_t proc, void *args);
    void (*reclaim_args)(void *ctx, uint32_t proc, void *args);
    /* ---- tenants (issue 16) ---- */
    /* When set: whether the call may be served at all, asked before its arguments are decoded.
     * False ends the connection unanswered (a guest of a server with tenants calling before it
     * presented its credential, issue 16). */
    bool (*admits)(void *ctx, uint32_t proc);
} tdm_rpc_program;

typedef enum {
    TDM_RPC_CLOSED = 0,      /* peer closed the connection */
    TDM_RPC_MALFORMED = -1,  /* a frame that is not an ONC RPC call */
    TDM_RPC_IO_ERROR = -2,
    TDM_RPC_FINISHED = 1,    /* a handler asked to end the connection */
} tdm_rpc_end;

/* Serves calls on fd until the peer goes away, a frame is malformed, or a
 * handler ends it.  A short description of why is written to why. */
tdm_rpc_end tdm_rpc_serve(const tdm_rpc_program *p, void *ctx, int fd, char *why, size_t whylen);
/* As tdm_rpc_serve, and a peer that stalls in a frame or idles longer than
 * t allows (read at every call: it may change) is cut off, with why saying
 * which limit.  t NULL: no limits. */
tdm_rpc_end tdm_rpc_serve_timed(const tdm_rpc_program *p, void *ctx, int fd, const tdm_wire_timeouts *t, char *why,
                                size_t whylen);

/* ---- the per-call part, shared by every transport's server loop ---- */

/* Argument and result storage big enough for every procedure of p. */
typedef struct tdm_rpc_bufs {
    void *args, *res;
} tdm_rpc_bufs;
int tdm_rpc_bufs_alloc(const tdm_rpc_program *p, tdm_rpc_bufs *b);
void tdm_rpc_bufs_free(tdm_rpc_bufs *b);

/* How a transport ships a reply message and tells a lost peer from a bad
 * frame. */
typedef struct tdm_rpc_io {
    XDR *in;                                        /* positioned at a call message */
    int (*send_reply)(void *arg, struct rpc_msg *reply);   /* 0 or -1 */
    bool (*input_lost)(void *arg);                  /* the input ended mid-message */
    void *arg;
} tdm_rpc_io;

#define TDM_RPC_NEXT 2   /* tdm_rpc_serve_one: go on with the next call */

/* Decodes one call from io->in, checks program, version and procedure,
 * decodes the arguments, runs the handler and sends the reply (if the
 * procedure has one).  Returns TDM_RPC_NEXT or how the connection ends. */
int tdm_rpc_serve_one(const tdm_rpc_program *p, void *ctx, const tdm_rpc_io *io, tdm_rpc_bufs *b,
                      char *why, size_t whylen);

#endif
