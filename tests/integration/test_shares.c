/* SM shares seen by a guest program (docs/sm-shares.md): a real server on
 * the sim backend with its share model on (--sim-wave-us), and
 * share_probe, a latency-bound guest whose kernels of 64 blocks each take
 * ceil(64 / share) waves.  At share 8 a kernel takes 8 waves, at share 64
 * one; a share changed mid-run (--test-share-at-work, standing in for the
 * control socket's set_share) takes effect for the later kernels, with the
 * results exact and no error for the guest. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define WAVE_US "5000"       /* 5 ms a wave: 40 ms at share 8, 5 ms at share 64 */
#define SLOW_MS 40.0         /* the model's floor at share 8 */
#define FAST_MS 30.0         /* well under 8 waves, whatever the machine's load */
#define MAX_KERNELS 32

/* Runs share_probe with `kernels` kernels against a sim server started with
 * extra_args; fills ms[] with each kernel's latency. */
static void probe(const char *const *extra_args, int kernels, double *ms, th_server *srv)
{
    char count[16];
    th_result *r = calloc(1, sizeof(*r));
    const char *argv[] = { th_example("share_probe"), count, NULL };
    int seen = 0;

    cr_assert_not_null(r);
    cr_assert_leq(kernels, MAX_KERNELS);
    snprintf(count, sizeof(count), "%d", kernels);
    th_server_start(srv, extra_args);
    th_run_guest(srv->endpoint, argv, 120, r);
    cr_assert_eq(r->status, 0, "share_probe failed: %s", r->err);
    cr_assert(strstr(r->out, "\nok\n"), "results not exact: %s", r->out);
    for (char *line = strtok(r->out, "\n"); line; line = strtok(NULL, "\n")) {
        int k;
        double t;

        if (sscanf(line, "kernel %d %lf", &k, &t) == 2 && k >= 0 && k < kernels) {
            ms[k] = t;
            seen++;
        }
    }
    cr_assert_eq(seen, kernels, "share_probe printed %d of %d kernels", seen, kernels);
    free(r);
}

Test(shares, a_kernel_at_share_8_takes_its_8_waves_and_at_share_64_one)
{
    const char *const at8[] = { "--sim-wave-us", WAVE_US, "--session-sms", "8", NULL };
    const char *const at64[] = { "--sim-wave-us", WAVE_US, "--session-sms", "64", NULL };
    double slow[3], fast[3];
    th_server a, b;

    probe(at8, 3, slow, &a);
    cr_expect_eq(th_server_stop(&a), 0);
    probe(at64, 3, fast, &b);
    cr_expect_eq(th_server_stop(&b), 0);
    for (int k = 0; k < 3; k++) {
        cr_expect_geq(slow[k], SLOW_MS, "kernel %d at share 8: %.1f ms, modelled 40", k, slow[k]);
        cr_expect_geq(fast[k], 5.0, "kernel %d at share 64: %.1f ms, modelled 5", k, fast[k]);
        cr_expect_lt(fast[k], FAST_MS, "kernel %d at share 64: %.1f ms, modelled 5", k, fast[k]);
    }
}

/* The share goes from 8 to 64 as the guest's 4th piece of work (its memset,
 * then its 3rd kernel) is queued: the kernels before it took 8 waves, the
 * ones from it on take one; the guest saw no error and its data is exact. */
Test(shares, a_share_changed_mid_run_holds_for_the_later_kernels)
{
    const char *const args[] = { "--sim-wave-us", WAVE_US, "--session-sms", "8", "--test-share-at-work", "4:64",
                                 NULL };
    double ms[6];
    th_server srv;
    int slow = 0;

    probe(args, 6, ms, &srv);
    cr_expect(th_server_log_has(&srv, "runs on 64 SMs"), "the server did not log the change");
    cr_expect_eq(th_server_stop(&srv), 0);
    while (slow < 6 && ms[slow] >= SLOW_MS)
        slow++;
    cr_expect_eq(slow, 2, "kernels before the change at share 8: %d (latencies %.1f %.1f %.1f %.1f %.1f %.1f)", slow,
                 ms[0], ms[1], ms[2], ms[3], ms[4], ms[5]);
    for (int k = slow; k < 6; k++)
        cr_expect_lt(ms[k], FAST_MS, "kernel %d after the change: %.1f ms, modelled 5", k, ms[k]);
}

/* A share beyond the device is refused at start, naming the option. */
Test(shares, a_default_share_beyond_the_device_stops_the_server)
{
    const char *argv[] = { th_bin("tandem-server"), "--backend", "sim", "--port", "0", "--sim-sms", "16",
                           "--session-sms", "17", NULL };
    th_result *r = calloc(1, sizeof(*r));

    cr_assert_not_null(r);
    th_run(argv, 30, r);
    cr_expect_neq(r->status, 0);
    cr_expect(strstr(r->err, "--session-sms 17"), "no reason given: %s", r->err);
    free(r);
}

/* bench/shares' resize probe on the sim (its kernel's twin, server/sim_kernels/bench_shares.c,
 * marks the SMs of the launch's share): its kernels report 8 SMs, then 64 from the one whose
 * launch is the work the change is asked at.  With 2 streams that is kernel 10's launch:
 * a memset, 2 launches, 3 for the first check, then 3 a kernel (bench/shares/shares.sh counts
 * the same way for --test-share-at-work).  The server's line carries its wall-clock stamps. */
Test(shares, the_resize_probe_sees_each_kernels_share)
{
    const char *const args[] = { "--sim-wave-us", "10", "--session-sms", "8", "--test-share-at-work", "37:64", NULL };
    char shares[1024];
    th_server srv;
    th_result *r = calloc(1, sizeof(*r));
    int seen[20], n = 0;

    cr_assert_not_null(r);
    snprintf(shares, sizeof(shares), "%s/bench/shares", th_build_dir());
    const char *argv[] = { shares, "resize", "--streams", "2", "--kernels", "20", "--iters", "4", NULL };
    th_server_start(&srv, args);
    th_run_guest(srv.endpoint, argv, 120, r);
    cr_assert_eq(r->status, 0, "shares resize failed: %s", r->err);
    for (char *line = strtok(r->out, "\n"); line; line = strtok(NULL, "\n")) {
        int k, s;
        if (sscanf(line, "{\"test\":\"resize\",\"streams\":2,\"kernel\":%d,", &k) == 1 && k >= 0 && k < 20 &&
            strstr(line, "\"sms_seen\":") && sscanf(strstr(line, "\"sms_seen\":"), "\"sms_seen\":%d", &s) == 1) {
            seen[k] = s;
            n++;
        }
    }
    cr_assert_eq(n, 20, "the probe printed %d of 20 kernels", n);
    for (int k = 0; k < 20; k++)
        cr_expect_eq(seen[k], k < 10 ? 8 : 64, "kernel %d ran on %d SMs", k, seen[k]);
    cr_expect(th_server_log_has(&srv, "runs on 64 SMs from its next work"), "the server did not log the change");
    cr_expect(th_server_log_has(&srv, "wall-clock ms: asked "), "the change's line has no wall-clock stamps");
    cr_expect(th_server_log_has(&srv, ", taken "), "the change's line does not say when it was taken");
    cr_expect_eq(th_server_stop(&srv), 0);
    free(r);
}

/* --sm-window (a VM's SM budget, docs/sm-shares.md): a share asked beyond the
 * window gets the window. The change to 64 is asked as the 4th piece of work,
 * as above, but this server's window holds 8 SMs: every kernel keeps taking
 * 8 waves, and the server says what it granted. */
Test(shares, a_share_beyond_the_window_gets_the_window)
{
    const char *const args[] = { "--sim-wave-us", WAVE_US, "--session-sms", "8", "--sm-window", "8:8",
                                 "--test-share-at-work", "4:64", NULL };
    double ms[5];
    th_server srv;

    probe(args, 5, ms, &srv);
    cr_expect(th_server_log_has(&srv, "runs on 8 SMs"), "the server did not log the grant: %s", srv.log);
    cr_expect_not(th_server_log_has(&srv, "runs on 64 SMs"), "a share beyond the window was granted: %s", srv.log);
    cr_expect_eq(th_server_stop(&srv), 0);
    for (int k = 0; k < 5; k++)
        cr_expect_geq(ms[k], SLOW_MS, "kernel %d: %.1f ms, modelled 40 (8 SMs)", k, ms[k]);
}

/* A window past the device, or a default share larger than the window, is
 * refused at start with the option named. */
Test(shares, a_window_no_share_fits_stops_the_server)
{
    const char *const past[] = { "--sim-sms", "16", "--sm-window", "12:8", NULL };
    const char *const small[] = { "--sim-sms", "16", "--sm-window", "0:4", "--session-sms", "8", NULL };
    const char *const bad[] = { "--sm-window", "8", NULL };
    const char *const *cases[] = { past, small, bad };
    const char *want[] = { "--sm-window 12:8", "asks more than the window", "--sm-window takes FIRST:N" };

    for (size_t c = 0; c < 3; c++) {
        const char *argv[16] = { th_bin("tandem-server"), "--backend", "sim", "--port", "0" };
        size_t k = 5;
        th_result *r = calloc(1, sizeof(*r));

        cr_assert_not_null(r);
        for (const char *const *a = cases[c]; *a; a++)
            argv[k++] = *a;
        th_run(argv, 30, r);
        cr_expect_neq(r->status, 0, "case %zu started", c);
        cr_expect(strstr(r->err, want[c]), "case %zu: no reason given: %s", c, r->err);
        free(r);
    }
}
