/* XDR helpers libtirpc lacks in a usable form. */
#ifndef TANDEM_PROTO_XDR_EXTRA_H
#define TANDEM_PROTO_XDR_EXTRA_H

#include <rpc/rpc.h>

/* An empty argument or result.  libtirpc declares xdr_void with no
 * parameters, which cannot be cast to xdrproc_t without a warning. */
bool_t tdm_xdr_void(XDR *xdrs, void *unused);

/* A call message of the Tandem program (AUTH_NONE) for procedure proc:
 * what a transport that builds its frames itself encodes ahead of the
 * arguments. */
void tdm_rpc_call_msg(struct rpc_msg *m, uint32_t xid, uint32_t proc);

#endif
