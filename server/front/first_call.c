#include "first_call.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>


long tdm_first_record_length(const void *rec, size_t have, char *why, size_t whylen)
{
    uint32_t mark;
    size_t len;

    if (have < sizeof(mark))
        return 0;
    memcpy(&mark, rec, sizeof(mark));
    mark = ntohl(mark);
    len = mark & 0x7fffffffu;
    if (!(mark & 0x80000000u)) {
        snprintf(why, whylen, "its first call comes in fragments");
        return -1;
    }
    if (len > TDM_FIRST_CALL_MAX - sizeof(mark)) {
        snprintf(why, whylen, "its first frame has %zu bytes, more than a HELLO's %d", len, TDM_FIRST_CALL_MAX);
        return -1;
    }
    return have >= sizeof(mark) + len ? (long)(sizeof(mark) + len) : 0;
}

/* The token of a decoded HELLO or RESUME, copied out so that the arguments can be freed. */
static int take_token(const tdm_token *t, tdm_first_call *out, char *why, size_t whylen)
{
    if (t->tdm_token_len > sizeof(out->token)) {   /* xdr bounds it; say so if that changes */
        snprintf(why, whylen, "its token is longer than %zu bytes", sizeof(out->token));
        return -1;
    }
    out->token_len = t->tdm_token_len;
    if (t->tdm_token_len)
        memcpy(out->token, t->tdm_token_val, t->tdm_token_len);
    return 0;
}

int tdm_first_call_decode(const void *msg, size_t len, tdm_first_call *out, char *why, size_t whylen)
{
    char cred[2 * MAX_AUTH_BYTES], verf[MAX_AUTH_BYTES];
    struct rpc_msg call;
    XDR x;
    int rc = -1;

    memset(out, 0, sizeof(*out));
    memset(&call, 0, sizeof(call));
    /* Storage of our own for the credentials, as rpc_server.c gives: xdr_callmsg allocates none. */
    call.rm_call.cb_cred.oa_base = cred;
    call.rm_call.cb_verf.oa_base = verf;
    xdrmem_create(&x, (char *)(uintptr_t)msg, (u_int)len, XDR_DECODE);
    if (!xdr_callmsg(&x, &call) || call.rm_direction != CALL) {
        snprintf(why, whylen, "its first frame is no ONC RPC call");
        goto out;
    }
    if (call.rm_call.cb_prog != TANDEM_PROG || call.rm_call.cb_vers != TANDEM_V1) {
        snprintf(why, whylen, "its first call is of program %lu version %lu, not Tandem's",
                 (unsigned long)call.rm_call.cb_prog, (unsigned long)call.rm_call.cb_vers);
        goto out;
    }
    out->proc = (uint32_t)call.rm_call.cb_proc;
    if (out->proc == TDM_HELLO) {
        tdm_hello_args a;
        memset(&a, 0, sizeof(a));
        if (xdr_tdm_hello_args(&x, &a))
            rc = take_token(&a.token, out, why, whylen);
        else
            snprintf(why, whylen, "its HELLO does not decode");
        xdr_free((xdrproc_t)xdr_tdm_hello_args, (char *)&a);
    } else if (out->proc == TDM_RESUME) {
        tdm_resume_args a;
        memset(&a, 0, sizeof(a));
        if (xdr_tdm_resume_args(&x, &a))
            rc = take_token(&a.token, out, why, whylen);
        else
            snprintf(why, whylen, "its RESUME does not decode");
        xdr_free((xdrproc_t)xdr_tdm_resume_args, (char *)&a);
    } else {
        snprintf(why, whylen, "its first call is procedure %u, not HELLO or RESUME", out->proc);
    }
out:
    xdr_destroy(&x);
    return rc;
}
