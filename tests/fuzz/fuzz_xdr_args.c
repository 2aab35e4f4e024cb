/* XDR decoding of every procedure's arguments, as the server decodes what
 * a guest sends.  The first two bytes pick a row of proto/calls.def (through
 * tdm_calls, so a new call is fuzzed without touching this file); the rest
 * is decoded with that row's argument decoder from memory, then freed as the
 * server frees it.  A decoder that reads past the input, writes past the
 * argument structure, or leaks what it allocated is a finding. */
#include <stdint.h>
#include <stdlib.h>

#include "calls.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const tdm_call_info *c;
    void *args;
    XDR x;

    if (size < 2)
        return 0;
    c = &tdm_calls[(data[0] | (size_t)data[1] << 8) % tdm_ncalls];
    /* Exactly the row's size, not the largest: AddressSanitizer then sees
     * a decoder that writes past its own structure. */
    args = calloc(1, c->args_size);
    if (!args)
        abort();
    xdrmem_create(&x, (char *)data + 2, (u_int)(size - 2), XDR_DECODE);
    (void)c->xargs(&x, args);
    /* Freed whether or not it decoded: a failed decode leaves what it
     * allocated so far for XDR_FREE, as tdm_rpc_serve_one frees it. */
    x.x_op = XDR_FREE;
    c->xargs(&x, args);
    xdr_destroy(&x);
    free(args);
    return 0;
}
