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
    /* The session is Tandem's (not some other libcuda.so.1 found on the path): the server saw it. */
    cr_expect(th_server_log_has(&srv, "opened by"), "%s did not open a Tandem session:\n%s", name, got->err);
    if (th_simulated())
        cr_expect(strstr(got->err, "SIMULATED GPU") != NULL, "%s: the sim backend must say it is simulated", name);
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
    cr_expect(th_server_log_has(&srv, "opened by"), "no Tandem session:\n%s", got->err);
    free(ref);
    free(got);
}

/* Tandem's driver on its own (tests/driver/driver_core_check.c): initialization, the device,
 * the context stack, cuGetProcAddress's versions and the context-local storage table, each
 * answer what cuda.h documents (the versions: cudaTypedefs.h's PFN_cuMemAlloc_v3020 is
 * cuMemAlloc_v2, PFN_cuCtxCreate_v11040 cuCtxCreate_v3, PFN_cuCtxCreate_v12050 cuCtxCreate_v4,
 * PFN_cuStreamGetCaptureInfo_v12030 its _v3; it has no version before 10010). */
Test(driver_core, answers_as_the_driver_documents, .init = up, .fini = down)
{
    const char *argv[] = { th_bin("driver-core-check"), NULL };
    const char *want =
        "cuDeviceGetCount before cuInit: CUDA_ERROR_NOT_INITIALIZED\n"
        "cuDriverGetVersion before cuInit: CUDA_SUCCESS\n"
        "cuInit(1): CUDA_ERROR_INVALID_VALUE\n"
        "cuInit(0): CUDA_SUCCESS\n"
        "cuDeviceGetCount: CUDA_SUCCESS, 1\n"
        "cuDeviceGet(1): CUDA_ERROR_INVALID_DEVICE\n"
        "cuDeviceGet(0): CUDA_SUCCESS, 0\n"
        "cuCtxGetCurrent: CUDA_SUCCESS, NULL\n"
        "cuCtxGetDevice without a context: CUDA_ERROR_INVALID_CONTEXT\n"
        "primary state before retain: CUDA_SUCCESS, active 0\n"
        "cuDevicePrimaryCtxRetain: CUDA_SUCCESS\n"
        "primary state after retain: CUDA_SUCCESS, active 1\n"
        "cuCtxSetCurrent: CUDA_SUCCESS\n"
        "cuCtxGetCurrent is the primary: yes\n"
        "cuCtxGetDevice: CUDA_SUCCESS, 0\n"
        "cuCtxPopCurrent: CUDA_SUCCESS, the primary\n"
        "cuCtxPopCurrent on an empty stack: CUDA_ERROR_INVALID_CONTEXT\n"
        "cuCtxPushCurrent: CUDA_SUCCESS\n"
        "cuCtxPushCurrent of a forged context: CUDA_ERROR_INVALID_CONTEXT\n"
        "cuCtxSynchronize: CUDA_SUCCESS\n"
        /* measured on the H100 (driver 580.159.04): 232448 (the opt-in maximum), 0, unsupported */
        "limit shared memory: CUDA_SUCCESS, the opt-in maximum yes\n"
        "limit CIG enabled: CUDA_SUCCESS, 0\n"
        "limit CIG fallback: CUDA_ERROR_UNSUPPORTED_LIMIT\n"
        /* cuda.h: "Can only be queried, cannot be set" */
        "set limit CIG enabled: CUDA_ERROR_INVALID_VALUE\n"
        "cuGetProcAddress(cuMemAlloc, 3010): CUDA_SUCCESS, status 0, cuMemAlloc\n"
        "cuGetProcAddress(cuMemAlloc, 12000): CUDA_SUCCESS, status 0, cuMemAlloc_v2\n"
        "cuGetProcAddress(cuCtxCreate, 11040): CUDA_SUCCESS, status 0, cuCtxCreate_v3\n"
        "cuGetProcAddress(cuCtxCreate, 13000): CUDA_SUCCESS, status 0, cuCtxCreate_v4\n"
        "cuGetProcAddress(cuLaunchKernel, 12000, per-thread): CUDA_SUCCESS, status 0, cuLaunchKernel_ptsz\n"
        "cuGetProcAddress(cuStreamGetCaptureInfo, 12030): CUDA_SUCCESS, status 0, cuStreamGetCaptureInfo_v3\n"
        "cuGetProcAddress(cuStreamGetCaptureInfo, 10000): CUDA_ERROR_NOT_FOUND, status 2, (none)\n"
        "cuGetProcAddress(cuNoSuchEntryPoint, 13000): CUDA_ERROR_NOT_FOUND, status 1, (none)\n"
        "cuGetExportTable(unknown): CUDA_ERROR_NOT_FOUND\n"
        "cls put: CUDA_SUCCESS\n"
        "cls get: CUDA_SUCCESS, the value\n"
        "cls delete: CUDA_SUCCESS\n"
        "cls get after delete: CUDA_ERROR_INVALID_HANDLE\n"
        "cuDevicePrimaryCtxRelease: CUDA_SUCCESS\n"
        "cuDevicePrimaryCtxRelease again: CUDA_ERROR_INVALID_CONTEXT\n"
        /* Tandem: the session is gone; the runtime layer answers no device, and no context is current */
        "after the session closed at exit: cuDevicePrimaryCtxRetain CUDA_ERROR_NO_DEVICE, cuMemAlloc CUDA_ERROR_INVALID_CONTEXT\n";
    const char *endpoints[] = { srv.endpoint, srv.shm_endpoint };

    for (int i = 0; i < 2; i++) {
        th_result *r = calloc(1, sizeof(*r));
        th_run_driver_guest(endpoints[i], argv, 60, r);
        cr_assert_eq(r->status, 0, "driver-core-check (%s) exited %d:\n%s%s", endpoints[i], r->status, r->out, r->err);
        cr_expect_str_eq(r->out, want, "driver-core-check (%s) printed\n%s", endpoints[i], r->out);
        free(r);
    }
    /* Guards closed_at_exit (guest-lib/client.c): the calls of the exit handler that runs after
     * Tandem's open no second session. */
    cr_expect_eq(th_server_log_count(&srv, "opened by"), 2, "two runs opened %d sessions; see %s",
                 th_server_log_count(&srv, "opened by"), srv.log);
}
