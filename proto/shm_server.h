/* Server side of the shm transport for one session: the handshake that
 * takes the guest's region, and the loop that serves the calls arriving in
 * its guest->server ring with the same procedure table as TCP
 * (tdm_rpc_serve_one), replying through the server->guest ring. */
#ifndef TANDEM_PROTO_SHM_SERVER_H
#define TANDEM_PROTO_SHM_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rpc_server.h"
#include "shm_region.h"
#include "shm_ring.h"
#include "wire_timeouts.h"

/* Message buffers larger than this are given back once their call is
 * served: one large call (a code image) does not keep its size for the
 * connection's life (issue 16). */
#define TDM_SHM_KEEP_BYTES (1u << 20)

typedef struct tdm_shm_conn {
    int sock;                 /* the guest's unix socket: closed = guest gone */
    tdm_shm_region region;    /* our mapping and our copy of the geometry */
    tdm_shm_ring rx, tx;      /* guest->server (we consume), server->guest (we produce) */
    tdm_shm_msg in;           /* the message being served, copied out of the ring */
    uint8_t *out;             /* encoded reply */
    size_t out_cap;
    bool tx_corrupt;
    /* ---- time limits on the wire (issue 16) ---- */
    const tdm_wire_timeouts *limits; /* NULL: wait as long as it takes; the caller's, read at every wait */
    uint64_t msg_start;       /* rx position where the message being received began */
    uint64_t seen_pos;        /* rx position at the last look, and when it last moved */
    uint64_t since_ns;
    tdm_wire_timeout timed_out;
} tdm_shm_conn;

/* Receives the guest's region on sock, validates and maps it (at most
 * max_size bytes), and tells the guest the verdict.  0, or -1 with the
 * reason in why (the guest was told too).  sock stays the caller's. */
int tdm_shm_conn_accept(tdm_shm_conn *c, int sock, uint64_t max_size, char *why, size_t whylen);

/* The same, keeping the region's memfd open for the caller in *region_fd (to hand it on) when
 * it returns 0. */
int tdm_shm_conn_accept_keep(tdm_shm_conn *c, int sock, uint64_t max_size, int *region_fd, char *why,
                             size_t whylen);

/* The second half of accept: validates and maps the region of region_fd (a memfd the guest sent
 * on sock, which the caller keeps and closes) and attaches both rings at position 0, without
 * the handshake on sock: a tenant's process adopts a guest whose handshake the server's front
 * made (server/front/isolate.c).  0, or -1 with the reason in why. */
int tdm_shm_conn_adopt(tdm_shm_conn *c, int sock, int region_fd, uint64_t max_size, char *why, size_t whylen);

/* Serves until the guest goes away, corrupts the rings, sends a malformed
 * message, or a handler ends the session. */
tdm_rpc_end tdm_shm_serve(const tdm_rpc_program *p, void *ctx, tdm_shm_conn *c, char *why, size_t whylen);

/* Unmaps the region and frees the buffers (not the socket). */
void tdm_shm_conn_release(tdm_shm_conn *c);

/* Our address of [off, off+len) when it lies wholly inside the region's
 * data area or host memory area, else NULL.  Guests name memory by these
 * offsets only. */
void *tdm_shm_conn_span(const tdm_shm_conn *c, uint64_t off, uint64_t len);

/* Reports a copy's completion to the guest: err, then ticket, in slot.
 * -1 when slot is not one of the region's slots. */
int tdm_shm_conn_complete(tdm_shm_conn *c, uint32_t slot, uint32_t ticket, int err);

#endif
