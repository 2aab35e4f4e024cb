// Device printf and assert, and where their output appears: CUDA writes a
// kernel's printf output when the host synchronizes with it (device or
// stream or event synchronize, a blocking copy), so each round's device lines
// come after "launched" and before "synchronized".  Deterministic: one
// thread prints, so line order never depends on scheduling.
//   device_printf [rounds]   printf through four kinds of sync point
//   device_printf assert     a failing device assert: its message on
//                            stderr, cudaErrorAssert from the next sync
#include <cassert>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>

#define CHECK(call)                                                                    \
    do {                                                                               \
        cudaError_t err_ = (call);                                                     \
        if (err_ != cudaSuccess) {                                                     \
            fprintf(stderr, "device_printf: %s failed at %s:%d: %s (%s)\n", #call,     \
                    __FILE__, __LINE__, cudaGetErrorString(err_), cudaGetErrorName(err_)); \
            exit(1);                                                                   \
        }                                                                              \
    } while (0)

__global__ void say(int round, int lines, int *out)
{
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        for (int i = 0; i < lines; i++)
            printf("device: round %d line %d of %d (%s)\n", round, i, lines, i % 2 ? "odd" : "even");
        out[round] = round * 100 + lines;
    }
}

__global__ void check(int value)
{
    assert(value >= 0);
}

static int run_assert(void)
{
    printf("host: launching check(-1)\n");
    check<<<1, 1>>>(-1);
    cudaError_t err = cudaDeviceSynchronize();
    printf("host: synchronize returned %s\n", cudaGetErrorName(err));
    // The error is sticky: the context is unusable from now on.
    cudaError_t again = cudaDeviceSynchronize();
    printf("host: next synchronize returned %s\n", cudaGetErrorName(again));
    return err == cudaErrorAssert && again == cudaErrorAssert ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "assert") == 0)
        return run_assert();
    int rounds = argc > 1 ? atoi(argv[1]) : 3;
    if (rounds < 1 || rounds > 64) {
        fprintf(stderr, "device_printf: rounds must be 1..64\n");
        return 2;
    }
    int *out = nullptr, host[64] = { 0 };
    cudaStream_t stream;
    cudaEvent_t done;
    CHECK(cudaMalloc(&out, sizeof(host)));
    CHECK(cudaMemset(out, 0, sizeof(host)));
    CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    CHECK(cudaEventCreate(&done));
    printf("host: start, %d rounds\n", rounds);
    for (int r = 0; r < rounds; r++) {
        // Round r synchronizes one of four ways.
        int how = r % 4;
        say<<<2, 32, 0, how == 1 || how == 3 ? stream : 0>>>(r, r + 1, out);
        CHECK(cudaGetLastError());
        printf("host: launched round %d\n", r);
        if (how == 0) {
            CHECK(cudaDeviceSynchronize());
            printf("host: round %d synchronized (device)\n", r);
        } else if (how == 1) {
            CHECK(cudaStreamSynchronize(stream));
            printf("host: round %d synchronized (stream)\n", r);
        } else if (how == 2) {
            int v = 0;
            CHECK(cudaMemcpy(&v, out + r, sizeof(v), cudaMemcpyDeviceToHost));
            printf("host: round %d copied back %d\n", r, v);
        } else {
            CHECK(cudaEventRecord(done, stream));
            CHECK(cudaEventSynchronize(done));
            printf("host: round %d synchronized (event)\n", r);
        }
    }
    CHECK(cudaMemcpy(host, out, sizeof(host), cudaMemcpyDeviceToHost));
    long sum = 0;
    for (int r = 0; r < rounds; r++)
        sum += host[r];
    // Nothing synchronizes with the last kernel until the context is torn
    // down: its line comes after this one (CUDA does not write device
    // output out at exit by itself, hence the reset).
    say<<<1, 1>>>(rounds, 1, out);
    printf("host: sum %ld\n", sum);
    CHECK(cudaEventDestroy(done));
    CHECK(cudaStreamDestroy(stream));
    CHECK(cudaFree(out));
    CHECK(cudaDeviceReset());
    return 0;
}
