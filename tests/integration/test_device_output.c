/* Device printf and assert output (docs/device-output.md): the program
 * that launched the kernel gets it, on its own stdout/stderr, at the points
 * CUDA writes it (the device, stream or event synchronize or blocking copy
 * that saw the kernel complete), in
 * order with its host output; the server's log holds none of it; two
 * programs printing at once each get exactly their own.  On the sim backend
 * the twins of examples/device_printf.cu print through sim_printf. */
#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "background.h"
#include "harness.h"

static th_server srv;

static void up(void)
{
    th_server_start(&srv, NULL);
}

static void down(void)
{
    cr_expect_eq(th_server_stop(&srv), 0, "tandem-server did not stop cleanly; see %s", srv.log);
}

static void add(char *buf, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void add(char *buf, size_t cap, const char *fmt, ...)
{
    size_t len = strlen(buf);
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(buf + len, cap - len, fmt, ap);
    va_end(ap);
}

/* What `device_printf ROUNDS` prints natively, written out independently of
 * the program: each round's device lines between its "launched" line and
 * its sync line. */
static void expected(int rounds, char *buf, size_t cap)
{
    long sum = 0;

    buf[0] = 0;
    add(buf, cap, "host: start, %d rounds\n", rounds);
    for (int r = 0; r < rounds; r++) {
        add(buf, cap, "host: launched round %d\n", r);
        for (int i = 0; i <= r; i++)
            add(buf, cap, "device: round %d line %d of %d (%s)\n", r, i, r + 1, i % 2 ? "odd" : "even");
        if (r % 4 == 0)
            add(buf, cap, "host: round %d synchronized (device)\n", r);
        else if (r % 4 == 1)
            add(buf, cap, "host: round %d synchronized (stream)\n", r);
        else if (r % 4 == 2)
            add(buf, cap, "host: round %d copied back %d\n", r, r * 100 + r + 1);
        else
            add(buf, cap, "host: round %d synchronized (event)\n", r);
        sum += r * 100 + r + 1;
    }
    add(buf, cap, "host: sum %ld\n", sum);
    add(buf, cap, "device: round %d line 0 of 1 (even)\n", rounds);
}

static void expect_rounds_on(const char *endpoint, int rounds)
{
    char arg[16], *want = malloc(16384);
    const char *argv[] = { th_example("device_printf"), arg, NULL };
    th_result *got = calloc(1, sizeof(*got));

    snprintf(arg, sizeof(arg), "%d", rounds);
    expected(rounds, want, 16384);
    th_run_guest(endpoint, argv, 120, got);
    cr_assert_eq(got->status, 0, "device_printf %d (%s) exited %d; stderr:\n%s", rounds, endpoint, got->status, got->err);
    cr_expect_str_eq(got->out, want, "device_printf %d (%s) printed\n%s\nexpected\n%s", rounds, endpoint, got->out, want);
    free(got);
    free(want);
}

Test(device_output, printf_lines_reach_the_program_at_its_sync_points_over_tcp, .init = up, .fini = down)
{
    expect_rounds_on(srv.endpoint, 7);
    cr_expect(!th_server_log_has(&srv, "device: round"), "device output leaked into the server's log %s", srv.log);
    cr_expect(!th_server_log_has(&srv, "no session to own"), "device output had no owner; see %s", srv.log);
}

Test(device_output, printf_lines_reach_the_program_at_its_sync_points_over_shm, .init = up, .fini = down)
{
    expect_rounds_on(srv.shm_endpoint, 7);
    cr_expect(!th_server_log_has(&srv, "device: round"), "device output leaked into the server's log %s", srv.log);
}

/* A failing device assert: the driver's message on the program's stderr,
 * cudaErrorAssert from the synchronize and from every one after it (the
 * error is sticky), and the program's stdout lines on either side of it. */
Test(device_output, a_failing_assert_reports_its_message_and_cudaErrorAssert, .init = up, .fini = down)
{
    const char *argv[] = { th_example("device_printf"), "assert", NULL };
    th_result *got = calloc(1, sizeof(*got));

    th_run_guest(srv.endpoint, argv, 120, got);
    cr_expect_eq(got->status, 0, "device_printf assert exited %d; stderr:\n%s", got->status, got->err);
    cr_expect_str_eq(got->out, "host: launching check(-1)\nhost: synchronize returned cudaErrorAssert\n"
                               "host: next synchronize returned cudaErrorAssert\n");
    cr_expect(strstr(got->err, "device_printf.cu:36: void check(int): block: [0,0,0], thread: [0,0,0] "
                               "Assertion `value >= 0` failed.\n") != NULL,
              "the assert's message is not on the program's stderr:\n%s", got->err);
    cr_expect(!th_server_log_has(&srv, "Assertion `value"), "the assert's message leaked into the server's log %s",
              srv.log);
    free(got);
}

/* Two programs printing at the same time, one over each transport: each
 * output is exactly its own (a line of the other's would break the text). */
Test(device_output, concurrent_sessions_each_get_only_their_own_output, .init = up, .fini = down)
{
    enum { N = 4 };
    const int rounds[N] = { 60, 61, 62, 63 };
    char args[N][16];
    th_bg bg[N];
    char *want = malloc(65536), *out = malloc(65536), *err = malloc(16384);

    for (int i = 0; i < N; i++) {
        const char *argv[] = { th_example("device_printf"), args[i], NULL };

        snprintf(args[i], sizeof(args[i]), "%d", rounds[i]);
        th_bg_start(&bg[i], i % 2 ? srv.shm_endpoint : srv.endpoint, argv, NULL, NULL);
    }
    for (int i = 0; i < N; i++) {
        int st = th_bg_wait(&bg[i], 120, out, 65536, err, 16384);

        expected(rounds[i], want, 65536);
        cr_expect_eq(st, 0, "device_printf %d exited %d; stderr:\n%s", rounds[i], st, err);
        cr_expect_str_eq(out, want, "device_printf %d printed\n%s\nexpected\n%s", rounds[i], out, want);
    }
    cr_expect(!th_server_log_has(&srv, "device: round"), "device output leaked into the server's log %s", srv.log);
    free(want);
    free(out);
    free(err);
}
