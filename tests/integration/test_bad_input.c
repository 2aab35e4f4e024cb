/* Untrusted guests: malformed and truncated frames, unknown handles, pointers
 * into other sessions, quota overruns and a guest killed mid-call.  Each gets
 * a clear error or a closed connection, and the other sessions keep working
 * with their data intact. */
#include <criterion/criterion.h>
#include <arpa/inet.h>
#include <driver_types.h>
#include <netinet/in.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <texture_types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest_calls.h"
#include "harness.h"
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

/* ---- a minimal guest speaking the protocol directly ---- */

static tdm_transport *guest_open(void)
{
    return th_guest_open(srv.endpoint, "bad-input-test");
}

static int call_err(tdm_transport *t, uint32_t proc, xdrproc_t xa, void *a)
{
    int res = -1;
    cr_assert_eq(t->ops->call(t, proc, xa, a, (xdrproc_t)xdr_int, &res), 0, "transport failed");
    return res;
}

static int dev_sync(tdm_transport *t)
{
    return call_err(t, TDM_DEVICE_SYNCHRONIZE, (xdrproc_t)tdm_xdr_void, NULL);
}

static uint64_t g_malloc(tdm_transport *t, uint64_t size, int *err)
{
    tdm_malloc_res r;
    u_quad_t sz = size;
    memset(&r, 0, sizeof(r));
    cr_assert_eq(t->ops->call(t, TDM_MALLOC, (xdrproc_t)xdr_u_quad_t, &sz, (xdrproc_t)xdr_tdm_malloc_res, &r), 0);
    *err = r.err;
    return r.addr;
}

static void g_write(tdm_transport *t, uint64_t dst, const void *src, uint32_t n)
{
    tdm_memcpy_htod_args a = { .dst = dst, .stream = 0 };
    a.data.data_val = (char *)src;
    a.data.data_len = n;
    cr_assert_eq(t->ops->post(t, TDM_MEMCPY_HTOD, (xdrproc_t)xdr_tdm_memcpy_htod_args, &a), 0);
}

static int g_read(tdm_transport *t, uint64_t src, void *dst, uint32_t n)
{
    tdm_memcpy_dtoh_args a = { .src = src, .size = n, .stream = 0 };
    tdm_memcpy_dtoh_res r;
    int err;
    memset(&r, 0, sizeof(r));
    cr_assert_eq(t->ops->call(t, TDM_MEMCPY_DTOH, (xdrproc_t)xdr_tdm_memcpy_dtoh_args, &a,
                              (xdrproc_t)xdr_tdm_memcpy_dtoh_res, &r), 0);
    err = r.err;
    if (!err) {
        cr_assert_eq(r.data.data_len, n);
        memcpy(dst, r.data.data_val, n);
    }
    xdr_free((xdrproc_t)xdr_tdm_memcpy_dtoh_res, (char *)&r);
    return err;
}

static uint64_t g_free_bytes(tdm_transport *t)
{
    tdm_mem_info_res r;
    memset(&r, 0, sizeof(r));
    cr_assert_eq(t->ops->call(t, TDM_MEM_GET_INFO, (xdrproc_t)tdm_xdr_void, NULL, (xdrproc_t)xdr_tdm_mem_info_res, &r), 0);
    cr_assert_eq(r.err, 0);
    return r.free_bytes;
}

/* A victim session with a known pattern in device memory. */
typedef struct victim {
    tdm_transport *t;
    uint64_t addr;
    unsigned char pattern[4096];
} victim;

static void victim_start(victim *v)
{
    int err;
    v->t = guest_open();
    v->addr = g_malloc(v->t, sizeof(v->pattern), &err);
    cr_assert_eq(err, 0);
    for (size_t i = 0; i < sizeof(v->pattern); i++)
        v->pattern[i] = (unsigned char)(i * 31 + 7);
    g_write(v->t, v->addr, v->pattern, sizeof(v->pattern));
    cr_assert_eq(dev_sync(v->t), 0);
}

static void victim_check(victim *v)
{
    unsigned char back[4096];
    cr_assert_eq(g_read(v->t, v->addr, back, sizeof(back)), 0, "victim session broken");
    cr_expect_eq(memcmp(back, v->pattern, sizeof(back)), 0, "victim data changed");
}

static int raw_connect(void)
{
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)srv.port) };
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    cr_assert_eq(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    return fd;
}

/* Waits up to 5 s for the server to close fd. */
static int closed_by_server(int fd)
{
    struct timeval tv = { 5, 0 };
    char buf[256];
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    for (;;) {
        ssize_t n = read(fd, buf, sizeof(buf));
        if (n == 0)
            return 1;
        if (n < 0)
            return 0;
    }
}

Test(bad_input, garbage_frame_closes_only_that_connection, .init = up, .fini = down)
{
    victim v;
    victim_start(&v);
    int fd = raw_connect();
    /* A record marker for a 40-byte last fragment, then text that is no RPC call. */
    const char garbage[] = "\x80\x00\x00\x28GET / HTTP/1.1\r\nHost: x\r\n\r\nxxxxxxxxxxxxxx";
    cr_assert_eq(write(fd, garbage, sizeof(garbage) - 1), (ssize_t)sizeof(garbage) - 1);
    cr_expect(closed_by_server(fd), "server kept a connection that sent garbage");
    close(fd);
    victim_check(&v);
    cr_expect(th_server_log_has(&srv, "malformed frame"), "no clear error in the server log");
    v.t->ops->close(v.t);
}

Test(bad_input, truncated_frame_and_vanishing_peer, .init = up, .fini = down)
{
    victim v;
    victim_start(&v);
    int fd = raw_connect();
    /* Claims a 1 MiB record, sends 12 bytes of it, and goes away. */
    const char partial[] = "\x80\x10\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00";
    cr_assert_eq(write(fd, partial, 12), 12);
    close(fd);
    usleep(200000);
    victim_check(&v);
    v.t->ops->close(v.t);
}

Test(bad_input, unknown_handles_get_clear_errors, .init = up, .fini = down)
{
    victim v;
    victim_start(&v);
    tdm_handle bogus = 0x5300000100000007ull;
    tdm_addr nowhere = 0x123456789ull;

    cr_expect_eq(call_err(v.t, TDM_STREAM_SYNCHRONIZE, (xdrproc_t)xdr_tdm_handle, &bogus),
                 cudaErrorInvalidResourceHandle);
    cr_expect_eq(call_err(v.t, TDM_EVENT_QUERY, (xdrproc_t)xdr_tdm_handle, &bogus), cudaErrorInvalidResourceHandle);
    cr_expect_eq(call_err(v.t, TDM_STREAM_DESTROY, (xdrproc_t)xdr_tdm_handle, &bogus), cudaErrorInvalidResourceHandle);
    cr_expect_eq(call_err(v.t, TDM_MODULE_UNLOAD, (xdrproc_t)xdr_tdm_handle, &bogus), cudaErrorInvalidResourceHandle);
    cr_expect_eq(call_err(v.t, TDM_FREE, (xdrproc_t)xdr_tdm_addr, &nowhere), cudaErrorInvalidValue);
    tdm_addr inside = v.addr + 16;
    cr_expect_eq(call_err(v.t, TDM_FREE, (xdrproc_t)xdr_tdm_addr, &inside), cudaErrorInvalidValue,
                 "freeing an interior pointer");

    /* One-way calls report their error at the next synchronizing call. */
    tdm_launch_args la;
    memset(&la, 0, sizeof(la));
    la.func = bogus;
    la.grid = (tdm_xdim3){ 1, 1, 1 };
    la.block = (tdm_xdim3){ 1, 1, 1 };
    cr_assert_eq(v.t->ops->post(v.t, TDM_LAUNCH, (xdrproc_t)xdr_tdm_launch_args, &la), 0);
    cr_expect_eq(dev_sync(v.t), cudaErrorInvalidDeviceFunction);
    cr_expect_eq(dev_sync(v.t), 0, "a non-sticky error is reported once");
    tdm_event_record_args er = { bogus, 0 };
    cr_assert_eq(v.t->ops->post(v.t, TDM_EVENT_RECORD, (xdrproc_t)xdr_tdm_event_record_args, &er), 0);
    cr_expect_eq(dev_sync(v.t), cudaErrorInvalidResourceHandle);
    victim_check(&v);
    v.t->ops->close(v.t);
}

/* TDM_STREAM_GET_FLAGS names a stream: one the session does not have is
 * refused, and the default streams answer as the session's null stream. */
Test(bad_input, stream_flags_of_an_unknown_stream_are_refused, .init = up, .fini = down)
{
    tdm_transport *t = guest_open();
    tdm_handle handles[] = { 0x5300000100000007ull, 0x4500000100000001ull, 3, UINT64_MAX };
    tdm_handle legacy = 1;
    tdm_flags_res r;

    for (size_t i = 0; i < sizeof(handles) / sizeof(handles[0]); i++) {
        memset(&r, 0, sizeof(r));
        cr_assert_eq(t->ops->call(t, TDM_STREAM_GET_FLAGS, (xdrproc_t)xdr_tdm_handle, &handles[i],
                                  (xdrproc_t)xdr_tdm_flags_res, &r), 0);
        cr_expect_eq(r.err, cudaErrorInvalidResourceHandle, "handle %#llx", (unsigned long long)handles[i]);
    }
    memset(&r, 0, sizeof(r));
    cr_assert_eq(t->ops->call(t, TDM_STREAM_GET_FLAGS, (xdrproc_t)xdr_tdm_handle, &legacy,
                              (xdrproc_t)xdr_tdm_flags_res, &r), 0);
    cr_expect_eq(r.err, 0);
    cr_expect_eq(r.flags, 0);
    t->ops->close(t);
}

Test(bad_input, sessions_cannot_reach_each_other, .init = up, .fini = down)
{
    victim v;
    victim_start(&v);
    tdm_transport *evil = guest_open();
    unsigned char buf[64];

    /* Reading and writing the victim's memory by its logical address. */
    cr_expect_eq(g_read(evil, v.addr, buf, sizeof(buf)), cudaErrorInvalidValue);
    memset(buf, 0xee, sizeof(buf));
    g_write(evil, v.addr, buf, sizeof(buf));
    tdm_memset_args ms = { .dst = v.addr, .value = 0, .size = 4096, .stream = 0 };
    cr_assert_eq(evil->ops->post(evil, TDM_MEMSET, (xdrproc_t)xdr_tdm_memset_args, &ms), 0);
    cr_expect_eq(dev_sync(evil), cudaErrorInvalidValue);
    tdm_addr a = v.addr;
    cr_expect_eq(call_err(evil, TDM_FREE, (xdrproc_t)xdr_tdm_addr, &a), cudaErrorInvalidValue);

    /* The victim's handles mean nothing in another session. */
    tdm_stream_create_args sa = { 0, 0 };
    tdm_handle_res hr;
    memset(&hr, 0, sizeof(hr));
    cr_assert_eq(v.t->ops->call(v.t, TDM_STREAM_CREATE, (xdrproc_t)xdr_tdm_stream_create_args, &sa,
                                (xdrproc_t)xdr_tdm_handle_res, &hr), 0);
    cr_assert_eq(hr.err, 0);
    cr_expect_eq(call_err(evil, TDM_STREAM_SYNCHRONIZE, (xdrproc_t)xdr_tdm_handle, &hr.handle),
                 cudaErrorInvalidResourceHandle);
    cr_expect_eq(call_err(evil, TDM_STREAM_DESTROY, (xdrproc_t)xdr_tdm_handle, &hr.handle),
                 cudaErrorInvalidResourceHandle);
    cr_expect_eq(call_err(v.t, TDM_STREAM_SYNCHRONIZE, (xdrproc_t)xdr_tdm_handle, &hr.handle), 0);
    victim_check(&v);
    evil->ops->close(evil);
    v.t->ops->close(v.t);
}

Test(bad_input, out_of_range_pointers_in_own_session, .init = up, .fini = down)
{
    victim v;
    victim_start(&v);
    unsigned char buf[16];

    cr_expect_eq(g_read(v.t, v.addr + 4096 - 8, buf, 16), cudaErrorInvalidValue, "read past the end");
    cr_expect_eq(g_read(v.t, v.addr - 8, buf, 8), cudaErrorInvalidValue, "read before the start");
    cr_expect_eq(g_read(v.t, UINT64_MAX - 4, buf, 8), cudaErrorInvalidValue, "wrapping address");
    tdm_memcpy_dtoh_args big = { .src = v.addr, .size = (uint64_t)TDM_MAX_CHUNK + 1, .stream = 0 };
    tdm_memcpy_dtoh_res r;
    memset(&r, 0, sizeof(r));
    cr_assert_eq(v.t->ops->call(v.t, TDM_MEMCPY_DTOH, (xdrproc_t)xdr_tdm_memcpy_dtoh_args, &big,
                                (xdrproc_t)xdr_tdm_memcpy_dtoh_res, &r), 0);
    cr_expect_eq(r.err, cudaErrorInvalidValue, "a reply larger than the protocol allows");
    xdr_free((xdrproc_t)xdr_tdm_memcpy_dtoh_res, (char *)&r);
    tdm_memcpy_dtod_args dd = { .dst = v.addr, .src = v.addr + 2048, .size = 4096, .stream = 0 };
    cr_assert_eq(v.t->ops->post(v.t, TDM_MEMCPY_DTOD, (xdrproc_t)xdr_tdm_memcpy_dtod_args, &dd), 0);
    cr_expect_eq(dev_sync(v.t), cudaErrorInvalidValue);
    victim_check(&v);
    v.t->ops->close(v.t);
}

/* Encodes only part of a launch's arguments: the frame ends early. */
static bool_t xdr_short_launch(XDR *xdrs, void *unused)
{
    tdm_handle h = 1;
    return xdr_tdm_handle(xdrs, &h);
}

/* Claims a 4 GiB payload for a host-to-device copy. */
static bool_t xdr_huge_claim(XDR *xdrs, void *unused)
{
    tdm_addr dst = 0x200000000000ull;
    tdm_handle stream = 0;
    u_int len = 0xfffffff0u;
    return xdr_tdm_addr(xdrs, &dst) && xdr_tdm_handle(xdrs, &stream) && xdr_u_int(xdrs, &len);
}

Test(bad_input, undecodable_arguments, .init = up, .fini = down)
{
    victim v;
    victim_start(&v);
    tdm_transport *t = guest_open();

    cr_assert_eq(t->ops->post(t, TDM_LAUNCH, (xdrproc_t)xdr_short_launch, NULL), 0);
    cr_expect_eq(dev_sync(t), cudaErrorInvalidValue, "a one-way call with broken arguments is reported");
    cr_assert_eq(t->ops->post(t, TDM_MEMCPY_HTOD, (xdrproc_t)xdr_huge_claim, NULL), 0);
    cr_expect_eq(dev_sync(t), cudaErrorInvalidValue, "an oversize payload claim is refused, not allocated");
    int res = 0;
    cr_expect_eq(t->ops->call(t, TDM_FREE, (xdrproc_t)xdr_short_launch, NULL, (xdrproc_t)xdr_int, &res), 0,
                 "a short but well-formed argument is decoded");
    cr_expect_eq(t->ops->call(t, 99, (xdrproc_t)tdm_xdr_void, NULL, (xdrproc_t)xdr_int, &res), TDM_T_REJECTED,
                 "unknown procedure");
    cr_expect_eq(dev_sync(t), 0, "the connection survives");
    victim_check(&v);
    t->ops->close(t);
    v.t->ops->close(v.t);
}

Test(bad_input, wrong_program_version_is_refused, .init = up, .fini = down)
{
    victim v;
    victim_start(&v);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)srv.port) };
    int fd = raw_connect();
    struct netbuf nb = { sizeof(a), sizeof(a), &a };
    struct timeval tmo = { 5, 0 };
    int res;

    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    CLIENT *c = clnt_vc_create(fd, &nb, TANDEM_PROG, 99, 0, 0);
    cr_assert_not_null(c);
    cr_expect_eq(clnt_call(c, TDM_NULL, (xdrproc_t)tdm_xdr_void, NULL, (xdrproc_t)xdr_int, (char *)&res, tmo),
                 RPC_PROGVERSMISMATCH);
    clnt_destroy(c);
    close(fd);
    victim_check(&v);
    v.t->ops->close(v.t);
}

Test(bad_input, killed_guest_releases_its_memory, .init = up, .fini = down)
{
    victim v;
    victim_start(&v);
    uint64_t before = g_free_bytes(v.t);
    int ready[2];
    cr_assert_eq(pipe(ready), 0);
    pid_t kid = fork();
    cr_assert_neq(kid, -1);
    if (kid == 0) {
        tdm_transport *t = guest_open();
        int err;
        static unsigned char chunk[1 << 20];
        uint64_t p = g_malloc(t, 64ull << 20, &err);
        if (err)
            _exit(3);
        if (write(ready[1], "x", 1) != 1)
            _exit(4);
        for (;;)   /* killed while streaming copies */
            g_write(t, p, chunk, sizeof(chunk));
    }
    char c;
    cr_assert_eq(read(ready[0], &c, 1), 1, "child could not allocate");
    cr_expect_lt(g_free_bytes(v.t), before, "the child's allocation is visible in free memory");
    usleep(100000);
    kill(kid, SIGKILL);
    waitpid(kid, NULL, 0);
    uint64_t after = 0;
    for (int i = 0; i < 100 && (after = g_free_bytes(v.t)) != before; i++)
        usleep(50000);
    cr_expect_eq(after, before, "memory of the killed guest was not released");
    victim_check(&v);
    v.t->ops->close(v.t);
}

static void up_quota(void)
{
    const char *args[] = { "--session-quota", "4M", NULL };
    th_server_start(&srv, args);
}

Test(bad_input, quota_overrun_is_refused, .init = up_quota, .fini = down)
{
    victim v;
    victim_start(&v);
    int err;

    g_malloc(v.t, 8ull << 20, &err);
    cr_expect_eq(err, cudaErrorMemoryAllocation);
    uint64_t p = g_malloc(v.t, 2ull << 20, &err);
    cr_expect_eq(err, 0, "room left under the quota");
    g_malloc(v.t, 1, &err);
    cr_expect_eq(err, cudaErrorMemoryAllocation, "the quota counts whole granules");
    tdm_addr a = p;
    cr_expect_eq(call_err(v.t, TDM_FREE, (xdrproc_t)xdr_tdm_addr, &a), 0);
    g_malloc(v.t, 2ull << 20, &err);
    cr_expect_eq(err, 0, "freed memory returns to the quota");
    cr_expect(th_server_log_has(&srv, "exceeds its quota"));
    victim_check(&v);
    v.t->ops->close(v.t);
}

/* ---- layout (issue 14): 2D/3D boxes (server/session_layout.c) ---- */

static tdm_pitched box(uint64_t addr, uint64_t pitch, uint64_t rows)
{
    return (tdm_pitched){ .addr = addr, .pitch = pitch, .rows = rows };
}

static int g_read_3d(tdm_transport *t, tdm_pitched src, tdm_extent3 ext)
{
    tdm_memcpy3d_dtoh_args a = { .src = src, .ext = ext, .stream = 0 };
    tdm_memcpy_dtoh_res r;
    int err;

    memset(&r, 0, sizeof(r));
    cr_assert_eq(t->ops->call(t, TDM_MEMCPY_3D_DTOH, (xdrproc_t)xdr_tdm_memcpy3d_dtoh_args, &a,
                              (xdrproc_t)xdr_tdm_memcpy_dtoh_res, &r), 0);
    err = r.err;
    xdr_free((xdrproc_t)xdr_tdm_memcpy_dtoh_res, (char *)&r);
    return err;
}

static int g_memset_3d(tdm_transport *t, tdm_pitched dst, tdm_extent3 ext)
{
    tdm_memset3d_args a = { .dst = dst, .ext = ext, .value = 0xee, .stream = 0 };

    cr_assert_eq(t->ops->post(t, TDM_MEMSET_3D, (xdrproc_t)xdr_tdm_memset3d_args, &a), 0);
    return dev_sync(t);
}

/* A pitch smaller than the width, a slice of fewer rows than the height, an
 * extent past the allocation or overflowing 64 bits, a box in another
 * session's memory, an upload whose bytes do not match its extent, a
 * download larger than a reply: each refused with CUDA's error, and the
 * victim's data is intact. */
Test(bad_input, layout_boxes_outside_the_rules_are_refused, .init = up, .fini = down)
{
    victim v;
    tdm_transport *t;
    uint64_t p;
    int err;
    char bytes[64] = { 0 };

    victim_start(&v);
    t = guest_open();
    p = g_malloc(t, 4096, &err);
    cr_assert_eq(err, 0);

    cr_expect_eq(g_read_3d(t, box(p, 32, 4), (tdm_extent3){ 64, 4, 1 }), cudaErrorInvalidPitchValue,
                 "a pitch below the width");
    cr_expect_eq(g_read_3d(t, box(p, 64, 2), (tdm_extent3){ 64, 4, 2 }), cudaErrorInvalidValue,
                 "a slice of 2 rows for a height of 4");
    cr_expect_eq(g_read_3d(t, box(p, 512, 8), (tdm_extent3){ 64, 8, 2 }), cudaErrorInvalidValue,
                 "a 3D extent past the allocation");
    cr_expect_eq(g_read_3d(t, box(p, 512, 8), (tdm_extent3){ 64, 8, 1 }), 0, "the same box in one slice fits");
    cr_expect_eq(g_read_3d(t, box(p, UINT64_MAX / 2, 1ull << 40), (tdm_extent3){ 1, 2, 1ull << 40 }),
                 cudaErrorInvalidValue, "an extent whose span overflows");
    cr_expect_eq(g_read_3d(t, box(v.addr, 64, 4), (tdm_extent3){ 64, 4, 1 }), cudaErrorInvalidValue,
                 "another session's memory");
    cr_expect_eq(g_read_3d(t, box(p, 4096, 4096), (tdm_extent3){ 4096, 4096, 1 }), cudaErrorInvalidValue,
                 "a reply larger than one chunk");

    cr_expect_eq(g_memset_3d(t, box(p, 16, 4), (tdm_extent3){ 64, 4, 1 }), cudaErrorInvalidPitchValue);
    cr_expect_eq(g_memset_3d(t, box(v.addr, 64, 4), (tdm_extent3){ 64, 4, 1 }), cudaErrorInvalidValue,
                 "a memset of another session's memory");
    cr_expect_eq(g_memset_3d(t, box(p + 4000, 64, 4), (tdm_extent3){ 64, 4, 1 }), cudaErrorInvalidValue,
                 "a memset running past the allocation");

    tdm_memcpy3d_dtod_args d = { .dst = box(v.addr, 64, 4), .src = box(p, 64, 4), .ext = { 64, 4, 1 } };
    cr_assert_eq(t->ops->post(t, TDM_MEMCPY_3D_DTOD, (xdrproc_t)xdr_tdm_memcpy3d_dtod_args, &d), 0);
    cr_expect_eq(dev_sync(t), cudaErrorInvalidValue, "a copy into another session's memory");

    tdm_memcpy3d_htod_args h = { .dst = box(p, 64, 4), .ext = { 16, 4, 1 } };
    h.data.data_val = bytes;
    h.data.data_len = 63;
    cr_assert_eq(t->ops->post(t, TDM_MEMCPY_3D_HTOD, (xdrproc_t)xdr_tdm_memcpy3d_htod_args, &h), 0);
    cr_expect_eq(dev_sync(t), cudaErrorInvalidValue, "63 bytes for a 16 x 4 box");
    h.data.data_len = 64;
    cr_assert_eq(t->ops->post(t, TDM_MEMCPY_3D_HTOD, (xdrproc_t)xdr_tdm_memcpy3d_htod_args, &h), 0);
    cr_expect_eq(dev_sync(t), 0, "64 bytes for a 16 x 4 box");
    cr_expect(th_server_log_has(&srv, "is smaller than the width"));

    victim_check(&v);
    t->ops->close(t);
    v.t->ops->close(v.t);
}

static int g_array(tdm_transport *t, tdm_array_create_args a, uint64_t *handle)
{
    tdm_handle_res r;

    memset(&r, 0, sizeof(r));
    cr_assert_eq(t->ops->call(t, TDM_ARRAY_CREATE, (xdrproc_t)xdr_tdm_array_create_args, &a,
                              (xdrproc_t)xdr_tdm_handle_res, &r), 0);
    *handle = r.handle;
    return r.err;
}

/* CUDA arrays: impossible channel formats, unknown or foreign array
 * handles, boxes outside an array, memsets of arrays; an array's bytes count
 * in the session's quota. */
Test(bad_input, array_handles_and_boxes_outside_an_array_are_refused, .init = up_quota, .fini = down)
{
    victim v;
    tdm_transport *t;
    uint64_t arr, theirs, h;
    tdm_array_create_args f32 = { .x = 32, .kind = cudaChannelFormatKindFloat, .width = 64, .height = 16 };
    tdm_array_create_args bad = f32;

    victim_start(&v);
    t = guest_open();
    /* Handles are per session: the victim's second array has an id this
     * session's table has never given out. */
    cr_assert_eq(g_array(v.t, f32, &theirs), 0);
    cr_assert_eq(g_array(v.t, f32, &theirs), 0);
    cr_assert_eq(g_array(t, f32, &arr), 0);

    bad.y = 16;
    cr_expect_eq(g_array(t, bad, &h), cudaErrorInvalidChannelDescriptor, "channels of unequal width");
    bad = f32;
    bad.x = 8;
    cr_expect_eq(g_array(t, bad, &h), cudaErrorInvalidChannelDescriptor, "an 8-bit float");
    bad = f32;
    bad.kind = 7;
    cr_expect_eq(g_array(t, bad, &h), cudaErrorInvalidChannelDescriptor, "an unknown kind");
    bad = f32;
    bad.width = 0;
    cr_expect_eq(g_array(t, bad, &h), cudaErrorInvalidValue, "no width");
    bad = f32;
    bad.width = bad.height = 1u << 20;
    cr_expect_eq(g_array(t, bad, &h), cudaErrorMemoryAllocation, "4 TiB over a 4 MiB quota");

    tdm_pitched in = { .addr = 0, .array = arr }, foreign = { .array = theirs };
    cr_expect_eq(g_read_3d(t, in, (tdm_extent3){ 256, 16, 1 }), 0, "the whole array");
    cr_expect_eq(g_read_3d(t, in, (tdm_extent3){ 257, 16, 1 }), cudaErrorInvalidValue, "a row past the width");
    in.y = 1;
    cr_expect_eq(g_read_3d(t, in, (tdm_extent3){ 256, 16, 1 }), cudaErrorInvalidValue, "rows past the height");
    in.y = 0;
    in.z = 1;
    cr_expect_eq(g_read_3d(t, in, (tdm_extent3){ 4, 1, 1 }), cudaErrorInvalidValue, "a slice a 2D array lacks");
    in.z = 0;
    in.addr = UINT64_MAX;
    cr_expect_eq(g_read_3d(t, in, (tdm_extent3){ 4, 1, 1 }), cudaErrorInvalidValue, "an offset that overflows");
    cr_expect_eq(g_read_3d(t, foreign, (tdm_extent3){ 4, 1, 1 }), cudaErrorInvalidResourceHandle,
                 "another session's array");
    in.addr = 0;
    cr_expect_eq(g_memset_3d(t, in, (tdm_extent3){ 4, 1, 1 }), cudaErrorInvalidValue, "a memset of an array");

    tdm_handle gone = theirs;
    cr_expect_eq(call_err(t, TDM_ARRAY_DESTROY, (xdrproc_t)xdr_tdm_handle, &gone), cudaErrorInvalidValue,
                 "freeing another session's array");
    gone = arr;
    cr_expect_eq(call_err(t, TDM_ARRAY_DESTROY, (xdrproc_t)xdr_tdm_handle, &gone), 0);
    cr_expect_eq(call_err(t, TDM_ARRAY_DESTROY, (xdrproc_t)xdr_tdm_handle, &gone), cudaErrorInvalidValue,
                 "freeing it twice");
    cr_expect_eq(g_read_3d(t, (tdm_pitched){ .array = arr }, (tdm_extent3){ 4, 1, 1 }),
                 cudaErrorInvalidResourceHandle, "a freed array");

    victim_check(&v);
    t->ops->close(t);
    v.t->ops->close(v.t);
}

static int g_object(tdm_transport *t, uint32_t proc, void *res, u_int res_len, void *tex, u_int tex_len,
                    uint64_t *value)
{
    tdm_object_create_args a;
    tdm_object_res r;

    memset(&a, 0, sizeof(a));
    memset(&r, 0, sizeof(r));
    a.res.res_val = res;
    a.res.res_len = res_len;
    a.tex.tex_val = tex;
    a.tex.tex_len = tex_len;
    cr_assert_eq(t->ops->call(t, proc, (xdrproc_t)xdr_tdm_object_create_args, &a, (xdrproc_t)xdr_tdm_object_res,
                              &r), 0);
    *value = r.value;
    return r.err;
}

/* Texture and surface objects: descriptors of the wrong size, memory
 * outside the session, unknown arrays, objects destroyed that the session
 * does not hold. */
Test(bad_input, texture_objects_outside_the_session_are_refused, .init = up, .fini = down)
{
    victim v;
    tdm_transport *t;
    struct cudaResourceDesc res;
    struct cudaTextureDesc tex;
    uint64_t p, obj, theirs;
    int err;

    victim_start(&v);
    t = guest_open();
    p = g_malloc(t, 4096, &err);
    cr_assert_eq(err, 0);
    memset(&res, 0, sizeof(res));
    memset(&tex, 0, sizeof(tex));
    res.resType = cudaResourceTypeLinear;
    res.res.linear.devPtr = (void *)(uintptr_t)p;
    res.res.linear.desc = (struct cudaChannelFormatDesc){ 32, 0, 0, 0, cudaChannelFormatKindFloat };
    res.res.linear.sizeInBytes = 4096;
    cr_assert_eq(g_object(t, TDM_TEX_OBJECT_CREATE, &res, sizeof(res), &tex, sizeof(tex), &obj), 0);
    cr_expect_eq(g_object(t, TDM_TEX_OBJECT_CREATE, &res, sizeof(res) - 1, &tex, sizeof(tex), &theirs),
                 cudaErrorInvalidValue, "a resource descriptor one byte short");
    cr_expect_eq(g_object(t, TDM_TEX_OBJECT_CREATE, &res, sizeof(res), &tex, 3, &theirs), cudaErrorInvalidValue,
                 "a texture descriptor of 3 bytes");
    res.res.linear.sizeInBytes = 4097;
    cr_expect_eq(g_object(t, TDM_TEX_OBJECT_CREATE, &res, sizeof(res), &tex, sizeof(tex), &theirs),
                 cudaErrorInvalidValue, "linear memory past the allocation");
    res.res.linear.sizeInBytes = 64;
    res.res.linear.devPtr = (void *)(uintptr_t)v.addr;
    cr_expect_eq(g_object(t, TDM_TEX_OBJECT_CREATE, &res, sizeof(res), &tex, sizeof(tex), &theirs),
                 cudaErrorInvalidValue, "another session's memory");
    res.resType = cudaResourceTypePitch2D;
    res.res.pitch2D.devPtr = (void *)(uintptr_t)p;
    res.res.pitch2D.desc = (struct cudaChannelFormatDesc){ 32, 0, 0, 0, cudaChannelFormatKindFloat };
    res.res.pitch2D.width = 64;
    res.res.pitch2D.height = 4;
    res.res.pitch2D.pitchInBytes = 128;
    cr_expect_eq(g_object(t, TDM_TEX_OBJECT_CREATE, &res, sizeof(res), &tex, sizeof(tex), &theirs),
                 cudaErrorInvalidValue, "a pitch below the row");
    res.res.pitch2D.pitchInBytes = 1024;
    res.res.pitch2D.height = 5;
    cr_expect_eq(g_object(t, TDM_TEX_OBJECT_CREATE, &res, sizeof(res), &tex, sizeof(tex), &theirs),
                 cudaErrorInvalidValue, "rows past the allocation");
    memset(&res, 0, sizeof(res));
    res.resType = cudaResourceTypeArray;
    res.res.array.array = (cudaArray_t)(uintptr_t)0x4100000100000003ull;
    cr_expect_eq(g_object(t, TDM_SURF_OBJECT_CREATE, &res, sizeof(res), NULL, 0, &theirs),
                 cudaErrorInvalidResourceHandle, "a surface of an unknown array");
    cr_expect_eq(g_object(t, TDM_SURF_OBJECT_CREATE, &res, sizeof(res), &tex, sizeof(tex), &theirs),
                 cudaErrorInvalidValue, "a surface with a texture descriptor");

    tdm_u64 val = obj;
    cr_expect_eq(call_err(t, TDM_SURF_OBJECT_DESTROY, (xdrproc_t)xdr_tdm_u64, &val), cudaErrorInvalidValue,
                 "a texture destroyed as a surface");
    cr_expect_eq(call_err(t, TDM_TEX_OBJECT_DESTROY, (xdrproc_t)xdr_tdm_u64, &val), 0);
    cr_expect_eq(call_err(t, TDM_TEX_OBJECT_DESTROY, (xdrproc_t)xdr_tdm_u64, &val), cudaErrorInvalidValue,
                 "destroyed twice");
    cr_expect(th_server_log_has(&srv, "destroying an unknown texture object"));
    victim_check(&v);
    t->ops->close(t);
    v.t->ops->close(v.t);
}

/* ---- runtime (issue 14) ---- */
/* The occupancy calculator on a function handle the session does not have
 * (never issued, another kind of handle, the legacy stream's) is refused
 * with cudaErrorInvalidDeviceFunction, whatever the other arguments. */
Test(bad_input, occupancy_of_an_unknown_function_is_refused, .init = up, .fini = down)
{
    tdm_transport *t = guest_open();
    tdm_handle handles[] = { 0, 1, 0x4600000100000001ull, 0x5300000100000007ull, UINT64_MAX };
    uint32_t procs[] = { TDM_OCCUPANCY_MAX_BLOCKS, TDM_OCCUPANCY_DYN_SMEM };

    for (size_t p = 0; p < 2; p++)
        for (size_t i = 0; i < sizeof(handles) / sizeof(handles[0]); i++) {
            tdm_occupancy_args a = { handles[i], 256, 1, 0, 0 };
            tdm_u64_res r;
            memset(&r, 0, sizeof(r));
            cr_assert_eq(t->ops->call(t, procs[p], (xdrproc_t)xdr_tdm_occupancy_args, &a,
                                      (xdrproc_t)xdr_tdm_u64_res, &r), 0);
            cr_expect_eq(r.err, cudaErrorInvalidDeviceFunction, "proc %u handle %#llx", procs[p],
                         (unsigned long long)handles[i]);
            cr_expect_eq(r.value, 0);
        }
    cr_expect_eq(dev_sync(t), 0, "the session is unharmed");
    t->ops->close(t);
}

/* A stream's priority (which cudaStreamGetId and cudaStreamGetDevice use to
 * confirm the stream) for a stream the session does not have. */
Test(bad_input, priority_of_an_unknown_stream_is_refused, .init = up, .fini = down)
{
    tdm_transport *t = guest_open();
    tdm_handle handles[] = { 3, 0x4500000100000001ull, 0x5300000100000007ull, UINT64_MAX };
    tdm_int_pair_res r;

    for (size_t i = 0; i < sizeof(handles) / sizeof(handles[0]); i++) {
        memset(&r, 0, sizeof(r));
        cr_assert_eq(t->ops->call(t, TDM_STREAM_GET_PRIORITY, (xdrproc_t)xdr_tdm_handle, &handles[i],
                                  (xdrproc_t)xdr_tdm_int_pair_res, &r), 0);
        cr_expect_eq(r.err, cudaErrorInvalidResourceHandle, "handle %#llx", (unsigned long long)handles[i]);
    }
    t->ops->close(t);
}

static uint64_t get_limit(tdm_transport *t, unsigned limit, int *err)
{
    tdm_u32 l = limit;
    tdm_u64_res r;

    memset(&r, 0, sizeof(r));
    cr_assert_eq(t->ops->call(t, TDM_DEVICE_GET_LIMIT, (xdrproc_t)xdr_tdm_u32, &l, (xdrproc_t)xdr_tdm_u64_res, &r), 0);
    *err = r.err;
    return r.value;
}

static int set_limit(tdm_transport *t, unsigned limit, uint64_t value)
{
    tdm_limit_args a = { limit, value };

    return call_err(t, TDM_DEVICE_SET_LIMIT, (xdrproc_t)xdr_tdm_limit_args, &a);
}

/* Sessions share the device's limits, which only grow (the backends'
 * limit_raise): whatever another session set, each reads back its own
 * setting or, having set none, the default (1024 bytes of stack), and a
 * limit CUDA does not have is refused. */
Test(bad_input, each_session_reads_back_its_own_limit, .init = up, .fini = down)
{
    tdm_transport *a = guest_open(), *b = guest_open(), *c = guest_open();
    int err = -1;

    cr_expect_eq(set_limit(a, cudaLimitStackSize, 8192), 0);
    cr_expect_eq(set_limit(b, cudaLimitStackSize, 2048), 0);
    cr_expect_eq(get_limit(b, cudaLimitStackSize, &err), 2048);
    cr_expect_eq(err, 0);
    cr_expect_eq(get_limit(a, cudaLimitStackSize, &err), 8192);
    cr_expect_eq(get_limit(c, cudaLimitStackSize, &err), 1024, "a session that set nothing reads the default");
    /* No cudaLimit at all: a bad value, as the runtime answers. */
    cr_expect_eq(set_limit(a, 7, 1), cudaErrorInvalidValue);
    cr_expect_eq(set_limit(a, UINT32_MAX, 1), cudaErrorInvalidValue);
    get_limit(a, 99, &err);
    cr_expect_eq(err, cudaErrorInvalidValue);
    a->ops->close(a);
    b->ops->close(b);
    c->ops->close(c);
}

/* A kernel's settings for a function handle the session does not have. */
Test(bad_input, settings_of_an_unknown_function_are_refused, .init = up, .fini = down)
{
    tdm_transport *t = guest_open();
    tdm_func_set_args a = { 0x4600000100000001ull, cudaFuncAttributePreferredSharedMemoryCarveout, 50 };
    tdm_func_set_args c = { 0x4600000100000001ull, cudaFuncCachePreferL1, 0 };

    cr_expect_eq(call_err(t, TDM_FUNC_SET_ATTRIBUTE, (xdrproc_t)xdr_tdm_func_set_args, &a),
                 cudaErrorInvalidDeviceFunction);
    cr_expect_eq(call_err(t, TDM_FUNC_SET_CACHE_CONFIG, (xdrproc_t)xdr_tdm_func_set_args, &c),
                 cudaErrorInvalidDeviceFunction);
    t->ops->close(t);
}

/* ---- memory models (issue 14) ---- */

static uint64_t g_malloc_async(tdm_transport *t, uint64_t size, uint64_t pool, uint64_t stream, int *err)
{
    tdm_malloc_async_args a = { .size = size, .pool = pool, .stream = stream };
    tdm_malloc_res r;
    memset(&r, 0, sizeof(r));
    cr_assert_eq(t->ops->call(t, TDM_MALLOC_ASYNC, (xdrproc_t)xdr_tdm_malloc_async_args, &a,
                              (xdrproc_t)xdr_tdm_malloc_res, &r), 0);
    *err = r.err;
    return r.addr;
}

static int g_free_async(tdm_transport *t, uint64_t addr, uint64_t stream)
{
    tdm_free_async_args a = { .addr = addr, .stream = stream };
    return call_err(t, TDM_FREE_ASYNC, (xdrproc_t)xdr_tdm_free_async_args, &a);
}

static uint64_t g_pool_create(tdm_transport *t, uint64_t max_size, int *err)
{
    tdm_handle_res r;
    tdm_u64 m = max_size;
    memset(&r, 0, sizeof(r));
    cr_assert_eq(t->ops->call(t, TDM_MEM_POOL_CREATE, (xdrproc_t)xdr_tdm_u64, &m, (xdrproc_t)xdr_tdm_handle_res, &r),
                 0);
    *err = r.err;
    return r.handle;
}

static int g_pool_set(tdm_transport *t, uint64_t pool, int attr, uint64_t value)
{
    tdm_pool_attr_args a = { .pool = pool, .attr = attr, .value = value };
    return call_err(t, TDM_MEM_POOL_SET_ATTR, (xdrproc_t)xdr_tdm_pool_attr_args, &a);
}

static int g_pool_get(tdm_transport *t, uint64_t pool, int attr, uint64_t *value)
{
    tdm_pool_attr_args a = { .pool = pool, .attr = attr };
    tdm_pool_attr_res r;
    memset(&r, 0, sizeof(r));
    cr_assert_eq(t->ops->call(t, TDM_MEM_POOL_GET_ATTR, (xdrproc_t)xdr_tdm_pool_attr_args, &a,
                              (xdrproc_t)xdr_tdm_pool_attr_res, &r), 0);
    *value = r.value;
    return r.err;
}

/* Unknown pools, streams and addresses, attributes that cannot be set, the
 * default pool destroyed, a double free: each refused as CUDA refuses it. */
Test(bad_input, stream_ordered_allocation_refuses_what_is_not_the_sessions, .init = up, .fini = down)
{
    victim v;
    victim_start(&v);
    int err;
    uint64_t value, forged = 0x5000000100000007ull, stream_handle = 0x5300000100000007ull;

    g_malloc_async(v.t, 4096, forged, 0, &err);
    cr_expect_eq(err, cudaErrorInvalidValue, "an unknown pool");
    g_malloc_async(v.t, 4096, 0, stream_handle, &err);
    cr_expect_eq(err, cudaErrorInvalidResourceHandle, "an unknown stream");
    cr_expect_eq(g_free_async(v.t, 0x1234, 0), cudaErrorInvalidValue, "an address never allocated");
    uint64_t p = g_malloc_async(v.t, 4096, 0, 0, &err);
    cr_assert_eq(err, 0);
    cr_expect_eq(g_free_async(v.t, p + 16, 0), cudaErrorInvalidValue, "not the start of the allocation");
    cr_expect_eq(g_free_async(v.t, p, stream_handle), cudaErrorInvalidResourceHandle, "an unknown stream");
    cr_expect_eq(g_free_async(v.t, p, 0), 0);
    cr_expect_eq(g_free_async(v.t, p, 0), cudaErrorInvalidValue, "freed twice");
    tdm_addr a = p;
    cr_expect_eq(call_err(v.t, TDM_FREE, (xdrproc_t)xdr_tdm_addr, &a), cudaErrorInvalidValue, "freed again");

    cr_expect_eq(g_pool_get(v.t, forged, cudaMemPoolAttrReleaseThreshold, &value), cudaErrorInvalidValue);
    cr_expect_eq(g_pool_get(v.t, TDM_DEFAULT_MEM_POOL, 99, &value), cudaErrorInvalidValue, "an unknown attribute");
    cr_expect_eq(g_pool_set(v.t, TDM_DEFAULT_MEM_POOL, cudaMemPoolAttrUsedMemCurrent, 0), cudaErrorInvalidValue,
                 "a current value cannot be set");
    cr_expect_eq(g_pool_set(v.t, TDM_DEFAULT_MEM_POOL, cudaMemPoolAttrUsedMemHigh, 5), cudaErrorInvalidValue,
                 "a high-water mark is only reset to 0");
    tdm_handle h = TDM_DEFAULT_MEM_POOL;
    cr_expect_eq(call_err(v.t, TDM_MEM_POOL_DESTROY, (xdrproc_t)xdr_tdm_handle, &h), cudaErrorInvalidValue,
                 "the default pool cannot be destroyed");
    h = forged;
    cr_expect_eq(call_err(v.t, TDM_MEM_POOL_DESTROY, (xdrproc_t)xdr_tdm_handle, &h), cudaErrorInvalidValue);
    cr_expect_eq(call_err(v.t, TDM_DEVICE_SET_MEM_POOL, (xdrproc_t)xdr_tdm_handle, &h), cudaErrorInvalidValue);
    victim_check(&v);
    v.t->ops->close(v.t);
}

/* A pool's maximum size and the session's quota bound stream-ordered
 * allocations; memory freed on a stream comes back once the stream has
 * passed the free; a destroyed pool's handle is dead at once. */
Test(bad_input, pools_are_bounded_by_their_size_and_the_quota, .init = up_quota, .fini = down)
{
    victim v;
    victim_start(&v);
    int err;
    uint64_t value;

    g_malloc_async(v.t, 8ull << 20, 0, 0, &err);
    cr_expect_eq(err, cudaErrorMemoryAllocation, "over the session's quota");
    uint64_t pool = g_pool_create(v.t, 2ull << 20, &err);
    cr_assert_eq(err, 0);
    uint64_t p = g_malloc_async(v.t, 2ull << 20, pool, 0, &err);
    cr_expect_eq(err, 0);
    g_malloc_async(v.t, 1, pool, 0, &err);
    cr_expect_eq(err, cudaErrorMemoryAllocation, "over the pool's maximum size");
    cr_expect_eq(g_pool_get(v.t, pool, cudaMemPoolAttrUsedMemCurrent, &value), 0);
    cr_expect_eq(value, 2ull << 20);
    cr_expect_eq(g_free_async(v.t, p, 0), 0);
    cr_expect_eq(dev_sync(v.t), 0);
    cr_expect_eq(g_pool_get(v.t, pool, cudaMemPoolAttrReservedMemCurrent, &value), 0);
    cr_expect_eq(value, 0, "the free is reaped once its stream passed it");
    p = g_malloc_async(v.t, 2ull << 20, pool, 0, &err);
    cr_expect_eq(err, 0, "the freed memory is the pool's again");
    tdm_handle h = pool;
    cr_expect_eq(call_err(v.t, TDM_MEM_POOL_DESTROY, (xdrproc_t)xdr_tdm_handle, &h), 0,
                 "destroyed with an allocation outstanding, as CUDA allows");
    cr_expect_eq(g_pool_get(v.t, pool, cudaMemPoolAttrUsedMemCurrent, &value), cudaErrorInvalidValue);
    cr_expect_eq(g_free_async(v.t, p, 0), 0, "its allocation is still freed");
    cr_expect_eq(dev_sync(v.t), 0);
    victim_check(&v);
    v.t->ops->close(v.t);
}

/* A session cannot make the server keep unbounded pool records. */
Test(bad_input, pool_count_is_bounded, .init = up, .fini = down)
{
    tdm_transport *t = guest_open();
    int err = 0;
    int made = 0;

    for (; made < 2000; made++) {
        g_pool_create(t, 0, &err);
        if (err)
            break;
    }
    cr_expect_eq(err, cudaErrorMemoryAllocation);
    cr_expect_eq(made, 1024);
    cr_expect(th_server_log_has(&srv, "already has 1024 pools"));
    t->ops->close(t);
}

/* A guest that leaves with allocations, frees still queued behind work and
 * pools gives all of its memory back. */
Test(bad_input, leaving_guest_releases_stream_ordered_memory, .init = up, .fini = down)
{
    victim v;
    victim_start(&v);
    uint64_t before = g_free_bytes(v.t);
    tdm_transport *t = guest_open();
    int err;

    uint64_t pool = g_pool_create(t, 0, &err);
    cr_assert_eq(err, 0);
    g_malloc_async(t, 8ull << 20, pool, 0, &err);
    cr_assert_eq(err, 0);
    uint64_t p = g_malloc_async(t, 16ull << 20, 0, 0, &err);
    cr_assert_eq(err, 0);
    static unsigned char chunk[1 << 20];
    for (int i = 0; i < 16; i++)
        g_write(t, p + ((uint64_t)i << 20), chunk, sizeof(chunk));
    cr_expect_eq(g_free_async(t, p, 0), 0);
    cr_expect_lt(g_free_bytes(v.t), before);
    t->ops->close(t);
    uint64_t after = 0;
    for (int i = 0; i < 100 && (after = g_free_bytes(v.t)) != before; i++)
        usleep(50000);
    cr_expect_eq(after, before, "memory of the guest that left was not released");
    victim_check(&v);
    v.t->ops->close(v.t);
}

/* Mapping host memory for the device needs a pinned block of an shm
 * region: over TCP, or for a span that is no such block, it is refused. */
Test(bad_input, host_map_needs_a_pinned_block_of_the_region, .init = up, .fini = down)
{
    tdm_transport *t = guest_open();
    tdm_shm_span spans[] = { { 0, 4096 }, { 4096, 1ull << 20 }, { UINT64_MAX - 4095, 4096 } };
    tdm_malloc_res r;

    for (size_t i = 0; i < sizeof(spans) / sizeof(spans[0]); i++) {
        memset(&r, 0, sizeof(r));
        cr_assert_eq(t->ops->call(t, TDM_SHM_HOST_MAP, (xdrproc_t)xdr_tdm_shm_span, &spans[i],
                                  (xdrproc_t)xdr_tdm_malloc_res, &r), 0);
        cr_expect_eq(r.err, cudaErrorInvalidValue, "span %zu", i);
        cr_expect_eq(r.addr, 0);
    }
    cr_expect(th_server_log_has(&srv, "not a pinned block of the region"));
    t->ops->close(t);
}

/* ---- cluster launch and device odds and ends (issue 14) ---- */
/* A cluster launch of a function the session does not have, or with an
 * empty grid or an unknown scheduling policy, fails at the next sync; the
 * cluster queries refuse unknown functions and an unknown question; the
 * 1D texture width refuses formats no texture has. */
Test(bad_input, cluster_calls_refuse_unknown_functions_and_bad_values, .init = up, .fini = down)
{
    tdm_transport *t = guest_open();
    tdm_handle funcs[] = { 0, 1, 0x4600000100000001ull, 0x5300000100000007ull, UINT64_MAX };

    for (size_t i = 0; i < sizeof(funcs) / sizeof(funcs[0]); i++) {
        tdm_cluster_launch_args l = { .func = funcs[i], .grid = { 2, 1, 1 }, .block = { 32, 1, 1 },
                                      .cluster = { 2, 1, 1 } };
        tdm_cluster_occupancy_args o = { .what = TDM_CLUSTER_MAX_ACTIVE, .func = funcs[i], .grid = { 2, 1, 1 },
                                         .block = { 32, 1, 1 }, .cluster = { 2, 1, 1 } };
        tdm_func_cluster_res fr;
        tdm_u64_res r;

        cr_assert_eq(t->ops->post(t, TDM_LAUNCH_CLUSTER, (xdrproc_t)xdr_tdm_cluster_launch_args, &l), 0);
        cr_expect_eq(dev_sync(t), cudaErrorInvalidDeviceFunction, "launch of func %#llx",
                     (unsigned long long)funcs[i]);
        memset(&r, 0, sizeof(r));
        cr_assert_eq(t->ops->call(t, TDM_CLUSTER_OCCUPANCY, (xdrproc_t)xdr_tdm_cluster_occupancy_args, &o,
                                  (xdrproc_t)xdr_tdm_u64_res, &r), 0);
        cr_expect_eq(r.err, cudaErrorInvalidDeviceFunction);
        cr_expect_eq(r.value, 0);
        memset(&fr, 0, sizeof(fr));
        cr_assert_eq(t->ops->call(t, TDM_FUNC_GET_CLUSTER_ATTRS, (xdrproc_t)xdr_tdm_handle, &funcs[i],
                                  (xdrproc_t)xdr_tdm_func_cluster_res, &fr), 0);
        cr_expect_eq(fr.err, cudaErrorInvalidDeviceFunction);
    }

    /* Formats: 12-bit channels, 3 channels, 8-bit floats, channels with holes. */
    tdm_tex1d_width_args bad[] = {
        { cudaChannelFormatKindUnsigned, { 12, 0, 0, 0 } },
        { cudaChannelFormatKindFloat, { 32, 32, 32, 0 } },
        { cudaChannelFormatKindFloat, { 8, 0, 0, 0 } },
        { cudaChannelFormatKindSigned, { 16, 0, 16, 0 } },
        { 99, { 32, 0, 0, 0 } },
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        tdm_u64_res r;
        memset(&r, 0, sizeof(r));
        cr_assert_eq(t->ops->call(t, TDM_DEVICE_TEX1D_LINEAR_MAX_WIDTH, (xdrproc_t)xdr_tdm_tex1d_width_args, &bad[i],
                                  (xdrproc_t)xdr_tdm_u64_res, &r), 0);
        cr_expect_eq(r.err, cudaErrorInvalidChannelDescriptor, "format %zu", i);
        cr_expect_eq(r.value, 0);
    }
    cr_expect_eq(dev_sync(t), 0, "the session is unharmed");
    t->ops->close(t);
}

/* Issue 16, finding 4: connections that never send a byte held their session slots for good,
 * so --max-sessions of them locked every guest out.  Guards --handshake-timeout (listener.c
 * speaks_in_time): the silent connection is closed after it, and a guest then gets the slot. */
static void up_one_slot(void)
{
    const char *args[] = { "--max-sessions", "1", "--handshake-timeout", "1", NULL };
    th_server_start(&srv, args);
}

Test(bad_input, silent_connections_do_not_hold_the_session_slots, .init = up_one_slot, .fini = down)
{
    int silent = raw_connect();

    usleep(200000);
    cr_expect(closed_by_server(silent), "the server kept a connection that sent nothing");
    close(silent);
    cr_expect(th_server_log_has(&srv, "sent nothing in 1 s"), "no line about the silent connection; see %s", srv.log);
    tdm_transport *t = guest_open();   /* the one slot is free again */
    cr_expect_eq(dev_sync(t), 0);
    t->ops->close(t);
}

/* Issue 16, finding 3 (streams and events): a session held as many as it asked for, and each
 * stream is a server thread.  Guards --session-streams and --session-events (session.c): the
 * bound is the session's own, refused as running out (cudaErrorMemoryAllocation) with a line,
 * freed by destroying, and another session is not affected. */
static void up_small_bounds(void)
{
    const char *args[] = { "--session-streams", "4", "--session-events", "4", NULL };
    th_server_start(&srv, args);
}

static tdm_handle_res make_stream(tdm_transport *t)
{
    tdm_stream_create_args sc = { 0, 0 };
    return th_call_handle(t, TDM_STREAM_CREATE, (xdrproc_t)xdr_tdm_stream_create_args, &sc);
}

static tdm_handle_res make_event(tdm_transport *t)
{
    unsigned flags = 0;
    return th_call_handle(t, TDM_EVENT_CREATE, (xdrproc_t)xdr_tdm_u32, &flags);
}

Test(bad_input, streams_and_events_per_session_are_bounded, .init = up_small_bounds, .fini = down)
{
    tdm_transport *a = guest_open(), *b = guest_open();
    tdm_handle_res st[4], ev[4];

    for (int i = 0; i < 4; i++) {
        st[i] = make_stream(a);
        ev[i] = make_event(a);
        cr_assert_eq(st[i].err, 0, "stream %d refused", i);
        cr_assert_eq(ev[i].err, 0, "event %d refused", i);
    }
    cr_expect_eq(make_stream(a).err, cudaErrorMemoryAllocation, "a fifth stream was made");
    cr_expect_eq(make_event(a).err, cudaErrorMemoryAllocation, "a fifth event was made");
    cr_expect(th_server_log_has(&srv, "holds 4 streams (--session-streams)"), "no line; see %s", srv.log);
    cr_expect(th_server_log_has(&srv, "holds 4 events (--session-events)"), "no line; see %s", srv.log);
    cr_expect_eq(make_stream(b).err, 0, "another session's stream was refused");
    cr_expect_eq(make_event(b).err, 0, "another session's event was refused");
    cr_expect_eq(call_err(a, TDM_STREAM_DESTROY, (xdrproc_t)xdr_tdm_handle, &st[0].handle), 0);
    cr_expect_eq(call_err(a, TDM_EVENT_DESTROY, (xdrproc_t)xdr_tdm_handle, &ev[0].handle), 0);
    cr_expect_eq(make_stream(a).err, 0, "a stream after one was destroyed was refused");
    cr_expect_eq(make_event(a).err, 0, "an event after one was destroyed was refused");
    a->ops->close(a);
    b->ops->close(b);
}
