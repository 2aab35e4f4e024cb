/* copy-check: a CUDA program in plain C (the runtime API only) that copies
 * between host and device in every way a program does — pageable and
 * pinned, synchronous and asynchronous, sizes from 1 byte to several data
 * area chunks — and checks every byte.  It prints one line per size to
 * stdout (the same natively and through Tandem) and, with -b, rough
 * bandwidths to stderr.  tests/integration/test_shm.c runs it over both
 * transports; tests/gpu/run-gpu-verification.sh also natively.  With
 * -s N it stops after the first N sizes (test_takeover_release crashes the
 * server only in the first ones). */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime_api.h>

#define CHECK(call)                                                                                    \
    do {                                                                                               \
        cudaError_t e_ = (call);                                                                       \
        if (e_ != cudaSuccess) {                                                                       \
            fprintf(stderr, "copy-check: %s failed at line %d: %s\n", #call, __LINE__, cudaGetErrorName(e_)); \
            exit(1);                                                                                   \
        }                                                                                              \
    } while (0)

static void fill(unsigned char *p, size_t n, unsigned seed)
{
    uint32_t x = seed * 2654435761u + 1;
    for (size_t i = 0; i < n; i++) {
        x = x * 1103515245u + 12345u;
        p[i] = (unsigned char)(x >> 24);   /* the top bits: lower ones repeat every 2^24 bytes */
    }
}

static uint64_t fnv(const unsigned char *p, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

static void same(const unsigned char *a, const unsigned char *b, size_t n, const char *what, size_t size)
{
    if (memcmp(a, b, n) != 0) {
        size_t i = 0;
        while (a[i] == b[i])
            i++;
        fprintf(stderr, "copy-check: %s of %zu bytes differs first at byte %zu\n", what, size, i);
        exit(1);
    }
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void bandwidth(void)
{
    size_t n = 64u << 20;
    unsigned char *page = malloc(n), *pin;
    void *d;
    const char *name[4] = { "pageable H2D", "pageable D2H", "pinned H2D", "pinned D2H" };

    CHECK(cudaMalloc(&d, n));
    CHECK(cudaMallocHost((void **)&pin, n));
    memset(page, 1, n);
    memset(pin, 2, n);
    for (int k = 0; k < 4; k++) {
        void *h = k < 2 ? (void *)page : (void *)pin;
        double best = 1e9;
        for (int rep = 0; rep < 5; rep++) {
            double t0 = now();
            if (k % 2 == 0)
                CHECK(cudaMemcpy(d, h, n, cudaMemcpyHostToDevice));
            else
                CHECK(cudaMemcpy(h, d, n, cudaMemcpyDeviceToHost));
            CHECK(cudaDeviceSynchronize());
            double t = now() - t0;
            best = t < best ? t : best;
        }
        fprintf(stderr, "copy-check: %-13s 64 MiB %6.2f GB/s\n", name[k], n / best / 1e9);
    }
    CHECK(cudaFreeHost(pin));
    CHECK(cudaFree(d));
    free(page);
}

int main(int argc, char **argv)
{
    static const size_t sizes[] = { 1, 4095, 4u << 20, (4u << 20) + 1, (19u << 20) + 123, 40u << 20 };
    size_t nsizes = sizeof(sizes) / sizeof(sizes[0]);
    bool bw = false;
    cudaStream_t st;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-b") == 0) {
            bw = true;
        } else if (strcmp(argv[i], "-s") == 0 && i + 1 < argc && atoi(argv[i + 1]) > 0) {
            size_t n = (size_t)atoi(argv[++i]);
            nsizes = n < nsizes ? n : nsizes;
        } else {
            fprintf(stderr, "usage: copy-check [-b] [-s SIZES]\n");
            return 2;
        }
    }
    CHECK(cudaStreamCreate(&st));
    for (size_t k = 0; k < nsizes; k++) {
        size_t n = sizes[k];
        unsigned char *src = malloc(n), *dst = malloc(n), *ps, *pd;
        void *d1, *d2;

        fill(src, n, (unsigned)k);
        CHECK(cudaMalloc(&d1, n));
        CHECK(cudaMalloc(&d2, n));
        CHECK(cudaMallocHost((void **)&ps, n));
        CHECK(cudaMallocHost((void **)&pd, n));

        /* Pageable both ways. */
        memset(dst, 0, n);
        CHECK(cudaMemcpy(d1, src, n, cudaMemcpyHostToDevice));
        CHECK(cudaMemcpy(dst, d1, n, cudaMemcpyDeviceToHost));
        same(src, dst, n, "pageable round trip", n);

        /* Pinned, synchronous: the source may be overwritten at once. */
        memcpy(ps, src, n);
        CHECK(cudaMemcpy(d2, ps, n, cudaMemcpyHostToDevice));
        memset(ps, 0xab, n);
        memset(pd, 0, n);
        CHECK(cudaMemcpy(pd, d2, n, cudaMemcpyDeviceToHost));
        same(src, pd, n, "pinned synchronous round trip", n);

        /* Pinned, asynchronous on a stream, then device to device. */
        memcpy(ps, src, n);
        memset(pd, 0, n);
        CHECK(cudaMemsetAsync(d2, 0, n, st));
        CHECK(cudaMemcpyAsync(d2, ps, n, cudaMemcpyHostToDevice, st));
        CHECK(cudaMemcpyAsync(pd, d2, n, cudaMemcpyDeviceToHost, st));
        CHECK(cudaStreamSynchronize(st));
        same(src, pd, n, "pinned asynchronous round trip", n);
        CHECK(cudaMemcpy(d1, d2, n, cudaMemcpyDeviceToDevice));
        memset(dst, 0, n);
        CHECK(cudaMemcpy(dst, d1, n, cudaMemcpyDeviceToHost));
        same(src, dst, n, "device to device", n);

        printf("copy-check size=%zu fnv=%016llx ok\n", n, (unsigned long long)fnv(dst, n));
        CHECK(cudaFreeHost(ps));
        CHECK(cudaFreeHost(pd));
        CHECK(cudaFree(d1));
        CHECK(cudaFree(d2));
        free(src);
        free(dst);
    }
    CHECK(cudaStreamDestroy(st));
    if (bw)
        bandwidth();
    return 0;
}
