/* The first call of a guest connection, read for routing only (issue 16): the front of a server
 * with a process per tenant (isolate.c) must know whose a connection is before any process
 * serves it, and a guest's first call is its HELLO (or, resuming, its RESUME), which carries the
 * tenant's token.  Nothing here authenticates: the tenant's process checks the token again,
 * in constant time, as every server does (tenants.c). */
#ifndef TANDEM_SERVER_FIRST_CALL_H
#define TANDEM_SERVER_FIRST_CALL_H

#include <stddef.h>
#include <stdint.h>

#include "tandem_rpc.h"

/* The longest first call the front reads: a HELLO is a few hundred bytes (its client name is
 * "pid-N"); a longer first frame is no guest's and is refused unread. */
#define TDM_FIRST_CALL_MAX 4096

typedef struct tdm_first_call {
    uint32_t proc;                           /* TDM_HELLO or TDM_RESUME */
    uint32_t token_len;
    unsigned char token[TDM_MAX_TOKEN];
} tdm_first_call;

/* Decodes msg (len bytes: one ONC RPC call message of the Tandem program, as the shm ring
 * carries it) as a HELLO or RESUME and copies its token out.  0; or -1 with why: not a call of
 * the Tandem program, another procedure, arguments that do not decode. */
int tdm_first_call_decode(const void *msg, size_t len, tdm_first_call *out, char *why, size_t whylen);

/* TCP: the bytes of record (RFC 5531 record marking: a 4-byte header, last-fragment bit and
 * length) that starts at rec, of which have bytes are there.  Returns the whole record's length
 * with its header once it is complete and a single fragment, 0 while more must come, -1 with why
 * for a first record over TDM_FIRST_CALL_MAX or split in fragments (no guest sends either). */
long tdm_first_record_length(const void *rec, size_t have, char *why, size_t whylen);

#endif
