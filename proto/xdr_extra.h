/* XDR helpers libtirpc lacks in a usable form. */
#ifndef TANDEM_PROTO_XDR_EXTRA_H
#define TANDEM_PROTO_XDR_EXTRA_H

#include <rpc/rpc.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* An empty argument or result.  libtirpc declares xdr_void with no
 * parameters, which cannot be cast to xdrproc_t without a warning. */
bool_t tdm_xdr_void(XDR *xdrs, void *unused);

/* A call message of the Tandem program (AUTH_NONE) for procedure proc:
 * what a transport that builds its frames itself encodes ahead of the
 * arguments. */
void tdm_rpc_call_msg(struct rpc_msg *m, uint32_t xid, uint32_t proc);

/* That call message and its arguments encoded into buf[0, cap): true with *len the bytes
 * written; false when they do not fit or cannot be encoded (*len: how far it got).  The body
 * of a frame (shm) or of a record (tcp) a transport builds itself. */
bool tdm_rpc_encode_call(char *buf, size_t cap, uint32_t xid, uint32_t proc, xdrproc_t xargs, void *args,
                         size_t *len);

/* Up to this many bytes of a variable-length opaque are allocated at once
 * when decoded; beyond it, the buffer grows as the bytes arrive. */
#define TDM_XDR_ALLOC_AHEAD (8u << 20)

/* xdr_bytes as libtirpc has it, except that decoding into no buffer
 * allocates what the stream delivers, not what the length word declares:
 * libtirpc allocates the declared length (up to the bound, 256 MiB for a
 * code image) before reading a byte of it, so a 40-byte frame could make
 * the server take 256 MiB for as long as the guest kept it waiting.  The
 * generated decoders call this one (proto/CMakeLists.txt defines xdr_bytes
 * to it for rpcgen's output); the bytes on the wire are the same. */
bool_t tdm_xdr_bytes(XDR *xdrs, char **cpp, u_int *sizep, u_int maxsize);

#endif
