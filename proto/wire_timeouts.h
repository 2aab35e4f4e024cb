/* Time limits on what a guest sends (issue 16), shared by the TCP and shm
 * servers: a peer that stops in the middle of a frame (a TCP record, an shm
 * message) for frame_s seconds is cut off, and so is one that sends no new
 * frame for idle_s seconds.  0 lifts a limit.  The server reads them at
 * every wait, so a session's tenant may change them once admitted. */
#ifndef TANDEM_PROTO_WIRE_TIMEOUTS_H
#define TANDEM_PROTO_WIRE_TIMEOUTS_H

#include <stdint.h>

typedef struct tdm_wire_timeouts {
    uint32_t frame_s;   /* stalled in the middle of a frame */
    uint32_t idle_s;    /* nothing sent between frames */
} tdm_wire_timeouts;

/* Why a connection was cut off, if it was. */
typedef enum {
    TDM_WIRE_IN_TIME = 0,
    TDM_WIRE_STALLED,   /* frame_s */
    TDM_WIRE_IDLE,      /* idle_s */
} tdm_wire_timeout;

/* Which limit applies to a wait (in the middle of a frame or between
 * frames) that has lasted waited_ns: the timeout it ran into, or
 * TDM_WIRE_IN_TIME.  t NULL: no limits. */
tdm_wire_timeout tdm_wire_timed_out(const tdm_wire_timeouts *t, int mid_frame, uint64_t waited_ns);

/* "stalled in the middle of a frame for 30 s (--frame-timeout)" and the
 * like, for the line that says why a connection closed. */
void tdm_wire_timeout_why(const tdm_wire_timeouts *t, tdm_wire_timeout why, char *out, size_t len);

/* CLOCK_MONOTONIC in ns. */
uint64_t tdm_wire_now_ns(void);

#endif
