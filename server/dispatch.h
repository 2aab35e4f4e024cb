/* The Tandem ONC RPC program as the server runs it: procedure table and the
 * handlers that turn decoded arguments into session operations. */
#ifndef TANDEM_SERVER_DISPATCH_H
#define TANDEM_SERVER_DISPATCH_H

#include "rpc_server.h"

extern const tdm_rpc_program tdm_dispatch_program;

#endif
