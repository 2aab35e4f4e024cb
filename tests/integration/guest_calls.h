/* Calls of a guest speaking the protocol directly (th_guest_open), for the
 * tests that check what the server refuses. */
#ifndef TANDEM_TEST_GUEST_CALLS_H
#define TANDEM_TEST_GUEST_CALLS_H

#include <stdint.h>

#include "tandem_rpc.h"
#include "transport.h"

/* A call of proc with arguments a (coded by xa) whose reply is an error
 * code (th_call_int) or a handle and its error (th_call_handle); the test
 * fails if the transport does (harness.c). */
int th_call_int(tdm_transport *t, uint32_t proc, xdrproc_t xa, void *a);
tdm_handle_res th_call_handle(tdm_transport *t, uint32_t proc, xdrproc_t xa, void *a);

#endif
