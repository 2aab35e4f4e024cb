// The guest of the control plane's elasticity test (tests/integration/control_plane/e2e.sh,
// docs/orchestrator.md "Elasticity"): a load phase of kernels of 64 blocks, each waited for
// (on the sim with --sim-wave-us U, ceil(64 / share) * U each: slow at a small share), then a
// light phase of 1-block kernels (one wave at any share), each for a given time; every
// kernel's result is checked, and "ok" is printed at the end.  The kernel is increment's
// (name and body as examples'), so the sim backend runs its twin.
#include <chrono>
#include <cstdio>
#include <cstdlib>

#define CHECK(call)                                                                             \
    do {                                                                                        \
        cudaError_t err_ = (call);                                                              \
        if (err_ != cudaSuccess) {                                                              \
            fprintf(stderr, "elastic_probe: %s failed at line %d: %s\n", #call, __LINE__,       \
                    cudaGetErrorName(err_));                                                    \
            exit(1);                                                                            \
        }                                                                                       \
    } while (0)

__global__ void increment(unsigned int *x, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] += 1u + (unsigned int)(i % 7);
}

static double seconds_since(std::chrono::steady_clock::time_point t0)
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Runs kernels of `blocks` blocks for `seconds`; returns how many ran.
static long phase(unsigned int *dx, int blocks, double seconds, const char *name)
{
    const int threads = 32;
    auto t0 = std::chrono::steady_clock::now();
    long k = 0;
    double worst = 0;

    while (seconds_since(t0) < seconds) {
        auto t1 = std::chrono::steady_clock::now();
        increment<<<blocks, threads>>>(dx, blocks * threads);
        CHECK(cudaGetLastError());
        CHECK(cudaDeviceSynchronize());
        double ms = seconds_since(t1) * 1e3;
        worst = ms > worst ? ms : worst;
        k++;
    }
    printf("elastic_probe: %s phase: %ld kernels of %d blocks, worst %.2f ms\n", name, k, blocks, worst);
    fflush(stdout);
    return k;
}

int main(int argc, char **argv)
{
    const int wide = 64, threads = 32, n = wide * threads;
    double load_s = argc > 1 ? atof(argv[1]) : 5, light_s = argc > 2 ? atof(argv[2]) : 5;
    static unsigned int x[wide * threads];
    unsigned int *dx;

    CHECK(cudaMalloc(&dx, sizeof(x)));
    CHECK(cudaMemset(dx, 0, sizeof(x)));
    long heavy = phase(dx, wide, load_s, "load");
    long light = phase(dx, 1, light_s, "light");
    CHECK(cudaMemcpy(x, dx, sizeof(x), cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; i++) {
        unsigned int step = 1u + (unsigned int)(i % 7);
        unsigned int want = step * (unsigned int)(heavy + (i < threads ? light : 0));
        if (x[i] != want) {
            fprintf(stderr, "elastic_probe: x[%d] = %u, want %u\n", i, x[i], want);
            return 1;
        }
    }
    CHECK(cudaFree(dx));
    printf("ok\n");
    return 0;
}
