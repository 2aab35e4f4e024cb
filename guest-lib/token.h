/* The tenant's credential a guest presents to a server started with --tenants (issue 16):
 * TANDEM_TOKEN, or the first line of the file TANDEM_TOKEN_FILE names.  Read once, at the first
 * connection, and sent in HELLO and every RESUME; never logged. */
#ifndef TANDEM_GUEST_TOKEN_H
#define TANDEM_GUEST_TOKEN_H

#include <stddef.h>
#include <stdint.h>

#include "tandem_rpc.h"

typedef struct tdm_guest_token {
    char bytes[TDM_MAX_TOKEN];
    uint32_t len;                /* 0: none given (a server without tenants wants none) */
} tdm_guest_token;

/* Reads the token from the environment.  0 (len 0 when neither variable is set), or -1 with
 * why: the file cannot be read, or the token is longer than the protocol carries. */
int tdm_guest_token_load(tdm_guest_token *t, char *why, size_t whylen);

/* The token as HELLO and RESUME carry it (pointing into t). */
tdm_token tdm_guest_token_wire(tdm_guest_token *t);

#endif
