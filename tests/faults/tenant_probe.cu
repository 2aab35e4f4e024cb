// Two tenants' kernels on one GPU (issue 16): can a kernel of one reach the other's memory by
// its address?  Plain CUDA; run natively or through Tandem.
//
//   tenant_probe own FILE [n]       allocates n words, runs 10 steps of victim_step on them,
//                                   writes their device address to FILE, prints "own: ready",
//                                   then waits for FILE.go; reads them back and compares with
//                                   the host's reference (any word changed by someone else
//                                   shows), runs 10 more steps, compares again.  Exit 0 and
//                                   "own: intact" when every word is what its own kernels made.
//   tenant_probe intrude ADDR [n] [alloc]
//                                   reads n words at ADDR (another process's address), then
//                                   launches victim_step on ADDR (a write) and synchronizes;
//                                   with "alloc" it first allocates n words of its own, as a
//                                   tenant that guessed the arena's first address would.  Prints
//                                   what each step returned; exits 0 (the owner is the judge).
//
// victim_step is tests/faults/victim.cu's kernel, whose twin the sim backend has.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <unistd.h>
#include <vector>
#include <cuda_runtime.h>

__global__ void victim_step(unsigned *x, int n, unsigned iter)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] = x[i] * 1664525u + 1013904223u + (iter ^ (unsigned)i);
}

static void host_step(std::vector<unsigned> &x, unsigned iter)
{
    for (size_t i = 0; i < x.size(); i++)
        x[i] = x[i] * 1664525u + 1013904223u + (iter ^ (unsigned)i);
}

static void check(const char *what, cudaError_t e)
{
    if (e == cudaSuccess)
        return;
    printf("own: %s failed: %s (%s)\n", what, cudaGetErrorName(e), cudaGetErrorString(e));
    exit(1);
}

// Runs steps [from, to) on x on the device and on ref on the host, then compares; the count of
// words that differ.
static long steps_and_compare(unsigned *x, std::vector<unsigned> &ref, unsigned from, unsigned to)
{
    int n = (int)ref.size();
    std::vector<unsigned> got(ref.size());
    long differ = 0;

    for (unsigned it = from; it < to; it++) {
        victim_step<<<(n + 255) / 256, 256>>>(x, n, it);
        check("launch", cudaGetLastError());
        host_step(ref, it);
    }
    check("cudaDeviceSynchronize", cudaDeviceSynchronize());
    check("cudaMemcpy", cudaMemcpy(got.data(), x, ref.size() * sizeof(unsigned), cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < ref.size(); i++)
        differ += got[i] != ref[i];
    return differ;
}

static int own(const char *file, int n)
{
    std::vector<unsigned> ref((size_t)n, 0u);
    char go[4096];
    unsigned *x;
    long before, after;
    FILE *f;

    check("cudaMalloc", cudaMalloc(&x, (size_t)n * sizeof(unsigned)));
    check("cudaMemset", cudaMemset(x, 0, (size_t)n * sizeof(unsigned)));
    before = steps_and_compare(x, ref, 0, 10);
    snprintf(go, sizeof(go), "%s.tmp", file);
    f = fopen(go, "w");
    if (!f || fprintf(f, "%p\n", (void *)x) < 0 || fclose(f) != 0 || rename(go, file) != 0) {
        printf("own: cannot write %s\n", file);
        return 1;
    }
    printf("own: ready at %p (%ld words differ)\n", (void *)x, before);
    fflush(stdout);
    snprintf(go, sizeof(go), "%s.go", file);
    for (int waited = 0; access(go, F_OK) != 0; waited++) {
        if (waited > 1200) {
            printf("own: nobody said go in 120 s\n");
            return 1;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    before = steps_and_compare(x, ref, 10, 10);
    after = steps_and_compare(x, ref, 10, 20);
    printf("own: %s: %ld of %d words changed by someone else, %ld after 10 more steps\n",
           before == 0 && after == 0 ? "intact" : "CHANGED", before, n, after);
    return before == 0 && after == 0 ? 0 : 3;
}

static int intrude(const char *addr, int n, bool alloc)
{
    unsigned *x = (unsigned *)(uintptr_t)strtoull(addr, NULL, 16), *mine = NULL;
    std::vector<unsigned> got((size_t)n);
    cudaError_t e;

    if (alloc) {
        e = cudaMalloc(&mine, (size_t)n * sizeof(unsigned));
        printf("intrude: cudaMalloc of its own: %s at %p%s\n", cudaGetErrorName(e), (void *)mine,
               mine == x ? " (the owner's address: its own memory now)" : "");
        if (e == cudaSuccess)
            cudaMemset(mine, 0, (size_t)n * sizeof(unsigned));
    }
    e = cudaMemcpy(got.data(), x, (size_t)n * sizeof(unsigned), cudaMemcpyDeviceToHost);
    printf("intrude: cudaMemcpy from %p: %s\n", (void *)x, cudaGetErrorName(e));
    victim_step<<<(n + 255) / 256, 256>>>(x, n, 12345u);
    e = cudaGetLastError();
    printf("intrude: launch on %p: %s\n", (void *)x, cudaGetErrorName(e));
    e = cudaDeviceSynchronize();
    printf("intrude: cudaDeviceSynchronize: %s\n", cudaGetErrorName(e));
    return 0;
}

int main(int argc, char **argv)
{
    int n = argc > 3 ? atoi(argv[3]) : 4096;

    if (argc >= 3 && strcmp(argv[1], "own") == 0)
        return own(argv[2], n);
    if (argc >= 3 && strcmp(argv[1], "intrude") == 0)
        return intrude(argv[2], n, argc > 4 && strcmp(argv[4], "alloc") == 0);
    fprintf(stderr, "usage: tenant_probe own FILE [n] | intrude ADDR [n] [alloc]\n");
    return 2;
}
