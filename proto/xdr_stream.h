/* Bulk device-to-host data over a stream transport (TCP): the reply of
 * MEMCPY_DTOH_STREAM (docs/protocol.md, "Bulk data over TCP").
 *
 * On the wire:  int err | unsigned hyper size | size bytes (padded to 4) | int copy_err
 * size is 0 when the server refused the copy (err says why), else what the
 * guest asked for.  The coder never looks at err, so flags a layer sets in
 * it (device output's TDM_ERR_OUTPUT_PENDING) cannot change the framing.
 * The server commits to size bytes before it has copied them all, so an
 * error met while copying goes into copy_err at the end (the bytes from
 * there on are zeros).
 *
 * Hand-written rather than generated, because neither side holds the whole
 * payload in an XDR array: the server pulls it chunk by chunk from the
 * device while encoding (the socket send of one chunk overlapping the
 * device copy of the next), and the guest decodes straight into the
 * program's buffer. */
#ifndef TANDEM_PROTO_XDR_STREAM_H
#define TANDEM_PROTO_XDR_STREAM_H

#include <stddef.h>
#include <stdint.h>
#include <rpc/rpc.h>

/* Server: gives the next chunk of the payload at byte offset `off` (at most
 * `max` bytes), or NULL with *err set when the copy failed (the encoder
 * then sends zeros for the rest).  The chunk stays valid until the next
 * call. */
typedef const void *(*tdm_stream_next_fn)(void *source, uint64_t off, size_t max, size_t *got, int *err);

typedef struct tdm_dtoh_stream_res {
    int err;                  /* before the payload */
    uint64_t size;            /* guest: what it asked for; server: what it sends (0: refused) */
    int copy_err;             /* after the payload */
    char *buf;                /* guest: where the payload goes */
    uint64_t got;             /* guest: what came (size or 0) */
    tdm_stream_next_fn next;  /* server: where it comes from */
    void *source;
} tdm_dtoh_stream_res;

bool_t xdr_tdm_dtoh_stream_res(XDR *xdrs, tdm_dtoh_stream_res *r);

#endif
