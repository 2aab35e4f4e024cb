#include "shm_server.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shm_socket.h"
#include "tandem_rpc.h"

/* The largest call: a fat binary plus its names. */
#define MAX_CALL ((size_t)TDM_MAX_FATBIN + (16u << 20))

static bool guest_alive(void *arg)
{
    tdm_shm_conn *c = arg;

    return tdm_shm_peer_alive(c->sock);
}

int tdm_shm_conn_accept(tdm_shm_conn *c, int sock, uint64_t max_size, char *why, size_t whylen)
{
    return tdm_shm_conn_accept_keep(c, sock, max_size, NULL, why, whylen);
}

int tdm_shm_conn_accept_keep(tdm_shm_conn *c, int sock, uint64_t max_size, int *region_fd, char *why,
                             size_t whylen)
{
    tdm_shm_hello hello;
    int fd = -1, rc = -1;

    memset(c, 0, sizeof(*c));
    c->sock = sock;
    c->region.fd = -1;
    if (tdm_shm_take_region(sock, &hello, &fd, why, whylen))
        goto out;
    if (hello.magic != TDM_SHM_MAGIC || hello.version != TDM_SHM_VERSION) {
        snprintf(why, whylen, "bad shm handshake (magic %#llx, version %u)", (unsigned long long)hello.magic,
                 hello.version);
        goto out;
    }
    rc = tdm_shm_conn_adopt(c, sock, fd, max_size, why, whylen);
out:
    if (rc == 0 && region_fd) {
        *region_fd = fd;
        fd = -1;
    }
    if (fd >= 0)
        close(fd);
    tdm_shm_send_verdict(sock, rc, rc ? why : "");
    return rc;
}

int tdm_shm_conn_adopt(tdm_shm_conn *c, int sock, int region_fd, uint64_t max_size, char *why, size_t whylen)
{
    memset(c, 0, sizeof(*c));
    c->sock = sock;
    c->region.fd = -1;
    if (tdm_shm_region_attach(&c->region, region_fd, max_size, why, whylen))
        return -1;
    tdm_shm_ring_attach(&c->rx, tdm_shm_at(&c->region, c->region.g.ring_off[TDM_SHM_G2S]),
                        c->region.g.ring_cap[TDM_SHM_G2S]);
    tdm_shm_ring_attach(&c->tx, tdm_shm_at(&c->region, c->region.g.ring_off[TDM_SHM_S2G]),
                        c->region.g.ring_cap[TDM_SHM_S2G]);
    return 0;
}

void tdm_shm_conn_release(tdm_shm_conn *c)
{
    tdm_shm_region_release(&c->region);
    tdm_shm_msg_free(&c->in);
    free(c->out);
    c->out = NULL;
    c->out_cap = 0;
}

static int shm_send_reply(void *arg, struct rpc_msg *reply)
{
    tdm_shm_conn *c = arg;
    size_t n = xdr_sizeof((xdrproc_t)xdr_replymsg, reply);
    XDR x;
    int rc;

    if (n > c->out_cap) {
        uint8_t *p = realloc(c->out, n);
        if (!p)
            return -1;
        c->out = p;
        c->out_cap = n;
    }
    xdrmem_create(&x, (char *)c->out, (u_int)n, XDR_ENCODE);
    rc = xdr_replymsg(&x, reply) ? 0 : -1;
    xdr_destroy(&x);
    if (rc)
        return -1;
    rc = tdm_shm_ring_send(&c->tx, c->out, n, guest_alive, c);
    if (rc == TDM_SHM_CORRUPT)
        c->tx_corrupt = true;
    return rc == TDM_SHM_OK ? 0 : -1;
}

/* ---- time limits on the wire (issue 16) ---- */
/* As guest_alive, and false once the guest has kept the server waiting
 * longer than c->limits allow: in the middle of a message (a frame of it
 * taken) since the last frame came, or for a new message since the last
 * was served.  Called between sleeps of the wait (every 50 ms at most). */
static bool recv_alive(void *arg)
{
    tdm_shm_conn *c = arg;
    uint64_t now;

    if (!guest_alive(c))
        return false;
    if (!c->limits)
        return true;
    now = tdm_wire_now_ns();
    if (c->rx.pos != c->seen_pos) {
        c->seen_pos = c->rx.pos;
        c->since_ns = now;
    }
    c->timed_out = tdm_wire_timed_out(c->limits, c->rx.pos != c->msg_start, now - c->since_ns);
    return c->timed_out == TDM_WIRE_IN_TIME;
}

/* Gives back buffers one large call grew (TDM_SHM_KEEP_BYTES). */
static void shrink(tdm_shm_conn *c)
{
    if (c->in.cap > TDM_SHM_KEEP_BYTES)
        tdm_shm_msg_free(&c->in);
    if (c->out_cap > TDM_SHM_KEEP_BYTES) {
        free(c->out);
        c->out = NULL;
        c->out_cap = 0;
    }
}

/* The whole message is in private memory: it can never end early. */
static bool never_lost(void *arg)
{
    return false;
}

tdm_rpc_end tdm_shm_serve(const tdm_rpc_program *p, void *ctx, tdm_shm_conn *c, char *why, size_t whylen)
{
    tdm_rpc_bufs b = { 0 };
    int end = TDM_RPC_CLOSED;

    if (tdm_rpc_bufs_alloc(p, &b)) {
        snprintf(why, whylen, "out of memory");
        return TDM_RPC_IO_ERROR;
    }
    for (;;) {
        int rc;
        XDR x;

        c->msg_start = c->seen_pos = c->rx.pos;
        c->since_ns = c->limits ? tdm_wire_now_ns() : 0;
        rc = tdm_shm_ring_recv(&c->rx, &c->in, MAX_CALL, true, recv_alive, c);
        if (rc == TDM_SHM_WAIT_DEAD && c->timed_out) {
            char what[160];
            tdm_wire_timeout_why(c->limits, c->timed_out, what, sizeof(what));
            snprintf(why, whylen, "closed by the server: %s", what);
            end = TDM_RPC_FINISHED;
            break;
        }
        if (rc == TDM_SHM_WAIT_DEAD) {
            uint64_t left = tdm_shm_ring_unread(&c->rx);
            if (left)
                snprintf(why, whylen, "guest gone with %llu bytes of calls unread (discarded)",
                         (unsigned long long)left);
            else
                snprintf(why, whylen, "guest closed the connection");
            end = TDM_RPC_CLOSED;
            break;
        }
        if (rc == TDM_SHM_CORRUPT || rc == TDM_SHM_TOO_BIG) {
            snprintf(why, whylen, "corrupted guest->server ring: %s", c->rx.why);
            end = TDM_RPC_MALFORMED;
            break;
        }
        if (rc != TDM_SHM_OK) {
            snprintf(why, whylen, "out of memory receiving a call");
            end = TDM_RPC_IO_ERROR;
            break;
        }
        xdrmem_create(&x, (char *)c->in.p, (u_int)c->in.len, XDR_DECODE);
        tdm_rpc_io io = { &x, shm_send_reply, never_lost, c };
        end = tdm_rpc_serve_one(p, ctx, &io, &b, why, whylen);
        xdr_destroy(&x);
        shrink(c);
        if (end != TDM_RPC_NEXT)
            break;
    }
    if (c->tx_corrupt) {
        snprintf(why, whylen, "corrupted server->guest ring: %s", c->tx.why);
        end = TDM_RPC_MALFORMED;
    }
    tdm_rpc_bufs_free(&b);
    return (tdm_rpc_end)end;
}

static bool inside(uint64_t off, uint64_t len, uint64_t area_off, uint64_t area_size)
{
    return off >= area_off && len <= area_size && off - area_off <= area_size - len;
}

void *tdm_shm_conn_span(const tdm_shm_conn *c, uint64_t off, uint64_t len)
{
    const tdm_shm_geom *g = &c->region.g;

    if (inside(off, len, g->data_off, g->data_size) || inside(off, len, g->host_off, g->host_size))
        return tdm_shm_at(&c->region, off);
    return NULL;
}

int tdm_shm_conn_complete(tdm_shm_conn *c, uint32_t slot, uint32_t ticket, int err)
{
    tdm_shm_slot *s;

    if (slot == TDM_SHM_NO_SLOT)
        return 0;
    if (slot >= c->region.g.nslots)
        return -1;
    s = (tdm_shm_slot *)tdm_shm_at(&c->region, c->region.g.slots_off) + slot;
    atomic_store_explicit(&s->err, err, memory_order_relaxed);
    atomic_store_explicit(&s->done, ticket, memory_order_release);
    tdm_shm_wake(&s->wait);
    return 0;
}
