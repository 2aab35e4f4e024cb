// c = scale * a + b over 2^20 floats, with `scale` a __constant__ set by
// cudaMemcpyToSymbol.  All values are small integers, so every result is
// exact and the host reference (tests/integration/example_reference.c)
// reproduces it bit for bit.  Prints one line on stdout; diagnostics go to
// stderr.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CHECK(call)                                                                    \
    do {                                                                               \
        cudaError_t err_ = (call);                                                     \
        if (err_ != cudaSuccess) {                                                     \
            fprintf(stderr, "vector_add: %s failed at %s:%d: %s (%s)\n", #call,        \
                    __FILE__, __LINE__, cudaGetErrorString(err_), cudaGetErrorName(err_)); \
            exit(1);                                                                   \
        }                                                                              \
    } while (0)

__constant__ float vadd_scale;

__global__ void vector_add(const float *a, const float *b, float *c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        c[i] = vadd_scale * a[i] + b[i];
}

// FNV-1a over each value's 32-bit two's complement, least significant byte first.
static uint64_t fnv1a_i32(uint64_t h, int32_t v)
{
    uint32_t u = (uint32_t)v;
    for (int k = 0; k < 4; k++) {
        h ^= (u >> (8 * k)) & 0xffu;
        h *= 1099511628211ull;
    }
    return h;
}

int main()
{
    const int n = 1 << 20, threads = 256;
    const float scale = 2.0f;
    size_t bytes = (size_t)n * sizeof(float);
    int count = 0;
    cudaDeviceProp prop;

    CHECK(cudaGetDeviceCount(&count));
    if (count < 1) {
        fprintf(stderr, "vector_add: no CUDA device\n");
        return 1;
    }
    CHECK(cudaSetDevice(0));
    CHECK(cudaGetDeviceProperties(&prop, 0));
    fprintf(stderr, "vector_add: device 0: %s (compute %d.%d)\n", prop.name, prop.major, prop.minor);

    float *a = (float *)malloc(bytes), *b = (float *)malloc(bytes), *c = (float *)malloc(bytes);
    if (!a || !b || !c) {
        fprintf(stderr, "vector_add: out of host memory\n");
        return 1;
    }
    for (int i = 0; i < n; i++) {
        a[i] = (float)(i % 1000);
        b[i] = (float)((i * 7) % 1001) - 500.0f;
    }

    float *da, *db, *dc;
    CHECK(cudaMalloc(&da, bytes));
    CHECK(cudaMalloc(&db, bytes));
    CHECK(cudaMalloc(&dc, bytes));
    CHECK(cudaMemcpy(da, a, bytes, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(db, b, bytes, cudaMemcpyHostToDevice));
    CHECK(cudaMemset(dc, 0xff, bytes)); // a NaN pattern: any element left unwritten shows
    CHECK(cudaMemcpyToSymbol(vadd_scale, &scale, sizeof(scale)));

    vector_add<<<(n + threads - 1) / threads, threads>>>(da, db, dc, n);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(c, dc, bytes, cudaMemcpyDeviceToHost));

    int64_t sum = 0;
    uint64_t h = 14695981039346656037ull;
    for (int i = 0; i < n; i++) {
        if (c[i] != c[i]) {
            fprintf(stderr, "vector_add: c[%d] was not written\n", i);
            return 1;
        }
        sum += (int64_t)c[i];
        h = fnv1a_i32(h, (int32_t)c[i]);
    }
    printf("vector_add n=%d scale=%d c[0]=%d c[%d]=%d sum=%lld checksum=%016llx\n", n, (int)scale,
           (int)c[0], n - 1, (int)c[n - 1], (long long)sum, (unsigned long long)h);

    CHECK(cudaFree(da));
    CHECK(cudaFree(db));
    CHECK(cudaFree(dc));
    free(a);
    free(b);
    free(c);
    return 0;
}
