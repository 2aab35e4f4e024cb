/* The Tandem ONC RPC program as the server runs it: procedure table and the
 * handlers that turn decoded arguments into session operations. */
#ifndef TANDEM_SERVER_DISPATCH_H
#define TANDEM_SERVER_DISPATCH_H

#include "rpc_server.h"

extern const tdm_rpc_program tdm_dispatch_program;

/* Handlers of the shm transport's copy procedures (dispatch_shm.c). */
bool tdm_dispatch_shm_htod(void *ctx, void *args, void *res);
bool tdm_dispatch_shm_dtoh(void *ctx, void *args, void *res);
bool tdm_dispatch_shm_host_register(void *ctx, void *args, void *res);
bool tdm_dispatch_shm_host_unregister(void *ctx, void *args, void *res);

#endif
