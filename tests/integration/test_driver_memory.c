/* The Driver API's memory, streams, events and graphs (issue 15): drv_memory_check and
 * drv_stream_check (tests/driver/), plain C programs of cuda.h run with Tandem's
 * libcuda.so.1, over TCP and shm.  Each expected line is what cuda.h documents for the call;
 * lines the header leaves open say so (the GPU run checks them against NVIDIA's driver). */
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

static void expect_over_both(const char *prog, const char *want)
{
    const char *endpoints[] = { srv.endpoint, srv.shm_endpoint };
    const char *argv[] = { th_bin(prog), NULL };

    for (int i = 0; i < 2; i++) {
        th_result *r = calloc(1, sizeof(*r));
        th_run_driver_guest(endpoints[i], argv, 60, r);
        cr_assert_eq(r->status, 0, "%s (%s) exited %d:\n%s%s", prog, endpoints[i], r->status, r->out, r->err);
        cr_expect_str_eq(r->out, want, "%s (%s) printed\n%s", prog, endpoints[i], r->out);
        free(r);
    }
}

/* Allocations, copies sync and async with their data checked, memsets of 8, 16 and 32 bits
 * (a 16/32-bit value whose bytes differ included), ranges, pointer attributes, host memory,
 * managed and stream-ordered memory, and bad inputs. */
Test(driver_memory, memory_calls_behave_as_the_driver, .init = up, .fini = down)
{
    const char *want =
        "cuMemAlloc before cuInit: CUDA_ERROR_NOT_INITIALIZED\n"
        "cuMemAlloc without a current context: CUDA_ERROR_INVALID_CONTEXT\n"
        /* cuda.h: a bytesize of 0 is CUDA_ERROR_INVALID_VALUE (cudaMalloc's is not an error) */
        "cuMemAlloc of 0 bytes: CUDA_ERROR_INVALID_VALUE\n"
        "cuMemAlloc into NULL: CUDA_ERROR_INVALID_VALUE\n"
        "cuMemGetInfo: total > 0 yes, free <= total yes\n"
        "sync copies: correct\n"
        "async copies: correct\n"
        "cuMemcpy and cuMemcpyAsync: correct\n"
        "D8 0xab: correct\n"
        "D16 0x0707: correct\n"
        "D16 0x1234: correct\n"
        "D32 0xdeadbeef: correct\n"
        "async memsets in stream order: correct\n"
        /* cuda.h: D16/D32 need 2-/4-byte alignment */
        "D32 at an odd address: CUDA_ERROR_INVALID_VALUE\n"
        "D16 at an odd address: CUDA_ERROR_INVALID_VALUE\n"
        "range of d+100: base is d yes, size 4096\n"
        /* cuda.h: CUDA_ERROR_NOT_FOUND for an address in no allocation */
        "range of a stack address: CUDA_ERROR_NOT_FOUND\n"
        /* CU_MEMORYTYPE_DEVICE is 2, CU_MEMORYTYPE_HOST 1 */
        "device memory: type 2\n"
        "  context is the primary: yes\n"
        "  device pointer is itself: yes\n"
        /* device memory the host cannot reach: cuda.h says CUDA_ERROR_INVALID_VALUE */
        "  host pointer: CUDA_ERROR_INVALID_VALUE\n"
        "  managed 0, ordinal 0, mapped 1\n"
        "  range starts at d yes, size 4096\n"
        "  buffer id nonzero: yes\n"
        /* memory no context allocated or registered (cuda.h) */
        "stack address, memory type: CUDA_ERROR_INVALID_VALUE\n"
        "NULL data: CUDA_ERROR_INVALID_VALUE\n"
        /* cuda.h: no error for an unknown pointer, NULL values instead */
        "cuPointerGetAttributes of a stack address: CUDA_SUCCESS\n"
        "  context NULL yes, type 0, managed 0\n"
        "  device memory: context is the primary yes, type 2, managed 0\n"
        "cuMemHostAlloc flags: yes\n"
        "pinned memory: type 1, host pointer is itself yes\n"
        "cuMemHostAlloc with unknown flags: CUDA_ERROR_INVALID_VALUE\n"
        "registered: flags has PORTABLE yes\n"
        /* cuda.h: CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED */
        "unregister again: CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED\n"
        "managed memory: is managed 1\n"
        "cuMemAllocManaged with both attach flags: CUDA_ERROR_INVALID_VALUE\n"
        "stream-ordered allocation: correct\n"
        "cuMemAllocPitch, element size 3: CUDA_ERROR_INVALID_VALUE\n"
        "cuMemAllocPitch: pitch >= width yes\n"
        /* unsure whether every driver says INVALID_VALUE here; the GPU run checks */
        "cuMemFree of a freed pointer: CUDA_ERROR_INVALID_VALUE\n"
        "cuMemcpyHtoD to a freed pointer: CUDA_ERROR_INVALID_VALUE\n"
        "cuMemcpyHtoD from NULL: CUDA_ERROR_INVALID_VALUE\n"
        /* unsure: the real driver may say CUDA_ERROR_INVALID_VALUE only where nothing is mapped past the end; the GPU run checks */
        "cuMemcpyDtoH past the end: CUDA_ERROR_INVALID_VALUE\n"
        "cuMemFreeHost of pageable memory: CUDA_ERROR_INVALID_VALUE\n"
        "done\n";

    expect_over_both("drv_memory_check", want);
}

/* Streams with priorities and flags, events with elapsed time, host functions in stream
 * order, a captured graph of copies replayed, and bad inputs. */
Test(driver_memory, streams_events_and_graphs_behave_as_the_driver, .init = up, .fini = down)
{
    const char *want =
        "cuStreamCreate before cuInit: CUDA_ERROR_NOT_INITIALIZED\n"
        "cuStreamCreate without a current context: CUDA_ERROR_INVALID_CONTEXT\n"
        "cuStreamIsCapturing without a current context: CUDA_ERROR_INVALID_CONTEXT\n"
        "stream: priority is the greatest yes, flags 1\n"
        "default stream flags 0, priority is the least yes\n"
        "stream context is the primary: yes\n"
        "stream id nonzero: yes\n"
        "cuStreamCreate with unknown flags: CUDA_ERROR_INVALID_VALUE\n"
        "cuStreamGetPriority into NULL: CUDA_ERROR_INVALID_VALUE\n"
        "cuStreamQuery of an idle stream: CUDA_SUCCESS\n"
        /* unsure: natively a stale stream may not be detectable; the GPU run checks */
        "cuStreamSynchronize of a destroyed stream: CUDA_ERROR_INVALID_HANDLE\n"
        "cuEventQuery after its synchronize: CUDA_SUCCESS\n"
        "elapsed time >= 0: yes\n"
        "host functions in stream order: 1 2 3 (3 ran)\n"
        "callback: stream is its own yes, status CUDA_SUCCESS\n"
        "memset before them: correct\n"
        /* cuda.h: CUDA_ERROR_INVALID_HANDLE for an event made with CU_EVENT_DISABLE_TIMING */
        "elapsed time of an event without timing: CUDA_ERROR_INVALID_HANDLE\n"
        "elapsed time into NULL: CUDA_ERROR_INVALID_VALUE\n"
        "cuEventRecord of NULL: CUDA_ERROR_INVALID_HANDLE\n"
        /* cuda.h: CU_EVENT_INTERPROCESS needs CU_EVENT_DISABLE_TIMING */
        "interprocess event with timing: CUDA_ERROR_INVALID_VALUE\n"
        "cuStreamAddCallback with flags 1: CUDA_ERROR_INVALID_VALUE\n"
        "cuLaunchHostFunc of NULL: CUDA_ERROR_INVALID_VALUE\n"
        "cuStreamWaitEvent: CUDA_SUCCESS\n"
        "thread capture mode was global: yes\n"
        "capturing before: 0\n"
        /* CU_STREAM_CAPTURE_STATUS_ACTIVE is 1, NONE 0 */
        "capturing during: 1\n"
        "capture info: status 1, id nonzero yes\n"
        "capturing after: 0\n"
        "graph nodes: 2\n"
        "replay 0: correct\n"
        "replay 1: correct\n"
        "second instance: launched\n"
        "cuGraphInstantiateWithFlags into NULL: CUDA_ERROR_INVALID_VALUE\n"
        /* cuda.h: CUDA_ERROR_ILLEGAL_STATE when the stream is not capturing */
        "cuStreamEndCapture of a stream not capturing: CUDA_ERROR_ILLEGAL_STATE\n"
        "empty graph nodes: 0\n"
        "legacy stream capturing: 0\n"
        "per-thread stream capturing: 0\n"
        "done\n";

    expect_over_both("drv_stream_check", want);
}

/* Guards TANDEM_LOG_ERRORS (drv_errors.c): with it, an error the runtime layer answers is a
 * line naming the driver entry point (here cuMemFree_v2 of a freed pointer); without it the
 * program's stderr has no such line. */
Test(driver_memory, log_errors_names_the_entry_point, .init = up, .fini = down)
{
    const char *argv[] = { th_bin("drv_memory_check"), NULL };
    th_result *r = calloc(1, sizeof(*r));

    th_run_driver_guest(srv.endpoint, argv, 60, r);
    cr_assert_eq(r->status, 0, "drv_memory_check exited %d:\n%s", r->status, r->err);
    cr_expect_null(strstr(r->err, "returns CUDA_ERROR"), "an error was logged without TANDEM_LOG_ERRORS:\n%s", r->err);
    memset(r, 0, sizeof(*r));
    setenv("TANDEM_LOG_ERRORS", "1", 1);
    th_run_driver_guest(srv.endpoint, argv, 60, r);
    unsetenv("TANDEM_LOG_ERRORS");
    cr_assert_eq(r->status, 0, "drv_memory_check exited %d:\n%s", r->status, r->err);
    cr_expect_not_null(strstr(r->err, "cuMemFree_v2 returns CUDA_ERROR_INVALID_VALUE"),
                       "no line named cuMemFree_v2's error; stderr:\n%s", r->err);
    free(r);
}
