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

#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "endpoint.h"
#include "shm_region.h"
#include "xdr_extra.h"
#include "shm_ring.h"
#include "shm_socket.h"
#include "shm_watch.h"
#include "tandem_rpc.h"

#define MAX_REPLY ((size_t)512 << 20)
#define LET_GO_MS 5000   /* how long a server that lost its session may take to stop serving the region */

typedef struct shm_transport {
    tdm_transport base;
    tdm_shm_region region;     /* region.fd stays open: a takeover hands it to the standby */
    tdm_shm_ring tx, rx;       /* guest->server (we produce), server->guest (we consume) */
    /* Read by a thread waiting on a slot while a takeover (under the
     * guest's connection lock) replaces it. */
    _Atomic int sock;
    atomic_bool dead;          /* between servers after a failed takeover */
    tdm_shm_watch watch;       /* wakes our waiters the moment the server's socket closes */
    uint32_t xid;
    char *buf;                 /* encoded call */
    size_t cap;
    tdm_shm_msg reply;
} shm_transport;

static bool server_alive(void *arg)
{
    shm_transport *st = arg;

    return !atomic_load(&st->dead) && !tdm_shm_watch_gone(&st->watch) && tdm_shm_peer_alive(atomic_load(&st->sock));
}

/* Every waitpoint this side sleeps on: replies, ring space, completion
 * slots.  Without a watcher a dead server is still noticed, a sleep slice
 * later. */
static void watch_server(shm_transport *st)
{
    tdm_shm_waitpoint *wps[2 + TDM_SHM_MAX_SLOTS];
    tdm_shm_slot *slots = (tdm_shm_slot *)tdm_shm_at(&st->region, st->region.g.slots_off);
    size_t n = 0;

    wps[n++] = &st->rx.ctl->data_wait;
    wps[n++] = &st->tx.ctl->space_wait;
    for (uint32_t i = 0; i < st->region.g.nslots && i < TDM_SHM_MAX_SLOTS; i++)
        wps[n++] = &slots[i].wait;
    tdm_shm_watch_start(&st->watch, atomic_load(&st->sock), wps, n);
}

static int ring_status(int rc)
{
    return rc == TDM_SHM_OK ? TDM_T_OK : TDM_T_BROKEN;
}

static int send_call(shm_transport *st, uint32_t proc, xdrproc_t xargs, void *args)
{
    struct rpc_msg m;
    size_t n;

    if (atomic_load(&st->dead))
        return TDM_T_BROKEN;
    ++st->xid;
    /* Straight into the buffer, which the largest call so far has sized: xdr_sizeof's two more
     * passes over the arguments (a third of a launch's guest instructions) only for a call that
     * does not fit.  One that fits and still fails cannot be encoded. */
    if (!tdm_rpc_encode_call(st->buf, st->cap, st->xid, proc, xargs, args, &n)) {
        tdm_rpc_call_msg(&m, st->xid, proc);
        size_t need = xdr_sizeof((xdrproc_t)xdr_callmsg, &m) + xdr_sizeof(xargs, args);

        if (need <= st->cap)
            return TDM_T_REJECTED;
        char *p = realloc(st->buf, need);
        if (!p)
            return TDM_T_BROKEN;
        st->buf = p;
        st->cap = need;
        if (!tdm_rpc_encode_call(st->buf, st->cap, st->xid, proc, xargs, args, &n))
            return TDM_T_REJECTED;
    }
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
    int sock = atomic_load(&st->sock);

    tdm_shm_watch_stop(&st->watch);
    if (sock >= 0)
        close(sock);
    tdm_shm_region_release(&st->region);
    tdm_shm_msg_free(&st->reply);
    free(st->buf);
    free(st);
}

static const tdm_transport_ops shm_ops = { shm_call, shm_post, shm_close, NULL };

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
    atomic_init(&st->sock, -1);
    atomic_init(&st->dead, false);
    st->region.fd = -1;
    if (tdm_shm_region_create(&st->region, host_bytes(), err, errlen))
        goto fail;
    atomic_store(&st->sock, tdm_shm_connect(name, err, errlen));
    if (atomic_load(&st->sock) < 0)
        goto fail;
    if (tdm_shm_offer_region(atomic_load(&st->sock), st->region.fd, st->region.g.size, err, errlen))
        goto fail;
    tdm_shm_ring_attach(&st->tx, tdm_shm_at(&st->region, st->region.g.ring_off[TDM_SHM_G2S]),
                        st->region.g.ring_cap[TDM_SHM_G2S]);
    tdm_shm_ring_attach(&st->rx, tdm_shm_at(&st->region, st->region.g.ring_off[TDM_SHM_S2G]),
                        st->region.g.ring_cap[TDM_SHM_S2G]);
    watch_server(st);
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

/* Marks t dead and hangs up on its server.  wait_ms > 0: then waits that
 * long for the server to close its end, which it does once it stopped
 * serving the region (a dead one has).  True when it did. */
static bool hang_up(shm_transport *st, int wait_ms)
{
    int sock;
    bool gone = true;

    atomic_store(&st->dead, true);
    tdm_shm_watch_stop(&st->watch);
    sock = atomic_exchange(&st->sock, -1);
    if (sock < 0)
        return true;
    if (wait_ms > 0) {
        struct pollfd p = { .fd = sock, .events = POLLIN };
        char c;

        /* The server sends nothing after the handshake: readable means
         * its end closed. */
        shutdown(sock, SHUT_WR);
        gone = poll(&p, 1, wait_ms) > 0 && recv(sock, &c, 1, MSG_DONTWAIT) <= 0;
    }
    close(sock);
    return gone;
}

void tdm_transport_shm_drop(tdm_transport *t)
{
    if (t->ops == &shm_ops)
        hang_up((shm_transport *)t, 0);
}

int tdm_transport_shm_reattach(tdm_transport *t, const char *endpoint, char *err, size_t errlen)
{
    shm_transport *st = (shm_transport *)t;
    tdm_endpoint ep;
    int sock;

    if (t->ops != &shm_ops) {
        snprintf(err, errlen, "not an shm connection");
        return -1;
    }
    /* Until the new server takes the region nothing may be sent, and a
     * thread waiting on a slot must not sleep forever.  The old server
     * (alive when the session moves) must have stopped reading the rings
     * before they start again. */
    if (!hang_up(st, LET_GO_MS)) {
        snprintf(err, errlen, "the old server did not let go of the region within %d ms", LET_GO_MS);
        return -1;
    }
    if (tdm_endpoint_parse(endpoint, &ep, err, errlen) != 0)
        return -1;
    if (ep.kind != TDM_EP_SHM) {
        snprintf(err, errlen, "%s is no shm endpoint (the program's pinned memory lives in its shm region)",
                 endpoint);
        return -1;
    }
    /* The dead server's unread calls are in the guest's journal (or are
     * the call to retry), its unread replies answered calls that are retried:
     * both rings start again at 0, as the new server expects. */
    tdm_shm_ring_restart(&st->tx);
    tdm_shm_ring_restart(&st->rx);
    sock = tdm_shm_connect(ep.name, err, errlen);
    if (sock < 0)
        return -1;
    /* The new server validates the region as the first one did. */
    if (tdm_shm_offer_region(sock, st->region.fd, st->region.g.size, err, errlen)) {
        close(sock);
        return -1;
    }
    atomic_store(&st->sock, sock);
    watch_server(st);
    atomic_store(&st->dead, false);
    snprintf(st->base.desc, sizeof(st->base.desc), "shm:%s", ep.name);
    return 0;
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
    if (atomic_load(&st->dead))
        return TDM_T_BROKEN;
    a.slot = (tdm_shm_slot *)tdm_shm_at(&st->region, st->region.g.slots_off) + slot;
    a.ticket = ticket;
    if (tdm_shm_wait(&a.slot->wait, slot_done, &a, server_alive, st) != 0)
        return TDM_T_BROKEN;
    *err = atomic_load_explicit(&a.slot->err, memory_order_relaxed);
    return TDM_T_OK;
}
