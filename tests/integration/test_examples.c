/* End to end: unmodified nvcc-built programs run through libcudart.so.13 and
 * a real tandem-server on the sim backend, over TCP and over shared memory;
 * each program's output must equal the line example-reference computes on
 * the host, independently. */
#include <criterion/criterion.h>
#include <driver_types.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

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

/* Runs argv over tcp and over shm: each run must exit 0 and print exactly
 * want. */
static void expect_output_over_both(const char *const *argv, int timeout_s, const char *want)
{
    const char *endpoints[] = { srv.endpoint, srv.shm_endpoint };
    const char *name = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];

    for (int i = 0; i < 2; i++) {
        th_result *r = calloc(1, sizeof(*r));
        th_run_guest(endpoints[i], argv, timeout_s, r);
        cr_assert_eq(r->status, 0, "%s (%s) exited %d:\n%s%s", name, endpoints[i], r->status, r->out, r->err);
        cr_expect_str_eq(r->out, want, "%s (%s) printed\n%s", name, endpoints[i], r->out);
        free(r);
    }
}

static void expect_example_on(const char *endpoint, const char *name)
{
    const char *ref_argv[] = { th_bin("example-reference"), name, NULL };
    const char *ex_argv[] = { th_example(name), NULL };
    th_result *ref = calloc(1, sizeof(*ref)), *got = calloc(1, sizeof(*got));

    th_run(ref_argv, 60, ref);
    cr_assert_eq(ref->status, 0, "example-reference %s failed: %s", name, ref->err);
    cr_assert_gt(strlen(ref->out), 0);
    th_run_guest(endpoint, ex_argv, 120, got);
    cr_assert_eq(got->status, 0, "%s through Tandem (%s) exited %d; stderr:\n%s", name, endpoint, got->status,
                 got->err);
    cr_expect_str_eq(got->out, ref->out, "%s through Tandem (%s) printed\n%s\nexpected\n%s", name, endpoint,
                     got->out, ref->out);
    if (th_simulated())
        cr_expect(strstr(got->err, "SIMULATED GPU") != NULL, "the sim backend must say it is simulated");
    else
        cr_expect(strstr(got->err, "SIMULATED") == NULL, "a real GPU must not be called simulated");
    free(ref);
    free(got);
}

static void expect_example(const char *name)
{
    expect_example_on(srv.endpoint, name);
}

static void expect_example_shm(const char *name)
{
    expect_example_on(srv.shm_endpoint, name);
    cr_expect(th_server_log_has(&srv, "opened by shm:"), "the session did not go over shm; see %s", srv.log);
}

/* Every example over both transports: suite `examples` is TCP, suite
 * `examples_shm` shared memory (streams_events puts cudaMallocHost memory in
 * the shared region and copies from and to it asynchronously). */
#define EXAMPLE(name)                                                                                \
    Test(examples, name, .init = up, .fini = down) { expect_example(#name); }                       \
    Test(examples_shm, name, .init = up, .fini = down) { expect_example_shm(#name); }

EXAMPLE(vector_add)
EXAMPLE(increment_loop)
EXAMPLE(streams_events)
EXAMPLE(matmul)

/* cudaStreamGetFlags (the call docs/architecture.md walks through adding):
 * each stream reports the flags it was created with, the default streams
 * cudaStreamDefault, and a NULL result pointer is refused, as CUDA does. */
Test(examples, stream_flags_are_those_the_stream_was_created_with, .init = up, .fini = down)
{
    const char *argv[] = { th_bin("stream-flags-check"), NULL };
    char want[512];

    snprintf(want, sizeof(want),
             "null stream: flags %u\ncudaStreamLegacy: flags %u\ncudaStreamPerThread: flags %u\n"
             "created: flags %u\ncreated non-blocking: flags %u\ncreated with priority, non-blocking: flags %u\n"
             "per-thread entry point: flags %u\nNULL result pointer: cudaErrorInvalidValue\n",
             cudaStreamDefault, cudaStreamDefault, cudaStreamDefault, cudaStreamDefault, cudaStreamNonBlocking,
             cudaStreamNonBlocking, cudaStreamNonBlocking);
    expect_output_over_both(argv, 60, want);
}

/* Pinned memory beyond the region's host area fails cleanly, as a full
 * pinned pool does. */
Test(examples_shm, pinned_memory_exhausted_is_a_clean_error, .init = up, .fini = down)
{
    const char *ex_argv[] = { th_example("streams_events"), NULL };
    th_result *r = calloc(1, sizeof(*r));

    setenv("TANDEM_SHM_HOST_MB", "0", 1);
    th_run_guest(srv.shm_endpoint, ex_argv, 60, r);
    unsetenv("TANDEM_SHM_HOST_MB");
    cr_expect_neq(r->status, 0);
    cr_expect(strstr(r->err, "pinned host memory of the shm region is exhausted") != NULL, "stderr was:\n%s", r->err);
    cr_expect(strstr(r->err, "cudaErrorMemoryAllocation") != NULL, "stderr was:\n%s", r->err);
    free(r);
}

/* Four guests at once on one server, two over TCP and two over shm:
 * sessions are independent whatever their transport. */
Test(examples, concurrent_sessions_do_not_interfere, .init = up, .fini = down)
{
    static const char *names[] = { "vector_add", "increment_loop", "streams_events", "matmul" };
    pid_t kids[4];

    for (int i = 0; i < 4; i++) {
        kids[i] = fork();
        cr_assert_neq(kids[i], -1);
        if (kids[i] == 0) {
            const char *ref_argv[] = { th_bin("example-reference"), names[i], NULL };
            const char *ex_argv[] = { th_example(names[i]), NULL };
            static th_result ref, got;
            th_run(ref_argv, 60, &ref);
            th_run_guest(i >= 2 ? srv.shm_endpoint : srv.endpoint, ex_argv, 200, &got);
            _exit(ref.status == 0 && got.status == 0 && strcmp(ref.out, got.out) == 0 ? 0 : 1);
        }
    }
    for (int i = 0; i < 4; i++) {
        int st = 0;
        waitpid(kids[i], &st, 0);
        cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s failed when run beside the others", names[i]);
    }
}

Test(examples, unreachable_server_is_a_clear_error)
{
    const char *ex_argv[] = { th_example("vector_add"), NULL };
    th_result *r = calloc(1, sizeof(*r));

    /* Port 1 on loopback: nothing listens there. */
    th_run_guest("tcp://127.0.0.1:1", ex_argv, 30, r);
    cr_expect_neq(r->status, 0);
    cr_expect(strstr(r->err, "cannot reach the Tandem server") != NULL, "stderr was:\n%s", r->err);
    free(r);
}

Test(examples, server_refuses_to_start_on_an_occupied_arena)
{
    th_server a;
    const char *argv[] = { th_bin("tandem-server"), "--backend", "sim", "--port", "0", "--arena-base",
                           "0x1000", "--arena-size", "4M", NULL };
    th_result *r = calloc(1, sizeof(*r));

    (void)a;
    /* Address 0x1000 is below mmap_min_addr: the reservation must fail
     * loudly rather than land somewhere else. */
    th_run(argv, 20, r);
    cr_expect_neq(r->status, 0);
    cr_expect(strstr(r->err, "cannot reserve the logical arena") != NULL, "stderr was:\n%s", r->err);
    free(r);
}

/* ---- runtime (issue 14) ---- */
/* runtime-check (examples/runtime_check.cu): the profiler switches answer
 * success; the occupancy calculator gives the sim device's figures for a
 * 32-register kernel and refuses bad input as the runtime does; host
 * functions and callbacks run in stream order (after the copy before them,
 * before the upload after them) with the stream's status; stream
 * priorities are the device's range, clamped as the driver clamps them;
 * limits read back as set, cache and kernel settings are checked; a
 * cooperative launch runs, and one block more than can be resident is
 * refused by the launch itself; the one device is chosen, named by its PCI
 * bus id and found by it, and is nobody's peer. */
Test(examples, runtime_entry_points_behave_as_the_runtime, .init = up, .fini = down)
{
    const char *argv[] = { th_bin("runtime-check"), NULL };
    const char *want =
        "cudaProfilerStart: cudaSuccess\n"
        "cudaProfilerStop: cudaSuccess\n"
        "max active blocks, 32 threads: 32\n"
        "max active blocks, 128 threads: 16\n"
        "max active blocks, 256 threads: 8\n"
        "max active blocks, 512 threads: 4\n"
        "max active blocks, 1024 threads: 2\n"
        "max active blocks, 2048 threads: 0\n"
        "max active blocks, 256 threads, 40 KiB dynamic shared: 5\n"
        "max active blocks, 256 threads, caching override disabled: 8\n"
        "available dynamic shared, 1 block of 256: 49152\n"
        "available dynamic shared, 16 blocks of 128: 13568\n"
        "max potential block size: 1024 (min grid 264)\n"
        "block size 0: cudaErrorInvalidValue\n"
        "unknown flags: cudaErrorInvalidValue\n"
        "not a kernel: cudaErrorInvalidResourceHandle\n"
        "NULL result: cudaErrorInvalidValue\n"
        "host function saw the copy before it: yes\n"
        "later work saw the host function's writes: yes\n"
        "order: 1 2 3 (3 calls)\n"
        "callback status: cudaSuccess\n"
        "default streams: 2 calls\n"
        "NULL host function: cudaErrorInvalidValue\n"
        "callback flags 1: cudaErrorInvalidValue\n"
        "stream priorities: least 0, greatest -5\n"
        "asked priority -10: got -5\n"
        "asked priority -3: got -3\n"
        "asked priority 0: got 0\n"
        "asked priority 5: got 0\n"
        "null stream priority: 0\n"
        "per-thread stream priority: 0\n"
        "stream ids distinct: yes, stable: yes\n"
        "stream device: 0\n"
        "null stream device: 0\n"
        "NULL priority: cudaErrorInvalidValue\n"
        "NULL id: cudaErrorInvalidValue\n"
        "stack size limit: 1024\n"
        "stack size limit after setting 4096: 4096\n"
        "malloc heap limit after setting 64 MiB: 67108864\n"
        "persisting L2 limit: 0\n"
        "unknown limit: cudaErrorInvalidValue\n"
        "setting an unknown limit: cudaErrorInvalidValue\n"
        "NULL limit result: cudaErrorInvalidValue\n"
        "device cache config: 1\n"
        "bad cache config: cudaErrorInvalidValue\n"
        "shared memory bank size: 1\n"
        "kernel cache config set\n"
        "kernel attributes set\n"
        "1 MiB dynamic shared: cudaErrorInvalidValue\n"
        "read-only attribute: cudaErrorInvalidValue\n"
        "attribute of no kernel: cudaErrorInvalidResourceHandle\n"
        "kernel name: _Z9incrementPji\n"
        "name of no kernel: cudaErrorInvalidResourceHandle\n"
        "persisting L2 reset\n"
        "cooperativeLaunch attribute: 1\n"
        "cooperative launch result: correct\n"
        "one block more than resident: cudaErrorCooperativeLaunchTooLarge\n"
        "device usable after the refusal: yes\n"
        "chosen device: 0\n"
        "PCI bus id: 0000:00:00.0\n"
        "device of that bus id: 0\n"
        "device of another bus id: cudaErrorInvalidDevice\n"
        "PCI bus id of device 1: cudaErrorInvalidDevice\n"
        "device 0 can access itself as a peer: 0\n"
        "peer device 1: cudaErrorInvalidDevice\n"
        "P2P attribute 0 to 0: cudaErrorInvalidDevice\n"
        "enable peer access to 0: cudaErrorPeerAccessUnsupported\n"
        "enable peer access to 1: cudaErrorInvalidDevice\n"
        "disable peer access to 0: cudaErrorPeerAccessNotEnabled\n"
        "flush GPUDirect RDMA writes: cudaErrorNotSupported\n"
        "flush with a bad scope: cudaErrorInvalidValue\n";

    expect_output_over_both(argv, 60, want);
}

/* ---- memory models (issue 14) ---- */

/* Stream-ordered allocation and pools (examples/mem_pools.cu), over both
 * transports: memory freed on a stream behind 65 queued kernels that use it
 * (released at once, the sim's kernels would fault on it), pool attributes,
 * the device's current pool.  The same lines natively. */
Test(examples, stream_ordered_allocation_and_pools, .init = up, .fini = down)
{
    const char *argv[] = { th_example("mem_pools"), NULL };
    const char *want = "memoryPoolsSupported 1\n"
                       "stream-ordered: b[0]=14 b[65535]=131084 sum=4295819264 c[5]=105\n"
                       "default pool is current: yes\n"
                       "default release threshold 1048576\n"
                       "default reuse follows events 1\n"
                       "created pool opportunistic reuse 0\n"
                       "pool in use: used>=size yes reserved>=used yes\n"
                       "pool after free and trim: used 0 reserved 0 used high>=size yes d[9]=10\n"
                       "used high after reset 0\n"
                       "created pool is current: yes\n"
                       "cudaMallocAsync drew from it: yes\n"
                       "access from its device: read-write\n";

    expect_output_over_both(argv, 120, want);
    cr_expect(th_server_log_has(&srv, "illegal address") == false, "a kernel faulted; see %s", srv.log);
}

/* Zero-copy host memory (examples/mapped_memory.cu): a kernel updates
 * cudaHostAllocMapped memory through its device pointer and the host reads
 * it, and a kernel sees a host write: over shm on the very same pages,
 * over TCP through device memory kept coherent with the block at
 * synchronization points (guest-lib/coherent.c; until issue 14's second
 * pass TCP reported canMapHostMemory 0 and this test asserted it).
 * cudaHostRegister'ed memory over both. */
Test(examples, mapped_and_registered_host_memory, .init = up, .fini = down)
{
    const char *argv[] = { th_example("mapped_memory"), NULL };
    const char *registered = "registered: pointer type host yes\n"
                             "registered again: cudaErrorHostMemoryAlreadyRegistered\n"
                             "registered round trip: buf[0]=90 buf[20]=140 sum=133694040\n"
                             "unregistered again: cudaErrorHostMemoryNotRegistered\n";
    char want_shm[1024], want_tcp[1024];
    snprintf(want_shm, sizeof(want_shm), "canMapHostMemory 1 (attribute 1)\n%s%s", registered,
             "flags include cudaHostAllocMapped: yes\n"
             "device pointer of h+100 is d+100: yes\n"
             "round 0: h[0]=1 h[65535]=196606 sum=6442418176\n"
             "round 1: h[0]=3001 h[65535]=589819 sum=19327323061\n");
    snprintf(want_tcp, sizeof(want_tcp), "%s", want_shm);
    th_result *r = calloc(1, sizeof(*r));

    th_run_guest(srv.shm_endpoint, argv, 120, r);
    cr_assert_eq(r->status, 0, "mapped_memory (shm) exited %d:\n%s%s", r->status, r->out, r->err);
    cr_expect_str_eq(r->out, want_shm, "mapped_memory (shm) printed\n%s", r->out);
    memset(r, 0, sizeof(*r));
    th_run_guest(srv.endpoint, argv, 120, r);
    cr_assert_eq(r->status, 0, "mapped_memory (tcp) exited %d:\n%s%s", r->status, r->out, r->err);
    cr_expect_str_eq(r->out, want_tcp, "mapped_memory (tcp) printed\n%s", r->out);
    free(r);
}

/* ---- managed memory (issue 14) ---- */
/* Managed memory (examples/managed_memory.cu), the same over shm and TCP:
 * one pointer serves host and kernels (a kernel updates what the host
 * wrote, the host reads what a kernel filled; host copies kept coherent at
 * synchronization points, guest-lib/coherent.c), copies name it as device
 * memory, advice and prefetches are reported back.  (Until issue 14's
 * second pass TCP answered cudaErrorNotSupported; this test asserted it.) */
Test(examples, managed_memory, .init = up, .fini = down)
{
    const char *argv[] = { th_example("managed_memory"), NULL };
    const char *want_shm = "managedMemory 1 (attribute 1)\n"
                           "pointer type managed: yes, device pointer is the pointer: yes\n"
                           "round 0: p[0]=1 p[65535]=196606 sum=6442418176\n"
                           "round 1: p[0]=3001 p[65535]=589819 sum=19327323061\n"
                           "filled: f[0]=7 f[1]=12 f[65535]=327682 sum=10737713152\n"
                           "copied back: p[1]=37 sum=32213204992\n"
                           "read mostly: first half 1, whole 0\n"
                           "preferred location -1, last prefetch location 0\n"
                           "accessed by 0 -2 -2\n"
                           "read mostly after unset: 0\n"
                           "size 0: cudaSuccess\n"
                           "flags 0: cudaErrorInvalidValue\n"
                           "advice for device 1: cudaErrorInvalidValue\n"
                           "range attribute of 0 bytes: cudaErrorInvalidValue\n";
    const char *want_tcp = want_shm;
    th_result *r = calloc(1, sizeof(*r));

    th_run_guest(srv.shm_endpoint, argv, 120, r);
    cr_assert_eq(r->status, 0, "managed_memory (shm) exited %d:\n%s%s", r->status, r->out, r->err);
    cr_expect_str_eq(r->out, want_shm, "managed_memory (shm) printed\n%s", r->out);
    memset(r, 0, sizeof(*r));
    th_run_guest(srv.endpoint, argv, 120, r);
    cr_assert_eq(r->status, 0, "managed_memory (tcp) exited %d:\n%s%s", r->status, r->out, r->err);
    cr_expect_str_eq(r->out, want_tcp, "managed_memory (tcp) printed\n%s", r->out);
    free(r);
    cr_expect(th_server_log_has(&srv, "illegal address") == false, "a kernel faulted; see %s", srv.log);
}

/* The cuda-samples' patterns of managed and mapped memory
 * (examples/managed_memory_patterns.cu), the same over shm and TCP:
 * device and host atomics on one managed array, cudaMemAttachHost arrays
 * attached to a stream and back, prefetches both ways, a managed flag set
 * by a captured graph's kernel and reset by the host, copies and memsets
 * naming managed memory, zero-copy vector addition; bad input refused. */
Test(examples, managed_memory_patterns, .init = up, .fini = down)
{
    const char *argv[] = { th_example("managed_memory_patterns"), NULL };
    const char *want = "managedMemory 1 canMapHostMemory 1\n"
                       "atomics: count 17384 (want 17384) max 16383 untouched 255\n"
                       "attached: c[0]=2 c[262143]=4294705153 sum=523043980836864\n"
                       "prefetched: c[0]=2 c[262143]=4294705153 sum=523043980836864\n"
                       "graph round 0: bad 0\n"
                       "graph round 1: bad 1\n"
                       "graph round 2: bad 0\n"
                       "memset: c[0]=0 c[131072]=393218 sum=280011824627712\n"
                       "copied: c[1]=7 sum=385222059393024, host copy sum=385222059393024\n"
                       "one element: c[0]=7\n"
                       "attach single to the legacy stream: cudaErrorInvalidValue\n"
                       "free inside an allocation: cudaErrorInvalidValue\n"
                       "zero-copy round 0: hc[0]=0 wrong 0 sum=137438429184\n"
                       "zero-copy round 1: hc[0]=100 wrong 0 sum=137438429284\n";

    expect_output_over_both(argv, 120, want);
    cr_expect(th_server_log_has(&srv, "illegal address") == false, "a kernel faulted; see %s", srv.log);
}

/* The device copy of coherent memory is set up (managed memory zeroed, a
 * mapped block's bytes uploaded over TCP) before the call that hands it out
 * returns, for the work of every stream: queued on the legacy stream, a
 * non-blocking stream's upload of the host's writes could run before it
 * and be overwritten (examples::peer_and_batch_copies failed so, "prefetch
 * batch: m2[1]=0", about 1 run in 10 under load).  coherent_setup_check
 * holds the legacy stream with a spinning kernel meanwhile, so the old
 * order fails every run; then it allocates managed memory again after a
 * cudaDeviceReset, which destroys the library's stream the setup uses. */
Test(examples, coherent_memory_is_set_up_before_it_is_handed_out, .init = up, .fini = down)
{
    const char *argv[] = { th_example("coherent_setup_check"), NULL };

    expect_output_over_both(argv, 60, "managed: ok\nmapped: ok\nmanaged after a reset: ok\n");
}

/* Unified addressing of pinned memory over shm: a kernel given the host
 * pointer of a cudaMallocHost flag spins until the host sets it while the
 * kernel runs (UnifiedMemoryPerf's latch); work queued behind it runs
 * after.  Over TCP no memory is shared with a running kernel (documented
 * difference), so this runs over shm only. */
Test(examples, a_kernel_waits_on_pinned_memory_by_its_host_pointer_over_shm, .init = up, .fini = down)
{
    const char *argv[] = { th_example("managed_memory_patterns"), "latch", NULL };
    th_result *r = calloc(1, sizeof(*r));

    th_run_guest(srv.shm_endpoint, argv, 60, r);
    cr_expect_eq(r->status, 0, "status %d:\n%s%s", r->status, r->out, r->err);
    cr_expect_str_eq(r->out, "latch: the kernel saw 5, then m[0]=0x2020202\n", "printed\n%s", r->out);
    free(r);
    cr_expect(th_server_log_has(&srv, "illegal address") == false, "a kernel faulted; see %s", srv.log);
}

/* The library's SIGSEGV handler takes only faults on host copies it
 * tracks: a wild write after managed memory was used still kills the
 * program with SIGSEGV (the handler it replaced, here the default). */
Test(examples, a_wild_write_beside_managed_memory_still_faults, .init = up, .fini = down)
{
    const char *argv[] = { th_example("managed_memory_patterns"), "segv", NULL };
    const char *eps[] = { srv.endpoint, srv.shm_endpoint };

    for (int e = 0; e < 2; e++) {
        th_result *r = calloc(1, sizeof(*r));

        th_run_guest(eps[e], argv, 60, r);
#ifdef TANDEM_SANITIZER_PRELOAD
        /* Under AddressSanitizer the library hands the fault on to ASan's
         * handler, which reports it and exits 1 instead of dying by it. */
        cr_expect(r->status != 0 && strstr(r->err, "AddressSanitizer: SEGV on unknown address 0x000000000010"),
                  "%s: status %d:\n%s%s", eps[e], r->status, r->out, r->err);
#else
        cr_expect_eq(r->status, 128 + SIGSEGV, "%s: status %d:\n%s%s", eps[e], r->status, r->out, r->err);
#endif
        cr_expect_str_eq(r->out, "managed m[0]=0x1010101\n", "%s printed\n%s", eps[e], r->out);
        free(r);
    }
}

/* ---- launch ex and stream attributes (issue 14) ---- */
/* launch-ex (examples/launch_ex.cu): cudaLaunchKernelExC and the
 * cudaLaunchKernelEx templates launch as a plain launch without attributes
 * and with default-valued ones, as a cooperative launch (refusing a grid
 * that cannot be resident, in the call) with cooperative = 1, record a
 * launch completion event, take a cudaKernel_t and the per-thread stream;
 * an unknown kernel, an empty block and an unknown attribute are refused
 * as the runtime refuses them; a cluster dimension goes the cluster
 * launch. */
Test(examples, extensible_launch_behaves_as_the_runtime, .init = up, .fini = down)
{
    const char *argv[] = { th_bin("launch-ex"), "--tandem-limits", NULL };
    const char *want = "no attributes, null stream: correct\n"
                       "template, two launches on a stream: correct\n"
                       "default-valued attributes, two launches: correct\n"
                       "cooperative: correct\n"
                       "cooperative, one block more than resident: cudaErrorCooperativeLaunchTooLarge\n"
                       "usable after the refusal: cudaSuccess\n"
                       "launch completion event: cudaSuccess, then correct\n"
                       "by cudaKernel_t, then on the per-thread stream: correct\n"
                       /* the native answers of cuLaunchKernelEx (H100 run of
                        * 2026-11-24), not cudaLaunchKernel's */
                       "not a kernel: cudaErrorInvalidResourceHandle\n"
                       "empty block: cudaErrorInvalidValue\n"
                       "unknown attribute: cudaErrorInvalidValue\n"
                       "still usable: cudaSuccess\n"
                       "cluster 2x1x1: cudaSuccess\n"
                       "attributes NULL: cudaErrorInvalidValue\n"
                       "NULL config: cudaErrorInvalidValue\n"
                       "usable after the refusals: cudaSuccess\n";

    expect_output_over_both(argv, 60, want);
}

/* stream-attributes (examples/stream_attributes.cu): an access policy
 * window set on a stream reads back as set, work runs under it and it
 * resets; the other stream attributes read back as set; bad values are
 * refused as the driver refuses them, and a window outside the session's
 * allocations, a stream that is not one and a priority set after creation
 * are refused by Tandem. */
Test(examples, stream_attributes_read_back_as_set, .init = up, .fini = down)
{
    const char *argv[] = { th_bin("stream-attributes"), "--tandem-limits", NULL };
    const char *want = "window before: base NULL, 0 bytes, hit ratio 0.00, hit 0, miss 0\n"
                       "set window: cudaSuccess\n"
                       "window: base as set, 1048576 bytes, hit ratio 0.60, hit 2, miss 1\n"
                       "kernel under the window: correct\n"
                       "reset window: cudaSuccess\n"
                       "window after reset: 0 bytes\n"
                       "sync policy: 3\n"
                       "memory sync domain: 1\n"
                       "priority: 0\n"
                       "hit ratio 2: cudaErrorInvalidValue\n"
                       "persisting misses: cudaErrorInvalidValue\n"
                       "NULL value: cudaErrorInvalidValue\n"
                       "NULL result: cudaErrorInvalidValue\n"
                       "unknown attribute: cudaErrorInvalidValue\n"
                       "window past the allocation: cudaErrorInvalidValue\n"
                       "window on memory not allocated: cudaErrorInvalidValue\n"
                       "not a stream: cudaErrorInvalidResourceHandle\n"
                       "setting the priority: cudaErrorInvalidValue\n"
                       "still usable: cudaSuccess\n";

    expect_output_over_both(argv, 60, want);
}

/* ---- peer and batch copies, pool selection and sharing (issue 14) ---- */

/* examples/mem_batch.cu over both transports: peer copies on the one
 * device, a batch of copies in every direction (pageable and pinned host
 * memory included) with its attributes, 3D batches between host rows, a
 * CUDA array and pitched device memory, prefetch and discard batches of
 * managed memory around kernels, pools chosen by location; and the
 * driver's refusals of bad devices, attributes, flags and locations.  The
 * same lines natively. */
Test(examples, peer_and_batch_copies, .init = up, .fini = down)
{
    const char *argv[] = { th_example("mem_batch"), NULL };
    const char *want =
                       "peer copy: c[0]=5 c[8191]=8196 sum=33591296\n"
                       "peer copy to device 1: cudaErrorInvalidDevice\n"
                       "peer copy from device -1: cudaErrorInvalidDevice\n"
                       "peer copy of 0 bytes: cudaSuccess\n"
                       "batch: pageable->device sum=402628608 pinned->device sum=150593536\n"
                       "batch: device->device d4[0]=7 d4[8191]=8198 d4[8192]=8201\n"
                       "batch: device->pageable sum=134324224 device->pinned sum=100732928\n"
                       "batch of 0 copies: cudaErrorInvalidValue\n"
                       "batch with no attributes: cudaErrorInvalidValue\n"
                       "batch whose attributes start at 1: cudaErrorInvalidValue\n"
                       "batch with more attributes than copies: cudaErrorInvalidValue\n"
                       "batch with an invalid access order: cudaErrorInvalidValue\n"
                       "3D batch: array round trip equal sum=497221.5; window sum=201924.5 row 19 col 47=133.0\n"
                       "3D batch with flags: cudaErrorInvalidValue\n"
                       "3D batch of depth 0: cudaErrorInvalidValue\n"
                       "3D batch with rows shorter than the width: cudaErrorInvalidValue\n"
                       "3D batch with an unknown operand type: cudaErrorInvalidValue\n"
                       "prefetch batch: m2[1]=2 m2[16383]=32766 sum=268419072\n"
                       "discard batches: m1[2]=13 m2[2]=15 sum=268812288\n"
                       "prefetch batch of cudaMalloc memory: cudaErrorInvalidValue\n"
                       "prefetch batch with flags: cudaErrorInvalidValue\n"
                       "prefetch batch with no locations: cudaErrorInvalidValue\n"
                       "discard batch with flags: cudaErrorInvalidValue\n"
                       "discard batch of 0 ranges: cudaErrorInvalidValue\n"
                       "default pool of device 0 is the device's: yes\n"
                       "current pool is the default: yes\n"
                       "set pool is current: yes, for the device too: yes\n"
                       /* these two as the driver answered natively on the H100
                        * run of 2026-11-24 (not what cuMemGetDefaultMemPool documents) */
                       "default pool of device 1: cudaErrorInvalidValue\n"
                       "current pool of device 1: cudaErrorInvalidValue\n"
                       "current pool of an unknown location type: cudaErrorNotSupported\n"
                       "pool of an invalid allocation type: cudaErrorInvalidValue\n"
                       "set the pool of device 1: cudaErrorInvalidValue\n"
                       "done\n";

    expect_output_over_both(argv, 120, want);
}

/* ---- cluster launch and device odds and ends (issue 14) ---- */
/* clusters (examples/clusters.cu): a __cluster_dims__ kernel by <<<>>> and
 * cudaLaunchKernelEx, the cluster dimension attribute in 1D and 2D and a
 * non-portable 16-block cluster give the right sums (the sim's twin adds a
 * cluster's slices directly); function attributes, cluster occupancy, and
 * bad shapes refused with the H100 driver's errors at the next sync. */
Test(examples, thread_block_clusters_run_and_refuse_as_the_driver, .init = up, .fini = down)
{
    const char *argv[] = { th_bin("clusters"), NULL };
    const char *want =
                       "cluster launch supported: 1\n"
                       "fixed kernel: required cluster 2x1x1, non-portable 0\n"
                       "plain kernel: required cluster 0x0x0, non-portable 0\n"
                       "__cluster_dims__(2,1,1), <<<16>>>: correct\n"
                       "__cluster_dims__(2,1,1), cudaLaunchKernelEx grid 32: correct\n"
                       "attribute 2x1x1, grid 16: correct\n"
                       "attribute 4x1x1, grid 32: correct\n"
                       "attribute 8x1x1, grid 64: correct\n"
                       "attribute 2x2x1, grid 8x4: correct\n"
                       "max potential cluster size, fixed kernel: 2\n"
                       "max potential cluster size, plain kernel: 8\n"
                       "max active clusters of 2, plain kernel: some\n"
                       "attribute 3x1x1, grid 16 (not a multiple): cudaErrorInvalidClusterSize\n"
                       "attribute 16x1x1 without non-portable: cudaErrorInvalidClusterSize\n"
                       "attribute 4x1x1 on __cluster_dims__(2,1,1): cudaErrorInvalidClusterSize\n"
                       "__cluster_dims__(2,1,1), <<<15>>> (not a multiple): cudaErrorInvalidClusterSize\n"
                       "set required width on __cluster_dims__ kernel: cudaErrorNotPermitted\n"
                       "usable after the refusals: cudaSuccess\n"
                       "plain kernel after the attribute: non-portable 1\n"
                       "max potential cluster size, non-portable: 16\n"
                       "attribute 16x1x1, grid 64, non-portable: correct\n"
                       "attribute 32x1x1, grid 64, non-portable: cudaErrorInvalidClusterSize\n"
                       "still usable: cudaSuccess\n";

    expect_output_over_both(argv, 60, want);
}

/* device-misc (examples/device_misc.cu): cudaInitDevice, cudaSetValidDevices,
 * the 1D linear texture width, atomic capabilities (the sim's: none), async
 * notification and error log registration, an error's message in the
 * guest's own log and its callback, cudaStreamCopyAttributes, and their
 * refusals on a one-device machine. */
Test(examples, device_odds_and_ends_behave_as_the_runtime, .init = up, .fini = down)
{
    const char *argv[] = { th_bin("device-misc"), "--values", "--tandem-logs", NULL };
    const char *want =
                       "init device 0: cudaSuccess\n"
                       "init no device: cudaErrorInvalidDevice\n"
                       "init device 0 with blocking sync: cudaSuccess\n"
                       "device flags include blocking sync: yes\n"
                       "valid devices: none: cudaSuccess\n"
                       "valid devices: {0}: cudaSuccess\n"
                       "valid devices: {no device}: cudaErrorInvalidDevice\n"
                       "valid devices: NULL list of 1: cudaErrorInvalidValue\n"
                       "texture 1D linear width, float: cudaSuccess\n"
                       "  float: 268435456 elements\n"
                       "texture 1D linear width, uchar4: cudaSuccess\n"
                       "  uchar4: 268435456 elements\n"
                       "texture 1D linear width, NULL format: cudaErrorInvalidValue\n"
                       "texture 1D linear width, no device: cudaErrorInvalidDevice\n"
                       "host atomic capabilities: cudaSuccess\n"
                       "  add 0, cas 0, float add 0\n"
                       "host atomic capabilities, count 0: cudaErrorInvalidValue\n"
                       "host atomic capabilities, no device: cudaErrorInvalidDevice\n"
                       "peer atomic capabilities 0 -> 0: cudaErrorInvalidDevice\n"
                       "register notification: cudaSuccess\n"
                       "register notification, NULL callback: cudaErrorInvalidValue\n"
                       "register notification, no device: cudaErrorInvalidDevice\n"
                       "unregister notification: cudaSuccess\n"
                       "register log callback: cudaSuccess\n"
                       "register log callback, NULL: cudaErrorInvalidValue\n"
                       "logs current: cudaSuccess\n"
                       "logs current, NULL: cudaErrorInvalidValue\n"
                       /* flags are reserved and ignored: native cudaSuccess
                        * (the H100 run of 2026-11-24, driver 580.159.04) */
                       "logs current, flags 1: cudaSuccess\n"
                       "logs dump with nothing new: cudaSuccess, 0 bytes\n"
                       "logs dump, flags 1: cudaSuccess\n"
                       "logs dump, NULL size: cudaErrorInvalidValue\n"
                       "logs dump to file, NULL path: cudaErrorInvalidValue\n"
                       "log after an error: cudaSuccess, callback called 1 time(s), [CUDA][E] Returning 101 (cudaErrorInvalidDevice)\n"
                       "log into 8 bytes: cudaErrorInvalidValue, 0 bytes\n"
                       "unregister log callback: cudaSuccess\n"
                       "copy stream attributes: cudaSuccess\n"
                       "copied sync policy: 3\n"
                       "copied mem sync domain: 1\n"
                       "still usable: cudaSuccess\n";

    expect_output_over_both(argv, 60, want);
}

/* ---- the guest's call profile (TANDEM_PROFILE, issue 15) ---- */

/* The count column of the profile's row for call `name`, or -1 when it has none. */
static long profile_count(const char *path, const char *name)
{
    char line[256], call[64], kind[32], kind2[32];
    long calls = -1, n;
    FILE *f = fopen(path, "r");

    if (!f)
        return -1;
    while (fgets(line, sizeof(line), f)) {
        /* "TDM_LAUNCH   one-way   1 ..." or "TDM_MALLOC   round trip   3 ..." */
        if (sscanf(line, "%63s %31s %ld", call, kind, &n) == 3 && !strcmp(call, name))
            calls = n;
        else if (sscanf(line, "%63s %31s %31s %ld", call, kind, kind2, &n) == 4 && !strcmp(call, name))
            calls = n;
    }
    fclose(f);
    return calls;
}

/* vector_add makes three allocations and one launch: the profile written at exit counts
 * exactly those, over both transports; without TANDEM_PROFILE no file is written. */
Test(profile, a_guest_with_TANDEM_PROFILE_counts_its_calls, .init = up, .fini = down)
{
    const char *argv[] = { th_example("vector_add"), NULL };
    const char *endpoints[] = { srv.endpoint, srv.shm_endpoint };
    char path[256];
    th_result r;

    for (int i = 0; i < 2; i++) {
        snprintf(path, sizeof(path), "%s/profile-%d-%d.txt", th_build_dir(), (int)getpid(), i);
        unlink(path);
        th_run_guest(endpoints[i], argv, 60, &r);
        cr_assert_eq(r.status, 0, "%s", r.err);
        cr_expect(access(path, F_OK) != 0, "a profile was written without TANDEM_PROFILE");

        setenv("TANDEM_PROFILE", path, 1);
        th_run_guest(endpoints[i], argv, 60, &r);
        unsetenv("TANDEM_PROFILE");
        cr_assert_eq(r.status, 0, "%s", r.err);
        cr_expect_eq(profile_count(path, "TDM_MALLOC"), 3, "over %s: %ld allocations counted (see %s)", endpoints[i],
                     profile_count(path, "TDM_MALLOC"), path);
        cr_expect_eq(profile_count(path, "TDM_LAUNCH"), 1, "over %s: %ld launches counted (see %s)", endpoints[i],
                     profile_count(path, "TDM_LAUNCH"), path);
        unlink(path);
    }
}

/* A profile that cannot be written costs the program nothing but a line saying so. */
Test(profile, an_unwritable_TANDEM_PROFILE_is_reported_and_the_program_runs_on, .init = up, .fini = down)
{
    const char *argv[] = { th_example("vector_add"), NULL };
    th_result r;

    setenv("TANDEM_PROFILE", "/nonexistent-tandem-dir/profile.txt", 1);
    th_run_guest(srv.endpoint, argv, 60, &r);
    unsetenv("TANDEM_PROFILE");
    cr_expect_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.err, "TANDEM_PROFILE: cannot write /nonexistent-tandem-dir/profile.txt") != NULL,
              "no line about the profile:\n%s", r.err);
}
