/* XDR helpers libtirpc lacks in a usable form. */
#ifndef TANDEM_PROTO_XDR_EXTRA_H
#define TANDEM_PROTO_XDR_EXTRA_H

#include <rpc/rpc.h>

/* An empty argument or result.  libtirpc declares xdr_void with no
 * parameters, which cannot be cast to xdrproc_t without a warning. */
bool_t tdm_xdr_void(XDR *xdrs, void *unused);

#endif
