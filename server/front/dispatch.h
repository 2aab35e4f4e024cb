/* The Tandem ONC RPC program as the server runs it: the dispatch table,
 * expanded from proto/calls.def, and the handlers that turn decoded
 * arguments into session operations.  The handler of call TDM_<NAME> is
 * tdm_serve_<NAME>. */
#ifndef TANDEM_SERVER_DISPATCH_H
#define TANDEM_SERVER_DISPATCH_H

#include "rpc_server.h"

extern const tdm_rpc_program tdm_dispatch_program;

/* Handlers of the shm transport's copy procedures (dispatch_shm.c). */
bool tdm_serve_SHM_HTOD(void *ctx, void *args, void *res);
bool tdm_serve_SHM_DTOH(void *ctx, void *args, void *res);
bool tdm_serve_SHM_HOST_REGISTER(void *ctx, void *args, void *res);
bool tdm_serve_SHM_HOST_UNREGISTER(void *ctx, void *args, void *res);

#endif
