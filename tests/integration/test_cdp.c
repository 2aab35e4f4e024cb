/* Dynamic parallelism (docs/device-output.md, "Dynamic parallelism"): a
 * program built with -rdc=true and cudadevrt registers its device-linked
 * image through __cudaRegisterLinkedBinary_* and __cudaRegisterFatBinary;
 * through Tandem it loads on the server and its kernel launches kernels
 * from the device.  On the sim backend the twin computes what the whole
 * tree of launches leaves behind. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static void expect_tree_on(const char *endpoint, int depth)
{
    char arg[16], want[512];
    const char *argv[] = { th_example("cdp_tree"), arg, NULL };
    th_result *got = calloc(1, sizeof(*got));
    unsigned threads = 2u * ((1u << (depth + 1)) - 1u);

    snprintf(arg, sizeof(arg), "%d", depth);
    snprintf(want, sizeof(want),
             "device: depth 0 launches two trees of depth 1 (max %d)\n"
             "cdp_tree: max_depth %d: %u threads ran (expected %u), deepest level %d: PASS\n",
             depth, depth, threads, threads, depth);
    th_run_guest(endpoint, argv, 120, got);
    cr_expect_eq(got->status, 0, "cdp_tree %d (%s) exited %d; stderr:\n%s", depth, endpoint, got->status, got->err);
    cr_expect_str_eq(got->out, want, "cdp_tree %d (%s) printed\n%s\nexpected\n%s", depth, endpoint, got->out, want);
    free(got);
}

Test(cdp, a_kernel_launching_kernels_runs_over_tcp, .init = up, .fini = down)
{
    expect_tree_on(srv.endpoint, 1);
    expect_tree_on(srv.endpoint, 6);
    /* cudadevrt's own kernels and variables are registered too; the sim
     * does not mention them. */
    cr_expect(!th_server_log_has(&srv, "no simulated"), "see %s", srv.log);
}

Test(cdp, a_kernel_launching_kernels_runs_over_shm, .init = up, .fini = down)
{
    expect_tree_on(srv.shm_endpoint, 10);
}
