/* The front of a server with a process per tenant (issue 16): what it reads of a guest's first
 * call to route it (first_call.c), the handoff of a connection to a tenant's process
 * (handoff.c), and when a tenant's process may be started again (isolate.c). */
#include <criterion/criterion.h>
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "first_call.h"
#include "handoff.h"
#include "isolate.h"
#include "supervise.h"

#define TOKEN "alice-token-0123456789abcdef"

/* An ONC RPC call message of prog/vers/proc with args encoded by xa, into buf; its length. */
static size_t encode_call(char *buf, size_t cap, uint32_t prog, uint32_t vers, uint32_t proc, xdrproc_t xa, void *a)
{
    struct rpc_msg m;
    XDR x;

    memset(&m, 0, sizeof(m));
    m.rm_xid = 7;
    m.rm_direction = CALL;
    m.rm_call.cb_rpcvers = RPC_MSG_VERSION;
    m.rm_call.cb_prog = prog;
    m.rm_call.cb_vers = vers;
    m.rm_call.cb_proc = proc;
    m.rm_call.cb_cred.oa_flavor = AUTH_NONE;
    m.rm_call.cb_verf.oa_flavor = AUTH_NONE;
    xdrmem_create(&x, buf, (u_int)cap, XDR_ENCODE);
    cr_assert(xdr_callmsg(&x, &m));
    if (xa)
        cr_assert(xa(&x, a));
    size_t n = xdr_getpos(&x);
    xdr_destroy(&x);
    return n;
}

static size_t hello(char *buf, size_t cap, const char *token)
{
    tdm_hello_args a = { .proto_version = TDM_PROTO_VERSION, .pid = 1, .client = "pid-1",
                         .token = { (u_int)strlen(token), (char *)token } };
    return encode_call(buf, cap, TANDEM_PROG, TANDEM_V1, TDM_HELLO, (xdrproc_t)xdr_tdm_hello_args, &a);
}

Test(first_call, a_hello_or_a_resume_gives_its_token_and_anything_else_is_refused)
{
    char buf[1024];
    tdm_first_call fc;
    char why[200];
    tdm_resume_args ra = { .proto_version = TDM_PROTO_VERSION, .session_id = 5,
                           .token = { (u_int)strlen(TOKEN), (char *)TOKEN } };
    tdm_addr addr = 0x1000;
    size_t n;

    n = hello(buf, sizeof(buf), TOKEN);
    cr_assert_eq(tdm_first_call_decode(buf, n, &fc, why, sizeof(why)), 0, "%s", why);
    cr_expect_eq(fc.proc, TDM_HELLO);
    cr_expect(fc.token_len == strlen(TOKEN) && memcmp(fc.token, TOKEN, fc.token_len) == 0);

    n = hello(buf, sizeof(buf), "");
    cr_assert_eq(tdm_first_call_decode(buf, n, &fc, why, sizeof(why)), 0, "no token is a token of length 0");
    cr_expect_eq(fc.token_len, 0);

    n = encode_call(buf, sizeof(buf), TANDEM_PROG, TANDEM_V1, TDM_RESUME, (xdrproc_t)xdr_tdm_resume_args, &ra);
    cr_assert_eq(tdm_first_call_decode(buf, n, &fc, why, sizeof(why)), 0, "%s", why);
    cr_expect(fc.proc == TDM_RESUME && fc.token_len == strlen(TOKEN));

    static const struct {
        const char *what, *why;
        uint32_t prog, vers, proc;
        size_t cut;   /* bytes cut off the end */
    } bad[] = {
        { "another procedure first", "not HELLO or RESUME", TANDEM_PROG, TANDEM_V1, TDM_FREE, 0 },
        { "another program", "not Tandem's", 100003, 3, TDM_HELLO, 0 },
        { "another version", "not Tandem's", TANDEM_PROG, TANDEM_V1 + 1, TDM_HELLO, 0 },
        { "a HELLO cut short", "does not decode", TANDEM_PROG, TANDEM_V1, TDM_HELLO, 3 },
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        tdm_hello_args a = { .proto_version = TDM_PROTO_VERSION, .client = "x",
                             .token = { (u_int)strlen(TOKEN), (char *)TOKEN } };
        n = bad[i].proc == TDM_FREE
                ? encode_call(buf, sizeof(buf), bad[i].prog, bad[i].vers, bad[i].proc, (xdrproc_t)xdr_tdm_addr, &addr)
                : encode_call(buf, sizeof(buf), bad[i].prog, bad[i].vers, bad[i].proc, (xdrproc_t)xdr_tdm_hello_args, &a);
        why[0] = '\0';
        cr_expect_eq(tdm_first_call_decode(buf, n - bad[i].cut, &fc, why, sizeof(why)), -1, "%s", bad[i].what);
        cr_expect(strstr(why, bad[i].why) != NULL, "%s: '%s'", bad[i].what, why);
    }
    memset(buf, 0xa5, sizeof(buf));
    cr_expect_eq(tdm_first_call_decode(buf, 64, &fc, why, sizeof(why)), -1, "garbage");
    cr_expect_eq(tdm_first_call_decode(buf, 0, &fc, why, sizeof(why)), -1, "nothing");
}

Test(first_call, a_record_is_whole_only_with_all_its_bytes_in_one_fragment_of_bounded_size)
{
    unsigned char rec[TDM_FIRST_CALL_MAX + 8];
    char why[200];
    static const struct {
        uint32_t mark;
        size_t have;
        long want;
    } rows[] = {
        { 0x80000000u | 100, 0, 0 },                          /* no header yet */
        { 0x80000000u | 100, 3, 0 },                          /* part of the header */
        { 0x80000000u | 100, 50, 0 },                         /* part of the record */
        { 0x80000000u | 100, 104, 104 },                      /* the whole record */
        { 0x80000000u | 100, 200, 104 },                      /* and more behind it */
        { 100, 104, -1 },                                     /* a first fragment that is not the last */
        { 0x80000000u | (TDM_FIRST_CALL_MAX - 4), 8, 0 },     /* the longest allowed */
        { 0x80000000u | (TDM_FIRST_CALL_MAX - 3), 8, -1 },    /* one byte too long */
        { 0xffffffffu, 8, -1 },                               /* 2 GiB claimed */
    };

    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        uint32_t be = htonl(rows[i].mark);
        memset(rec, 0, sizeof(rec));
        memcpy(rec, &be, sizeof(be));
        cr_expect_eq(tdm_first_record_length(rec, rows[i].have, why, sizeof(why)), rows[i].want, "row %zu", i);
    }
}

Test(handoff, a_connection_and_its_region_cross_with_the_peer_and_a_bad_message_carries_nothing)
{
    int pair[2], conn[2], fd, region;
    tdm_handoff out = { .kind = TDM_HANDOFF_SHM, .uid = 1000, .peer = "shm:x pid 42" }, in;

    cr_assert_eq(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, pair), 0);
    cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, conn), 0);
    cr_assert_eq(tdm_handoff_send(pair[0], &out, conn[0], conn[1]), 0);
    cr_assert_eq(tdm_handoff_recv(pair[1], &in, &fd, &region), 0);
    cr_expect(in.kind == TDM_HANDOFF_SHM && in.uid == 1000 && strcmp(in.peer, "shm:x pid 42") == 0);
    cr_expect(fd >= 0 && region >= 0 && fd != conn[0] && region != conn[1], "descriptors of its own");
    cr_expect_eq(write(fd, "x", 1), 1, "the received descriptor is the connection");
    char c;
    cr_expect_eq(read(conn[1], &c, 1), 1);
    close(fd);
    close(region);

    /* TCP with a region, or shm without one: no handoff; what came is closed. */
    out.kind = TDM_HANDOFF_TCP;
    cr_assert_eq(tdm_handoff_send(pair[0], &out, conn[0], conn[1]), 0);
    cr_expect_eq(tdm_handoff_recv(pair[1], &in, &fd, &region), -EPROTO);
    cr_expect(fd == -1 && region == -1);
    out.kind = TDM_HANDOFF_SHM;
    cr_assert_eq(tdm_handoff_send(pair[0], &out, conn[0], -1), 0);
    cr_expect_eq(tdm_handoff_recv(pair[1], &in, &fd, &region), -EPROTO);
    cr_expect_eq(send(pair[0], "short", 5, 0), 5);
    cr_expect_eq(tdm_handoff_recv(pair[1], &in, &fd, &region), -EPROTO, "bytes without descriptors");
    close(pair[0]);
    cr_expect_eq(tdm_handoff_recv(pair[1], &in, &fd, &region), -ENOTCONN, "the front is gone");
    close(pair[1]);
    close(conn[0]);
    close(conn[1]);
}

Test(isolate, a_tenants_process_is_started_again_unless_it_died_too_often_in_the_window)
{
    static const struct {
        time_t now, window_start;
        int starts;
        bool may;
        time_t window_after;
        int starts_after;
    } rows[] = {
        { 100, 100, 0, true, 100, 1 },                                                 /* the first start */
        { 100, 100, TDM_SUPERVISE_MAX_RESTARTS, true, 100, TDM_SUPERVISE_MAX_RESTARTS + 1 },  /* up to the bound */
        { 100, 100, TDM_SUPERVISE_MAX_RESTARTS + 1, false, 100, TDM_SUPERVISE_MAX_RESTARTS + 1 },   /* one more */
        { 100 + TDM_SUPERVISE_WINDOW_S - 1, 100, TDM_SUPERVISE_MAX_RESTARTS + 1, false, 100,
          TDM_SUPERVISE_MAX_RESTARTS + 1 },
        { 100 + TDM_SUPERVISE_WINDOW_S, 100, TDM_SUPERVISE_MAX_RESTARTS + 1, true, 100 + TDM_SUPERVISE_WINDOW_S,
          1 },                                                                         /* a new window */
    };

    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        time_t window = rows[i].window_start;
        int starts = rows[i].starts;
        cr_expect_eq(tdm_isolate_count_start(rows[i].now, &window, &starts), rows[i].may, "row %zu", i);
        cr_expect(window == rows[i].window_after && starts == rows[i].starts_after, "row %zu: window %ld, starts %d",
                  i, (long)window, starts);
    }
}
