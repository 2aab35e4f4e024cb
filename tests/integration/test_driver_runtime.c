/* NVIDIA's own CUDA runtime over Tandem's driver (issue 15): the example programs built with
 * the toolkit's runtime linked in statically (examples/CMakeLists.txt, "NVIDIA's runtime over
 * Tandem's driver") load Tandem's libcuda.so.1 and run on a sim server over TCP and shm.  The
 * runtime starts only if every private export table it asks for answers, the integrity check
 * included (guest-lib/driver/drv_export.c); its output must equal the line example-reference
 * computes on the host. */
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

static const char *nvidia_runtime_program(const char *name)
{
    static char path[4096];

    snprintf(path, sizeof(path), "%s/examples/nvidia-runtime/%s", th_build_dir(), name);
    return path;
}

static void expect_example_on(const char *endpoint, const char *name)
{
    const char *ref_argv[] = { th_bin("example-reference"), name, NULL };
    const char *ex_argv[] = { nvidia_runtime_program(name), NULL };
    th_result *ref = calloc(1, sizeof(*ref)), *got = calloc(1, sizeof(*got));

    th_run(ref_argv, 60, ref);
    cr_assert_eq(ref->status, 0, "example-reference %s failed: %s", name, ref->err);
    th_run_driver_guest(endpoint, ex_argv, 120, got);
    cr_assert_eq(got->status, 0, "%s (NVIDIA's runtime) through Tandem's driver (%s) exited %d; stderr:\n%s", name,
                 endpoint, got->status, got->err);
    cr_expect_str_eq(got->out, ref->out, "%s through Tandem's driver (%s) printed\n%s\nexpected\n%s", name, endpoint,
                     got->out, ref->out);
    /* The session is Tandem's (not some other libcuda.so.1 found on the path). */
    cr_expect(strstr(got->err, "SIMULATED GPU") != NULL, "%s did not open a Tandem session:\n%s", name, got->err);
    free(ref);
    free(got);
}

#define EXAMPLE(name)                                                                              \
    Test(nvidia_runtime, name, .init = up, .fini = down) { expect_example_on(srv.endpoint, #name); } \
    Test(nvidia_runtime_shm, name, .init = up, .fini = down) { expect_example_on(srv.shm_endpoint, #name); }

EXAMPLE(vector_add)
EXAMPLE(increment_loop)
EXAMPLE(streams_events)
EXAMPLE(matmul)

/* Without Tandem's driver on the path the same program finds no driver at all (this machine
 * has none, CI neither): what the test above passes through is Tandem's. */
Test(nvidia_runtime, without_tandems_driver_there_is_no_device, .init = up, .fini = down)
{
    const char *ex_argv[] = { nvidia_runtime_program("vector_add"), NULL };
    th_result *got = calloc(1, sizeof(*got));

    if (!th_simulated()) {
        free(got);
        cr_skip_test("a GPU host has NVIDIA's driver: this check is for machines without one");
    }
    th_run_guest(srv.endpoint, ex_argv, 60, got);
    cr_expect_neq(got->status, 0, "vector_add ran without any driver:\n%s", got->out);
    free(got);
}

/* tandem-run, the way users start a program at the driver level: it puts Tandem's driver first
 * on the library path of an unmodified program. */
Test(nvidia_runtime, tandem_run_starts_a_program_on_tandems_driver, .init = up, .fini = down)
{
    char lib[4200], script[4200];
    const char *ref_argv[] = { th_bin("example-reference"), "vector_add", NULL };
    th_result *ref = calloc(1, sizeof(*ref)), *got = calloc(1, sizeof(*got));

    snprintf(lib, sizeof(lib), "TANDEM_LIB=%s/lib", th_build_dir());
    snprintf(script, sizeof(script), "%s/scripts/tandem-run", TANDEM_SOURCE_DIR);
    const char *argv[] = { "/usr/bin/env", lib, script, nvidia_runtime_program("vector_add"), NULL };
    th_run(ref_argv, 60, ref);
    th_run_guest(srv.endpoint, argv, 120, got);
    cr_assert_eq(got->status, 0, "tandem-run vector_add exited %d:\n%s", got->status, got->err);
    cr_expect_str_eq(got->out, ref->out);
    cr_expect(strstr(got->err, "SIMULATED GPU") != NULL, "no Tandem session:\n%s", got->err);
    free(ref);
    free(got);
}
