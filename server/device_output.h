/* Device output: what a session's kernels print (device printf, the
 * message of a failing device assert), kept for the session's guest.
 *
 * The driver (and the sim backend, alike) writes device output through C
 * stdio in the thread that synchronizes.  The server's `stdout` and
 * `stderr` are streams of ours (tdm_device_output_install): a write goes to
 * the buffer of the session the writing thread is serving at that moment
 * (tdm_device_output_serve), else to the server's own fd, with a loud log
 * line when it came from a thread that serves guests.  Each session's
 * buffer is bounded, as the driver's printf FIFO is: what does not fit is
 * dropped and noted once.  docs/device-output.md. */
#ifndef TANDEM_SERVER_DEVICE_OUTPUT_H
#define TANDEM_SERVER_DEVICE_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct tdm_device_output tdm_device_output;

/* Bytes written to one of the program's streams (1 stdout, 2 stderr). */
typedef struct tdm_output_piece {
    int fd;
    char *bytes;
    size_t len;
} tdm_output_piece;

/* A buffer of at most max_bytes bytes in at most max_pieces pieces, for
 * session `session` (named in the log when output is dropped). */
int tdm_device_output_create(uint64_t session, size_t max_bytes, size_t max_pieces, tdm_device_output **out);
void tdm_device_output_destroy(tdm_device_output *o);
void tdm_device_output_append(tdm_device_output *o, int fd, const char *p, size_t n);
bool tdm_device_output_pending(tdm_device_output *o);
/* Moves what the buffer holds to the caller (who frees each piece's
 * bytes and the array) and the count of bytes dropped since the last take. */
int tdm_device_output_take(tdm_device_output *o, tdm_output_piece **pieces, size_t *n, uint64_t *dropped);

/* The buffer that output written by this thread belongs to from now on
 * (NULL: none). */
void tdm_device_output_serve(tdm_device_output *o);

/* Replaces the process's stdout and stderr with the routing streams
 * (unbuffered, so every write is routed in the thread that made it).  The
 * calling thread is the server's own: its writes with no session are the
 * server's and pass through quietly.  0, or -errno. */
int tdm_device_output_install(void);

#endif
