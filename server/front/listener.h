/* Accepts guest connections on TCP and serves each on its own thread, one
 * session per connection.  Returns when a stop is requested. */
#ifndef TANDEM_SERVER_LISTENER_H
#define TANDEM_SERVER_LISTENER_H

#include <signal.h>
#include <stdbool.h>

#include "server.h"

typedef struct tdm_listener_config {
    const char *host;         /* address to bind; "127.0.0.1" by default */
    int port;                 /* 0 = any free port */
    const char *port_file;    /* if set, the bound port is written there */
    const char *shm_name;     /* if set, also serve shm:NAME (abstract socket @tandem-shm-NAME) */
    /* ---- a process per tenant (issue 16, isolate.h) ---- */
    /* The front: each connection, once it spoke, goes to route (fd stays the listener's to
     * close) instead of a session of this process. */
    void (*route)(void *ctx, int fd, bool shm, long uid, const char *peer);
    void *route_ctx;
    /* A tenant's process: >= 0, connections come from the front on this socket (handoff.h)
     * instead of a listening socket, and the process stops when the front goes; endpoint and
     * shm_endpoint are the front's, which guests connect to. */
    int handoff_fd;
    const char *endpoint, *shm_endpoint;
} tdm_listener_config;

/* Serves one shm guest connected on unix socket fd, on the calling thread:
 * takes its region, runs its session, releases both (listener_shm.c).  uid:
 * the guest's user, for a tenant bound to one (issue 16).  region_fd >= 0: the
 * front of a server with a process per tenant made the handshake and hands the
 * region's memfd (closed here) with the socket. */
void tdm_listener_serve_shm(tdm_server *srv, int fd, const char *peer, long uid, int region_fd);

/* Serves until *stop becomes non-zero (set from a signal handler); the
 * listener polls it at least every 200 ms.  0 on a clean stop. */
int tdm_listener_run(tdm_server *srv, const tdm_listener_config *cfg, volatile sig_atomic_t *stop);

#endif
