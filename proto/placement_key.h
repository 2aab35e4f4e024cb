/* The orchestrator's placement key (issue 17; docs/onboarding.md): what a guest read from the
 * answer to POST /v1/place and presents in HELLO and RESUME, and what the server keeps in the
 * session to find the reservation made for it.  Both sides check a key the same way, here:
 * the guest because the orchestrator's answer is untrusted, the server because the guest is.
 * It ends up in log lines, so it is plain text without spaces or control characters. */
#ifndef TANDEM_PROTO_PLACEMENT_KEY_H
#define TANDEM_PROTO_PLACEMENT_KEY_H

#include <stdbool.h>
#include <stddef.h>

#include "tandem_rpc.h"

/* Room for the longest key and its NUL. */
#define TDM_PLACEMENT_KEY_SIZE (TDM_MAX_PLACEMENT + 1)

/* Whether key (len bytes, no NUL needed) is a key: 1 to TDM_MAX_PLACEMENT bytes of letters,
 * digits, '.', '_', ':' and '-'. */
bool tdm_placement_key_ok(const char *key, size_t len);

#endif
