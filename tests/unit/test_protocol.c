/* The wire protocol: XDR encoding of the Tandem program's frames, and the
 * per-connection ONC RPC loop with the TCP transport talking to it. */
#include <criterion/criterion.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "rpc_server.h"
#include "tandem_rpc.h"
#include "transport.h"
#include "xdr_extra.h"

/* ---- XDR frames ---- */

static size_t encode(xdrproc_t proc, void *obj, char *buf, size_t len)
{
    XDR x;
    size_t used;

    xdrmem_create(&x, buf, (u_int)len, XDR_ENCODE);
    cr_assert(proc(&x, obj), "encoding failed");
    used = xdr_getpos(&x);
    xdr_destroy(&x);
    return used;
}

static bool decode(xdrproc_t proc, void *obj, const char *buf, size_t len)
{
    XDR x;
    bool ok;

    xdrmem_create(&x, (char *)buf, (u_int)len, XDR_DECODE);
    ok = proc(&x, obj);
    xdr_destroy(&x);
    return ok;
}

Test(xdr, launch_args_round_trip)
{
    char params[24] = { 1, 2, 3, 4, 5, 6, 7, 8, 9 };
    tdm_launch_args in = { .func = 7, .grid = { 4096, 2, 1 }, .block = { 256, 1, 1 },
                           .shared_mem = 1024, .stream = 3,
                           .params = { sizeof(params), params } };
    tdm_launch_args out;
    static char buf[4096];
    size_t n = encode((xdrproc_t)xdr_tdm_launch_args, &in, buf, sizeof(buf));

    memset(&out, 0, sizeof(out));
    cr_assert(decode((xdrproc_t)xdr_tdm_launch_args, &out, buf, n));
    cr_expect_eq(out.func, 7);
    cr_expect_eq(out.grid.x, 4096);
    cr_expect_eq(out.grid.y, 2);
    cr_expect_eq(out.block.x, 256);
    cr_expect_eq(out.shared_mem, 1024);
    cr_expect_eq(out.stream, 3);
    cr_assert_eq(out.params.params_len, sizeof(params));
    cr_expect_arr_eq(out.params.params_val, params, sizeof(params));
    xdr_free((xdrproc_t)xdr_tdm_launch_args, (char *)&out);
}

Test(xdr, every_truncation_of_a_frame_fails_to_decode)
{
    char data[100];
    tdm_memcpy_htod_args in = { .dst = 0x200000000000ull, .stream = 0, .data = { sizeof(data), data } };
    static char buf[4096];
    size_t n;

    memset(data, 0xab, sizeof(data));
    n = encode((xdrproc_t)xdr_tdm_memcpy_htod_args, &in, buf, sizeof(buf));
    for (size_t cut = 0; cut < n; cut += 4) {
        tdm_memcpy_htod_args out;

        memset(&out, 0, sizeof(out));
        cr_expect_not(decode((xdrproc_t)xdr_tdm_memcpy_htod_args, &out, buf, cut),
                      "a frame cut to %zu of %zu bytes decoded", cut, n);
        xdr_free((xdrproc_t)xdr_tdm_memcpy_htod_args, (char *)&out);
    }
}

Test(xdr, a_length_past_the_protocol_limit_is_refused)
{
    /* dst, stream, then a data length one past TDM_MAX_CHUNK and no data:
     * the decoder must refuse it before trying to allocate 8 MiB. */
    uint32_t words[] = { 0, htonl(0x2000), 0, 0, htonl(TDM_MAX_CHUNK + 1) };
    tdm_memcpy_htod_args out;

    memset(&out, 0, sizeof(out));
    cr_expect_not(decode((xdrproc_t)xdr_tdm_memcpy_htod_args, &out, (const char *)words, sizeof(words)));
    cr_expect_null(out.data.data_val);
}

/* ---- the RPC loop and the TCP transport ---- */

/* A toy program under the Tandem program number: proc 1 adds its argument
 * to a running total (one-way), proc 2 returns the total (synchronous). */
typedef struct {
    unsigned total;
    unsigned garbage;
} toy_state;

static bool toy_add(void *ctx, void *args, void *res)
{
    toy_state *st = ctx;

    __atomic_store_n(&st->total, st->total * 3 + *(u_int *)args, __ATOMIC_RELEASE);
    return true;
}

static bool toy_total(void *ctx, void *args, void *res)
{
    *(u_int *)res = ((toy_state *)ctx)->total;
    return true;
}

static void toy_garbage(void *ctx, uint32_t proc)
{
    ((toy_state *)ctx)->garbage++;
}

static bool toy_flush(void *ctx, void *args, void *res)
{
    return true;
}

/* TDM_FLUSH as the real program has it: the guest transport's flusher
 * sends it, and an unknown procedure would be answered, leaving a reply the
 * client never reads (its close then resets the connection). */
static const tdm_rpc_proc toy_procs[] = {
    [1] = { (xdrproc_t)xdr_u_int, sizeof(u_int), NULL, 0, toy_add },
    [2] = { (xdrproc_t)tdm_xdr_void, 0, (xdrproc_t)xdr_u_int, sizeof(u_int), toy_total },
    [TDM_FLUSH] = { (xdrproc_t)tdm_xdr_void, 0, NULL, 0, toy_flush },
};
static const tdm_rpc_program toy_program = { TANDEM_PROG, TANDEM_V1, toy_procs,
                                             sizeof(toy_procs) / sizeof(toy_procs[0]), toy_garbage, NULL, NULL, NULL, NULL, NULL };

typedef struct {
    int listen_fd;
    toy_state state;
    tdm_rpc_end end;
} toy_server;

static void *serve_one(void *arg)
{
    toy_server *s = arg;
    char why[128];
    int fd = accept(s->listen_fd, NULL, NULL);

    if (fd >= 0) {
        s->end = tdm_rpc_serve(&toy_program, &s->state, fd, why, sizeof(why));
        close(fd);
    }
    return NULL;
}

static int toy_listen(void)
{
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t len = sizeof(a);
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    cr_assert_geq(fd, 0);
    cr_assert_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    cr_assert_eq(listen(fd, 1), 0);
    cr_assert_eq(getsockname(fd, (struct sockaddr *)&a, &len), 0);
    return fd;
}

static int port_of(int fd)
{
    struct sockaddr_in a;
    socklen_t len = sizeof(a);

    getsockname(fd, (struct sockaddr *)&a, &len);
    return ntohs(a.sin_port);
}

Test(rpc, one_way_calls_arrive_in_order_before_the_next_call)
{
    toy_server s = { .listen_fd = toy_listen() };
    tdm_transport *t = NULL;
    pthread_t th;
    char err[256];
    unsigned expect = 0, got = 0;

    cr_assert_eq(pthread_create(&th, NULL, serve_one, &s), 0);
    cr_assert_eq(tdm_transport_tcp_open("127.0.0.1", port_of(s.listen_fd), &t, err, sizeof(err)), 0, "%s", err);
    for (u_int i = 1; i <= 1000; i++) {
        cr_assert_eq(t->ops->post(t, 1, (xdrproc_t)xdr_u_int, &i), TDM_T_OK);
        expect = expect * 3 + i;
    }
    cr_assert_eq(t->ops->call(t, 2, (xdrproc_t)tdm_xdr_void, NULL, (xdrproc_t)xdr_u_int, &got), TDM_T_OK);
    cr_expect_eq(got, expect, "one-way calls were lost or reordered");

    /* A procedure the program does not have is refused, and the
     * connection goes on serving. */
    cr_expect_eq(t->ops->call(t, 9, (xdrproc_t)tdm_xdr_void, NULL, (xdrproc_t)xdr_u_int, &got), TDM_T_REJECTED);
    cr_expect_eq(t->ops->call(t, 2, (xdrproc_t)tdm_xdr_void, NULL, (xdrproc_t)xdr_u_int, &got), TDM_T_OK);
    cr_expect_eq(got, expect);

    t->ops->close(t);
    pthread_join(th, NULL);
    close(s.listen_fd);
    cr_expect_eq(s.end, TDM_RPC_CLOSED, "the loop should end because the peer closed");
    cr_expect_eq(s.state.garbage, 0);
}

Test(rpc, batched_one_way_calls_go_out_without_a_synchronous_call)
{
    toy_server s = { .listen_fd = toy_listen() };
    tdm_transport *t = NULL;
    pthread_t th;
    char err[256];
    unsigned expect = 0;
    int waited_ms = 0;

    cr_assert_eq(pthread_create(&th, NULL, serve_one, &s), 0);
    cr_assert_eq(tdm_transport_tcp_open("127.0.0.1", port_of(s.listen_fd), &t, err, sizeof(err)), 0, "%s", err);
    for (u_int i = 1; i <= 10; i++) {
        cr_assert_eq(t->ops->post(t, 1, (xdrproc_t)xdr_u_int, &i), TDM_T_OK);
        expect = expect * 3 + i;
    }
    /* A launch must reach the GPU although the guest does not synchronize. */
    while (__atomic_load_n(&s.state.total, __ATOMIC_ACQUIRE) != expect && waited_ms < 2000) {
        usleep(1000);
        waited_ms++;
    }
    cr_expect_eq(__atomic_load_n(&s.state.total, __ATOMIC_ACQUIRE), expect,
                 "batched calls were still not delivered after %d ms", waited_ms);
    t->ops->close(t);
    pthread_join(th, NULL);
    close(s.listen_fd);
}

Test(rpc, a_frame_that_is_not_rpc_ends_only_that_connection)
{
    toy_server s = { .listen_fd = toy_listen() };
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK),
                             .sin_port = htons((uint16_t)port_of(s.listen_fd)) };
    /* A last-fragment record of 16 bytes that claims to be a reply. */
    uint32_t frame[] = { htonl(0x80000000u | 16), htonl(1), htonl(1), htonl(0), htonl(0) };
    pthread_t th;
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    cr_assert_eq(pthread_create(&th, NULL, serve_one, &s), 0);
    cr_assert_eq(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    cr_assert_eq(write(fd, frame, sizeof(frame)), (ssize_t)sizeof(frame));
    pthread_join(th, NULL);
    close(fd);
    close(s.listen_fd);
    cr_expect_eq(s.end, TDM_RPC_MALFORMED);
}
