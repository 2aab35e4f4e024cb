/* The front of a server with a process per tenant (server/front/first_call.c) reads a guest's
 * first TCP record, or its first shm message, before any process serves it, to learn whose it
 * is: the record's bounds, then the call header and a HELLO's or RESUME's arguments.  The input
 * is the bytes a guest sends first, in a buffer of exactly their size. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "first_call.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tdm_first_call fc;
    char why[200];
    long n = tdm_first_record_length(data, size, why, sizeof(why));

    if (n > (long)size || n > TDM_FIRST_CALL_MAX)
        abort();
    /* As the front does over TCP: the record without its mark ... */
    if (n > 4 && tdm_first_call_decode(data + 4, (size_t)n - 4, &fc, why, sizeof(why)) == 0 &&
        fc.token_len > sizeof(fc.token))
        abort();
    /* ... and over shm: the whole message. */
    if (tdm_first_call_decode(data, size, &fc, why, sizeof(why)) == 0 && fc.token_len > sizeof(fc.token))
        abort();
    return 0;
}
