/* The unix socket of the shm transport.
 *
 * `tandem-server --shm NAME` listens on the abstract unix socket
 * "@tandem-shm-NAME" (Linux abstract namespace: no file to clean up, scoped
 * to the network namespace).  A guest connects, sends its region's memfd
 * with SCM_RIGHTS and a small hello, and gets a verdict back.  The
 * connection then stays open for the life of the session: the calls
 * themselves travel through the region, and the socket only tells each side
 * that the other is gone (it reads as closed). */
#ifndef TANDEM_PROTO_SHM_SOCKET_H
#define TANDEM_PROTO_SHM_SOCKET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct tdm_shm_hello {
    uint64_t magic;         /* TDM_SHM_MAGIC */
    uint32_t version;       /* TDM_SHM_VERSION */
    uint32_t reserved;
    uint64_t region_size;
} tdm_shm_hello;

typedef struct tdm_shm_verdict {
    int32_t status;         /* 0: accepted */
    char msg[252];          /* why not */
} tdm_shm_verdict;

/* Listening socket for NAME; -1 and a reason in err. */
int tdm_shm_listen(const char *name, char *err, size_t errlen);
int tdm_shm_connect(const char *name, char *err, size_t errlen);

/* Guest: sends the hello with the region's fd, then reads the verdict.
 * 0 when accepted; -1 with the server's reason (or the failure) in err. */
int tdm_shm_offer_region(int sock, int region_fd, uint64_t region_size, char *err, size_t errlen);

/* Server: receives the hello and exactly one fd (closing any extra).  0 and
 * *fd (the caller's to close), or -1 and a reason. */
int tdm_shm_take_region(int sock, tdm_shm_hello *hello, int *fd, char *err, size_t errlen);
int tdm_shm_send_verdict(int sock, int status, const char *msg);

/* False once the peer closed its end (or the socket failed). */
bool tdm_shm_peer_alive(int sock);

#endif
