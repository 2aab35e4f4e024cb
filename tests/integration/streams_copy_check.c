/* streams-copy-check: the copy pattern of cuda-samples' simpleStreams in
 * plain C (the runtime API only): pinned host memory, work on several
 * streams (a cudaMemsetAsync stands in for the kernel), each stream's slice
 * copied back with cudaMemcpyAsync, then an event on the legacy stream and
 * cudaEventSynchronize; and the same slices uploaded asynchronously from
 * pinned memory and read back.  Every byte is checked; one line per
 * repetition goes to stdout (the same natively and through Tandem), the
 * wall time to stderr.
 *
 * With -R the host buffers are malloc'ed and cudaHostRegister'ed instead
 * (simpleStreams' own choice on Linux: cudaHostRegisterMapped).
 *
 *   streams-copy-check [-m MiB (64)] [-s streams (4)] [-r reps (10)] [-R] */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#define CHECK(call)                                                                                    \
    do {                                                                                               \
        cudaError_t e_ = (call);                                                                       \
        if (e_ != cudaSuccess) {                                                                       \
            fprintf(stderr, "streams-copy-check: %s failed at line %d: %s\n", #call, __LINE__,         \
                    cudaGetErrorName(e_));                                                             \
            exit(1);                                                                                   \
        }                                                                                              \
    } while (0)

static unsigned char pattern_at(size_t i)
{
    return (unsigned char)((i * 2654435761u) >> 13);
}

static uint64_t fnv(const unsigned char *p, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

int main(int argc, char **argv)
{
    size_t mib = 64;
    int nstreams = 4, reps = 10, opt, bad = 0, registered = 0;
    struct timespec t0, t1;

    while ((opt = getopt(argc, argv, "m:s:r:R")) != -1) {
        if (opt == 'm')
            mib = (size_t)atol(optarg);
        else if (opt == 's')
            nstreams = atoi(optarg);
        else if (opt == 'r')
            reps = atoi(optarg);
        else if (opt == 'R')
            registered = 1;
        else
            return 2;
    }
    if (mib == 0 || nstreams < 1 || nstreams > 64 || reps < 1)
        return 2;
    size_t n = mib << 20, slice = n / (size_t)nstreams, half = slice / 2;
    unsigned char *h = NULL, *src = NULL;
    unsigned char *d = NULL;
    cudaStream_t s[64];
    cudaEvent_t ev;

    if (registered) {
        /* Not page-aligned, as malloc gives it. */
        h = malloc(n);
        src = malloc(n);
        if (!h || !src)
            return 1;
        CHECK(cudaHostRegister(h, n, cudaHostRegisterMapped));
        CHECK(cudaHostRegister(src, n, cudaHostRegisterMapped));
    } else {
        CHECK(cudaMallocHost((void **)&h, n));
        CHECK(cudaMallocHost((void **)&src, n));
    }
    CHECK(cudaMalloc((void **)&d, n));
    for (int i = 0; i < nstreams; i++)
        CHECK(cudaStreamCreate(&s[i]));
    CHECK(cudaEventCreateWithFlags(&ev, cudaEventBlockingSync));
    for (size_t i = 0; i < n; i++)
        src[i] = pattern_at(i);
    clock_gettime(CLOCK_MONOTONIC, &t0);

    for (int r = 0; r < reps; r++) {
        /* Uploads from pinned memory, one slice per stream. */
        for (int i = 0; i < nstreams; i++)
            CHECK(cudaMemcpyAsync(d + (size_t)i * slice, src + (size_t)i * slice, slice, cudaMemcpyHostToDevice, s[i]));
        /* The "kernel" overwrites the first half of each slice, then the
         * slice comes back on its own stream. */
        for (int i = 0; i < nstreams; i++)
            CHECK(cudaMemsetAsync(d + (size_t)i * slice, (r * 7 + i) & 0xff, half, s[i]));
        for (int i = 0; i < nstreams; i++)
            CHECK(cudaMemcpyAsync(h + (size_t)i * slice, d + (size_t)i * slice, slice, cudaMemcpyDeviceToHost, s[i]));
        CHECK(cudaEventRecord(ev, 0));
        CHECK(cudaEventSynchronize(ev));
        for (int i = 0; i < nstreams; i++) {
            const unsigned char *p = h + (size_t)i * slice;
            for (size_t k = 0; k < slice && !bad; k++) {
                unsigned char want = k < half ? (unsigned char)((r * 7 + i) & 0xff) : pattern_at((size_t)i * slice + k);
                if (p[k] != want) {
                    printf("rep %d stream %d: byte %zu is %u, want %u\n", r, i, k, p[k], want);
                    bad = 1;
                }
            }
        }
        printf("rep %d: %zu MiB over %d streams, fnv %016llx\n", r, mib, nstreams,
               (unsigned long long)fnv(h, (size_t)nstreams * slice));
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    fprintf(stderr, "streams-copy-check: %.3f s\n", (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
    for (int i = 0; i < nstreams; i++)
        CHECK(cudaStreamDestroy(s[i]));
    CHECK(cudaEventDestroy(ev));
    CHECK(cudaFree(d));
    if (registered) {
        CHECK(cudaHostUnregister(h));
        CHECK(cudaHostUnregister(src));
        free(h);
        free(src);
    } else {
        CHECK(cudaFreeHost(h));
        CHECK(cudaFreeHost(src));
    }
    printf("%s\n", bad ? "MISMATCH" : "ok");
    return bad;
}
