/* The TCP server's whole receive path for one connection: record marking
 * (recstream.c), the call message, the procedure number and the arguments
 * (rpc_server.c), and the replies it sends back.  The input is what a guest
 * wrote to its socket; the server reads it from the other end of a socket
 * pair until the input ends, a frame is malformed, or a reply fails. */
#include <stdint.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fuzz_program.h"

/* The input is written whole before the server reads; it must fit in the
 * socket's buffer (the replies too: each is smaller than its call). */
#define INPUT_LIMIT (64u << 10)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char why[256];
    int sv[2];

    if (size > INPUT_LIMIT)
        return 0;
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
        abort();
    if (write(sv[0], data, size) != (ssize_t)size)
        abort();
    shutdown(sv[0], SHUT_WR);   /* the guest sends nothing more */
    (void)tdm_rpc_serve(fuzz_program(), NULL, sv[1], why, sizeof(why));
    close(sv[0]);
    close(sv[1]);
    return 0;
}
