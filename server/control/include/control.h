/* The server's control socket (`tandem-server --control PATH`; issue 17,
 * docs/adr/0002-control-plane.md, docs/node-agent.md): a Unix stream socket, mode 0600, on
 * which the node agent reserves placements, sets SM shares and reads statistics, one JSON
 * object a line each way.  Served on a thread of its own; a bad line gets an error answer and
 * touches no session. */
#ifndef TANDEM_SERVER_CONTROL_H
#define TANDEM_SERVER_CONTROL_H

#include "server.h"

typedef struct tdm_control tdm_control;

/* Listens on PATH (a stale socket file there is replaced; one a live process answers on is
 * not) and gives srv its reservation table (srv->reservations).  After tdm_server_start,
 * before the first session.  0, or -errno after logging why. */
int tdm_control_start(tdm_control **out, tdm_server *srv, const char *path);
/* Stops answering, removes the socket file; srv->reservations is gone after it.  After the
 * last session ended (HELLO may take reservations until then).  NULL does nothing. */
void tdm_control_stop(tdm_control *c);

#endif
