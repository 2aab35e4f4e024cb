#include "xdr_extra.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "tandem_rpc.h"

bool_t tdm_xdr_void(XDR *xdrs, void *unused)
{
    return TRUE;
}

void tdm_rpc_call_msg(struct rpc_msg *m, uint32_t xid, uint32_t proc)
{
    memset(m, 0, sizeof(*m));
    m->rm_xid = xid;
    m->rm_direction = CALL;
    m->rm_call.cb_rpcvers = RPC_MSG_VERSION;
    m->rm_call.cb_prog = TANDEM_PROG;
    m->rm_call.cb_vers = TANDEM_V1;
    m->rm_call.cb_proc = proc;
    m->rm_call.cb_cred = _null_auth;
    m->rm_call.cb_verf = _null_auth;
}

bool tdm_rpc_encode_call(char *buf, size_t cap, uint32_t xid, uint32_t proc, xdrproc_t xargs, void *args,
                         size_t *len)
{
    struct rpc_msg m;
    XDR x;
    bool ok;

    *len = 0;
    if (!cap)
        return false;
    tdm_rpc_call_msg(&m, xid, proc);
    xdrmem_create(&x, buf, (u_int)(cap > UINT_MAX ? UINT_MAX : cap), XDR_ENCODE);
    ok = xdr_callmsg(&x, &m) && xargs(&x, args);
    *len = xdr_getpos(&x);
    xdr_destroy(&x);
    return ok;
}

/* Decodes `size` bytes of opaque (and its padding) into a buffer that
 * grows by doubling from TDM_XDR_ALLOC_AHEAD as they arrive: at most twice
 * what came is ever allocated. */
static bool_t decode_growing(XDR *xdrs, char **cpp, u_int size)
{
    size_t cap = size < TDM_XDR_ALLOC_AHEAD ? size : TDM_XDR_ALLOC_AHEAD, have = 0;
    char *buf = malloc(cap), crud[4];
    u_int pad = (4 - size % 4) % 4;

    if (!buf)
        return FALSE;
    while (have < size) {
        if (have == cap) {
            size_t ncap = cap * 2 < size ? cap * 2 : size;
            char *nb = realloc(buf, ncap);
            if (!nb)
                goto fail;
            buf = nb;
            cap = ncap;
        }
        if (!XDR_GETBYTES(xdrs, buf + have, (u_int)(cap - have)))
            goto fail;
        have = cap;
    }
    if (pad && !XDR_GETBYTES(xdrs, crud, pad))
        goto fail;
    *cpp = buf;
    return TRUE;
fail:
    free(buf);
    return FALSE;
}

bool_t tdm_xdr_bytes(XDR *xdrs, char **cpp, u_int *sizep, u_int maxsize)
{
    /* Encoding, freeing, or decoding into the caller's buffer (a bulk
     * copy's staging): libtirpc's, which allocates nothing. */
    if (xdrs->x_op != XDR_DECODE || *cpp)
        return xdr_bytes(xdrs, cpp, sizep, maxsize);
    if (!xdr_u_int(xdrs, sizep) || *sizep > maxsize)
        return FALSE;
    return *sizep == 0 || decode_growing(xdrs, cpp, *sizep);
}
