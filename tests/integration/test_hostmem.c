/* Registered host memory (docs/memory-models.md, "Registered host memory")
 * through a real server on the sim backend.  Over shm cudaHostRegister
 * moves the program's pages into a pinned block of the region mapped at
 * the same address: asynchronous copies land, the device pointer and the
 * host pointer reach the same bytes (a kernel spins on a registered flag
 * the host sets), unregister gives private pages back with the same bytes.
 * Over TCP and with the region's host area full it stays bookkeeping, with
 * correct copies. */
#include <criterion/criterion.h>
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

#define BAD_INPUT                                                    \
    "register NULL: cudaErrorInvalidValue\n"                         \
    "register 0 bytes: cudaErrorInvalidValue\n"                      \
    "register unknown flag: cudaErrorInvalidValue\n"                 \
    "unregister unregistered: cudaErrorHostMemoryNotRegistered\n"    \
    "flags include mapped: yes\n"                                    \
    "register overlapping: cudaErrorHostMemoryAlreadyRegistered\n"   \
    /* inside a range: native cudaErrorInvalidValue (H100, 2026-11-24) */ \
    "unregister inside: cudaErrorInvalidValue\n"                    \
    "bytes beside the range kept: yes\n"                             \
    "streams round trip: h[0]=4 h[786531]=11797969 sum=4639741649818\n" \
    "after fork: child exited 0, the parent's bytes unchanged: yes\n"

#define AFTER                                                        \
    "register read-only: as the attribute says\n"                    \
    "after unregister: same bytes yes, private yes\n"                \
    "bytes beside the range kept: yes\n"                             \
    "unregister again: cudaErrorHostMemoryNotRegistered\n"           \
    "registered again, zeroed: sum=0\n"

static const char want_shm[] = "canUseHostPointerForRegisteredMem 1\n" BAD_INPUT
                               "device pointer: cudaSuccess\n"
                               "kernel through the device pointer: h[0]=13 sum=13919225735986\n"
                               "kernel through the host pointer: h[0]=40 sum=41757677994490\n"
                               "latch: the kernel saw 42\n" AFTER;

/* Over TCP the program's pages cannot be mapped for the device. */
static const char want_tcp[] = "canUseHostPointerForRegisteredMem 1\n" BAD_INPUT
                               "device pointer: cudaErrorMemoryAllocation\n" AFTER;

Test(hostmem, registered_memory_over_shm_is_the_regions_and_back, .init = up, .fini = down)
{
    const char *argv[] = { th_example("registered_memory"), NULL };
    th_result *r = calloc(1, sizeof(*r));

    th_run_guest(srv.shm_endpoint, argv, 120, r);
    cr_assert_eq(r->status, 0, "registered_memory (shm) exited %d:\n%s%s", r->status, r->out, r->err);
    cr_expect_str_eq(r->out, want_shm, "registered_memory (shm) printed\n%s", r->out);
    cr_expect(strstr(r->err, "falls back") == NULL, "registration fell back:\n%s", r->err);
    free(r);
    cr_expect(th_server_log_has(&srv, "illegal address") == false, "a kernel faulted; see %s", srv.log);
}

Test(hostmem, registered_memory_over_tcp_is_bookkeeping, .init = up, .fini = down)
{
    const char *argv[] = { th_example("registered_memory"), NULL };
    th_result *r = calloc(1, sizeof(*r));

    th_run_guest(srv.endpoint, argv, 120, r);
    cr_assert_eq(r->status, 0, "registered_memory (tcp) exited %d:\n%s%s", r->status, r->out, r->err);
    cr_expect_str_eq(r->out, want_tcp, "registered_memory (tcp) printed\n%s", r->out);
    free(r);
}

/* simpleStreams' pattern on registered memory, every byte checked. */
static void streams_registered(const char *endpoint, const char *mib)
{
    const char *argv[] = { th_bin("streams-copy-check"), "-R", "-m", mib, "-r", "3", NULL };
    th_result *r = calloc(1, sizeof(*r));

    th_run_guest(endpoint, argv, 120, r);
    cr_expect_eq(r->status, 0, "streams-copy-check -R (%s) exited %d:\n%s%s", endpoint, r->status, r->out, r->err);
    cr_expect(strstr(r->out, "\nok\n") != NULL, "streams-copy-check -R (%s) printed\n%s", endpoint, r->out);
    free(r);
}

Test(hostmem, streams_copies_into_registered_memory_land_over_both, .init = up, .fini = down)
{
    streams_registered(srv.shm_endpoint, "8");
    streams_registered(srv.endpoint, "8");
}

/* The region's host area (1 MiB here) cannot take 8 MiB: registration
 * falls back to bookkeeping with one line, and the copies stay correct. */
Test(hostmem, a_full_region_falls_back_to_staged_copies, .init = up, .fini = down)
{
    const char *argv[] = { th_bin("streams-copy-check"), "-R", "-m", "8", "-r", "2", NULL };
    th_result *r = calloc(1, sizeof(*r));

    setenv("TANDEM_SHM_HOST_MB", "1", 1);
    th_run_guest(srv.shm_endpoint, argv, 120, r);
    unsetenv("TANDEM_SHM_HOST_MB");
    cr_expect_eq(r->status, 0, "exited %d:\n%s%s", r->status, r->out, r->err);
    cr_expect(strstr(r->out, "\nok\n") != NULL, "printed\n%s", r->out);
    cr_expect(strstr(r->err, "cudaHostRegister falls back to staged copies") != NULL, "stderr:\n%s", r->err);
    free(r);
}

/* ---- pinned memory by its host pointer ---- */
/* examples/pinned_latch.cu over shm and TCP: kernels spin on a
 * cudaMallocHost flag given by its host pointer until the host sets it
 * while they run (UnifiedMemoryPerf's latch), released by the wait of
 * cudaStreamSynchronize and of cudaDeviceSynchronize, also with 48 MiB of
 * copies queued behind the kernel on its stream; a kernel updates a
 * pinned array in place by its host pointer; cudaHostGetDevicePointer is
 * the host pointer.  Over TCP the block lies at device memory of its own
 * kept coherent, and the host's write goes up before the wait on a stream
 * the device runs beside the kernel (guest-lib/coherent.c): without that
 * upload the kernel spins forever, and the timeout fails the test. */
Test(hostmem, a_kernel_waits_on_pinned_memory_by_its_host_pointer_over_both, .init = up, .fini = down)
{
    const char *argv[] = { th_example("pinned_latch"), NULL };
    const char *eps[] = { srv.shm_endpoint, srv.endpoint };
    const char *want = "latch on a stream: the kernel saw 5\n"
                       "latch on the legacy stream: the kernel saw 9, flag 9\n"
                       "latch with copies queued behind it: the kernel saw 7, sum=4278190080\n"
                       "round 0: arr[0]=1 arr[4999]=14998 sum=37497500\n"
                       "round 1: arr[0]=3001 arr[4999]=44995 sum=112500497\n"
                       "device pointer is the host pointer: yes\n"
                       "copied: back[0]=3001 sum=337500488, arr sum=112498496\n";

    for (int e = 0; e < 2; e++) {
        th_result *r = calloc(1, sizeof(*r));

        th_run_guest(eps[e], argv, 30, r);
        cr_expect_eq(r->status, 0, "pinned_latch (%s) exited %d:\n%s%s", eps[e], r->status, r->out, r->err);
        cr_expect_str_eq(r->out, want, "pinned_latch (%s) printed\n%s", eps[e], r->out);
        free(r);
    }
    cr_expect(th_server_log_has(&srv, "illegal address") == false, "a kernel faulted; see %s", srv.log);
    /* Guards the H100 hang of 2026-11-24: the 48 MiB queued behind the
     * spinning kernel over TCP fill both upload buffers, and the next one
     * must be more pinned staging, not a copy from pageable memory (which
     * the driver performs synchronously, behind the kernel, holding the
     * session's thread).  The sim copies either asynchronously, so the log
     * line is what shows the path taken (server/session_copy.c). */
    cr_expect(th_server_log_has(&srv, "more upload staging"), "uploads behind the kernel took no new staging; see %s",
              srv.log);
}

/* The managed-memory example's latch (a kernel spins on a cudaMallocHost
 * flag, work queued behind it), until now over shm only, over TCP too. */
Test(hostmem, the_managed_examples_latch_works_over_tcp, .init = up, .fini = down)
{
    const char *argv[] = { th_example("managed_memory_patterns"), "latch", NULL };
    th_result *r = calloc(1, sizeof(*r));

    th_run_guest(srv.endpoint, argv, 30, r);
    cr_expect_eq(r->status, 0, "status %d:\n%s%s", r->status, r->out, r->err);
    cr_expect_str_eq(r->out, "latch: the kernel saw 5, then m[0]=0x2020202\n", "printed\n%s", r->out);
    free(r);
    cr_expect(th_server_log_has(&srv, "illegal address") == false, "a kernel faulted; see %s", srv.log);
}
