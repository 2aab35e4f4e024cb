/* Guest side of the shm transport.
 *
 * A call is encoded as an ONC RPC call message (the same bytes TCP would
 * carry, without record marking) into a private buffer and appended to the
 * guest->server ring; a synchronous call then waits for its reply in the
 * server->guest ring.  A one-way call returns as soon as its frames are in
 * the ring: the guest blocks only when the ring is full.  Nothing needs
 * flushing: the server sees a frame the moment its head index is published
 * (and is woken if it announced that it sleeps). */
#include "transport.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shm_region.h"
#include "shm_ring.h"
#include "shm_socket.h"
#include "tandem_rpc.h"

#define MAX_REPLY ((size_t)512 << 20)

typedef struct shm_transport {
    tdm_transport base;
    tdm_shm_region region;
    tdm_shm_ring tx, rx;       /* guest->server (we produce), server->guest (we consume) */
    int sock;
    uint32_t xid;
    char *buf;                 /* encoded call */
    size_t cap;
    tdm_shm_msg reply;
} shm_transport;

static bool server_alive(void *arg)
{
    shm_transport *st = arg;

    return tdm_shm_peer_alive(st->sock);
}

static int ring_status(int rc)
{
    return rc == TDM_SHM_OK ? TDM_T_OK : TDM_T_BROKEN;
}

static int send_call(shm_transport *st, uint32_t proc, xdrproc_t xargs, void *args)
{
    struct rpc_msg m;
    size_t n;
    XDR x;
    bool ok;

    memset(&m, 0, sizeof(m));
    m.rm_xid = ++st->xid;
    m.rm_direction = CALL;
    m.rm_call.cb_rpcvers = RPC_MSG_VERSION;
    m.rm_call.cb_prog = TANDEM_PROG;
    m.rm_call.cb_vers = TANDEM_V1;
    m.rm_call.cb_proc = proc;
    m.rm_call.cb_cred = _null_auth;
    m.rm_call.cb_verf = _null_auth;
    n = xdr_sizeof((xdrproc_t)xdr_callmsg, &m) + xdr_sizeof(xargs, args);
    if (n > st->cap) {
        char *p = realloc(st->buf, n);
        if (!p)
            return TDM_T_BROKEN;
        st->buf = p;
        st->cap = n;
    }
    xdrmem_create(&x, st->buf, (u_int)n, XDR_ENCODE);
    ok = xdr_callmsg(&x, &m) && xargs(&x, args);
    n = xdr_getpos(&x);
    xdr_destroy(&x);
    if (!ok)
        return TDM_T_REJECTED;
    return ring_status(tdm_shm_ring_send(&st->tx, st->buf, n, server_alive, st));
}

static int shm_call(tdm_transport *t, uint32_t proc, xdrproc_t xargs, void *args, xdrproc_t xres, void *res)
{
    shm_transport *st = (shm_transport *)t;
    char verf[MAX_AUTH_BYTES];
    struct rpc_msg r;
    int rc = send_call(st, proc, xargs, args);
    XDR x;
    bool ok;

    if (rc != TDM_T_OK)
        return rc;
    rc = tdm_shm_ring_recv(&st->rx, &st->reply, MAX_REPLY, true, server_alive, st);
    if (rc != TDM_SHM_OK)
        return TDM_T_BROKEN;
    memset(&r, 0, sizeof(r));
    r.acpted_rply.ar_verf.oa_base = verf;
    r.acpted_rply.ar_results.where = res;
    r.acpted_rply.ar_results.proc = xres;
    xdrmem_create(&x, (char *)st->reply.p, (u_int)st->reply.len, XDR_DECODE);
    ok = xdr_replymsg(&x, &r);
    xdr_destroy(&x);
    if (!ok)
        return TDM_T_REJECTED;   /* as CANTDECODERES over TCP */
    if (r.rm_xid != st->xid || r.rm_direction != REPLY)
        return TDM_T_BROKEN;     /* replies come in order: anything else is a broken stream */
    if (r.rm_reply.rp_stat != MSG_ACCEPTED || r.acpted_rply.ar_stat != SUCCESS)
        return TDM_T_REJECTED;
    return TDM_T_OK;
}

static int shm_post(tdm_transport *t, uint32_t proc, xdrproc_t xargs, void *args)
{
    return send_call((shm_transport *)t, proc, xargs, args);
}

static void shm_close(tdm_transport *t)
{
    shm_transport *st = (shm_transport *)t;

    if (st->sock >= 0)
        close(st->sock);
    tdm_shm_region_release(&st->region);
    tdm_shm_msg_free(&st->reply);
    free(st->buf);
    free(st);
}

static const tdm_transport_ops shm_ops = { shm_call, shm_post, shm_close };

static uint64_t host_bytes(void)
{
    const char *e = getenv("TANDEM_SHM_HOST_MB");
    char *end = NULL;
    unsigned long long mb = e && *e ? strtoull(e, &end, 10) : TDM_SHM_DEFAULT_HOST_MB;

    if (e && *e && (!end || *end))
        mb = TDM_SHM_DEFAULT_HOST_MB;
    return (uint64_t)mb << 20;
}

int tdm_transport_shm_open(const char *name, tdm_transport **out, char *err, size_t errlen)
{
    shm_transport *st = calloc(1, sizeof(*st));

    if (!st) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    st->sock = -1;
    st->region.fd = -1;
    if (tdm_shm_region_create(&st->region, host_bytes(), err, errlen))
        goto fail;
    st->sock = tdm_shm_connect(name, err, errlen);
    if (st->sock < 0)
        goto fail;
    if (tdm_shm_offer_region(st->sock, st->region.fd, st->region.g.size, err, errlen))
        goto fail;
    /* The server has its own reference now. */
    close(st->region.fd);
    st->region.fd = -1;
    tdm_shm_ring_attach(&st->tx, tdm_shm_at(&st->region, st->region.g.ring_off[TDM_SHM_G2S]),
                        st->region.g.ring_cap[TDM_SHM_G2S]);
    tdm_shm_ring_attach(&st->rx, tdm_shm_at(&st->region, st->region.g.ring_off[TDM_SHM_S2G]),
                        st->region.g.ring_cap[TDM_SHM_S2G]);
    st->base.ops = &shm_ops;
    snprintf(st->base.desc, sizeof(st->base.desc), "shm:%s", name);
    *out = &st->base;
    return 0;
fail:
    shm_close(&st->base);
    return -1;
}

const struct tdm_shm_region *tdm_transport_shm_region(const tdm_transport *t)
{
    return t && t->ops == &shm_ops ? &((const shm_transport *)t)->region : NULL;
}

typedef struct slot_arg {
    tdm_shm_slot *slot;
    uint32_t ticket;
} slot_arg;

static int slot_done(void *arg)
{
    slot_arg *a = arg;

    return atomic_load_explicit(&a->slot->done, memory_order_acquire) == a->ticket;
}

int tdm_transport_shm_wait_slot(tdm_transport *t, uint32_t slot, uint32_t ticket, int *err)
{
    shm_transport *st = (shm_transport *)t;
    slot_arg a;

    if (t->ops != &shm_ops || slot >= st->region.g.nslots)
        return TDM_T_REJECTED;
    a.slot = (tdm_shm_slot *)tdm_shm_at(&st->region, st->region.g.slots_off) + slot;
    a.ticket = ticket;
    if (tdm_shm_wait(&a.slot->wait, slot_done, &a, server_alive, st) != 0)
        return TDM_T_BROKEN;
    *err = atomic_load_explicit(&a.slot->err, memory_order_relaxed);
    return TDM_T_OK;
}
