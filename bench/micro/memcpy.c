/* cudaMemcpy bandwidth and latency, host to device and device to host, from
 * pinned (cudaMallocHost) and pageable (malloc) memory, sizes 4 KiB, 16 KiB,
 * ... (powers of 4) up to --max-bytes.
 *
 * One sample is one complete copy: for host to device, cudaMemcpy followed
 * by cudaDeviceSynchronize (a pageable cudaMemcpy may return before the data
 * is on the device, natively as through Tandem); for device to host,
 * cudaMemcpy alone (it returns with the data in host memory).  GB/s is the
 * size over the median sample, in 10^9 bytes per second.
 *
 * Every size is checked: the data copied back must be what was sent.
 *
 * Over tcp, copies of 8 MiB and more travel over the session's lanes (the
 * guest library's default, TANDEM_TCP_LANES=8; docs/protocol.md): run with
 * TANDEM_TCP_LANES=0 to measure one connection, TANDEM_TCP_SEND=splice
 * (guest and server) to splice the lanes' bytes instead of copying them.
 *
 * Then PyTorch's input upload (issue 15): every batch copies its input
 * tensor from pageable memory with cudaMemcpyAsync on its stream, timed
 * with its stream synchronized after (ids memcpy.pageable.h2d-async.*).
 * The driver's cuMemcpyHtoDAsync_v2, which PyTorch's libcudart calls, is
 * not timed apart: through Tandem it is the runtime layer's same copy
 * (docs/driver-api.md), and a libcuda.so.1 opened beside Tandem's
 * libcudart is NVIDIA's driver, which this process never initialized
 * (CUresult 3 for every copy: H200, 2026-12-01). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "micro.h"

#define MIN_SIZE ((size_t)4 << 10)
#define MIN_REPS 5
#define MAX_REPS 1000

static uint32_t pattern(size_t i)
{
    return (uint32_t)i * 2654435761u ^ 0x5bd1e995u;
}

static void fill(uint32_t *p, size_t bytes)
{
    for (size_t i = 0; i < bytes / 4; i++)
        p[i] = pattern(i);
}

static int intact(const uint32_t *p, size_t bytes)
{
    for (size_t i = 0; i < bytes / 4; i++)
        if (p[i] != pattern(i))
            return 0;
    return 1;
}

static int reps_for(const micro_opts *o, size_t size)
{
    size_t r = o->copy_budget / size;

    return r < MIN_REPS ? MIN_REPS : r > MAX_REPS ? MAX_REPS : (int)r;
}

static double one_copy(void *dev, void *host, size_t size, int h2d)
{
    double t0 = bench_now_us();

    if (h2d) {
        BENCH_CHECK(cudaMemcpy(dev, host, size, cudaMemcpyHostToDevice));
        BENCH_CHECK(cudaDeviceSynchronize());
    } else {
        BENCH_CHECK(cudaMemcpy(host, dev, size, cudaMemcpyDeviceToHost));
    }
    return bench_now_us() - t0;
}

static void measure(const micro_opts *o, const char *kind, int h2d, void *dev, void *host, size_t size,
                    double *t)
{
    int reps = reps_for(o, size), warm = size >= ((size_t)256 << 20) ? 1 : 2;
    char label[32];
    bench_stats st;

    for (int i = 0; i < warm; i++)
        one_copy(dev, host, size, h2d);
    for (int i = 0; i < reps; i++)
        t[i] = one_copy(dev, host, size, h2d);
    st = bench_summarize(t, (size_t)reps);
    bench_size_label(size, label, sizeof(label));
    printf("{\"bench\":\"micro\",\"id\":\"memcpy.%s.%s.%s\",\"what\":\"cudaMemcpy %s %s\",\"kind\":\"%s\","
           "\"dir\":\"%s\",\"bytes\":%zu,\"unit\":\"GB/s\",\"better\":\"higher\",\"value\":%.3f,"
           "\"median_us\":%.3f,\"p99_us\":%.3f,\"min_us\":%.3f,\"reps\":%d}\n",
           kind, h2d ? "h2d" : "d2h", label, kind, h2d ? "H2D" : "D2H", kind, h2d ? "h2d" : "d2h", size,
           (double)size / (st.median * 1e3), st.median, st.p99, st.min, reps);
    fflush(stdout);
}

static void sweep(const micro_opts *o, const char *kind, void *dev, uint32_t *host)
{
    double *t = malloc(sizeof(*t) * MAX_REPS);

    if (!t) {
        fprintf(stderr, "micro: out of memory\n");
        exit(1);
    }
    fill(host, o->max_bytes);
    for (size_t size = MIN_SIZE; size <= o->max_bytes; size *= 4) {
        fprintf(stderr, "micro: memcpy %s %zu bytes\n", kind, size);
        measure(o, kind, 1, dev, host, size, t);
        /* Clear what comes back, so a copy that moves nothing is caught. */
        memset(host, 0, size);
        measure(o, kind, 0, dev, host, size, t);
        if (!intact(host, size)) {
            fprintf(stderr, "micro: %s copy of %zu bytes came back different from what was sent\n", kind, size);
            exit(1);
        }
        if (size > SIZE_MAX / 4)
            break;
    }
    free(t);
}

/* ---- PyTorch's input upload (issue 15) ---- */
/* Batch 30 of 224x224 RGB fp32 (bench/pytorch) is 18,063,360 bytes: over
 * tcp two full 8 MiB pieces and a tail of 1,286,144 bytes, which is also
 * measured alone (the size of copy that the tail is). */
static const struct { const char *label; size_t bytes; } uploads[] = {
    { "batch30", (size_t)30 * 3 * 224 * 224 * 4 },
    { "batch30-tail", (size_t)30 * 3 * 224 * 224 * 4 - ((size_t)16 << 20) },
};

static double one_upload(void *dev, const void *host, size_t size, cudaStream_t s)
{
    double t0 = bench_now_us();

    BENCH_CHECK(cudaMemcpyAsync(dev, host, size, cudaMemcpyHostToDevice, s));
    BENCH_CHECK(cudaStreamSynchronize(s));
    return bench_now_us() - t0;
}

static void upload_case(const micro_opts *o, const char *path, void *dev, uint32_t *host,
                        size_t size, const char *label, cudaStream_t s, double *t)
{
    int reps = reps_for(o, size);
    bench_stats st;

    fill(host, size);
    for (int i = 0; i < 2; i++)
        one_upload(dev, host, size, s);
    for (int i = 0; i < reps; i++)
        t[i] = one_upload(dev, host, size, s);
    st = bench_summarize(t, (size_t)reps);
    memset(host, 0, size);
    BENCH_CHECK(cudaMemcpy(host, dev, size, cudaMemcpyDeviceToHost));
    if (!intact(host, size)) {
        fprintf(stderr, "micro: %s upload of %zu bytes arrived different from what was sent\n", path, size);
        exit(1);
    }
    printf("{\"bench\":\"micro\",\"id\":\"memcpy.pageable.h2d-%s.%s\",\"what\":\"%s pageable H2D %s\","
           "\"kind\":\"pageable\",\"dir\":\"h2d\",\"bytes\":%zu,\"unit\":\"GB/s\",\"better\":\"higher\","
           "\"value\":%.3f,\"median_us\":%.3f,\"p99_us\":%.3f,\"min_us\":%.3f,\"reps\":%d}\n",
           path, label, "cudaMemcpyAsync", label, size,
           (double)size / (st.median * 1e3), st.median, st.p99, st.min, reps);
    fflush(stdout);
}

static int batch_uploads(const micro_opts *o)
{
    size_t max = uploads[0].bytes;
    void *dev = NULL;
    uint32_t *host = malloc(max);
    double *t = malloc(sizeof(*t) * MAX_REPS);
    cudaStream_t s;

    if (!host || !t) {
        fprintf(stderr, "micro: out of memory\n");
        return 1;
    }
    BENCH_CHECK(cudaMalloc(&dev, max));
    BENCH_CHECK(cudaStreamCreate(&s));
    for (size_t u = 0; u < sizeof(uploads) / sizeof(uploads[0]); u++) {
        fprintf(stderr, "micro: memcpy pageable upload %s (%zu bytes)\n", uploads[u].label, uploads[u].bytes);
        upload_case(o, "async", dev, host, uploads[u].bytes, uploads[u].label, s, t);
    }
    BENCH_CHECK(cudaStreamDestroy(s));
    BENCH_CHECK(cudaFree(dev));
    free(t);
    free(host);
    return 0;
}

int micro_copies(const micro_opts *o)
{
    void *dev = NULL, *pinned = NULL, *pageable;

    if (o->max_bytes < MIN_SIZE) {
        fprintf(stderr, "micro: --max-bytes is below the smallest size (4K)\n");
        return 1;
    }
    BENCH_CHECK(cudaMalloc(&dev, o->max_bytes));
    BENCH_CHECK(cudaMallocHost(&pinned, o->max_bytes));
    pageable = malloc(o->max_bytes);
    if (!pageable) {
        fprintf(stderr, "micro: cannot allocate %zu bytes of pageable memory\n", o->max_bytes);
        return 1;
    }
    /* fill() touches every page first: page faults are not what we measure. */
    sweep(o, "pinned", dev, pinned);
    sweep(o, "pageable", dev, pageable);
    free(pageable);
    BENCH_CHECK(cudaFreeHost(pinned));
    BENCH_CHECK(cudaFree(dev));
    return batch_uploads(o);
}
