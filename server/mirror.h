/* Active side of the mirror feed (mirror_wire.h): the connection to this
 * server's standby.  Messages from all sessions go out under one lock, so
 * the standby sees them in the order the sessions made the changes.  If the
 * standby goes away the server keeps serving, unprotected, and says so once. */
#ifndef TANDEM_SERVER_MIRROR_H
#define TANDEM_SERVER_MIRROR_H

#include <stdbool.h>
#include <stdint.h>

#include "mirror_wire.h"

typedef struct tdm_mirror tdm_mirror;

/* Connects to the standby listening on unix socket `path` and exchanges
 * HELLO.  0, or -1 after printing why. */
int tdm_mirror_connect(tdm_mirror **out, const char *path, uint64_t arena_base, uint64_t arena_size);
void tdm_mirror_close(tdm_mirror *m);
/* Where guests resume when this server dies; "" once the standby is gone. */
const char *tdm_mirror_endpoint(tdm_mirror *m);
/* Sends one message; fd (or -1) is not closed.  A failure marks the feed
 * dead.  0 or -1. */
int tdm_mirror_post(tdm_mirror *m, const tdm_mirror_hdr *h, const void *payload, int fd);

#endif
