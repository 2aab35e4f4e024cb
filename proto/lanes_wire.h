/* What travels on a TCP lane (docs/protocol.md, "Striping over several
 * connections"), shared by the guest's transport and the server.
 *
 * A lane opens with a preamble: the magic, the session's id and the secret
 * of its LANE_TICKET; the server answers with the lane's index (4 bytes) or
 * closes it.  The magic's first byte can never begin an ONC RPC call record
 * (it would be a non-last fragment of over a GiB), so the listener tells a
 * lane from a session's main connection by its first bytes.  After that, a
 * lane carries parts: a 16-byte header (xfer, len, offset, big-endian) and
 * len bytes; a header of len 0 is an end mark.
 *
 * A piece (an upload's MEMCPY_HTOD_LANES, a download's 4 MiB of staging)
 * is cut into parts of TDM_LANE_PART bytes at multiples of it (the last one
 * shorter), and each lane takes the next part not yet taken whenever it is
 * free, so a lane that gets less CPU carries less and no lane waits for a
 * slow one.  The receiver checks that each part is one of the piece's, and
 * takes each lane's end mark: after an upload's piece every lane sends one
 * (the server then checks that every part came, once); after a download's
 * last piece the server sends one on every lane.
 *
 * A download part whose len has TDM_LANE_ACK set asks the guest to send
 * its header back (len without the flag) on that lane once it has the
 * bytes: the server spliced them from its staging (tcp_send.h) and may
 * reuse that only then. */
#ifndef TANDEM_PROTO_LANES_WIRE_H
#define TANDEM_PROTO_LANES_WIRE_H

#include <arpa/inet.h>
#include <stdint.h>
#include <string.h>

#define TDM_LANE_MAGIC "TDMLANE1"
#define TDM_LANE_MAGIC_LEN 8
#define TDM_LANE_PREAMBLE_LEN (TDM_LANE_MAGIC_LEN + 8 + 32)
#define TDM_LANE_HDR_LEN 16
/* In a download part's len: acknowledge it (the rest of len is the size). */
#define TDM_LANE_ACK 0x80000000u

static inline void tdm_lane_put64(unsigned char *p, uint64_t v)
{
    uint32_t hi = htonl((uint32_t)(v >> 32)), lo = htonl((uint32_t)v);
    memcpy(p, &hi, 4);
    memcpy(p + 4, &lo, 4);
}

static inline uint64_t tdm_lane_get64(const unsigned char *p)
{
    uint32_t hi, lo;
    memcpy(&hi, p, 4);
    memcpy(&lo, p + 4, 4);
    return ((uint64_t)ntohl(hi) << 32) | ntohl(lo);
}

static inline void tdm_lane_put32(unsigned char *p, uint32_t v)
{
    v = htonl(v);
    memcpy(p, &v, 4);
}

static inline uint32_t tdm_lane_get32(const unsigned char *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return ntohl(v);
}

typedef struct tdm_lane_hdr {
    uint32_t xfer, len;
    uint64_t off;
} tdm_lane_hdr;

static inline void tdm_lane_hdr_put(unsigned char p[TDM_LANE_HDR_LEN], tdm_lane_hdr h)
{
    tdm_lane_put32(p, h.xfer);
    tdm_lane_put32(p + 4, h.len);
    tdm_lane_put64(p + 8, h.off);
}

static inline tdm_lane_hdr tdm_lane_hdr_get(const unsigned char p[TDM_LANE_HDR_LEN])
{
    return (tdm_lane_hdr){ tdm_lane_get32(p), tdm_lane_get32(p + 4), tdm_lane_get64(p + 8) };
}

/* Parts: page-aligned in the staging, few enough per piece for a 64-bit
 * mask of those received, large enough that a part's header and system
 * calls cost little next to its bytes. */
#define TDM_LANE_PART ((uint64_t)512 << 10)

/* An upload's piece over the lanes: at most a part per bit of the
 * receiver's mask.  Larger than a MEMCPY_HTOD's TDM_MAX_CHUNK: the guest
 * sends consecutive chunks of one copy as one piece, so that each lane has
 * several parts to balance and the server's turn between pieces (answer,
 * next call, wake the lanes) comes four times less often (docs/protocol.md,
 * "Pieces of several chunks"). */
#define TDM_LANE_PIECE_MAX (64 * TDM_LANE_PART)

/* The part of a piece of n bytes at off: its length, 0 past the end. */
static inline uint64_t tdm_lane_part_len(uint64_t n, uint64_t off)
{
    return off < n ? (n - off < TDM_LANE_PART ? n - off : TDM_LANE_PART) : 0;
}

#endif
