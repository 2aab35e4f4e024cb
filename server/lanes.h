/* A session's TCP lanes, server side (docs/protocol.md, "Striping over
 * several connections").
 *
 * One tdm_lanes per TCP connection that carries a session (the listener
 * makes it and ends it with the connection).  Each lane is a connection of
 * its own, served by its own thread (the listener's), which does only what
 * the session's thread asks: receive the parts of an upload the guest sent
 * on it into the session's staging, or send parts of a download from it,
 * taking them as it is free.  The session's thread still issues every
 * device copy, in stream order. */
#ifndef TANDEM_SERVER_LANES_H
#define TANDEM_SERVER_LANES_H

#include <stdbool.h>
#include <stdint.h>

#include "tcp_send.h"

typedef struct tdm_lanes tdm_lanes;

/* send: how the lanes send downloads (--tcp-send; tcp_send.h).  With
 * splice, each lane's last part of a piece asks the guest to acknowledge
 * it, and the piece's job is done only once every lane's was: until then
 * the socket still refers to the staging's pages. */
tdm_lanes *tdm_lanes_create(tdm_tx_mode send);
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
 * lanes are then shut down, and no lane thread touches any buffer of the
 * session's jobs any more. */
/* Receives an upload's piece of n bytes (at most TDM_LANE_PIECE_MAX) into
 * seg[0], seg[1], ..., TDM_MAX_CHUNK bytes each (the last one the rest):
 * each lane takes the parts the guest sent on it until its end mark; the
 * piece is done when every lane's came and every part of it came once
 * (lanes_wire.h).  seg NULL (or nlanes 0): the lanes fail, and the bytes
 * the guest sent for it go with them. */
int tdm_lanes_recv(tdm_lanes *l, unsigned nlanes, uint32_t xfer, unsigned char *const *seg, uint64_t n);
/* tdm_lanes_recv in steps, so that each staging buffer goes to the device
 * as soon as its bytes are in: _start posts the job (its number in *job);
 * _segment waits until seg[i]'s parts have all landed (0), or the lanes
 * failed or the piece ended without them (TDM_ERR_LANE_FAILED: _finish says
 * which and logs it); _finish waits for every lane's end mark and checks
 * the piece, as tdm_lanes_recv does.  A buffer sent to the device before a
 * piece fails holds the guest's own bytes for its place: the guest's sending
 * the piece again on its main connection writes the same bytes there. */
int tdm_lanes_recv_start(tdm_lanes *l, unsigned nlanes, uint32_t xfer, unsigned char *const *seg, uint64_t n,
                         uint64_t *job);
int tdm_lanes_recv_segment(tdm_lanes *l, uint64_t job, unsigned i);
int tdm_lanes_recv_finish(tdm_lanes *l, uint64_t job);
/* An upload's piece is about to be answered: counts it (in the log line
 * of what the lanes carried) when a lane has bytes to read already, which
 * only a guest that sends the next piece before this answer makes. */
void tdm_lanes_note_answer(tdm_lanes *l);
/* Starts sending buf[0..n), bytes off.. of a download, and returns at once
 * with the job's number in *job: the lanes take its parts as each is free, one job after the other without waiting
 * for each other, so the next piece may be posted before this one went.
 * At most TDM_LANE_JOBS jobs are pending: a further post waits for the
 * oldest.  buf must stay as it is until tdm_lanes_wait(job) returned. */
int tdm_lanes_post_send(tdm_lanes *l, unsigned nlanes, uint32_t xfer, const void *buf, uint64_t off, uint64_t n,
                        uint64_t *job);
/* Waits until job (and every job before it) is done: its bytes are in the
 * sockets (plain), or the guest acknowledged them (splice).  0 or
 * TDM_ERR_LANE_FAILED. */
int tdm_lanes_wait(tdm_lanes *l, uint64_t job);
/* Ends a download's parts on every lane, after the jobs before it. */
int tdm_lanes_send_end(tdm_lanes *l, unsigned nlanes, uint32_t xfer);

/* Pending jobs at most. */
#define TDM_LANE_JOBS 4

#endif
