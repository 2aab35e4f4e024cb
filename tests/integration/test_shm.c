/* The shm transport against hostile or dying guests: a region with a bad
 * magic, the wrong size or no seals; corrupted ring indices; a frame longer
 * than what was published; copies naming bytes outside the region; a guest
 * that dies with calls in flight.  Each gets a clear error on the server
 * side, a session beside it keeps working, and the server still stops
 * cleanly (under ASan: without leaks). */
#include <criterion/criterion.h>
#include <driver_types.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "shm_region.h"
#include "shm_ring.h"
#include "shm_socket.h"
#include "tandem_rpc.h"
#include "transport.h"
#include "xdr_extra.h"

static th_server srv;

static void up(void)
{
    th_server_start(&srv, NULL);
}

static void down(void)
{
    cr_expect_eq(th_server_stop(&srv), 0, "tandem-server did not stop cleanly; see %s", srv.log);
}

static void wait_log(const char *text)
{
    for (int i = 0; i < 250 && !th_server_log_has(&srv, text); i++)
        usleep(20000);
    cr_expect(th_server_log_has(&srv, text), "the server log lacks '%s'; see %s", text, srv.log);
}

/* ---- a well-behaved guest: the victim that must not notice ---- */

static tdm_transport *guest_open(const char *endpoint)
{
    tdm_transport *t = NULL;
    char err[300];
    tdm_hello_args a = { TDM_PROTO_VERSION, (int)getpid(), "shm-test", TDM_RESUME_NONE, { 0, NULL }, { 0, NULL } };
    tdm_hello_res r;

    cr_assert_eq(tdm_transport_open(endpoint, &t, err, sizeof(err)), 0, "%s", err);
    memset(&r, 0, sizeof(r));
    cr_assert_eq(t->ops->call(t, TDM_HELLO, (xdrproc_t)xdr_tdm_hello_args, &a, (xdrproc_t)xdr_tdm_hello_res, &r), 0);
    cr_assert_eq(r.err, 0);
    xdr_free((xdrproc_t)xdr_tdm_hello_res, (char *)&r);
    return t;
}

static int dev_sync(tdm_transport *t)
{
    int res = -1;
    cr_assert_eq(t->ops->call(t, TDM_DEVICE_SYNCHRONIZE, (xdrproc_t)tdm_xdr_void, NULL, (xdrproc_t)xdr_int, &res), 0,
                 "the transport failed");
    return res;
}

/* The victim allocates, writes, reads back: its data must be intact. */
static void expect_victim_fine(tdm_transport *t)
{
    tdm_malloc_res m = { 0 };
    u_quad_t size = 4096;
    char data[64], back[64];

    cr_assert_eq(t->ops->call(t, TDM_MALLOC, (xdrproc_t)xdr_u_quad_t, &size, (xdrproc_t)xdr_tdm_malloc_res, &m), 0);
    cr_assert_eq(m.err, 0);
    for (int i = 0; i < 64; i++)
        data[i] = (char)(i * 3 + 1);
    tdm_memcpy_htod_args h = { .dst = m.addr, .stream = 0, .data = { sizeof(data), data } };
    cr_assert_eq(t->ops->post(t, TDM_MEMCPY_HTOD, (xdrproc_t)xdr_tdm_memcpy_htod_args, &h), 0);
    tdm_memcpy_dtoh_args d = { .src = m.addr, .size = sizeof(back), .stream = 0 };
    tdm_memcpy_dtoh_res r;
    memset(&r, 0, sizeof(r));
    cr_assert_eq(t->ops->call(t, TDM_MEMCPY_DTOH, (xdrproc_t)xdr_tdm_memcpy_dtoh_args, &d,
                              (xdrproc_t)xdr_tdm_memcpy_dtoh_res, &r), 0);
    cr_assert_eq(r.err, 0);
    cr_assert_eq(r.data.data_len, sizeof(back));
    memcpy(back, r.data.data_val, sizeof(back));
    xdr_free((xdrproc_t)xdr_tdm_memcpy_dtoh_res, (char *)&r);
    cr_expect_eq(memcmp(back, data, sizeof(data)), 0, "the victim's data changed");
    cr_expect_eq(dev_sync(t), 0);
}

/* ---- a hostile guest working the region by hand ---- */

typedef struct rogue {
    tdm_shm_region r;
    int sock;
    tdm_shm_ring tx, rx;
} rogue;

static bool server_alive(void *arg)
{
    return tdm_shm_peer_alive(*(int *)arg);
}

static int rogue_offer(rogue *g, void (*tamper)(rogue *), char *err, size_t errlen)
{
    char e[300];

    memset(g, 0, sizeof(*g));
    cr_assert_eq(tdm_shm_region_create(&g->r, 1 << 20, e, sizeof(e)), 0, "%s", e);
    if (tamper)
        tamper(g);
    g->sock = tdm_shm_connect(srv.shm_name, e, sizeof(e));
    cr_assert_geq(g->sock, 0, "%s", e);
    tdm_shm_ring_attach(&g->tx, tdm_shm_at(&g->r, g->r.g.ring_off[TDM_SHM_G2S]), g->r.g.ring_cap[TDM_SHM_G2S]);
    tdm_shm_ring_attach(&g->rx, tdm_shm_at(&g->r, g->r.g.ring_off[TDM_SHM_S2G]), g->r.g.ring_cap[TDM_SHM_S2G]);
    return tdm_shm_offer_region(g->sock, g->r.fd, g->r.g.size, err, errlen);
}

static void rogue_close(rogue *g)
{
    close(g->sock);
    tdm_shm_region_release(&g->r);
}

static tdm_shm_ring_ctl *g2s(rogue *g)
{
    return tdm_shm_at(&g->r, g->r.g.ring_off[TDM_SHM_G2S]);
}

/* A TDM_NULL call message, put in the guest->server ring by hand. */
static void rogue_send_null(rogue *g)
{
    struct rpc_msg m;
    char buf[128];
    XDR x;

    memset(&m, 0, sizeof(m));
    m.rm_xid = 1;
    m.rm_direction = CALL;
    m.rm_call.cb_rpcvers = RPC_MSG_VERSION;
    m.rm_call.cb_prog = TANDEM_PROG;
    m.rm_call.cb_vers = TANDEM_V1;
    m.rm_call.cb_proc = TDM_NULL;
    m.rm_call.cb_cred = m.rm_call.cb_verf = _null_auth;
    xdrmem_create(&x, buf, sizeof(buf), XDR_ENCODE);
    cr_assert(xdr_callmsg(&x, &m));
    cr_assert_eq(tdm_shm_ring_send(&g->tx, buf, xdr_getpos(&x), server_alive, &g->sock), TDM_SHM_OK);
    xdr_destroy(&x);
}

/* The same, and its reply taken by hand. */
static void rogue_null_call(rogue *g)
{
    tdm_shm_msg reply = { 0 };

    rogue_send_null(g);
    cr_assert_eq(tdm_shm_ring_recv(&g->rx, &reply, 1 << 20, true, server_alive, &g->sock), TDM_SHM_OK,
                 "no reply to a good call");
    tdm_shm_msg_free(&reply);
}

static void bad_magic(rogue *g)
{
    ((tdm_shm_header *)g->r.base)->magic = 0x1234;
}

static void wrong_size(rogue *g)
{
    ((tdm_shm_header *)g->r.base)->region_size += 4096;
}

static void overlapping_rings(rogue *g)
{
    tdm_shm_header *h = (tdm_shm_header *)g->r.base;
    h->ring_off[1] = h->ring_off[0] + 4096;
}

static void expect_refused(void (*tamper)(rogue *), const char *reason)
{
    tdm_transport *victim = guest_open(srv.shm_endpoint);
    char err[300] = "";
    rogue g;

    cr_expect_neq(rogue_offer(&g, tamper, err, sizeof(err)), 0, "a bad region was accepted");
    cr_expect(strstr(err, reason) != NULL, "the guest was told '%s', expected '%s'", err, reason);
    wait_log("refusing shm guest");
    wait_log(reason);
    rogue_close(&g);
    expect_victim_fine(victim);
    victim->ops->close(victim);
}

Test(shm_robustness, region_with_bad_magic_is_refused, .init = up, .fini = down)
{
    expect_refused(bad_magic, "bad magic");
}

Test(shm_robustness, region_of_the_wrong_size_is_refused, .init = up, .fini = down)
{
    expect_refused(wrong_size, "region size");
}

Test(shm_robustness, region_with_overlapping_rings_is_refused, .init = up, .fini = down)
{
    expect_refused(overlapping_rings, "overlaps");
}

/* A plain file could be truncated under the server (SIGBUS): only a memfd
 * sealed against shrinking is taken. */
Test(shm_robustness, unsealed_region_is_refused, .init = up, .fini = down)
{
    tdm_shm_region r;
    char err[300] = "";
    int fd = memfd_create("unsealed", MFD_CLOEXEC), sock;

    cr_assert_eq(tdm_shm_region_create(&r, 1 << 20, err, sizeof(err)), 0, "%s", err);
    cr_assert_geq(fd, 0);
    cr_assert_eq(ftruncate(fd, (off_t)r.g.size), 0);
    cr_assert_eq(pwrite(fd, r.base, TDM_SHM_HEADER_SIZE, 0), TDM_SHM_HEADER_SIZE);
    sock = tdm_shm_connect(srv.shm_name, err, sizeof(err));
    cr_assert_geq(sock, 0, "%s", err);
    cr_expect_neq(tdm_shm_offer_region(sock, fd, r.g.size, err, sizeof(err)), 0);
    cr_expect(strstr(err, "sealed") != NULL, "the guest was told '%s'", err);
    wait_log("not a memfd sealed against shrinking");
    close(sock);
    close(fd);
    tdm_shm_region_release(&r);
}

typedef void (*corruptor)(rogue *g);

static void head_beyond_capacity(rogue *g)
{
    atomic_store(&g2s(g)->head, g->r.g.ring_cap[TDM_SHM_G2S] * 2);
}

static void head_backwards(rogue *g)
{
    rogue_null_call(g);                  /* the server has consumed something */
    atomic_store(&g2s(g)->head, 0);
}

static void frame_past_the_region(rogue *g)
{
    tdm_shm_frame_hdr h = { 0xfffffff0u, TDM_SHM_FRAME_LAST };
    memcpy((uint8_t *)g2s(g) + TDM_SHM_RING_CTL_SIZE, &h, sizeof(h));
    atomic_store(&g2s(g)->head, 64);
}

/* The server produces into the other ring: a reply cannot be written when
 * the guest's consumer index is impossible. */
static void reply_tail_beyond_head(rogue *g)
{
    tdm_shm_ring_ctl *s2g = tdm_shm_at(&g->r, g->r.g.ring_off[TDM_SHM_S2G]);

    atomic_store(&s2g->tail, 1u << 30);
    rogue_send_null(g);
}

static void expect_session_closed(corruptor c, const char *reason)
{
    tdm_transport *victim = guest_open(srv.shm_endpoint);
    tdm_transport *tcp_victim = guest_open(srv.endpoint);
    char err[300];
    rogue g;

    cr_assert_eq(rogue_offer(&g, NULL, err, sizeof(err)), 0, "%s", err);
    c(&g);
    tdm_shm_wake(&g2s(&g)->data_wait);
    wait_log(reason);
    wait_log("(other sessions are unaffected)");
    /* The server is done with the rogue: its socket reads as closed. */
    for (int i = 0; i < 100 && tdm_shm_peer_alive(g.sock); i++)
        usleep(20000);
    cr_expect(!tdm_shm_peer_alive(g.sock), "the rogue's connection stayed open");
    rogue_close(&g);
    expect_victim_fine(victim);
    expect_victim_fine(tcp_victim);
    victim->ops->close(victim);
    tcp_victim->ops->close(tcp_victim);
}

Test(shm_robustness, ring_index_beyond_capacity_closes_only_that_session, .init = up, .fini = down)
{
    expect_session_closed(head_beyond_capacity, "producer index beyond the ring's capacity");
}

Test(shm_robustness, ring_index_going_backwards_closes_only_that_session, .init = up, .fini = down)
{
    expect_session_closed(head_backwards, "producer index behind the consumer's");
}

Test(shm_robustness, frame_length_past_the_region_closes_only_that_session, .init = up, .fini = down)
{
    expect_session_closed(frame_past_the_region, "frame length past the published bytes");
}

Test(shm_robustness, corrupted_reply_ring_closes_only_that_session, .init = up, .fini = down)
{
    expect_session_closed(reply_tail_beyond_head, "corrupted server->guest ring");
}

/* Offsets are validated against the region's data and host memory areas:
 * the header and the rings are not copy targets, nor anything past the end. */
Test(shm_robustness, copies_outside_the_region_areas_are_refused, .init = up, .fini = down)
{
    tdm_transport *t = guest_open(srv.shm_endpoint), *tcp = guest_open(srv.endpoint);
    const tdm_shm_region *r = tdm_transport_shm_region(t);
    tdm_shm_copy_args a = { .dev = 0, .stream = 0, .offset = 0, .size = 64, .slot = TDM_SHM_NO_SLOT };

    cr_assert_not_null(r);
    cr_assert_null(tdm_transport_shm_region(tcp));
    cr_assert_eq(t->ops->post(t, TDM_SHM_DTOH, (xdrproc_t)xdr_tdm_shm_copy_args, &a), 0);
    cr_expect_eq(dev_sync(t), cudaErrorInvalidValue);
    a.offset = r->g.size - 32;           /* runs past the end */
    cr_assert_eq(t->ops->post(t, TDM_SHM_HTOD, (xdrproc_t)xdr_tdm_shm_copy_args, &a), 0);
    cr_expect_eq(dev_sync(t), cudaErrorInvalidValue);
    a.offset = UINT64_MAX - 8;           /* offset + size wraps */
    cr_assert_eq(t->ops->post(t, TDM_SHM_HTOD, (xdrproc_t)xdr_tdm_shm_copy_args, &a), 0);
    cr_expect_eq(dev_sync(t), cudaErrorInvalidValue);
    a.offset = r->g.data_off;            /* a good span, a slot that does not exist */
    a.slot = 99;
    cr_assert_eq(t->ops->post(t, TDM_SHM_HTOD, (xdrproc_t)xdr_tdm_shm_copy_args, &a), 0);
    cr_expect_eq(dev_sync(t), cudaErrorInvalidValue);
    wait_log("completion slot 99");
    /* Over TCP there is no region at all. */
    a.slot = TDM_SHM_NO_SLOT;
    cr_assert_eq(tcp->ops->post(tcp, TDM_SHM_HTOD, (xdrproc_t)xdr_tdm_shm_copy_args, &a), 0);
    cr_expect_eq(dev_sync(tcp), cudaErrorInvalidValue);
    wait_log("outside the region's data and host memory areas");
    wait_log("on a session without a region");
    expect_victim_fine(t);
    t->ops->close(t);
    tcp->ops->close(tcp);
}

/* A guest that dies with one-way calls queued in its ring: the server ends
 * that session (discarding the calls) and frees what it held. */
Test(shm_robustness, guest_dying_with_calls_in_flight, .init = up, .fini = down)
{
    tdm_transport *victim = guest_open(srv.shm_endpoint);
    pid_t kid = fork();
    int st = 0;

    cr_assert_neq(kid, -1);
    if (kid == 0) {
        tdm_transport *t = guest_open(srv.shm_endpoint);
        u_quad_t size = 8 << 20;
        tdm_malloc_res m = { 0 };
        char data[4096] = { 1 };

        if (t->ops->call(t, TDM_MALLOC, (xdrproc_t)xdr_u_quad_t, &size, (xdrproc_t)xdr_tdm_malloc_res, &m) || m.err)
            _exit(2);
        for (int i = 0; i < 20000; i++) {
            tdm_memcpy_htod_args h = { .dst = m.addr + (uint64_t)(i % 2048) * 4096, .stream = 0,
                                       .data = { sizeof(data), data } };
            if (t->ops->post(t, TDM_MEMCPY_HTOD, (xdrproc_t)xdr_tdm_memcpy_htod_args, &h))
                _exit(3);
        }
        _exit(0);   /* no close, no sync: the calls are still in the ring */
    }
    waitpid(kid, &st, 0);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the dying guest failed early (%d)", st);
    wait_log("closed: guest");
    expect_victim_fine(victim);
    victim->ops->close(victim);
}

static int span_call(tdm_transport *t, uint32_t proc, uint64_t off, uint64_t size)
{
    tdm_shm_span a = { off, size };
    int res = -1;

    cr_assert_eq(t->ops->call(t, proc, (xdrproc_t)xdr_tdm_shm_span, &a, (xdrproc_t)xdr_int, &res), 0);
    return res;
}

/* cudaMallocHost's pinning: whole pages of the host memory area, no
 * overlapping blocks (the same block again is taken as done: a guest
 * resuming after a takeover may register it twice), and only registered
 * blocks can be released, once. */
Test(shm_robustness, pinned_blocks_are_checked, .init = up, .fini = down)
{
    tdm_transport *t = guest_open(srv.shm_endpoint), *tcp = guest_open(srv.endpoint);
    const tdm_shm_region *r = tdm_transport_shm_region(t);
    uint64_t h = r->g.host_off;

    cr_expect_eq(span_call(t, TDM_SHM_HOST_REGISTER, h, 8192), 0);
    cr_expect_eq(span_call(t, TDM_SHM_HOST_REGISTER, h, 8192), 0);
    cr_expect_eq(span_call(t, TDM_SHM_HOST_REGISTER, h + 4096, 4096), cudaErrorHostMemoryAlreadyRegistered);
    cr_expect_eq(span_call(t, TDM_SHM_HOST_REGISTER, h, 4096), cudaErrorHostMemoryAlreadyRegistered);
    cr_expect_eq(span_call(t, TDM_SHM_HOST_REGISTER, h + 8192 + 100, 4096), cudaErrorInvalidValue);
    cr_expect_eq(span_call(t, TDM_SHM_HOST_REGISTER, r->g.data_off, 4096), cudaErrorInvalidValue);
    cr_expect_eq(span_call(t, TDM_SHM_HOST_REGISTER, h, r->g.host_size + 4096), cudaErrorInvalidValue);
    cr_expect_eq(span_call(t, TDM_SHM_HOST_REGISTER, UINT64_MAX - 4095, 8192), cudaErrorInvalidValue);
    cr_expect_eq(span_call(t, TDM_SHM_HOST_UNREGISTER, h, 4096), cudaErrorInvalidValue);
    cr_expect_eq(span_call(t, TDM_SHM_HOST_UNREGISTER, h, 8192), 0);
    cr_expect_eq(span_call(t, TDM_SHM_HOST_UNREGISTER, h, 8192), cudaErrorInvalidValue);
    /* Left registered: the server releases it with the session. */
    cr_expect_eq(span_call(t, TDM_SHM_HOST_REGISTER, h + 4096, 4096), 0);
    cr_expect_eq(span_call(tcp, TDM_SHM_HOST_REGISTER, h, 4096), cudaErrorInvalidValue);
    wait_log("is not whole pages of the region's host memory area");
    expect_victim_fine(t);
    t->ops->close(t);
    tcp->ops->close(tcp);
}

/* Every kind of copy and size, pageable chunks through the data area and
 * pinned blocks of the region, gives the same bytes over shm as over TCP. */
Test(shm_copies, every_kind_and_size_round_trips, .init = up, .fini = down)
{
    const char *argv[] = { th_bin("copy-check"), NULL };
    th_result *tcp = calloc(1, sizeof(*tcp)), *shm = calloc(1, sizeof(*shm));

    th_run_guest(srv.endpoint, argv, 120, tcp);
    cr_assert_eq(tcp->status, 0, "copy-check over TCP exited %d:\n%s", tcp->status, tcp->err);
    th_run_guest(srv.shm_endpoint, argv, 120, shm);
    cr_assert_eq(shm->status, 0, "copy-check over shm exited %d:\n%s", shm->status, shm->err);
    cr_expect_str_eq(shm->out, tcp->out);
    cr_expect(strstr(shm->out, "size=41943040") != NULL, "output:\n%s", shm->out);
    free(tcp);
    free(shm);
}

/* ---- managed memory (issue 14) ---- */
static int managed_call(tdm_transport *t, uint64_t off, uint64_t size, uint64_t addr)
{
    tdm_managed_map_args a = { off, size, addr };
    int res = -1;

    cr_assert_eq(t->ops->call(t, TDM_SHM_MANAGED_MAP, (xdrproc_t)xdr_tdm_managed_map_args, &a, (xdrproc_t)xdr_int,
                              &res), 0);
    return res;
}

/* A managed block is a pinned block of the region placed at the guest's
 * address: other spans, unaligned or impossible addresses, the device
 * arena's addresses, another address for the same block and TCP are
 * refused; unregistering the block ends it; one left mapped is released
 * with the session. */
Test(shm_robustness, managed_blocks_are_checked, .init = up, .fini = down)
{
    tdm_transport *t = guest_open(srv.shm_endpoint), *tcp = guest_open(srv.endpoint);
    const tdm_shm_region *r = tdm_transport_shm_region(t);
    uint64_t h = r->g.host_off, at = (uint64_t)(uintptr_t)(r->base + h);

    cr_expect_eq(span_call(t, TDM_SHM_HOST_REGISTER, h, 8192), 0);
    cr_expect_eq(managed_call(t, h + 8192, 4096, at + 8192), cudaErrorInvalidValue);
    cr_expect_eq(managed_call(t, h, 4096, at), cudaErrorInvalidValue);
    cr_expect_eq(managed_call(t, h, 8192, 0), cudaErrorInvalidValue);
    cr_expect_eq(managed_call(t, h, 8192, at + 100), cudaErrorInvalidValue);
    cr_expect_eq(managed_call(t, h, 8192, 1ull << 47), cudaErrorInvalidValue);
    cr_expect_eq(managed_call(t, h, 8192, UINT64_MAX - 4095), cudaErrorInvalidValue);
    cr_expect_eq(managed_call(t, h, 8192, 0x200000000000ull), cudaErrorInvalidValue);
    cr_expect_eq(managed_call(tcp, h, 8192, at), cudaErrorInvalidValue);
    cr_expect_eq(managed_call(t, h, 8192, at), 0);
    cr_expect_eq(managed_call(t, h, 8192, at), 0, "the same block at the same address again");
    cr_expect_eq(managed_call(t, h, 8192, at + (1ull << 30)), cudaErrorInvalidValue);
    cr_expect_eq(span_call(t, TDM_SHM_HOST_UNREGISTER, h, 8192), 0);
    cr_expect_eq(managed_call(t, h, 8192, at), cudaErrorInvalidValue, "the block is gone");
    /* Its alias went with it: the block can be placed there again. */
    cr_expect_eq(span_call(t, TDM_SHM_HOST_REGISTER, h, 8192), 0);
    cr_expect_eq(managed_call(t, h, 8192, at), 0);
    wait_log("refusing managed block");
    expect_victim_fine(t);
    t->ops->close(t);
    tcp->ops->close(tcp);
}
