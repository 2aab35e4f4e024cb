#include "xdr_extra.h"

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
