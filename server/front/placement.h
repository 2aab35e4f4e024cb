/* The orchestrator's placement key of a session (issue 17; docs/onboarding.md): HELLO names it,
 * RESUME names it again on a standby (the mirror does not carry it, as it does not carry the
 * tenant), and the session keeps it in s->placement, where the reservation made for it by
 * the node agent (the control socket's "reserve") is looked up. */
#ifndef TANDEM_SERVER_PLACEMENT_H
#define TANDEM_SERVER_PLACEMENT_H

#include "session.h"
#include "tandem_rpc.h"

/* Takes the key HELLO or RESUME presented into s->placement, and logs it.  An empty key (a
 * guest without an orchestrator) leaves s->placement "".  0, or cudaErrorInvalidValue after a
 * line naming the peer for a key that is no key (tdm_placement_key_ok). */
int tdm_placement_take(tdm_session *s, const tdm_placement *key);

#endif
