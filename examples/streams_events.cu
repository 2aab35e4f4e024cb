// Streams and events: two non-blocking streams each upload and transform one
// half of a buffer from pinned host memory; the second stream waits on an
// event recorded by the first before a kernel combines both halves; a third
// (blocking) stream waits on the second's last event and copies the result
// back.  The elapsed time between two events goes to stderr only (it is not
// deterministic); stdout gets one line ending with a checksum.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CHECK(call)                                                                    \
    do {                                                                               \
        cudaError_t err_ = (call);                                                     \
        if (err_ != cudaSuccess) {                                                     \
            fprintf(stderr, "streams_events: %s failed at %s:%d: %s (%s)\n", #call,    \
                    __FILE__, __LINE__, cudaGetErrorString(err_), cudaGetErrorName(err_)); \
            exit(1);                                                                   \
        }                                                                              \
    } while (0)

__global__ void se_transform(unsigned int *x, int n, unsigned int k, unsigned int base)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] = x[i] * k + ((unsigned int)i + base);
}

__global__ void se_combine(const unsigned int *a, const unsigned int *b, unsigned int *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = (a[i] ^ (b[i] >> 3)) + 7u * (unsigned int)i;
}

static uint64_t fnv1a_u32(uint64_t h, uint32_t u)
{
    for (int k = 0; k < 4; k++) {
        h ^= (u >> (8 * k)) & 0xffu;
        h *= 1099511628211ull;
    }
    return h;
}

int main()
{
    const int n = 1 << 18, half = n / 2, threads = 256, blocks = (half + threads - 1) / threads;
    size_t bytes = (size_t)n * sizeof(unsigned int), half_bytes = bytes / 2;
    unsigned int *h_in, *h_out, *d_buf, *d_out;
    cudaStream_t s0, s1, s2;
    cudaEvent_t start, half0_done, stop;
    int count = 0;
    float ms = 0.0f;

    CHECK(cudaGetDeviceCount(&count));
    if (count < 1) {
        fprintf(stderr, "streams_events: no CUDA device\n");
        return 1;
    }
    CHECK(cudaSetDevice(0));

    CHECK(cudaMallocHost(&h_in, bytes));
    CHECK(cudaMallocHost(&h_out, half_bytes));
    for (int i = 0; i < n; i++)
        h_in[i] = (unsigned int)i * 2654435761u;
    CHECK(cudaMalloc(&d_buf, bytes));
    CHECK(cudaMalloc(&d_out, half_bytes));

    CHECK(cudaStreamCreateWithFlags(&s0, cudaStreamNonBlocking));
    CHECK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
    CHECK(cudaStreamCreate(&s2));
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&half0_done));
    CHECK(cudaEventCreate(&stop));

    CHECK(cudaEventRecord(start, s0));
    CHECK(cudaMemcpyAsync(d_buf, h_in, half_bytes, cudaMemcpyHostToDevice, s0));
    se_transform<<<blocks, threads, 0, s0>>>(d_buf, half, 3u, 0u);
    CHECK(cudaGetLastError());
    CHECK(cudaEventRecord(half0_done, s0));

    CHECK(cudaMemcpyAsync(d_buf + half, h_in + half, half_bytes, cudaMemcpyHostToDevice, s1));
    se_transform<<<blocks, threads, 0, s1>>>(d_buf + half, half, 5u, (unsigned int)half);
    CHECK(cudaGetLastError());
    CHECK(cudaMemsetAsync(d_out, 0, half_bytes, s1));
    // The combine reads the first half, which only s0 writes.
    CHECK(cudaStreamWaitEvent(s1, half0_done, 0));
    se_combine<<<blocks, threads, 0, s1>>>(d_buf, d_buf + half, d_out, half);
    CHECK(cudaGetLastError());
    CHECK(cudaEventRecord(stop, s1));

    CHECK(cudaStreamWaitEvent(s2, stop, 0));
    CHECK(cudaMemcpyAsync(h_out, d_out, half_bytes, cudaMemcpyDeviceToHost, s2));
    CHECK(cudaStreamSynchronize(s2));
    CHECK(cudaEventSynchronize(stop));
    CHECK(cudaStreamSynchronize(s0));
    CHECK(cudaStreamQuery(s0)); // all three are drained now: anything but success is a bug
    CHECK(cudaStreamQuery(s1));
    CHECK(cudaStreamQuery(s2));
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    fprintf(stderr, "streams_events: %.3f ms from start (stream 0) to stop (stream 1)\n", ms);

    uint64_t sum = 0, h = 14695981039346656037ull;
    for (int i = 0; i < half; i++) {
        sum += h_out[i];
        h = fnv1a_u32(h, h_out[i]);
    }
    printf("streams_events n=%d out[0]=%u out[%d]=%u sum=%llu checksum=%016llx\n", n, h_out[0], half - 1,
           h_out[half - 1], (unsigned long long)sum, (unsigned long long)h);

    CHECK(cudaEventDestroy(start));
    CHECK(cudaEventDestroy(half0_done));
    CHECK(cudaEventDestroy(stop));
    CHECK(cudaStreamDestroy(s0));
    CHECK(cudaStreamDestroy(s1));
    CHECK(cudaStreamDestroy(s2));
    CHECK(cudaFree(d_buf));
    CHECK(cudaFree(d_out));
    CHECK(cudaFreeHost(h_in));
    CHECK(cudaFreeHost(h_out));
    return 0;
}
