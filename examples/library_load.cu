// library-load: the runtime's library management and kernel handles
// (docs/runtime-api.md "Libraries and kernel handles").  Loads the kernels
// of examples/library_kernels.cu as a cubin, a fat binary and PTX from
// memory and a fat binary from a file, enumerates them, reads their
// parameter layout, sets a global, launches them through cudaKernel_t
// handles and refuses what the runtime refuses.  Prints the same lines
// natively and through Tandem.
//
//   library-load FATBIN_FILE
//   library-load --tandem-stale   (through Tandem only: handles after unload)
//   library-load --no-globals     (loads and launches only: the takeover test's)
//   library-load --one-global     (a load and one global: the protection test's)
//   library-load --global-rounds N (a global set and used by a kernel N times, 20 ms apart: the
//                                   test of a standby that comes after the global was made)
#include <cuda_runtime.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "library_cubin.h"
#include "library_fatbin.h"
#include "library_ptx.h"

#define CHECK(call)                                                                                  \
    do {                                                                                             \
        cudaError_t e_ = (call);                                                                     \
        if (e_ != cudaSuccess) {                                                                     \
            std::printf("%s failed: %s\n", #call, cudaGetErrorName(e_));                             \
            return 1;                                                                                \
        }                                                                                            \
    } while (0)

static const int N = 1000;

// A kernel of the program itself (registered by nvcc's stubs), for
// cudaGetFuncBySymbol, whose symbol is a host stub.
__global__ void registered_store(int *p, short s)
{
    p[threadIdx.x] = s;
}

// The kernels' names, sorted: the enumeration's order is the driver's own.
static int list_kernels(cudaLibrary_t lib)
{
    unsigned count = 0;
    CHECK(cudaLibraryGetKernelCount(&count, lib));
    std::vector<cudaKernel_t> k(count);
    CHECK(cudaLibraryEnumerateKernels(k.data(), count, lib));
    std::vector<std::string> names;
    for (unsigned i = 0; i < count; i++) {
        const char *name = nullptr;
        CHECK(cudaFuncGetName(&name, (const void *)k[i]));
        names.push_back(name);
    }
    std::sort(names.begin(), names.end());
    std::printf("  %u kernels:", count);
    for (auto &n : names)
        std::printf(" %s", n.c_str());
    std::printf("\n");
    return 0;
}

static int param_layout(const char *what, const void *func)
{
    std::printf("  %s parameters:", what);
    for (size_t i = 0;; i++) {
        size_t off = 0, size = 0;
        cudaError_t e = cudaFuncGetParamInfo(func, i, &off, &size);
        if (e != cudaSuccess) {
            std::printf(" (index %zu: %s)\n", i, cudaGetErrorName(e));
            break;
        }
        std::printf(" %zu@%zu", size, off);
    }
    return 0;
}

// Sets lib_bias, launches lib_axpb by cudaLaunchKernel and lib_fill by
// cudaLaunchKernelExC, both through kernel handles, and checks the results.
static int run_kernels(cudaLibrary_t lib, int bias)
{
    cudaKernel_t axpb, fill;
    CHECK(cudaLibraryGetKernel(&axpb, lib, "lib_axpb"));
    CHECK(cudaLibraryGetKernel(&fill, lib, "lib_fill"));

    void *gbias = nullptr;
    size_t gbytes = 0;
    CHECK(cudaLibraryGetGlobal(&gbias, &gbytes, lib, "lib_bias"));
    std::printf("  global lib_bias: %zu bytes\n", gbytes);
    CHECK(cudaMemcpy(gbias, &bias, sizeof(bias), cudaMemcpyHostToDevice));
    int back = 0;
    CHECK(cudaMemcpy(&back, gbias, sizeof(back), cudaMemcpyDeviceToHost));
    std::printf("  global reads back: %d\n", back);

    std::vector<float> hx(N), hy(N);
    for (int i = 0; i < N; i++)
        hx[i] = (float)(i % 17) * 0.5f;
    float *x, *y;
    int *out;
    CHECK(cudaMalloc(&x, N * sizeof(float)));
    CHECK(cudaMalloc(&y, N * sizeof(float)));
    CHECK(cudaMalloc(&out, N * sizeof(int)));
    CHECK(cudaMemcpy(x, hx.data(), N * sizeof(float), cudaMemcpyHostToDevice));

    float a = 3.0f;
    int n = N;
    void *axpb_args[] = { &y, &x, &a, &n };
    CHECK(cudaLaunchKernel((const void *)axpb, dim3((N + 127) / 128), dim3(128), axpb_args, 0, 0));
    CHECK(cudaMemcpy(hy.data(), y, N * sizeof(float), cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int i = 0; i < N; i++)
        bad += hy[i] != a * hx[i] + (float)bias;
    std::printf("  lib_axpb by cudaLaunchKernel: %s\n", bad ? "WRONG" : "correct");

    char step = 3;
    double scale = 0.5;
    void *fill_args[] = { &out, &n, &step, &scale };
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3((N + 255) / 256);
    cfg.blockDim = dim3(256);
    CHECK(cudaLaunchKernelExC(&cfg, (const void *)fill, fill_args));
    std::vector<int> ho(N);
    CHECK(cudaMemcpy(ho.data(), out, N * sizeof(int), cudaMemcpyDeviceToHost));
    bad = 0;
    for (int i = 0; i < N; i++)
        bad += ho[i] != (int)((double)(i * step) * scale);
    std::printf("  lib_fill by cudaLaunchKernelExC: %s (out[999] = %d)\n", bad ? "WRONG" : "correct", ho[999]);

    CHECK(cudaFree(x));
    CHECK(cudaFree(y));
    CHECK(cudaFree(out));
    return 0;
}

static int exercise(const char *what, cudaLibrary_t lib, int bias)
{
    std::printf("%s:\n", what);
    if (list_kernels(lib) || run_kernels(lib, bias))
        return 1;
    CHECK(cudaLibraryUnload(lib));
    std::printf("  unloaded\n");
    return 0;
}

// Handles of an unloaded library: undefined natively (the runtime may
// crash on them), a clear error through Tandem.  Only with --tandem-stale.
static int stale_handles(void)
{
    cudaLibrary_t lib;
    cudaKernel_t fill;
    unsigned count;
    int *out, n = 4;
    char step = 1;
    double scale = 1.0;

    CHECK(cudaLibraryLoadData(&lib, library_cubin, nullptr, nullptr, 0, nullptr, nullptr, 0));
    CHECK(cudaLibraryGetKernel(&fill, lib, "lib_fill"));
    CHECK(cudaLibraryUnload(lib));
    CHECK(cudaMalloc(&out, 64));
    void *args[] = { &out, &n, &step, &scale };
    std::printf("stale kernel, launch: %s\n",
                cudaGetErrorName(cudaLaunchKernel((const void *)fill, dim3(1), dim3(4), args, 0, 0)));
    std::printf("stale kernel, attributes: %s\n",
                cudaGetErrorName(cudaFuncSetAttribute((const void *)fill,
                                                      cudaFuncAttributeMaxDynamicSharedMemorySize, 0)));
    std::printf("stale library, count: %s\n", cudaGetErrorName(cudaLibraryGetKernelCount(&count, lib)));
    std::printf("stale library, unload: %s\n", cudaGetErrorName(cudaLibraryUnload(lib)));
    std::printf("not a library: %s\n", cudaGetErrorName(cudaLibraryGetKernelCount(&count, (cudaLibrary_t)&n)));
    size_t off, size;
    std::printf("not a kernel: %s\n", cudaGetErrorName(cudaFuncGetParamInfo((const void *)&n, 0, &off, &size)));
    std::printf("still usable: %s\n", cudaGetErrorName(cudaDeviceSynchronize()));
    CHECK(cudaFree(out));
    return 0;
}

// Libraries and launches without globals (which end a session's
// protection): what a takeover test crashes through.  Same output natively.
static int no_globals(void)
{
    int *out, sum = 0, n = 256;
    double scale = 1.0;
    std::vector<int> h(n);

    CHECK(cudaMalloc(&out, n * sizeof(int)));
    for (int round = 0; round < 3; round++) {
        cudaLibrary_t lib;
        cudaKernel_t fill;
        const void *image = round == 1 ? (const void *)library_ptx : (const void *)library_cubin;
        CHECK(cudaLibraryLoadData(&lib, image, nullptr, nullptr, 0, nullptr, nullptr, 0));
        CHECK(cudaLibraryGetKernel(&fill, lib, "lib_fill"));
        for (char step = 1; step <= 4; step++) {
            void *args[] = { &out, &n, &step, &scale };
            CHECK(cudaLaunchKernel((const void *)fill, dim3(2), dim3(128), args, 0, 0));
            CHECK(cudaMemcpy(h.data(), out, n * sizeof(int), cudaMemcpyDeviceToHost));
            for (int i = 0; i < n; i++)
                sum += h[i] % 1000;
        }
        CHECK(cudaLibraryUnload(lib));
        std::printf("round %d: sum %d\n", round, sum);
    }
    CHECK(cudaFree(out));
    return 0;
}

// A library's global made first, then N rounds of: the global set to the round's number, a
// kernel reading it, the result summed; 20 ms between rounds, so that a test can start a
// standby, and kill the active, while it runs.  No synchronous call but the copies: over shm
// every call of a round is one-way, so only the protection checks before one-way calls see a
// new standby.  Same output natively.
static int global_rounds(int rounds)
{
    cudaLibrary_t lib;
    cudaKernel_t axpb;
    void *gbias = nullptr;
    float *x, *y, a = 2.0f;
    int n = N;
    double sum = 0;
    std::vector<float> hx(N), hy(N);

    CHECK(cudaLibraryLoadData(&lib, library_cubin, nullptr, nullptr, 0, nullptr, nullptr, 0));
    CHECK(cudaLibraryGetKernel(&axpb, lib, "lib_axpb"));
    CHECK(cudaLibraryGetGlobal(&gbias, nullptr, lib, "lib_bias"));
    for (int i = 0; i < N; i++)
        hx[i] = (float)(i % 13);
    CHECK(cudaMalloc(&x, N * sizeof(float)));
    CHECK(cudaMalloc(&y, N * sizeof(float)));
    CHECK(cudaMemcpy(x, hx.data(), N * sizeof(float), cudaMemcpyHostToDevice));
    std::printf("global rounds: ready\n");
    std::fflush(stdout);
    for (int r = 0; r < rounds; r++) {
        void *args[] = { &y, &x, &a, &n };
        CHECK(cudaMemcpy(gbias, &r, sizeof(r), cudaMemcpyHostToDevice));
        CHECK(cudaLaunchKernel((const void *)axpb, dim3((N + 127) / 128), dim3(128), args, 0, 0));
        CHECK(cudaMemcpy(hy.data(), y, N * sizeof(float), cudaMemcpyDeviceToHost));
        for (int i = 0; i < N; i++)
            sum += hy[i];
        usleep(20000);
    }
    int last = -1;
    CHECK(cudaMemcpy(&last, gbias, sizeof(last), cudaMemcpyDeviceToHost));
    CHECK(cudaFree(x));
    CHECK(cudaFree(y));
    CHECK(cudaLibraryUnload(lib));
    std::printf("global rounds: %d, sum %.1f, global %d\n", rounds, sum, last);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && std::strcmp(argv[1], "--global-rounds") == 0)
        return global_rounds(std::atoi(argv[2]));
    if (argc == 2 && std::strcmp(argv[1], "--tandem-stale") == 0)
        return stale_handles();
    if (argc == 2 && std::strcmp(argv[1], "--no-globals") == 0)
        return no_globals();
    if (argc == 2 && std::strcmp(argv[1], "--one-global") == 0) {   // the protection test's
        cudaLibrary_t lib;
        size_t bytes = 0;
        CHECK(cudaLibraryLoadData(&lib, library_cubin, nullptr, nullptr, 0, nullptr, nullptr, 0));
        CHECK(cudaLibraryGetGlobal(nullptr, &bytes, lib, "lib_bias"));
        CHECK(cudaLibraryUnload(lib));
        std::printf("lib_bias: %zu bytes\n", bytes);
        return 0;
    }
    if (argc != 2) {
        std::fprintf(stderr,
                     "usage: %s FATBIN_FILE | --tandem-stale | --no-globals | --one-global | --global-rounds N\n",
                     argv[0]);
        return 2;
    }
    cudaLibrary_t lib;

    // A cubin from memory: kernels, parameter layouts, handles.
    CHECK(cudaLibraryLoadData(&lib, library_cubin, nullptr, nullptr, 0, nullptr, nullptr, 0));
    {
        cudaKernel_t fill;
        cudaFunction_t fn;
        CHECK(cudaLibraryGetKernel(&fill, lib, "lib_fill"));
        std::printf("cubin from memory:\n");
        param_layout("lib_fill", (const void *)fill);
        std::printf("  cudaGetFuncBySymbol of a host stub: %s\n",
                    cudaGetErrorName(cudaGetFuncBySymbol(&fn, (const void *)registered_store)));
        std::printf("  NULL function: %s\n",
                    cudaGetErrorName(cudaGetFuncBySymbol(nullptr, (const void *)registered_store)));
        param_layout("registered_store", (const void *)registered_store);
        cudaKernel_t axpb;
        CHECK(cudaLibraryGetKernel(&axpb, lib, "lib_axpb"));
        param_layout("lib_axpb", (const void *)axpb);
        std::printf("  cudaKernelSetAttributeForDevice, 8 KiB dynamic shared: %s\n",
                    cudaGetErrorName(cudaKernelSetAttributeForDevice(
                        fill, cudaFuncAttributeMaxDynamicSharedMemorySize, 8192, 0)));
        std::printf("  cudaFuncSetAttribute on the handle: %s\n",
                    cudaGetErrorName(cudaFuncSetAttribute((const void *)fill,
                                                          cudaFuncAttributeMaxDynamicSharedMemorySize, 4096)));
        cudaFuncAttributes fa;
        cudaError_t e = cudaFuncGetAttributes(&fa, (const void *)fill);
        std::printf("  cudaFuncGetAttributes: %s\n", cudaGetErrorName(e));

        // What the runtime refuses.
        cudaKernel_t k;
        void *p;
        size_t n;
        std::printf("  unknown kernel: %s\n", cudaGetErrorName(cudaLibraryGetKernel(&k, lib, "no_such_kernel")));
        std::printf("  unknown global: %s\n", cudaGetErrorName(cudaLibraryGetGlobal(&p, &n, lib, "no_such_global")));
        int unified = 0;
        CHECK(cudaDeviceGetAttribute(&unified, (cudaDeviceAttr)129, 0));
        if (!unified)   // no device function is a host function pointer here
            std::printf("  unified function: %s\n",
                        cudaGetErrorName(cudaLibraryGetUnifiedFunction(&p, lib, "lib_fill")));
        std::printf("  NULL kernel name: %s\n", cudaGetErrorName(cudaLibraryGetKernel(&k, lib, nullptr)));
        std::printf("  NULL count: %s\n", cudaGetErrorName(cudaLibraryGetKernelCount(nullptr, lib)));
        std::printf("  parameter past the last: %s\n",
                    cudaGetErrorName(cudaFuncGetParamInfo((const void *)fill, 4, &n, &n)));
        std::printf("  NULL library: %s\n",
                    cudaGetErrorName(cudaLibraryLoadData(nullptr, library_cubin, nullptr, nullptr, 0, nullptr,
                                                         nullptr, 0)));
        std::printf("  NULL code: %s\n",
                    cudaGetErrorName(cudaLibraryLoadData(&lib, nullptr, nullptr, nullptr, 0, nullptr, nullptr, 0)));
        std::printf("  JIT option count without options: %s\n",
                    cudaGetErrorName(cudaLibraryLoadData(&lib, library_cubin, nullptr, nullptr, 1, nullptr,
                                                         nullptr, 0)));
        std::printf("  missing file: %s\n",
                    cudaGetErrorName(cudaLibraryLoadFromFile(&lib, "/nonexistent/library.fatbin", nullptr,
                                                             nullptr, 0, nullptr, nullptr, 0)));
    }
    if (exercise("cubin from memory", lib, 7))
        return 1;

    CHECK(cudaLibraryLoadData(&lib, library_fatbin, nullptr, nullptr, 0, nullptr, nullptr, 0));
    if (exercise("fat binary from memory", lib, -2))
        return 1;

    CHECK(cudaLibraryLoadData(&lib, library_ptx, nullptr, nullptr, 0, nullptr, nullptr, 0));
    if (exercise("PTX from memory", lib, 11))
        return 1;

    CHECK(cudaLibraryLoadFromFile(&lib, argv[1], nullptr, nullptr, 0, nullptr, nullptr, 0));
    if (exercise("fat binary from file", lib, 5))
        return 1;

    // Two at once, each with its own global.
    cudaLibrary_t a, b;
    CHECK(cudaLibraryLoadData(&a, library_cubin, nullptr, nullptr, 0, nullptr, nullptr, 0));
    CHECK(cudaLibraryLoadData(&b, library_fatbin, nullptr, nullptr, 0, nullptr, nullptr, 0));
    void *ga, *gb;
    size_t na, nb;
    CHECK(cudaLibraryGetGlobal(&ga, &na, a, "lib_bias"));
    CHECK(cudaLibraryGetGlobal(&gb, &nb, b, "lib_bias"));
    int one = 1, two = 2, ra = 0, rb = 0;
    CHECK(cudaMemcpy(ga, &one, sizeof(one), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(gb, &two, sizeof(two), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(&ra, ga, sizeof(ra), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(&rb, gb, sizeof(rb), cudaMemcpyDeviceToHost));
    std::printf("two libraries: globals apart %s, read back %d and %d\n", ga != gb ? "yes" : "no", ra, rb);
    CHECK(cudaLibraryUnload(a));
    CHECK(cudaLibraryUnload(b));

    // A library outlives cudaDeviceReset: the runtime loads it into the new
    // context, and its kernel handles launch there.
    {
        cudaKernel_t fill;
        CHECK(cudaLibraryLoadData(&lib, library_cubin, nullptr, nullptr, 0, nullptr, nullptr, 0));
        CHECK(cudaLibraryGetKernel(&fill, lib, "lib_fill"));
        CHECK(cudaDeviceReset());
        int *out, n = 16, h[16] = { 0 };
        char step = 2;
        double scale = 1.0;
        CHECK(cudaMalloc(&out, sizeof(h)));
        void *args[] = { &out, &n, &step, &scale };
        CHECK(cudaLaunchKernel((const void *)fill, dim3(1), dim3(16), args, 0, 0));
        CHECK(cudaMemcpy(h, out, sizeof(h), cudaMemcpyDeviceToHost));
        void *g;
        int nine = 9, back = 0;
        CHECK(cudaLibraryGetGlobal(&g, nullptr, lib, "lib_bias"));
        CHECK(cudaMemcpy(g, &nine, sizeof(nine), cudaMemcpyHostToDevice));
        CHECK(cudaMemcpy(&back, g, sizeof(back), cudaMemcpyDeviceToHost));
        std::printf("after cudaDeviceReset: out[15] = %d, global reads back %d\n", h[15], back);
        CHECK(cudaFree(out));
        CHECK(cudaLibraryUnload(lib));
    }
    CHECK(cudaDeviceSynchronize());
    std::printf("done\n");
    return 0;
}
