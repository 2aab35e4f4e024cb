/* A guest's TCP lanes (docs/protocol.md, "Striping over several
 * connections"): extra connections of its session that carry the bytes of
 * large copies in parallel, one thread each.  Used by transport_tcp.c,
 * under its io_lock, so one copy at a time. */
#ifndef TANDEM_PROTO_TCP_LANES_H
#define TANDEM_PROTO_TCP_LANES_H

#include <stddef.h>
#include <stdint.h>

#include "tcp_send.h"

typedef struct tdm_tcp_lanes tdm_tcp_lanes;

/* Jobs posted and not yet done at most: an upload's pieces in flight
 * (transport_tcp.c pipelines that many), or one download. */
#define TDM_TCP_LANE_JOBS 4

/* Opens up to `want` lanes to host:port for session `sid`, one after the
 * other, whose uploads are sent the `send` way (tcp_send.h).  The number
 * opened (0: none, *out NULL), a reason in err when fewer than wanted. */
int tdm_tcp_lanes_open(const char *host, int port, uint64_t sid, const unsigned char *secret, unsigned want,
                       tdm_tx_mode send, tdm_tcp_lanes **out, char *err, size_t errlen);
unsigned tdm_tcp_lanes_count(const tdm_tcp_lanes *l);
/* Starts sending buf[0..n) split over the lanes as parts of xfer, after
 * the jobs posted before it; returns at once, or once the oldest of
 * TDM_TCP_LANE_JOBS pending jobs is done.  buf must stay as it is until the
 * server has it all (with splice the sockets refer to its pages until
 * then). */
void tdm_tcp_lanes_send(tdm_tcp_lanes *l, uint32_t xfer, const void *buf, uint64_t n);
/* Starts receiving a download's parts of xfer into buf[0..n), until every
 * lane has its end mark. */
void tdm_tcp_lanes_recv(tdm_tcp_lanes *l, uint32_t xfer, void *buf, uint64_t n);
/* Waits for every job posted: 0, or -1 when a lane failed (it is shut
 * down). */
int tdm_tcp_lanes_wait(tdm_tcp_lanes *l);
/* Shuts the lanes down so that a job blocked on them ends (failed). */
void tdm_tcp_lanes_abort(tdm_tcp_lanes *l);
/* Stops the threads and closes the lanes. */
void tdm_tcp_lanes_close(tdm_tcp_lanes *l);

#endif
