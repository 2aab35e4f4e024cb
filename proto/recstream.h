/* An XDR stream over a socket with ONC RPC record marking (RFC 5531 s.11),
 * for bulk data over TCP (docs/protocol.md, "Bulk data over TCP").
 *
 * The same bytes on the wire as libtirpc's xdrrec, read and written
 * differently: xdrrec moves every byte through its own buffer, refilled and
 * drained a few hundred KiB at a time, so a copy's payload is copied once
 * more than needed and costs many more system calls.  Here an opaque of at
 * least TDM_RECSTREAM_DIRECT bytes goes between the socket and its final
 * place directly: decoded with recv() straight into the destination (after
 * what the buffer already held), encoded as a fragment of its own written
 * from the caller's memory.  Everything smaller is buffered as before. */
#ifndef TANDEM_PROTO_RECSTREAM_H
#define TANDEM_PROTO_RECSTREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <rpc/rpc.h>

#include "wire_timeouts.h"

/* Below this, a copy through the buffer costs less than a system call. */
#define TDM_RECSTREAM_DIRECT (64u << 10)

typedef struct tdm_recstream {
    int fd;
    /* Never read past the current fragment: the stream then leaves the
     * socket positioned right after the record, for another reader (the
     * guest takes one reply off clnt_vc's socket this way). */
    bool bounded;
    bool eof, error;          /* the input ended / a system call failed */
    char *in;                 /* buffered input: in[in_pos, in_end) */
    size_t in_size, in_pos, in_end;
    uint32_t frag_left;       /* bytes of the current input fragment not yet taken */
    bool last_frag;           /* the current input fragment ends its record */
    char *out;                /* out[0, 4) is the fragment header, filled at flush */
    size_t out_size, out_len;
    u_int pos;                /* bytes coded in this record, for XDR_GETPOS */
    /* ---- time limits on the wire (issue 16) ---- */
    const tdm_wire_timeouts *limits; /* NULL: wait as long as it takes */
    uint32_t rcvtimeo_s;      /* SO_RCVTIMEO as last set: the smaller limit */
    bool between;             /* waiting for a record's first bytes (idle), not inside one */
    uint64_t since_ns;        /* the last bytes received, or the wait's start */
    tdm_wire_timeout timed_out; /* why the input ended, when a limit ended it (eof is set too) */
} tdm_recstream;

/* Sets up rs on fd with buffers of bufsize bytes each (bufsize >= 64) and
 * points xdrs at it.  0, or -1 when out of memory. */
int tdm_recstream_create(tdm_recstream *rs, XDR *xdrs, int fd, size_t bufsize, bool bounded);
void tdm_recstream_destroy(tdm_recstream *rs);
/* Input: from now on a peer that stalls in a record, or sends no record, for
 * longer than t allows ends the input (eof, with timed_out saying which).
 * t stays the caller's and is read at every record, so it may change. */
void tdm_recstream_set_timeouts(tdm_recstream *rs, const tdm_wire_timeouts *t);

/* Input: skips what is left of the current record and positions at the
 * next one, its first fragment header read (as xdrrec_skiprecord, which
 * reads it lazily).  FALSE when the input ended or the header is bad. */
bool_t tdm_recstream_next_record(XDR *xdrs);
/* Input: skips what is left of the current record only (a bounded stream
 * then leaves the socket at the next record).  FALSE when the input ended. */
bool_t tdm_recstream_skip_record(XDR *xdrs);
/* Output: forgets what is buffered of a record that could not be encoded
 * (nothing of it was sent while it stayed under the buffer's size). */
void tdm_recstream_drop_output(XDR *xdrs);
/* Output: sends what is buffered as the record's last fragment.  FALSE
 * when the socket write failed. */
bool_t tdm_recstream_end_record(XDR *xdrs);

/* Writes all of iov[0, n) to a socket (MSG_NOSIGNAL: a peer that went away
 * is an error, not SIGPIPE); iov is used up.  0 or -1. */
struct iovec;
int tdm_recstream_send_all(int fd, struct iovec *iov, int n);
/* ---- tcp lanes (issue 14) ---- */
/* Receives exactly n bytes into p (MSG_WAITALL, going on after a signal):
 * 0, or -1 when the peer went away or the socket failed. */
int tdm_recstream_recv_all(int fd, void *p, size_t n);

#endif
