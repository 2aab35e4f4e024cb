/* A single-producer/single-consumer ring of frames in shared memory.
 *
 * Each side keeps its own position (the producer's head, the consumer's
 * tail) in private memory and only publishes it to the region; what it
 * reads of the peer's index is read once into a local and validated before
 * use, since the peer may be a hostile guest: an index beyond the ring's
 * capacity, one that goes backwards or is misaligned, or a frame longer than
 * what the producer published is reported as corruption, never followed. */
#ifndef TANDEM_PROTO_SHM_RING_H
#define TANDEM_PROTO_SHM_RING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shm_layout.h"
#include "shm_wait.h"

enum {
    TDM_SHM_OK = 0,
    TDM_SHM_EMPTY = 1,         /* recv without waiting: nothing there */
    TDM_SHM_CORRUPT = -2,      /* the peer's index or a frame header is impossible */
    TDM_SHM_TOO_BIG = -3,      /* a message over the receiver's limit */
    TDM_SHM_NOMEM = -4,
    /* TDM_SHM_WAIT_DEAD (shm_wait.h): the peer is gone */
};

typedef struct tdm_shm_ring {
    tdm_shm_ring_ctl *ctl;     /* in the region */
    uint8_t *bytes;            /* in the region, cap bytes */
    uint64_t cap, mask;        /* private copies, validated at attach */
    uint64_t pos;              /* producer: head; consumer: tail */
    uint64_t seen;             /* the peer's index as last validated */
    char why[160];             /* what was wrong, after TDM_SHM_CORRUPT */
} tdm_shm_ring;

/* A private buffer messages are received into. */
typedef struct tdm_shm_msg {
    uint8_t *p;
    size_t len, cap;
} tdm_shm_msg;

/* `ctl` is followed by `cap` ring bytes; cap is a power of two >= 4096
 * (the caller has validated it).  Positions start at 0. */
void tdm_shm_ring_attach(tdm_shm_ring *r, void *ctl, uint64_t cap);

/* Producer: appends one message (split into frames of at most cap/4
 * bytes), waiting for room when the ring is full.  alive as in
 * tdm_shm_wait.  TDM_SHM_OK, TDM_SHM_CORRUPT or TDM_SHM_WAIT_DEAD. */
int tdm_shm_ring_send(tdm_shm_ring *r, const void *msg, size_t len, tdm_shm_alive alive, void *alive_arg);

/* Consumer: takes one whole message into m (grown as needed, never past
 * max bytes).  Without `wait` it returns TDM_SHM_EMPTY when no frame is
 * there.  TDM_SHM_OK or an error above. */
int tdm_shm_ring_recv(tdm_shm_ring *r, tdm_shm_msg *m, size_t max, bool wait, tdm_shm_alive alive,
                      void *alive_arg);

/* Consumer: waits for one whole message and copies it into m as recv does, but gives nothing
 * back to the producer: the ring's published tail stays where it was, so that whoever attaches
 * the ring next (at position 0) reads the same message.  Only r's private position moves.  The
 * front of a server with a process per tenant reads a guest's HELLO this way before it hands
 * the region to the tenant's process (server/front/isolate.c). */
int tdm_shm_ring_peek(tdm_shm_ring *r, tdm_shm_msg *m, size_t max, tdm_shm_alive alive, void *alive_arg);

/* Empties the ring for a new peer: head, tail and both waitpoints back to
 * 0 in the region, and r attached afresh.  Only for the region's owner once
 * its peer is gone (a takeover: the new server attaches at position 0). */
void tdm_shm_ring_restart(tdm_shm_ring *r);

/* Bytes the producer has published that the consumer has not taken, as the
 * consumer sees them (for messages about a dead peer). */
uint64_t tdm_shm_ring_unread(const tdm_shm_ring *r);

void tdm_shm_msg_free(tdm_shm_msg *m);

#endif
