/* The RPC front's part of device output (docs/device-output.md): which
 * session a thread serves while it serves a call, and the flag that tells
 * the guest output waits. */
#ifndef TANDEM_SERVER_FRONT_DISPATCH_OUTPUT_H
#define TANDEM_SERVER_FRONT_DISPATCH_OUTPUT_H

#include "calls.h"

/* Device output this thread writes belongs to session ctx from now on. */
void tdm_output_call_begins(void *ctx);
/* The call is served: output written from now on has no session, and
 * res (about to be sent) carries TDM_ERR_OUTPUT_PENDING in its err when
 * the session's buffer holds output and the call can carry the flag. */
void tdm_output_call_ends(void *ctx, const tdm_call_info *call, void *res);
/* TDM_ERR_OUTPUT_PENDING when o holds output, else 0: for errors that
 * reach the guest outside a reply (an shm copy's completion slot). */
struct tdm_device_output;
int tdm_output_pending_flag(struct tdm_device_output *o);

#endif
