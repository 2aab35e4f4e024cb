/* The Tandem ONC RPC program as the server runs it: the dispatch table,
 * expanded from proto/calls.def, and the handlers that turn decoded
 * arguments into session operations.  The handler of call TDM_<NAME> is
 * tdm_serve_<NAME>. */
#ifndef TANDEM_SERVER_DISPATCH_H
#define TANDEM_SERVER_DISPATCH_H

#include "rpc_server.h"

extern const tdm_rpc_program tdm_dispatch_program;

/* Every row's handler, declared from the table so a handler may live in
 * any file of server/front/ (dispatch.c holds the core calls, dispatch_shm.c
 * the shm transport's, dispatch_<area>.c each later area's).  `ctx` is the
 * tdm_session; `res` is zeroed and freed by the RPC layer with xdr_free.
 * Returning false ends the session after the reply. */
#define TDM_CALL(NAME, ...) bool tdm_serve_##NAME(void *ctx, void *args, void *res);
#include "calls.def"
#undef TDM_CALL

/* ---- tcp bulk data (issue 14) ---- */
/* The program's prepare_args/reclaim_args (dispatch_tcp.c): MEMCPY_HTOD's
 * bytes are decoded straight into the session's staging. */
void tdm_dispatch_prepare_args(void *ctx, uint32_t proc, void *args);
void tdm_dispatch_reclaim_args(void *ctx, uint32_t proc, void *args);

/* ---- libraries (issue 14) ---- */
/* A kernel's entry of a load's answer (MODULE_LOAD, LIBRARY_LOAD): its
 * error, handle and parameter layout (arrays the answer's xdr_free frees). */
struct tdm_func_info;
void tdm_dispatch_func_info(void *ctx, struct tdm_func_info *fi, uint64_t handle, int err);

#endif
