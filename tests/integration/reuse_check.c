/* reuse-check: a CUDA program in plain C that reuses host memory the way a
 * correct program may, with every copy left unacknowledged by the takeover
 * journal (two non-blocking streams, no whole-device synchronize until the
 * end), so that a server dying anywhere in it makes the standby replay all
 * of them (tests/integration/test_takeover_shm.c):
 *
 *  1. a pageable copy to the host, then a pageable copy from the host that
 *     refills the same data area chunk;
 *  2. a pinned buffer rewritten after each asynchronous copy from it, once
 *     a synchronize of its own stream says that copy is done, while the
 *     other stream still has work;
 *  3. a pinned buffer rewritten right after a synchronous copy from it;
 *  4. a pinned buffer that received a copy from the device, read, then
 *     rewritten by the program;
 *  5. a pinned buffer that is the source of one copy and, next on the same
 *     stream, the destination of another.
 *
 * Each step checks itself; the last line gives a checksum of every device
 * buffer and of the rewritten pinned buffer.  The output is the same with
 * and without a takeover, natively and through Tandem. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#define N ((size_t)1 << 20)
#define ROUNDS 3

#define CHECK(call)                                                                                    \
    do {                                                                                               \
        cudaError_t e_ = (call);                                                                       \
        if (e_ != cudaSuccess) {                                                                       \
            fprintf(stderr, "reuse-check: %s failed at line %d: %s\n", #call, __LINE__, cudaGetErrorName(e_)); \
            exit(1);                                                                                   \
        }                                                                                              \
    } while (0)

/* Bytes that differ between seeds and never repeat within a buffer. */
static void fill(unsigned char *p, size_t n, uint64_t seed)
{
    uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;

    for (size_t i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        p[i] = (unsigned char)(x >> 32);
    }
}

static uint64_t fnv(const unsigned char *p, size_t n)
{
    uint64_t h = 1469598103934665603ull;

    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

static void expect(const unsigned char *got, uint64_t seed, const char *what)
{
    static unsigned char want[N];

    fill(want, N, seed);
    if (memcmp(got, want, N) != 0) {
        fprintf(stderr, "reuse-check: %s holds the wrong bytes\n", what);
        exit(1);
    }
}

int main(void)
{
    unsigned char *x = malloc(N), *y = malloc(N), *back = malloc(N), *p, *q;
    unsigned char *d1, *d2, *d3, *d4, *dp, *dm;
    cudaStream_t a, b;
    uint64_t sum = 0;

    if (!x || !y || !back)
        return 1;
    CHECK(cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking));
    CHECK(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking));
    CHECK(cudaMalloc((void **)&d1, N));
    CHECK(cudaMalloc((void **)&d2, N));
    CHECK(cudaMalloc((void **)&d3, N));
    CHECK(cudaMalloc((void **)&d4, N));
    CHECK(cudaMalloc((void **)&dp, ROUNDS * N));
    CHECK(cudaMalloc((void **)&dm, N));
    CHECK(cudaMallocHost((void **)&p, N));
    CHECK(cudaMallocHost((void **)&q, N));

    /* 1. Pageable: to the host through a chunk, then a new upload refills it. */
    fill(x, N, 1);
    fill(y, N, 2);
    CHECK(cudaMemcpyAsync(d1, x, N, cudaMemcpyHostToDevice, a));
    CHECK(cudaMemcpyAsync(back, d1, N, cudaMemcpyDeviceToHost, a));
    expect(back, 1, "pageable round trip");
    CHECK(cudaMemcpyAsync(d2, y, N, cudaMemcpyHostToDevice, a));
    CHECK(cudaMemsetAsync(dm, 1, N, b));
    printf("reuse-check step 1 ok\n");

    /* 2. Pinned, asynchronous: rewritten once its own stream is synchronized. */
    for (int i = 0; i < ROUNDS; i++) {
        fill(p, N, 10 + (uint64_t)i);
        CHECK(cudaMemcpyAsync(dp + (size_t)i * N, p, N, cudaMemcpyHostToDevice, a));
        CHECK(cudaMemsetAsync(dm, i, N, b));
        CHECK(cudaStreamSynchronize(a));
    }
    printf("reuse-check step 2 ok\n");

    /* 3. Pinned, synchronous: rewritten as soon as the copy returns. */
    fill(p, N, 20);
    CHECK(cudaMemcpy(d3, p, N, cudaMemcpyHostToDevice));
    fill(p, N, 21);
    printf("reuse-check step 3 ok\n");

    /* 4. Pinned destination: read once the copy is done, then rewritten. */
    CHECK(cudaMemcpyAsync(q, d1, N, cudaMemcpyDeviceToHost, a));
    CHECK(cudaStreamSynchronize(a));
    expect(q, 1, "pinned copy to the host");
    fill(q, N, 30);
    CHECK(cudaMemsetAsync(dm, 2, N, b));
    CHECK(cudaStreamSynchronize(b));
    CHECK(cudaMemsetAsync(dm, 3, N, b));
    CHECK(cudaStreamSynchronize(a));
    printf("reuse-check step 4 ok\n");

    /* 5. Pinned source, then destination, in stream order. */
    fill(p, N, 40);
    CHECK(cudaMemcpyAsync(d4, p, N, cudaMemcpyHostToDevice, a));
    CHECK(cudaMemcpyAsync(p, d1, N, cudaMemcpyDeviceToHost, a));
    CHECK(cudaMemsetAsync(dm, 4, N, b));
    CHECK(cudaStreamSynchronize(a));
    expect(p, 1, "a pinned buffer copied from, then into");
    printf("reuse-check step 5 ok\n");

    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(back, d2, N, cudaMemcpyDeviceToHost));
    expect(back, 2, "the second upload");
    sum ^= fnv(back, N);
    for (int i = 0; i < ROUNDS; i++) {
        CHECK(cudaMemcpy(back, dp + (size_t)i * N, N, cudaMemcpyDeviceToHost));
        expect(back, 10 + (uint64_t)i, "an upload from the rewritten pinned buffer");
        sum = sum * 31 + fnv(back, N);
    }
    CHECK(cudaMemcpy(back, d3, N, cudaMemcpyDeviceToHost));
    expect(back, 20, "the synchronous upload from pinned memory");
    sum = sum * 31 + fnv(back, N);
    CHECK(cudaMemcpy(back, d4, N, cudaMemcpyDeviceToHost));
    expect(back, 40, "the upload from a buffer overwritten next");
    sum = sum * 31 + fnv(back, N);
    expect(q, 30, "the pinned buffer the program rewrote");
    sum = sum * 31 + fnv(q, N);
    printf("reuse-check checksum=%016llx\n", (unsigned long long)sum);

    CHECK(cudaFreeHost(p));
    CHECK(cudaFreeHost(q));
    CHECK(cudaFree(d1));
    CHECK(cudaFree(d2));
    CHECK(cudaFree(d3));
    CHECK(cudaFree(d4));
    CHECK(cudaFree(dp));
    CHECK(cudaFree(dm));
    CHECK(cudaStreamDestroy(a));
    CHECK(cudaStreamDestroy(b));
    free(x);
    free(y);
    free(back);
    return 0;
}
