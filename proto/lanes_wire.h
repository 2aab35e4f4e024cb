/* What travels on a TCP lane (docs/protocol.md, "Striping over several
 * connections"), shared by the guest's transport and the server.
 *
 * A lane opens with a preamble: the magic, the session's id and the secret
 * of its LANE_TICKET; the server answers with the lane's index (4 bytes) or
 * closes it.  The magic's first byte can never begin an ONC RPC call record
 * (it would be a non-last fragment of over a GiB), so the listener tells a
 * lane from a session's main connection by its first bytes.  After that, a
 * lane carries parts: a 16-byte header (xfer, len, offset, big-endian) and
 * len bytes; a header of len 0 ends a download's parts on that lane.
 *
 * Who sends which part is fixed by the call, so neither side needs to
 * search: a piece of `n` bytes at `base` is split over `nlanes` lanes into
 * contiguous slices of tdm_lane_slice bytes (the last ones shorter or
 * empty), slice i on the lane of index i. */
#ifndef TANDEM_PROTO_LANES_WIRE_H
#define TANDEM_PROTO_LANES_WIRE_H

#include <arpa/inet.h>
#include <stdint.h>
#include <string.h>

#define TDM_LANE_MAGIC "TDMLANE1"
#define TDM_LANE_MAGIC_LEN 8
#define TDM_LANE_PREAMBLE_LEN (TDM_LANE_MAGIC_LEN + 8 + 32)
#define TDM_LANE_HDR_LEN 16

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

/* Slices are multiples of 4 KiB (page-aligned in the staging) unless one
 * slice holds it all. */
static inline uint64_t tdm_lane_slice(uint64_t n, unsigned nlanes)
{
    uint64_t s = (n + nlanes - 1) / nlanes;
    return nlanes > 1 ? (s + 4095) & ~(uint64_t)4095 : s;
}

/* Lane i's slice of a piece of n bytes: [*off, *off + return). */
static inline uint64_t tdm_lane_part(uint64_t n, unsigned nlanes, unsigned i, uint64_t *off)
{
    uint64_t s = tdm_lane_slice(n, nlanes), start = s * i;
    *off = start < n ? start : n;
    return start < n ? (n - start < s ? n - start : s) : 0;
}

#endif
