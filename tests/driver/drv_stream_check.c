/* The Driver API's streams, events, host functions and graphs (issue 15), in plain C against
 * cuda.h: streams with priorities and flags, events with elapsed time, host functions in
 * stream order, a captured graph of copies replayed, and bad inputs.  Each line printed is
 * compared with what the real driver answers (tests/integration/test_driver_memory.c). */
#include <cuda.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drv_check.h"

#define N 1024

/* What the host functions saw, in the order they ran (only the callback thread writes). */
static int order[3], ran;
static CUstream cb_stream;
static CUresult cb_status = CUDA_ERROR_UNKNOWN;

static void host_fn(void *arg)
{
    order[ran++] = (int)(intptr_t)arg;
}

static void stream_cb(CUstream s, CUresult status, void *arg)
{
    cb_stream = s;
    cb_status = status;
    order[ran++] = (int)(intptr_t)arg;
}

static void streams(CUcontext primary)
{
    int least = 0, greatest = 0, prio = 99;
    unsigned int flags = 99;
    unsigned long long id = 0;
    CUstream s, d;
    CUcontext ctx = NULL;

    MUST(cuCtxGetStreamPriorityRange(&least, &greatest));
    MUST(cuStreamCreateWithPriority(&s, CU_STREAM_NON_BLOCKING, greatest));
    MUST(cuStreamGetPriority(s, &prio));
    MUST(cuStreamGetFlags(s, &flags));
    printf("stream: priority is the greatest %s, flags %u\n", yes(prio == greatest), flags);
    MUST(cuStreamCreate(&d, CU_STREAM_DEFAULT));
    MUST(cuStreamGetPriority(d, &prio));
    MUST(cuStreamGetFlags(d, &flags));
    printf("default stream flags %u, priority is the least %s\n", flags, yes(prio == least));
    MUST(cuStreamGetCtx(s, &ctx));
    printf("stream context is the primary: %s\n", yes(ctx == primary));
    MUST(cuStreamGetId(s, &id));
    printf("stream id nonzero: %s\n", yes(id != 0));
    say("cuStreamCreate with unknown flags", cuStreamCreate(&d, 0x4));
    say("cuStreamGetPriority into NULL", cuStreamGetPriority(s, NULL));
    say("cuStreamQuery of an idle stream", cuStreamQuery(s));
    MUST(cuStreamDestroy(s));
    MUST(cuStreamDestroy(d));
    /* A destroyed stream's handle: CUDA_ERROR_INVALID_HANDLE natively, where the driver can
     * still tell it is stale (unsure on every driver; the GPU run checks). */
    say("cuStreamSynchronize of a destroyed stream", cuStreamSynchronize(s));
}

static void events_and_host_functions(CUdeviceptr d)
{
    CUevent e0, e1, notime;
    CUstream s;
    float ms = -1;
    static unsigned char h[N];

    MUST(cuStreamCreate(&s, 0));
    MUST(cuEventCreate(&e0, CU_EVENT_DEFAULT));
    MUST(cuEventCreate(&e1, CU_EVENT_BLOCKING_SYNC));
    MUST(cuEventCreate(&notime, CU_EVENT_DISABLE_TIMING));
    MUST(cuEventRecord(e0, s));
    MUST(cuMemsetD8Async(d, 1, N, s));
    MUST(cuLaunchHostFunc(s, host_fn, (void *)1));
    MUST(cuStreamAddCallback(s, stream_cb, (void *)2, 0));
    MUST(cuLaunchHostFunc(s, host_fn, (void *)3));
    MUST(cuEventRecordWithFlags(e1, s, CU_EVENT_RECORD_DEFAULT));
    MUST(cuEventRecord(notime, s));
    MUST(cuEventSynchronize(e1));
    say("cuEventQuery after its synchronize", cuEventQuery(e1));
    MUST(cuEventElapsedTime(&ms, e0, e1));
    printf("elapsed time >= 0: %s\n", yes(ms >= 0));
    MUST(cuStreamSynchronize(s));
    printf("host functions in stream order: %d %d %d (%d ran)\n", order[0], order[1], order[2], ran);
    printf("callback: stream is its own %s, status %s\n", yes(cb_stream == s), name(cb_status));
    MUST(cuMemcpyDtoH(h, d, N));
    printf("memset before them: %s\n", h[0] == 1 && h[N - 1] == 1 ? "correct" : "WRONG");

    say("elapsed time of an event without timing", cuEventElapsedTime(&ms, e0, notime));
    say("elapsed time into NULL", cuEventElapsedTime(NULL, e0, e1));
    say("cuEventRecord of NULL", cuEventRecord(NULL, s));
    say("interprocess event with timing", cuEventCreate(&notime, CU_EVENT_INTERPROCESS));
    say("cuStreamAddCallback with flags 1", cuStreamAddCallback(s, stream_cb, NULL, 1));
    say("cuLaunchHostFunc of NULL", cuLaunchHostFunc(s, NULL, NULL));
    {
        CUstream other;
        MUST(cuStreamCreate(&other, CU_STREAM_NON_BLOCKING));
        say("cuStreamWaitEvent", cuStreamWaitEvent(other, e1, 0));
        MUST(cuStreamSynchronize(other));
        MUST(cuStreamDestroy(other));
    }
    MUST(cuEventDestroy(e0));
    MUST(cuEventDestroy(e1));
    MUST(cuEventDestroy(notime));
    MUST(cuStreamDestroy(s));
}

static void graphs(CUdeviceptr a, CUdeviceptr b, CUdeviceptr c)
{
    CUstream s;
    CUgraph g = NULL;
    CUgraphExec x = NULL, x2 = NULL;
    CUgraphNode nodes[4];
    size_t n = 0;
    CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_INVALIDATED;
    cuuint64_t id = 0;
    CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
    unsigned char src[N], out[N];

    MUST(cuThreadExchangeStreamCaptureMode(&mode));
    printf("thread capture mode was global: %s\n", yes(mode == CU_STREAM_CAPTURE_MODE_GLOBAL));
    MUST(cuThreadExchangeStreamCaptureMode(&mode));

    MUST(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    MUST(cuStreamIsCapturing(s, &st));
    printf("capturing before: %d\n", (int)st);
    MUST(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
    MUST(cuStreamIsCapturing(s, &st));
    printf("capturing during: %d\n", (int)st);
    MUST(cuStreamGetCaptureInfo(s, &st, &id, NULL, NULL, NULL, NULL));
    printf("capture info: status %d, id nonzero %s\n", (int)st, yes(id != 0));
    MUST(cuMemcpyDtoDAsync(b, a, N, s));
    MUST(cuMemcpyDtoDAsync(c, b, N, s));
    MUST(cuStreamEndCapture(s, &g));
    MUST(cuStreamIsCapturing(s, &st));
    printf("capturing after: %d\n", (int)st);
    n = 4;
    MUST(cuGraphGetNodes(g, nodes, &n));
    printf("graph nodes: %zu\n", n);
    MUST(cuGraphInstantiateWithFlags(&x, g, 0));
    MUST(cuGraphUpload(x, s));
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < N; i++)
            src[i] = (unsigned char)(i * 3 + round);
        MUST(cuMemcpyHtoD(a, src, N));
        MUST(cuMemsetD8(c, 0, N));
        /* s does not wait for the null stream, whose copy from pageable memory may still
         * be under way after it returned (cuda.h, "API synchronization behavior"). */
        MUST(cuCtxSynchronize());
        MUST(cuGraphLaunch(x, s));
        MUST(cuStreamSynchronize(s));
        MUST(cuMemcpyDtoH(out, c, N));
        printf("replay %d: %s\n", round, memcmp(src, out, N) ? "WRONG" : "correct");
    }
    /* cuda.h 13 names cuGraphInstantiateWithFlags cuGraphInstantiate. */
    MUST(cuGraphInstantiate(&x2, g, 0));
    MUST(cuGraphLaunch(x2, s));
    MUST(cuStreamSynchronize(s));
    printf("second instance: launched\n");
    say("cuGraphInstantiateWithFlags into NULL", cuGraphInstantiateWithFlags(NULL, g, 0));
    {
        CUgraph none = NULL;
        say("cuStreamEndCapture of a stream not capturing", cuStreamEndCapture(s, &none));
    }
    MUST(cuGraphExecDestroy(x));
    MUST(cuGraphExecDestroy(x2));
    MUST(cuGraphDestroy(g));
    MUST(cuGraphCreate(&g, 0));
    n = 4;
    MUST(cuGraphGetNodes(g, NULL, &n));
    printf("empty graph nodes: %zu\n", n);
    MUST(cuGraphDestroy(g));
    MUST(cuStreamDestroy(s));
}

int main(void)
{
    CUdevice dev;
    CUcontext primary;
    CUdeviceptr a, b, c;
    CUstream s;
    CUstreamCaptureStatus st;

    say("cuStreamCreate before cuInit", cuStreamCreate(&s, 0));
    MUST(cuInit(0));
    MUST(cuDeviceGet(&dev, 0));
    MUST(cuDevicePrimaryCtxRetain(&primary, dev));
    say("cuStreamCreate without a current context", cuStreamCreate(&s, 0));
    say("cuStreamIsCapturing without a current context", cuStreamIsCapturing(NULL, &st));
    MUST(cuCtxSetCurrent(primary));
    MUST(cuMemAlloc(&a, N));
    MUST(cuMemAlloc(&b, N));
    MUST(cuMemAlloc(&c, N));

    streams(primary);
    events_and_host_functions(a);
    graphs(a, b, c);
    MUST(cuStreamIsCapturing(CU_STREAM_LEGACY, &st));
    printf("legacy stream capturing: %d\n", (int)st);
    MUST(cuStreamIsCapturing(CU_STREAM_PER_THREAD, &st));
    printf("per-thread stream capturing: %d\n", (int)st);

    MUST(cuMemFree(a));
    MUST(cuMemFree(b));
    MUST(cuMemFree(c));
    MUST(cuDevicePrimaryCtxRelease(dev));
    printf("done\n");
    return 0;
}
