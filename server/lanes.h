/* A session's TCP lanes, server side (docs/protocol.md, "Striping over
 * several connections").
 *
 * One tdm_lanes per TCP connection that carries a session (the listener
 * makes it and ends it with the connection).  Each lane is a connection of
 * its own, served by its own thread (the listener's), which does only what
 * the session's thread asks: receive its slice of an upload into the
 * session's staging, or send its slice of a download from it.  The
 * session's thread still issues every device copy, in stream order. */
#ifndef TANDEM_SERVER_LANES_H
#define TANDEM_SERVER_LANES_H

#include <stdbool.h>
#include <stdint.h>

typedef struct tdm_lanes tdm_lanes;

tdm_lanes *tdm_lanes_create(void);
/* Shuts every lane down and waits for their threads to leave; then frees. */
void tdm_lanes_close(tdm_lanes *l);

/* LANE_TICKET: the secret lanes of session_id must show (made once).  The
 * lanes attached so far are shut down first (the guest asks before it opens
 * a new set), so new ones are numbered from 0. */
int tdm_lanes_ticket(tdm_lanes *l, uint64_t session_id, unsigned char *secret, unsigned *max_lanes);
/* Whether a preamble's id and secret are this session's (constant time in
 * the secret). */
bool tdm_lanes_match(tdm_lanes *l, uint64_t session_id, const unsigned char *secret);
/* Adds fd as the next lane: its index, or -1 with a reason (too many, the
 * lanes are closing, or failed and no new ticket was asked for). */
int tdm_lanes_attach(tdm_lanes *l, int fd, const char **why);
/* The lane's thread: serves its jobs until the session ends or the lane
 * fails.  The caller closes fd afterwards. */
void tdm_lanes_serve(tdm_lanes *l, int index, uint64_t session_id);

/* Called by the session's thread.  Each returns 0, or TDM_ERR_LANE_FAILED
 * when the lanes are not what the call says (nlanes) or one failed: the
 * lanes are then shut down, and no lane thread touches buf any more. */
int tdm_lanes_recv(tdm_lanes *l, unsigned nlanes, uint32_t xfer, void *buf, uint64_t n);
int tdm_lanes_send(tdm_lanes *l, unsigned nlanes, uint32_t xfer, const void *buf, uint64_t off, uint64_t n);
/* Ends a download's parts on every lane. */
int tdm_lanes_send_end(tdm_lanes *l, unsigned nlanes, uint32_t xfer);

#endif
