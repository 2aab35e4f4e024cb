/* Active side of the mirror feed (mirror_wire.h): the connection to this
 * server's standby.  Messages from all sessions go out under one lock, so
 * the standby sees them in the order the sessions made the changes.
 *
 * The connection comes and goes: when the standby dies the server keeps
 * serving, unprotected, and a background thread connects again as soon as
 * a standby listens at the path (a new one started, or the path changed by
 * a fail-back).  Each connection has its own generation; a session is
 * protected by the generation it was synced to, and a message for an older
 * generation is not sent (that standby never heard of the session). */
#ifndef TANDEM_RESILIENCE_MIRROR_H
#define TANDEM_RESILIENCE_MIRROR_H

#include <stdbool.h>
#include <stdint.h>

#include "mirror_wire.h"

typedef struct tdm_mirror tdm_mirror;

/* Mirrors to the standby listening on unix socket `path`.  required: the
 * first connection must succeed now (an active that was told to have a
 * standby refuses to start without one); otherwise it is made when the
 * standby appears.  0, or -1 after logging why. */
int tdm_mirror_open(tdm_mirror **out, const char *path, uint64_t arena_base, uint64_t arena_size, bool required);
void tdm_mirror_close(tdm_mirror *m);
/* From now on connect to `path` instead (the current connection ends). */
void tdm_mirror_retarget(tdm_mirror *m, const char *path);
/* The live connection's generation, 0 while there is none. */
uint64_t tdm_mirror_gen(tdm_mirror *m);
/* Where guests of a transport (shm, or else tcp) resume when this server
 * dies, for connection `gen`; false when that connection is gone, or for
 * shm when the standby serves none. */
bool tdm_mirror_endpoint(tdm_mirror *m, uint64_t gen, bool shm, char *out, size_t len);
/* Sends one message on connection `gen`; fd (or -1) is not closed.  A
 * failure ends the connection.  0, or -errno (-ENOTCONN when gen is not
 * live). */
int tdm_mirror_post(tdm_mirror *m, uint64_t gen, const tdm_mirror_hdr *h, const void *payload, int fd);

#endif
