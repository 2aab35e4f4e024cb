/* The guest's memory calls sent by hand over a raw transport (the TCP
 * bulk and lanes tests): allocate, upload in TDM_MAX_CHUNK one-way calls as
 * the guest library does, read back in one MEMCPY_DTOH_STREAM; and a
 * seeded byte pattern to copy. */
#ifndef TANDEM_TEST_RAW_CALLS_H
#define TANDEM_TEST_RAW_CALLS_H

#include <stddef.h>
#include <stdint.h>

#include "transport.h"

uint64_t th_raw_malloc(tdm_transport *t, uint64_t size);
void th_raw_write(tdm_transport *t, uint64_t dst, const unsigned char *src, size_t n);
/* The error before the payload, or the one after; 0 when every byte came. */
int th_raw_read(tdm_transport *t, uint64_t src, void *dst, uint64_t n, uint64_t stream);
void th_fill(unsigned char *p, size_t n, unsigned seed);

#endif
