/* A guest connection handed from the server's front to a tenant's process (issue 16,
 * isolate.c): the connection's descriptor (and, for shm, its region's memfd) travels with
 * SCM_RIGHTS over a SOCK_SEQPACKET pair, with what the front learnt of the peer. */
#ifndef TANDEM_SERVER_HANDOFF_H
#define TANDEM_SERVER_HANDOFF_H

#include <stdint.h>

enum { TDM_HANDOFF_TCP = 1, TDM_HANDOFF_SHM = 2 };

typedef struct tdm_handoff {
    uint32_t kind;      /* TDM_HANDOFF_TCP: conn is a TCP socket whose bytes nobody read yet;
                         * TDM_HANDOFF_SHM: conn is the guest's unix socket after its handshake,
                         * and region its memfd, whose rings nobody consumed from yet */
    int32_t uid;        /* the shm guest's user (SO_PEERCRED); -1 over TCP */
    char peer[128];     /* for the log */
} tdm_handoff;

/* 0, or -errno.  region_fd: -1 for TCP.  The caller keeps (and closes) its descriptors. */
int tdm_handoff_send(int sock, const tdm_handoff *h, int conn_fd, int region_fd);
/* 0 with *conn_fd (and *region_fd for shm, else -1), the receiver's to close; -ENOTCONN when
 * the front is gone (the pair closed); other -errno, or -EPROTO for a message that is no
 * handoff, which closes what it carried. */
int tdm_handoff_recv(int sock, tdm_handoff *h, int *conn_fd, int *region_fd);

#endif
