/* The session's connection to its current server.
 *
 * One per client (client.c); the takeover logic (resume/) points it at
 * another server when this one dies or hands the session on.  Every
 * function here is called with the client's lock held. */
#ifndef TANDEM_GUEST_CONN_H
#define TANDEM_GUEST_CONN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#include "placement_key.h"
#include "token.h"
#include "transport.h"

typedef struct tdm_conn {
    tdm_transport *t;      /* NULL before the first call and once the session is lost */
    uint64_t session;      /* the session's id on that server */
    unsigned gen;          /* bumped each time t is pointed at another server */
    bool broken;           /* lost for good: calls fail at once */
    cudaError_t lost_err;  /* what calls get once it is lost (0: cudaErrorDevicesUnavailable) */
    tdm_guest_token token; /* the tenant's credential, presented at HELLO and every RESUME (issue 16) */
    /* ---- on-boarding (issue 17) ---- */
    char placement[TDM_PLACEMENT_KEY_SIZE]; /* the orchestrator's key, presented like the token; "" without */
} tdm_conn;

/* A call or post on c's transport, with the XDR types of proc's row of
 * proto/calls.def.  TDM_T_OK, the transport's error, or TDM_T_REJECTED for
 * a procedure the table does not have. */
int tdm_conn_call(tdm_conn *c, uint32_t proc, void *args, void *res);
int tdm_conn_post(tdm_conn *c, uint32_t proc, void *args);

/* What a guest is told when its connection ends under it (issue 16): the server may have closed
 * it on purpose (an idle session, a frame that stalled, a stop), and only its log says which. */
#define TDM_CONN_LOST_HINT "the server closed the connection or went away; the server's log says why " \
                           "(e.g. its --idle-timeout or --frame-timeout, or it stopped)"

/* The placement key as HELLO and RESUME carry it (pointing into c; empty without one). */
tdm_placement tdm_conn_placement(tdm_conn *c);

/* What calls get once the session is lost. */
cudaError_t tdm_conn_lost_error(const tdm_conn *c);
/* Marks the session lost, saying why the first time; the error calls get. */
cudaError_t tdm_conn_fail(tdm_conn *c, const char *why);
/* Points c at the server at `to` (a standby, or the new active of a
 * fail-back).  An shm session keeps its region, where the program's pinned
 * memory lives: that server gets the same one.  0, or -1 with a reason in
 * err. */
int tdm_conn_reconnect(tdm_conn *c, const char *to, char *err, size_t len);
/* After a failed takeover.  A dead shm connection stays, its region mapped
 * (the program's pinned memory); its calls fail at once. */
void tdm_conn_drop(tdm_conn *c);

#endif
