/* Accepts guest connections on TCP and serves each on its own thread, one
 * session per connection.  Returns when a stop is requested. */
#ifndef TANDEM_SERVER_LISTENER_H
#define TANDEM_SERVER_LISTENER_H

#include <signal.h>

#include "server.h"

typedef struct tdm_listener_config {
    const char *host;         /* address to bind; "127.0.0.1" by default */
    int port;                 /* 0 = any free port */
    const char *port_file;    /* if set, the bound port is written there */
} tdm_listener_config;

/* Serves until *stop becomes non-zero (set from a signal handler); the
 * listener polls it at least every 200 ms.  0 on a clean stop. */
int tdm_listener_run(tdm_server *srv, const tdm_listener_config *cfg, volatile sig_atomic_t *stop);

#endif
