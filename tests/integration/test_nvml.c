/* Tandem's libnvidia-ml.so.1 (docs/nvml.md): nvml-check (tests/driver/nvml_check.c) loads it
 * as PyTorch does and compares its answers with the runtime layer's, over TCP and shm; with
 * no server, nvmlInit fails as with no driver and says why once. */
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

static int occurrences(const char *text, const char *what)
{
    int n = 0;

    for (const char *p = strstr(text, what); p; p = strstr(p + 1, what))
        n++;
    return n;
}

/* Every answer is NVML's documented one (the NVML API reference's "Returns" of each
 * function), and each error code was also NVIDIA's library's answer on an H100 (driver
 * 580.159.04, a probe of the same calls); where Tandem answers otherwise than NVML on the
 * host would, the expectation says so and why. */
Test(nvml, answers_from_the_sessions_device, .init = up, .fini = down)
{
    const char *argv[] = { th_bin("nvml-check"), NULL };
    const char *endpoints[] = { srv.endpoint, srv.shm_endpoint };
    const char *want =
        /* Every query before nvmlInit, nvmlShutdown included. */
        "count before nvmlInit: NVML_ERROR_UNINITIALIZED\n"
        "handle before nvmlInit: NVML_ERROR_UNINITIALIZED\n"
        "shutdown before nvmlInit: NVML_ERROR_UNINITIALIZED\n"
        "error string of NVML_ERROR_UNINITIALIZED: a text\n"
        /* Initializations count (nvmlInit twice needs nvmlShutdown twice, below). */
        "nvmlInit: NVML_SUCCESS\n"
        "nvmlInit_v2: NVML_SUCCESS\n"
        /* An unknown flag is ignored, as natively (H100, driver 580.159.04). */
        "nvmlInitWithFlags(4): NVML_SUCCESS\n"
        "shutdown of it: NVML_SUCCESS\n"
        "count: NVML_SUCCESS, agrees with the runtime\n"
        "count (v1): NVML_SUCCESS, agrees with the runtime\n"
        "count into NULL: NVML_ERROR_INVALID_ARGUMENT\n"
        "handle of index 0: NVML_SUCCESS\n"
        /* An index past the last device is an invalid argument, not "not found". */
        "handle of index count: NVML_ERROR_INVALID_ARGUMENT\n"
        "handle into NULL: NVML_ERROR_INVALID_ARGUMENT\n"
        "name: NVML_SUCCESS, agrees with the runtime\n"
        /* A buffer too small for the string and its terminator. */
        "name into 4 bytes: NVML_ERROR_INSUFFICIENT_SIZE\n"
        "name into NULL: NVML_ERROR_INVALID_ARGUMENT\n"
        /* "GPU-" and cudaDeviceProp::uuid in 8-4-4-4-12 hexadecimal digits. */
        "uuid: NVML_SUCCESS, agrees with the runtime\n"
        "uuid into 10 bytes: NVML_ERROR_INSUFFICIENT_SIZE\n"
        "handle by uuid: NVML_SUCCESS, the same handle\n"
        "handle by an unknown uuid: NVML_ERROR_NOT_FOUND\n"
        "handle by a NULL uuid: NVML_ERROR_INVALID_ARGUMENT\n"
        "index: NVML_SUCCESS, 0\n"
        "minor number: NVML_SUCCESS\n"
        "compute capability: NVML_SUCCESS, agrees with the runtime\n"
        "pci info: NVML_SUCCESS\n"
        /* busIdLegacy is cudaDeviceGetPCIBusId's string; busId the same address with an
         * 8-digit domain, as NVML writes it. */
        "  busIdLegacy agrees with the runtime\n"
        "  busId agrees with the runtime\n"
        "  domain, bus, device agrees with the runtime\n"
        "  vendor 0x10de\n"
        "pci info into NULL: NVML_ERROR_INVALID_ARGUMENT\n"
        "handle by busId: NVML_SUCCESS, the same handle\n"
        "handle by the runtime's bus id: NVML_SUCCESS, the same handle\n"
        "handle by another bus id: NVML_ERROR_NOT_FOUND\n"
        "handle by a NULL bus id: NVML_ERROR_INVALID_ARGUMENT\n"
        /* The session's view (cudaMemGetInfo); used is what is not free. */
        "memory: NVML_SUCCESS, total agrees with the runtime, used + free = total yes\n"
        "memory into NULL: NVML_ERROR_INVALID_ARGUMENT\n"
        "memory v2: NVML_SUCCESS, total agrees with the runtime\n"
        /* Version 1 in the version word: FUNCTION_NOT_FOUND natively (H100, driver
         * 580.159.04), not the reference's ARGUMENT_VERSION_MISMATCH; version 3 the latter
         * (documented, not observed). */
        "memory v2 of version 1: NVML_ERROR_FUNCTION_NOT_FOUND\n"
        "memory v2 of version 3: NVML_ERROR_ARGUMENT_VERSION_MISMATCH\n"
        "compute mode: NVML_SUCCESS, agrees with the runtime\n"
        "persistence mode: NVML_SUCCESS\n"
        /* Tandem's answers, NVML_SUCCESS natively on an H100: the GPU is the server's, its
         * load is every tenant's, its sensors the host's (docs/nvml.md). */
        "utilization: NVML_ERROR_NOT_SUPPORTED\n"
        "temperature: NVML_ERROR_NOT_SUPPORTED\n"
        "power: NVML_ERROR_NOT_SUPPORTED\n"
        "energy: NVML_ERROR_NOT_SUPPORTED\n"
        /* Tandem's answer: natively the list would hold this process once the runtime made
         * its context; the guest's programs are not processes of the host. */
        "compute processes: NVML_SUCCESS, 0\n"
        "compute processes, NULL count: NVML_ERROR_INVALID_ARGUMENT\n"
        /* NVLink is the host's topology (NOT_SUPPORTED natively too on the H100 of the
         * 580.159.04 driver run). */
        "nvlink 0: NVML_ERROR_NOT_SUPPORTED\n"
        /* A device is not its own peer: NVML_P2P_STATUS_NOT_SUPPORTED natively (H100, driver
         * 580.159.04), which also answers an unknown index with success. */
        "p2p read with itself: NVML_SUCCESS, not OK\n"
        "p2p of index 77: NVML_SUCCESS\n"
        "cuda driver version: NVML_SUCCESS, agrees with the runtime\n"
        "cuda driver version v2: NVML_SUCCESS, agrees with the runtime\n"
        "cuda driver version into NULL: NVML_ERROR_INVALID_ARGUMENT\n"
        "driver version: NVML_SUCCESS\n"
        "driver version into 1 byte: NVML_ERROR_INSUFFICIENT_SIZE\n"
        "nvml version: NVML_SUCCESS\n"
        /* A handle NVML did not give out. */
        "name of a forged handle: NVML_ERROR_INVALID_ARGUMENT\n"
        "name of a NULL handle: NVML_ERROR_INVALID_ARGUMENT\n"
        /* Carried and refused, with a line naming it (checked below). */
        "serial (refused): NVML_ERROR_NOT_SUPPORTED\n"
        /* Not carried at all: dlsym finds nothing, as a program probing NVML expects. */
        "an entry point NVML never had: absent\n"
        "shutdown: NVML_SUCCESS\n"
        "count after one shutdown: NVML_SUCCESS\n"
        "shutdown: NVML_SUCCESS\n"
        "count after both: NVML_ERROR_UNINITIALIZED\n"
        "shutdown once more: NVML_ERROR_UNINITIALIZED\n"
        "done\n";

    for (int i = 0; i < 2; i++) {
        th_result *r = calloc(1, sizeof(*r));
        th_run_driver_guest(endpoints[i], argv, 60, r);
        cr_assert_eq(r->status, 0, "nvml-check (%s) exited %d:\n%s%s", endpoints[i], r->status, r->out, r->err);
        cr_expect_str_eq(r->out, want, "nvml-check (%s) printed\n%s", endpoints[i], r->out);
        cr_expect(strstr(r->err, "nvmlDeviceGetSerial is not available through Tandem") != NULL,
                  "no line named the refused nvmlDeviceGetSerial:\n%s", r->err);
        free(r);
    }
}

/* No server at the endpoint: no driver, NVML_ERROR_DRIVER_NOT_LOADED at each nvmlInit, the
 * library uninitialized, and the reason printed once. */
Test(nvml, no_server_is_no_driver)
{
    const char *argv[] = { th_bin("nvml-check"), "--absent", NULL };
    th_result *r = calloc(1, sizeof(*r));

    th_run_driver_guest("tcp://127.0.0.1:1", argv, 60, r);
    cr_assert_eq(r->status, 0, "nvml-check --absent exited %d:\n%s%s", r->status, r->out, r->err);
    cr_expect_str_eq(r->out,
                     "nvmlInit_v2: NVML_ERROR_DRIVER_NOT_LOADED\n"
                     "nvmlInit_v2 again: NVML_ERROR_DRIVER_NOT_LOADED\n"
                     "nvmlDeviceGetCount_v2: NVML_ERROR_UNINITIALIZED\n"
                     "done\n",
                     "nvml-check --absent printed\n%s", r->out);
    cr_expect_eq(occurrences(r->err, "cannot reach the Tandem server"), 1, "the reason was not printed once:\n%s",
                 r->err);
    free(r);
}
