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
    "unregister inside: cudaErrorHostMemoryNotRegistered\n"          \
    "bytes beside the range kept: yes\n"                             \
    "streams round trip: h[0]=4 h[786531]=11797969 sum=4639741649818\n"

#define AFTER                                                        \
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
