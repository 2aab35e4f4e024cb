/* driver-calls: the cost of each hot Driver API entry point, per call, in nanoseconds
 * (docs/benchmarks.md, "Driver calls").
 *
 *   driver-calls [--quick] [--only ID,...] [--batches N] [--libraries N]
 *
 * The entry points are the ones stock PyTorch calls most (the H100 trace,
 * docs/results/2026-11-24-h100-pytorch-driver-trace.txt): context and device queries,
 * kernel attribute queries, launches of a kernel with eight parameters through
 * cuLaunchKernel and through cuLaunchKernelEx with a cluster dimension, on a non-blocking
 * stream, events, a small asynchronous copy.  Each is called in batches; a batch's time
 * divided by its calls is one sample, and the median of the samples is reported, one JSON
 * line per entry point.  Launches, records and copies are drained (untimed) after each
 * batch, so every batch starts with an idle stream.
 *
 * A PyTorch process has thousands of kernels loaded (cuBLAS, cuDNN, its own, 77 library loads
 * in the trace): before the measured kernel's library, the program loads the same image
 * --libraries times more (default 1000, 100 with --quick), so a lookup that grows with the
 * number of loaded kernels shows.
 *
 * The program is written against cuda.h and linked against libcuda.so.1 (no runtime): run
 * plainly it measures NVIDIA's driver; with Tandem's lib/driver first on LD_LIBRARY_PATH
 * (scripts/tandem-run) the same binary measures Tandem's.  bench/run.sh --only driver-calls
 * runs both and prints them side by side. */
#include <cuda.h>
#include <stdalign.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "drvcalls_fatbin.h"

const char *bench_prog = "driver-calls";

#define KERNEL_NAME "_Z13drvcalls_stepPfPKfPKiPjiifx"
#define MAX_EVENTS 4096
#define COPY_BYTES 256

#define MUST(call)                                                                                  \
    do {                                                                                            \
        CUresult r_ = (call);                                                                       \
        if (r_ != CUDA_SUCCESS)                                                                     \
            fail(#call, __LINE__, r_);                                                              \
    } while (0)

static void fail(const char *what, int line, CUresult r)
{
    const char *name = NULL;

    cuGetErrorName(r, &name);
    fprintf(stderr, "%s: %s failed at line %d: %s (%d)\n", bench_prog, what, line, name ? name : "?", (int)r);
    exit(1);
}

/* What the measured calls work on. */
typedef struct ctx {
    CUdevice dev;
    CUcontext primary;
    CUstream stream;
    CUlibrary lib;
    CUlibrary *padding;           /* loaded before lib, unloaded at the end */
    int npadding;
    CUkernel kernel;
    CUfunction func;
    CUdeviceptr y, x, idx, count;
    int n, stride;
    float a;
    long long tag;
    void *params[8];
    CUlaunchAttribute cluster_attr;
    CUlaunchConfig cluster_config;
    CUevent done;                 /* recorded and complete: what cuEventQuery asks */
    CUevent events[MAX_EVENTS];   /* cuEventCreate's and cuEventDestroy's */
    unsigned char host[COPY_BYTES];
} ctx;

/* One measurement: setup (untimed), body (n calls, timed), teardown (untimed). */
typedef struct call_bench {
    const char *id, *what;
    int launches;   /* 1: n is the launch batch size, else the query batch size */
    int cluster;    /* needs thread block clusters (compute capability 9.0 and later) */
    void (*setup)(ctx *c, int n);
    void (*body)(ctx *c, int n);
    void (*teardown)(ctx *c, int n);
} call_bench;

static void drain(ctx *c, int n)
{
    (void)n;
    MUST(cuStreamSynchronize(c->stream));
}

static void ctx_get_device(ctx *c, int n)
{
    CUdevice d;

    for (int i = 0; i < n; i++)
        MUST(cuCtxGetDevice_v2(&d, NULL));
    (void)c;
}

static void primary_ctx_state(ctx *c, int n)
{
    unsigned flags;
    int active;

    for (int i = 0; i < n; i++)
        MUST(cuDevicePrimaryCtxGetState(c->dev, &flags, &active));
}

static void kernel_get_attribute(ctx *c, int n)
{
    int v;

    for (int i = 0; i < n; i++)
        MUST(cuKernelGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, c->kernel, c->dev));
}

static void launch(ctx *c, int n)
{
    for (int i = 0; i < n; i++)
        MUST(cuLaunchKernel(c->func, 1, 1, 1, 32, 1, 1, 0, c->stream, c->params, NULL));
}

static void launch_ex_cluster(ctx *c, int n)
{
    for (int i = 0; i < n; i++)
        MUST(cuLaunchKernelEx(&c->cluster_config, c->func, c->params, NULL));
}

static void stream_is_capturing(ctx *c, int n)
{
    CUstreamCaptureStatus s;

    for (int i = 0; i < n; i++)
        MUST(cuStreamIsCapturing(c->stream, &s));
}

static void device_get_attribute(ctx *c, int n)
{
    int v;

    for (int i = 0; i < n; i++)
        MUST(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, c->dev));
}

static void kernel_get_function(ctx *c, int n)
{
    CUfunction f;

    for (int i = 0; i < n; i++)
        MUST(cuKernelGetFunction(&f, c->kernel));
}

static void ctx_get_current(ctx *c, int n)
{
    CUcontext cur;

    for (int i = 0; i < n; i++)
        MUST(cuCtxGetCurrent(&cur));
    (void)c;
}

static void stream_synchronize(ctx *c, int n)
{
    for (int i = 0; i < n; i++)
        MUST(cuStreamSynchronize(c->stream));
}

static void memcpy_htod_async(ctx *c, int n)
{
    for (int i = 0; i < n; i++)
        MUST(cuMemcpyHtoDAsync_v2(c->y, c->host, COPY_BYTES, c->stream));
}

static void event_create(ctx *c, int n)
{
    for (int i = 0; i < n; i++)
        MUST(cuEventCreate(&c->events[i], CU_EVENT_DISABLE_TIMING));
}

static void event_destroy(ctx *c, int n)
{
    for (int i = 0; i < n; i++)
        MUST(cuEventDestroy_v2(c->events[i]));
}

static void pointer_get_attribute(ctx *c, int n)
{
    unsigned type;

    for (int i = 0; i < n; i++)
        MUST(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, c->y));
}

static void event_record(ctx *c, int n)
{
    for (int i = 0; i < n; i++)
        MUST(cuEventRecordWithFlags(c->done, c->stream, CU_EVENT_RECORD_DEFAULT));
}

static void event_query(ctx *c, int n)
{
    for (int i = 0; i < n; i++)
        MUST(cuEventQuery(c->done));
}

static void settle_done(ctx *c, int n)
{
    (void)n;
    MUST(cuEventRecord(c->done, c->stream));
    MUST(cuEventSynchronize(c->done));
}

static void kernel_set_attribute(ctx *c, int n)
{
    for (int i = 0; i < n; i++)
        MUST(cuKernelSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 1024, c->kernel, c->dev));
}

static void occupancy_clusters(ctx *c, int n)
{
    int v;

    for (int i = 0; i < n; i++)
        MUST(cuOccupancyMaxActiveClusters(&v, c->func, &c->cluster_config));
}

static void occupancy_blocks(ctx *c, int n)
{
    int v;

    for (int i = 0; i < n; i++)
        MUST(cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(&v, c->func, 128, 0, CU_OCCUPANCY_DEFAULT));
}

/* In the trace's order (most calls first). */
static const call_bench benches[] = {
    { "drv.CtxGetDevice", "cuCtxGetDevice_v2(&dev, NULL)", 0, 0, NULL, ctx_get_device, NULL },
    { "drv.PrimaryCtxGetState", "cuDevicePrimaryCtxGetState(0, ...)", 0, 0, NULL, primary_ctx_state, NULL },
    { "drv.KernelGetAttribute", "cuKernelGetAttribute(MAX_THREADS_PER_BLOCK)", 0, 0, NULL, kernel_get_attribute,
      NULL },
    { "drv.LaunchKernel", "cuLaunchKernel, 8 params, non-blocking stream", 1, 0, NULL, launch, drain },
    { "drv.StreamIsCapturing", "cuStreamIsCapturing(stream)", 0, 0, NULL, stream_is_capturing, NULL },
    { "drv.DeviceGetAttribute", "cuDeviceGetAttribute(MULTIPROCESSOR_COUNT)", 0, 0, NULL, device_get_attribute,
      NULL },
    { "drv.KernelGetFunction", "cuKernelGetFunction", 0, 0, NULL, kernel_get_function, NULL },
    { "drv.CtxGetCurrent", "cuCtxGetCurrent", 0, 0, NULL, ctx_get_current, NULL },
    { "drv.StreamSynchronize", "cuStreamSynchronize(idle stream): a round trip", 1, 0, NULL, stream_synchronize,
      NULL },
    { "drv.MemcpyHtoDAsync", "cuMemcpyHtoDAsync_v2, 256 B pageable", 1, 0, NULL, memcpy_htod_async, drain },
    { "drv.EventCreate", "cuEventCreate(DISABLE_TIMING)", 1, 0, NULL, event_create, event_destroy },
    { "drv.EventDestroy", "cuEventDestroy_v2", 1, 0, event_create, event_destroy, NULL },
    { "drv.PointerGetAttribute", "cuPointerGetAttribute(MEMORY_TYPE, device ptr)", 0, 0, NULL,
      pointer_get_attribute, NULL },
    { "drv.EventRecordWithFlags", "cuEventRecordWithFlags(event, stream, 0)", 1, 0, NULL, event_record, drain },
    { "drv.EventQuery", "cuEventQuery(complete event)", 0, 0, settle_done, event_query, NULL },
    { "drv.LaunchKernelEx.cluster", "cuLaunchKernelEx, cluster dimension (2,1,1), 8 params", 1, 1, NULL,
      launch_ex_cluster, drain },
    { "drv.KernelSetAttribute", "cuKernelSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES, same value)", 0, 0, NULL,
      kernel_set_attribute, NULL },
    { "drv.OccMaxActiveClusters", "cuOccupancyMaxActiveClusters", 0, 1, NULL, occupancy_clusters, NULL },
    { "drv.OccMaxActiveBlocks", "cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags", 0, 0, NULL,
      occupancy_blocks, NULL },
};
#define NBENCHES (sizeof(benches) / sizeof(benches[0]))

static void setup(ctx *c)
{
    MUST(cuInit(0));
    MUST(cuDeviceGet(&c->dev, 0));
    MUST(cuDevicePrimaryCtxRetain(&c->primary, c->dev));
    MUST(cuCtxSetCurrent(c->primary));
    MUST(cuStreamCreate(&c->stream, CU_STREAM_NON_BLOCKING));
    if (c->npadding && !(c->padding = calloc((size_t)c->npadding, sizeof(*c->padding)))) {
        fprintf(stderr, "%s: out of memory\n", bench_prog);
        exit(1);
    }
    for (int i = 0; i < c->npadding; i++)
        MUST(cuLibraryLoadData(&c->padding[i], drvcalls_fatbin, NULL, NULL, 0, NULL, NULL, 0));
    MUST(cuLibraryLoadData(&c->lib, drvcalls_fatbin, NULL, NULL, 0, NULL, NULL, 0));
    MUST(cuLibraryGetKernel(&c->kernel, c->lib, KERNEL_NAME));
    MUST(cuKernelGetFunction(&c->func, c->kernel));
    MUST(cuMemAlloc(&c->y, 4096));
    MUST(cuMemAlloc(&c->x, 4096));
    MUST(cuMemAlloc(&c->idx, 4096));
    MUST(cuMemAlloc(&c->count, 4096));
    MUST(cuMemsetD8(c->count, 0, 4096));
    MUST(cuEventCreate(&c->done, CU_EVENT_DISABLE_TIMING));
    memset(c->host, 0x5a, sizeof(c->host));
    /* n = 0: the kernel reads its parameters and returns. */
    c->n = 0;
    c->stride = 7;
    c->a = 2.0f;
    c->tag = 0x123456789abcLL;
    void *p[8] = { &c->y, &c->x, &c->idx, &c->count, &c->n, &c->stride, &c->a, &c->tag };
    memcpy(c->params, p, sizeof(p));
    c->cluster_attr.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    c->cluster_attr.value.clusterDim.x = 2;
    c->cluster_attr.value.clusterDim.y = 1;
    c->cluster_attr.value.clusterDim.z = 1;
    c->cluster_config = (CUlaunchConfig){ .gridDimX = 2, .gridDimY = 1, .gridDimZ = 1, .blockDimX = 32,
                                          .blockDimY = 1, .blockDimZ = 1, .sharedMemBytes = 0,
                                          .hStream = c->stream, .attrs = &c->cluster_attr, .numAttrs = 1 };
}

static void measure(ctx *c, const call_bench *b, int n, int batches)
{
    double samples[64];

    /* One untimed batch first: first-use costs (a kernel's attributes, a stream's state)
     * are not what is measured. */
    for (int k = -1; k < batches; k++) {
        double t0;

        if (b->setup)
            b->setup(c, n);
        t0 = bench_now_us();
        b->body(c, n);
        if (k >= 0)
            samples[k] = (bench_now_us() - t0) * 1000.0 / n;
        if (b->teardown)
            b->teardown(c, n);
    }
    bench_stats s = bench_summarize(samples, (size_t)batches);
    printf("{\"bench\":\"driver-calls\",\"id\":\"%s\",\"what\":\"%s\",\"unit\":\"ns\",\"better\":\"lower\","
           "\"value\":%.1f,\"min_ns\":%.1f,\"max_ns\":%.1f,\"calls\":%d,\"batches\":%d,"
           "\"libraries\":%d}\n",
           b->id, b->what, s.median, s.min, s.max, n, batches, c->npadding + 1);
    fflush(stdout);
}

static int parse_count(const char *s, int lo, int hi)
{
    char *end = NULL;
    long v = strtol(s, &end, 10);

    return end != s && !*end && v >= lo && v <= hi ? (int)v : -1;
}

int main(int argc, char **argv)
{
    static ctx c;
    const char *ids[NBENCHES];
    const char *only = NULL;
    int quick = 0, batches = 15, major = 0, libraries = -1;

    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick"))
            quick = 1;
        else if (!strcmp(argv[i], "--only") && i + 1 < argc)
            only = argv[++i];
        else if (!strcmp(argv[i], "--batches") && i + 1 < argc && (batches = parse_count(argv[++i], 1, 64)) > 0)
            ;
        else if (!strcmp(argv[i], "--libraries") && i + 1 < argc &&
                 (libraries = parse_count(argv[++i], 0, 100000)) >= 0)
            ;
        else {
            fprintf(stderr, "usage: driver-calls [--quick] [--only ID,...] [--batches 1-64] [--libraries 0-100000]\n");
            return 2;
        }
    }
    if (quick && batches == 15)
        batches = 3;
    c.npadding = libraries >= 0 ? libraries : quick ? 100 : 1000;
    for (size_t i = 0; i < NBENCHES; i++)
        ids[i] = benches[i].id;
    if (only && !bench_known_names(only, ids, NBENCHES))
        return 2;
    setup(&c);
    MUST(cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, c.dev));
    for (size_t i = 0; i < NBENCHES; i++) {
        const call_bench *b = &benches[i];
        int n = b->launches ? (quick ? 32 : 256) : (quick ? 256 : 4000);

        if (!bench_selected(only, b->id))
            continue;
        if (b->cluster && major < 9) {
            fprintf(stderr, "%s: %s skipped: compute capability %d has no thread block clusters\n", bench_prog,
                    b->id, major);
            continue;
        }
        measure(&c, b, n, batches);
    }
    MUST(cuStreamSynchronize(c.stream));
    MUST(cuLibraryUnload(c.lib));
    for (int i = 0; i < c.npadding; i++)
        MUST(cuLibraryUnload(c.padding[i]));
    free(c.padding);
    MUST(cuStreamDestroy(c.stream));
    MUST(cuEventDestroy(c.done));
    MUST(cuDevicePrimaryCtxRelease(c.dev));
    return 0;
}
