/* How the bytes of a large copy leave for a TCP socket (docs/protocol.md,
 * "Striping over several connections", "Send modes"): shared by the guest's
 * lanes, the server's lanes and bench/loopback (tcp-loopback), so that the
 * bench measures the code the copies run.
 *
 * plain     sendmsg: the kernel copies the bytes into its socket buffers
 *           (and the receiver copies them out again: two copies a byte).
 * splice    vmsplice(2) of the pages into a pipe, splice(2) from the pipe
 *           into the socket: the socket's buffers refer to the sender's
 *           pages, and only the receiver copies.  The pages stay referred
 *           to until the receiver has read them (and TCP has its ack), so
 *           the caller must not change the bytes before the receiver
 *           confirmed it has them; tdm_tx_send returning says nothing
 *           about that.
 * zerocopy  MSG_ZEROCOPY: the kernel pins the pages and reports when it is
 *           done with them.  On loopback it copies them anyway when it
 *           delivers them to the local socket, so it gains nothing there;
 *           kept to be measured.  tdm_tx_send waits for the report, so the
 *           bytes may change once it returns.
 *
 * Splice and zerocopy fall back to plain sends whenever the kernel or the
 * memory does not allow them (no pipe, vmsplice or splice refused, EINVAL,
 * ENOSYS...): the bytes on the wire are the same, in the same order, only
 * the way they got there differs.  Errors of the socket itself (the peer
 * went, SO_SNDTIMEO ran out) are the caller's, as with send.
 *
 * A splice to a socket whose peer went may raise SIGPIPE: callers ignore
 * or block it (the server ignores it, the guest's lane threads block every
 * signal). */
#ifndef TANDEM_PROTO_TCP_SEND_H
#define TANDEM_PROTO_TCP_SEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum { TDM_TX_PLAIN, TDM_TX_SPLICE, TDM_TX_ZEROCOPY } tdm_tx_mode;

/* One socket's sender state: one thread uses it at a time. */
typedef struct tdm_tx {
    tdm_tx_mode mode;         /* what is tried first at each send */
    int pipe_r, pipe_w;       /* splice: made at the first send, -1 before and after a failure */
    size_t pipe_bytes;        /* what the pipe holds at most */
    bool zc_on;               /* SO_ZEROCOPY set on the socket */
    uint32_t zc_sent, zc_done;/* zerocopy sends made, and reported done */
    /* Payload bytes sent each way so far (tests, bench). */
    uint64_t spliced, zerocopied, copied;
    uint64_t fallbacks;       /* sends that fell back to plain part of the way */
    unsigned fail_vmsplice;   /* test hook (tdm_tx_fail_splices) */
} tdm_tx;

void tdm_tx_init(tdm_tx *tx, tdm_tx_mode mode);
/* Closes the pipe (the socket is the caller's). */
void tdm_tx_fini(tdm_tx *tx);

/* "plain", "splice", "zerocopy": 0, or -EINVAL for anything else. */
int tdm_tx_mode_parse(const char *s, tdm_tx_mode *out);
const char *tdm_tx_mode_name(tdm_tx_mode m);

/* Sends head[0..hlen) (copied: it may live on the caller's stack) and then
 * buf[0..n) on the blocking socket fd, all of it: 0, or -errno (-EAGAIN
 * when SO_SNDTIMEO ran out, -EPIPE when the peer closed). */
int tdm_tx_send(tdm_tx *tx, int fd, const void *head, size_t hlen, const void *buf, size_t n);

/* Test hook: the next `n` vmsplice calls of this tx fail with EINVAL, as
 * on a kernel or memory that refuses them. */
void tdm_tx_fail_splices(tdm_tx *tx, unsigned n);

#endif
