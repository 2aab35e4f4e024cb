/* Protecting a session: syncing everything it holds to the standby, then
 * the live feed (mirror_sync.c). */
#ifndef TANDEM_RESILIENCE_MIRROR_SYNC_H
#define TANDEM_RESILIENCE_MIRROR_SYNC_H

#include <stdbool.h>
#include <stdint.h>

#include "session.h"

/* Protects the session with the server's standby when there is one and the
 * guest wants it (policy): the standby is told everything the session
 * holds.  A session with work must be idle; the caller then begins an
 * epoch.  Nothing to do when it is protected by the live standby already.
 * True when the session is protected on return. */
bool tdm_mirror_sync_protect(tdm_session *s, int policy);
/* Fail-back: quiesces the session at the guest's call seq, syncs it to the
 * mirror's server if needed and hands it over there.  True when done; the
 * caller then tells the guest where to resume and lets the session go. */
bool tdm_mirror_sync_handoff(tdm_session *s, uint64_t seq, int policy);

#endif
