/* Host callbacks (docs/runtime-api.md, "Host callbacks"): callbacks-check
 * (examples/callbacks_check.cu) through a real server on the sim backend
 * over TCP and shm, and guests speaking the protocol directly that report
 * callbacks they were never given. */
#include <criterion/criterion.h>
#include <driver_types.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

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

static void expect_output_over_both(const char *mode, int timeout_s, const char *want)
{
    const char *endpoints[] = { srv.endpoint, srv.shm_endpoint };
    const char *argv[] = { th_bin("callbacks-check"), mode, NULL };

    for (int i = 0; i < 2; i++) {
        th_result *r = calloc(1, sizeof(*r));
        th_run_guest(endpoints[i], argv, timeout_s, r);
        cr_assert_eq(r->status, 0, "callbacks-check %s (%s) exited %d:\n%s%s", mode ? mode : "", endpoints[i],
                     r->status, r->out, r->err);
        cr_expect_str_eq(r->out, want, "callbacks-check %s (%s) printed\n%s", mode ? mode : "", endpoints[i], r->out);
        free(r);
    }
}

/* Each host function sees the stamp of the kernel and copy just before it
 * on its own stream, in order; the call returns before its stream gets
 * there; another stream's later work does not wait for it; bad arguments
 * are refused as the runtime refuses them. */
Test(callbacks, run_in_stream_order_while_the_caller_runs_ahead, .init = up, .fini = down)
{
    expect_output_over_both(NULL, 60,
                            "stream 0 saw: 1 2 3 4 (4 calls)\n"
                            "stream 1 saw: 101 102 103 104 (4 calls)\n"
                            "stream callback status: cudaSuccess\n"
                            "call returned before its function ran: yes\n"
                            "function ran by the stream's synchronize: yes\n"
                            "other stream's later work finished first: yes\n"
                            "NULL function: cudaErrorInvalidValue\n"
                            "NULL callback: cudaErrorInvalidValue\n"
                            "flags 1: cudaErrorInvalidValue\n");
}

/* The stream's error reaches the callback as its status. */
Test(callbacks, get_the_error_of_the_work_before_them, .init = up, .fini = down)
{
    expect_output_over_both("fault", 60,
                            "launch: cudaSuccess\n"
                            "add callback: cudaSuccess\n"
                            "synchronize: cudaErrorIllegalAddress\n"
                            "callback calls: 1\n"
                            "callback status: cudaErrorIllegalAddress\n");
}

/* A host function may not call CUDA: refused, and nothing deadlocks. */
Test(callbacks, calling_cuda_from_a_callback_is_not_permitted, .init = up, .fini = down)
{
    expect_output_over_both("nested", 60, "cudaMalloc in a host function: cudaErrorNotPermitted\n");
}

/* A guest killed while its callback runs: the session ends, its held
 * stream is released (the server stops cleanly), other guests go on. */
Test(callbacks, a_guest_gone_mid_callback_releases_its_streams, .init = up, .fini = down)
{
    const char *argv[] = { th_bin("callbacks-check"), "hang", NULL };
    th_result *r = calloc(1, sizeof(*r));

    th_run_guest(srv.endpoint, argv, 2, r);
    cr_assert_neq(r->status, 0, "the hanging guest was expected to be killed:\n%s%s", r->out, r->err);
    cr_expect_str_eq(r->out, "waiting\n");
    for (int i = 0; i < 50 && !th_server_log_has(&srv, "host callback(s) not run"); i++)
        usleep(100 * 1000);
    cr_expect(th_server_log_has(&srv, "ended with 1 host callback(s) not run: their streams are released"),
              "see %s", srv.log);
    free(r);
    expect_output_over_both("nested", 60, "cudaMalloc in a host function: cudaErrorNotPermitted\n");
}

/* A callback that exits the program (a failed check in it): the process
 * ends with its status instead of waiting for its own stream at exit. */
Test(callbacks, a_callback_may_exit_the_program, .init = up, .fini = down)
{
    const char *endpoints[] = { srv.endpoint, srv.shm_endpoint };
    const char *argv[] = { th_bin("callbacks-check"), "exit", NULL };

    for (int i = 0; i < 2; i++) {
        th_result *r = calloc(1, sizeof(*r));
        th_run_guest(endpoints[i], argv, 20, r);
        cr_expect_eq(r->status, 3, "callbacks-check exit (%s) ended %d:\n%s%s", endpoints[i], r->status, r->out,
                     r->err);
        free(r);
    }
}

/* ---- guests speaking the protocol directly ---- */

static int enqueue(tdm_transport *t, uint64_t stream, uint64_t fn)
{
    tdm_callback_args a = { .stream = stream, .fn = fn };
    int res = -1;

    cr_assert_eq(t->ops->call(t, TDM_CALLBACK_ENQUEUE, (xdrproc_t)xdr_tdm_callback_args, &a, (xdrproc_t)xdr_int,
                              &res),
                 0);
    return res;
}

/* Reports `done` (0: nothing) and takes what is due: *seq gets the first
 * due instance (0 if none).  The poll's error. */
static int poll_once(tdm_transport *t, uint64_t done, uint64_t *seq, uint64_t *fn)
{
    tdm_callback_poll_args a = { .done = { done ? 1u : 0u, &done } };
    tdm_callback_poll_res r;
    int err;

    memset(&r, 0, sizeof(r));
    cr_assert_eq(t->ops->call(t, TDM_CALLBACK_POLL, (xdrproc_t)xdr_tdm_callback_poll_args, &a,
                              (xdrproc_t)xdr_tdm_callback_poll_res, &r),
                 0);
    err = r.err;
    if (seq)
        *seq = r.due.due_len ? r.due.due_val[0].seq : 0;
    if (fn)
        *fn = r.due.due_len ? r.due.due_val[0].fn : 0;
    xdr_free((xdrproc_t)xdr_tdm_callback_poll_res, (char *)&r);
    return err;
}

/* Polls until a callback is due (at most 5 s); its instance number. */
static uint64_t wait_due(tdm_transport *t, uint64_t *fn)
{
    uint64_t seq = 0;

    for (int i = 0; i < 500 && !seq; i++) {
        cr_assert_eq(poll_once(t, 0, &seq, fn), 0);
        if (!seq)
            usleep(10 * 1000);
    }
    cr_assert_neq(seq, 0, "no callback became due");
    return seq;
}

static int stream_query(tdm_transport *t, uint64_t stream)
{
    int res = -1;

    cr_assert_eq(t->ops->call(t, TDM_STREAM_QUERY, (xdrproc_t)xdr_u_quad_t, &stream, (xdrproc_t)xdr_int, &res), 0);
    return res;
}

Test(callbacks, done_for_a_callback_never_given_is_refused, .init = up, .fini = down)
{
    tdm_transport *t = th_guest_open(srv.endpoint, "callbacks-test");

    cr_expect_eq(poll_once(t, 12345, NULL, NULL), cudaErrorInvalidValue);
    cr_expect(th_server_log_has(&srv, "host callback 12345 reported done, but the session has none"));
    /* Queued and not yet due is not "given" either. */
    cr_assert_eq(enqueue(t, 0, 77), 0);
    uint64_t fn = 0, seq = wait_due(t, &fn);
    cr_expect_eq(fn, 77, "the guest's key comes back");
    cr_expect_eq(poll_once(t, seq + 1, NULL, NULL), cudaErrorInvalidValue);
    cr_expect_eq(stream_query(t, 0), cudaErrorNotReady, "the stream waits for its callback");
    cr_expect_eq(poll_once(t, seq, NULL, NULL), 0);
    for (int i = 0; i < 100 && stream_query(t, 0) == cudaErrorNotReady; i++)
        usleep(10 * 1000);
    cr_expect_eq(stream_query(t, 0), 0, "done releases the stream");
    t->ops->close(t);
}

Test(callbacks, done_twice_is_refused, .init = up, .fini = down)
{
    tdm_transport *t = th_guest_open(srv.endpoint, "callbacks-test");

    cr_assert_eq(enqueue(t, 0, 1), 0);
    uint64_t seq = wait_due(t, NULL);
    cr_expect_eq(poll_once(t, seq, NULL, NULL), 0);
    cr_expect_eq(poll_once(t, seq, NULL, NULL), cudaErrorInvalidValue);
    t->ops->close(t);
}

Test(callbacks, done_from_another_session_is_refused, .init = up, .fini = down)
{
    tdm_transport *a = th_guest_open(srv.endpoint, "callbacks-owner");
    tdm_transport *b = th_guest_open(srv.endpoint, "callbacks-intruder");

    cr_assert_eq(enqueue(a, 0, 5), 0);
    uint64_t seq = wait_due(a, NULL);
    cr_expect_eq(poll_once(b, seq, NULL, NULL), cudaErrorInvalidValue);
    cr_expect_eq(stream_query(a, 0), cudaErrorNotReady, "another session cannot release the stream");
    cr_expect_eq(poll_once(a, seq, NULL, NULL), 0);
    a->ops->close(a);
    b->ops->close(b);
}

Test(callbacks, unknown_stream_is_refused, .init = up, .fini = down)
{
    tdm_transport *t = th_guest_open(srv.endpoint, "callbacks-test");

    cr_expect_eq(enqueue(t, 0xdead0000ull, 1), cudaErrorInvalidResourceHandle);
    t->ops->close(t);
}

/* A guest that never reports done holds at most TDM_CBQ_MAX (1024)
 * callbacks; leaving releases them all. */
Test(callbacks, pending_callbacks_are_bounded_and_released_at_disconnect, .init = up, .fini = down)
{
    tdm_transport *t = th_guest_open(srv.endpoint, "callbacks-test");
    int err = 0, n = 0;

    for (; n < 1100 && !(err = enqueue(t, 0, (uint64_t)n + 1)); n++)
        ;
    cr_expect_eq(n, 1024);
    cr_expect_eq(err, cudaErrorLaunchOutOfResources);
    t->ops->close(t);
    for (int i = 0; i < 50 && !th_server_log_has(&srv, "host callback(s) not run"); i++)
        usleep(100 * 1000);
    cr_expect(th_server_log_has(&srv, "ended with 1024 host callback(s) not run"), "see %s", srv.log);
}
