/* Which chunks of an upload travel as one lane piece (docs/protocol.md,
 * "Pieces of several chunks"): the transport's decision at each chunk, on
 * its own so that its table can be tested (tests/unit/test_lane_gather.c). */
#ifndef TANDEM_PROTO_LANE_GATHER_H
#define TANDEM_PROTO_LANE_GATHER_H

#include <stdbool.h>
#include <stdint.h>

/* A run of bytes to upload: len bytes from src to device address dst on
 * stream (the gathered piece so far, or the chunk at hand). */
typedef struct tdm_gather_run {
    uint64_t dst, stream;
    const char *src;
    uint64_t len;
} tdm_gather_run;

typedef struct tdm_gather_step {
    bool join;   /* the chunk joins the gathered piece; else that piece goes first and the chunk starts a new one */
    bool hold;   /* the piece (with the chunk) waits for the next chunk; else it goes now */
} tdm_gather_step;

/* The step for chunk `next` after the gathered piece `acc` (len 0: none):
 * it joins when it continues acc (the next bytes of the same buffer, to the
 * next device bytes, on the same stream) and the two fit in piece_max; the
 * piece is held while more chunks of the copy follow (`more`) and one more
 * of chunk_max bytes would still fit. */
tdm_gather_step tdm_lane_gather_step(tdm_gather_run acc, tdm_gather_run next, bool more, uint64_t piece_max,
                                     uint64_t chunk_max);

#endif
