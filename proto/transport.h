/* Guest side of a transport: carries XDR-encoded calls of the Tandem program.
 *
 * call() is synchronous: everything posted before it is delivered first, in
 * order, and it returns when the reply is decoded into `res` (free it with
 * xdr_free(xres, res)).  post() is one-way: the server never replies, and an
 * error it causes comes back from a later call().  Neither is thread-safe; the
 * guest library serializes them. */
#ifndef TANDEM_PROTO_TRANSPORT_H
#define TANDEM_PROTO_TRANSPORT_H

#include <stddef.h>
#include <stdint.h>
#include <rpc/rpc.h>
#include <stdbool.h>

typedef enum {
    TDM_T_OK = 0,
    TDM_T_BROKEN = -1,   /* connection lost: the server is gone */
    TDM_T_REJECTED = -2, /* the server refused the call (garbage args, no such procedure) */
} tdm_transport_status;

typedef struct tdm_transport tdm_transport;

typedef struct tdm_transport_ops {
    int (*call)(tdm_transport *t, uint32_t proc, xdrproc_t xargs, void *args,
                xdrproc_t xres, void *res);
    int (*post)(tdm_transport *t, uint32_t proc, xdrproc_t xargs, void *args);
    void (*close)(tdm_transport *t);
    /* post() of one piece of a host-to-device copy of copy_bytes in all
     * (MEMCPY_HTOD): TCP decides on the copy's size, not the piece's,
     * whether its pieces go over the lanes, so a large copy's tail goes
     * with the rest (docs/protocol.md, "Striping over several
     * connections").  `more`: pieces of the same copy follow this one, so
     * the transport may return before the server took this one (TCP
     * pipelines a copy's pieces over the lanes); the last piece returns
     * once the server took every piece, the program's buffer free again.
     * NULL: the transport treats every piece alike. */
    int (*post_piece)(tdm_transport *t, uint32_t proc, xdrproc_t xargs, void *args, uint64_t copy_bytes,
                      bool more);
} tdm_transport_ops;

struct tdm_transport {
    const tdm_transport_ops *ops;
    char desc[300];      /* the endpoint, for messages */
    char why[160];       /* what the last TDM_T_BROKEN met, for messages ("" when unknown) */
};

/* Opens a transport to `endpoint` (see endpoint.h).  0 on success; otherwise
 * -1 and a one-line reason in err. */
int tdm_transport_open(const char *endpoint, tdm_transport **out, char *err, size_t errlen);

int tdm_transport_tcp_open(const char *host, int port, tdm_transport **out, char *err, size_t errlen);

/* shm:NAME (docs/shm-transport.md): creates this session's region with
 * $TANDEM_SHM_HOST_MB MiB of host memory (default 256) and hands it to the
 * server listening as NAME. */
int tdm_transport_shm_open(const char *name, tdm_transport **out, char *err, size_t errlen);

struct tdm_shm_region;
/* The shared region behind t, or NULL when t is not an shm transport.  The
 * guest library places pinned host memory and copy chunks in it. */
const struct tdm_shm_region *tdm_transport_shm_region(const tdm_transport *t);
/* Takeover of an shm session (docs/shm-transport.md): points t, whose
 * server is gone, at the shm endpoint `endpoint` (shm:NAME), handing that
 * server the same region, so the program's pinned memory stays where it is.
 * Both rings start empty again; the completion slots keep their tickets.
 * 0; or -1 with a reason in err, and t is dead: its calls fail at once. */
int tdm_transport_shm_reattach(tdm_transport *t, const char *endpoint, char *err, size_t errlen);
/* Hangs up on t's server for good, leaving t dead (its calls fail at once)
 * with its region still mapped: the program's pinned memory lives there. */
void tdm_transport_shm_drop(tdm_transport *t);
/* Waits until completion slot `slot` holds `ticket` (a copy that asked for
 * a completion is done) and gives its error.  Safe beside call()/post()
 * from another thread.  TDM_T_OK, or TDM_T_BROKEN when the server is gone. */
int tdm_transport_shm_wait_slot(tdm_transport *t, uint32_t slot, uint32_t ticket, int *err);

#endif
