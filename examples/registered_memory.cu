// Registered host memory (docs/memory-models.md, "Registered host memory"):
// the program's own malloc'd memory, registered with cudaHostRegister, as
// simpleStreams uses it.  Asynchronous copies on four streams from and
// into it land; its device pointer (cudaHostGetDevicePointer) and its host
// pointer given straight to a kernel reach the same bytes; a kernel spins
// on a registered flag until the host sets it; bytes that share the
// range's first and last pages are untouched; after cudaHostUnregister the
// memory is the program's private memory again with the same bytes; bad
// input is refused.  Deterministic output, the same natively and through
// Tandem over shm (over TCP registered memory cannot be mapped for the
// device: the mapping lines then name the error).  Diagnostics go to stderr.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sys/wait.h>
#include <unistd.h>
#include <cuda_runtime.h>

#define CHECK(call)                                                                        \
    do {                                                                                   \
        cudaError_t err_ = (call);                                                         \
        if (err_ != cudaSuccess) {                                                         \
            fprintf(stderr, "registered_memory: %s failed at %s:%d: %s (%s)\n", #call,     \
                    __FILE__, __LINE__, cudaGetErrorString(err_), cudaGetErrorName(err_)); \
            exit(1);                                                                       \
        }                                                                                  \
    } while (0)

// The same kernels (names and semantics) as examples/mapped_memory.cu and
// examples/managed_memory_patterns.cu, whose sim twins serve them.
__global__ void mapped_scale(unsigned int *p, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        p[i] = 3u * p[i] + 1u;
}

__global__ void mm_spin_until_set(volatile unsigned *latch, unsigned *seen)
{
    unsigned v;
    while ((v = *latch) == 0)
        ;
    *seen = v;
}

static uint64_t sum_of(const unsigned *p, size_t n)
{
    uint64_t s = 0;
    for (size_t i = 0; i < n; i++)
        s += p[i];
    return s;
}

// Whether the page holding p is private memory of the process (not a
// shared mapping): natively always; through Tandem again after unregister.
static const char *private_page(const void *p)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[512];
    const char *what = "unknown";
    uintptr_t a = (uintptr_t)p;

    if (!f)
        return what;
    while (fgets(line, sizeof(line), f)) {
        unsigned long s = 0, e = 0;
        char perms[8] = "";
        if (sscanf(line, "%lx-%lx %7s", &s, &e, perms) == 3 && a >= s && a < e) {
            what = perms[3] == 'p' && !strstr(line, "memfd:") ? "yes" : "no";
            break;
        }
    }
    fclose(f);
    return what;
}

int main()
{
    const int nstreams = 4, threads = 256;
    const size_t n = 3 * 1024 * 1024 / 4 + 100;   // not whole pages
    const size_t bytes = n * sizeof(unsigned);
    // The range starts and ends inside pages that hold other bytes.
    // aligned_alloc wants a multiple of the alignment.
    const size_t raw_bytes = (bytes + 3 * 4096 + 4095) / 4096 * 4096;
    unsigned char *raw = (unsigned char *)aligned_alloc(4096, raw_bytes);
    unsigned *h = (unsigned *)(raw + 4096 + 200), *d;
    unsigned char *after = (unsigned char *)(h + n);
    cudaStream_t streams[nstreams];
    int can_use_host_ptr = -1;

    memset(raw, 0xa5, raw_bytes);
    for (size_t i = 0; i < n; i++)
        h[i] = (unsigned)(i * 5 + 1);
    CHECK(cudaDeviceGetAttribute(&can_use_host_ptr, cudaDevAttrCanUseHostPointerForRegisteredMem, 0));
    printf("canUseHostPointerForRegisteredMem %d\n", can_use_host_ptr);

    // Bad input, before anything is registered.
    printf("register NULL: %s\n", cudaGetErrorName(cudaHostRegister(NULL, 4096, 0)));
    printf("register 0 bytes: %s\n", cudaGetErrorName(cudaHostRegister(h, 0, 0)));
    printf("register unknown flag: %s\n", cudaGetErrorName(cudaHostRegister(h, bytes, 0x100)));
    printf("unregister unregistered: %s\n", cudaGetErrorName(cudaHostUnregister(h)));
    cudaGetLastError();

    CHECK(cudaHostRegister(h, bytes, cudaHostRegisterMapped));
    unsigned flags = 0;
    CHECK(cudaHostGetFlags(&flags, h + 7));
    printf("flags include mapped: %s\n", (flags & cudaHostRegisterMapped) ? "yes" : "no");
    printf("register overlapping: %s\n", cudaGetErrorName(cudaHostRegister(h + 1000, 4096, 0)));
    printf("unregister inside: %s\n", cudaGetErrorName(cudaHostUnregister(h + 1)));
    cudaGetLastError();
    printf("bytes beside the range kept: %s\n",
           raw[4096 + 199] == 0xa5 && after[0] == 0xa5 && raw[0] == 0xa5 ? "yes" : "no");

    // simpleStreams' pattern: asynchronous copies on four streams, each a
    // quarter, device to host into the registered memory.
    CHECK(cudaMalloc(&d, bytes));
    for (int s = 0; s < nstreams; s++)
        CHECK(cudaStreamCreate(&streams[s]));
    const size_t q = n / nstreams;
    for (int s = 0; s < nstreams; s++) {
        size_t cnt = s == nstreams - 1 ? n - q * s : q;
        CHECK(cudaMemcpyAsync(d + q * s, h + q * s, cnt * 4, cudaMemcpyHostToDevice, streams[s]));
    }
    CHECK(cudaDeviceSynchronize());
    mapped_scale<<<(unsigned)((n + threads - 1) / threads), threads>>>(d, (int)n);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    for (int s = 0; s < nstreams; s++) {
        size_t cnt = s == nstreams - 1 ? n - q * s : q;
        CHECK(cudaMemcpyAsync(h + q * s, d + q * s, cnt * 4, cudaMemcpyDeviceToHost, streams[s]));
    }
    for (int s = 0; s < nstreams; s++)
        CHECK(cudaStreamSynchronize(streams[s]));
    printf("streams round trip: h[0]=%u h[%zu]=%u sum=%llu\n", h[0], n - 1, h[n - 1],
           (unsigned long long)sum_of(h, n));

    // A forked child's copy of registered memory is its own: its write
    // does not reach the parent.
    {
        unsigned keep = h[5];
        pid_t pid = fork();
        if (pid == 0) {
            h[5] = 12345;
            _exit(h[5] == 12345 ? 0 : 1);
        }
        int status = -1;
        waitpid(pid, &status, 0);
        printf("after fork: child exited %d, the parent's bytes unchanged: %s\n",
               WIFEXITED(status) ? WEXITSTATUS(status) : -1, h[5] == keep ? "yes" : "no");
    }

    // Mapped: its device pointer, and its host pointer given to a kernel.
    unsigned *dp = NULL;
    cudaError_t e = cudaHostGetDevicePointer((void **)&dp, h, 0);
    printf("device pointer: %s\n", cudaGetErrorName(e));
    cudaGetLastError();
    if (e == cudaSuccess) {
        mapped_scale<<<(unsigned)((n + threads - 1) / threads), threads>>>(dp, (int)n);
        CHECK(cudaGetLastError());
        CHECK(cudaDeviceSynchronize());
        printf("kernel through the device pointer: h[0]=%u sum=%llu\n", h[0], (unsigned long long)sum_of(h, n));
        if (can_use_host_ptr) {
            mapped_scale<<<(unsigned)((n + threads - 1) / threads), threads>>>(h, (int)n);
            CHECK(cudaGetLastError());
            CHECK(cudaDeviceSynchronize());
            printf("kernel through the host pointer: h[0]=%u sum=%llu\n", h[0], (unsigned long long)sum_of(h, n));

            // A kernel spins on a registered flag the host sets while it runs.
            h[0] = 0;
            mm_spin_until_set<<<1, 1>>>(h, d);
            CHECK(cudaGetLastError());
            h[0] = 42;
            __sync_synchronize();
            CHECK(cudaDeviceSynchronize());
            unsigned seen = 0;
            CHECK(cudaMemcpy(&seen, d, 4, cudaMemcpyDeviceToHost));
            printf("latch: the kernel saw %u\n", seen);
        }
    }

    // Read-only registration: where the device supports it, as natively.
    {
        int ro = 0;
        CHECK(cudaDeviceGetAttribute(&ro, cudaDevAttrHostRegisterReadOnlySupported, 0));
        unsigned *extra = (unsigned *)aligned_alloc(4096, 8192);
        extra[0] = 1;
        cudaError_t r = cudaHostRegister(extra, 8192, cudaHostRegisterReadOnly);
        printf("register read-only: %s\n", r == (ro ? cudaSuccess : cudaErrorNotSupported) ? "as the attribute says" : cudaGetErrorName(r));
        cudaGetLastError();
        if (r == cudaSuccess)
            CHECK(cudaHostUnregister(extra));
        free(extra);
    }

    // Unregister: the same bytes, private memory again, still writable.
    uint64_t before = sum_of(h, n);
    CHECK(cudaHostUnregister(h));
    printf("after unregister: same bytes %s, private %s\n", sum_of(h, n) == before ? "yes" : "no",
           private_page(h + n / 2));
    h[1] = 7;
    printf("bytes beside the range kept: %s\n",
           raw[4096 + 199] == 0xa5 && after[0] == 0xa5 && raw[bytes + 3 * 4096 - 1] == 0xa5 ? "yes" : "no");
    printf("unregister again: %s\n", cudaGetErrorName(cudaHostUnregister(h)));
    cudaGetLastError();

    // Registered again after unregistering: copies still land.
    CHECK(cudaHostRegister(h, bytes, 0));
    CHECK(cudaMemsetAsync(d, 0, bytes, streams[1]));
    CHECK(cudaMemcpyAsync(h, d, bytes, cudaMemcpyDeviceToHost, streams[1]));
    CHECK(cudaStreamSynchronize(streams[1]));
    printf("registered again, zeroed: sum=%llu\n", (unsigned long long)sum_of(h, n));
    CHECK(cudaHostUnregister(h));

    for (int s = 0; s < nstreams; s++)
        CHECK(cudaStreamDestroy(streams[s]));
    CHECK(cudaFree(d));
    free(raw);
    return 0;
}
