// Tiled shared-memory matrix multiply, C = A * B for 256x256 floats holding
// small integers (every partial sum is an exact integer below 2^24, so the
// order of additions and fused multiply-adds cannot change the result).  A
// __device__ counter, zeroed with cudaMemcpyToSymbol and read back with
// cudaMemcpyFromSymbol, counts the positive elements of C via atomicAdd.
// Prints one line on stdout; diagnostics go to stderr.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CHECK(call)                                                                    \
    do {                                                                               \
        cudaError_t err_ = (call);                                                     \
        if (err_ != cudaSuccess) {                                                     \
            fprintf(stderr, "matmul: %s failed at %s:%d: %s (%s)\n", #call,            \
                    __FILE__, __LINE__, cudaGetErrorString(err_), cudaGetErrorName(err_)); \
            exit(1);                                                                   \
        }                                                                              \
    } while (0)

#define TILE 16

__device__ unsigned int matmul_positive;

__global__ void matmul_tiled(const float *A, const float *B, float *C, int n)
{
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;
    float acc = 0.0f;

    for (int t = 0; t < (n + TILE - 1) / TILE; t++) {
        int ac = t * TILE + tx, br = t * TILE + ty;
        As[ty][tx] = (row < n && ac < n) ? A[row * n + ac] : 0.0f;
        Bs[ty][tx] = (br < n && col < n) ? B[br * n + col] : 0.0f;
        __syncthreads();
        for (int k = 0; k < TILE; k++)
            acc += As[ty][k] * Bs[k][tx];
        __syncthreads();
    }
    if (row < n && col < n) {
        C[row * n + col] = acc;
        if (acc > 0.0f)
            atomicAdd(&matmul_positive, 1u);
    }
}

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
    const int n = 256;
    size_t bytes = (size_t)n * n * sizeof(float);
    unsigned int positive = 12345u;
    float *dA, *dB, *dC, *dC2;
    int count = 0;

    CHECK(cudaGetDeviceCount(&count));
    if (count < 1) {
        fprintf(stderr, "matmul: no CUDA device\n");
        return 1;
    }
    CHECK(cudaSetDevice(0));

    float *A = (float *)malloc(bytes), *B = (float *)malloc(bytes), *C = (float *)malloc(bytes);
    if (!A || !B || !C) {
        fprintf(stderr, "matmul: out of host memory\n");
        return 1;
    }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            A[i * n + j] = (float)((i * 3 + j) % 7 - 3);
            B[i * n + j] = (float)((i + j * 5) % 9 - 4);
        }

    CHECK(cudaMalloc(&dA, bytes));
    CHECK(cudaMalloc(&dB, bytes));
    CHECK(cudaMalloc(&dC, bytes));
    CHECK(cudaMalloc(&dC2, bytes));
    CHECK(cudaMemcpy(dA, A, bytes, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dB, B, bytes, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpyToSymbol(matmul_positive, &positive, sizeof(positive))); // not zero: the next copy must win
    positive = 0;
    CHECK(cudaMemcpyToSymbol(matmul_positive, &positive, sizeof(positive)));

    dim3 block(TILE, TILE), grid((n + TILE - 1) / TILE, (n + TILE - 1) / TILE);
    matmul_tiled<<<grid, block>>>(dA, dB, dC, n);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    // Read the result through a device-to-device copy, to exercise one.
    CHECK(cudaMemcpy(dC2, dC, bytes, cudaMemcpyDeviceToDevice));
    CHECK(cudaMemcpy(C, dC2, bytes, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpyFromSymbol(&positive, matmul_positive, sizeof(positive)));

    int64_t trace = 0, sum = 0;
    uint64_t h = 14695981039346656037ull;
    for (int i = 0; i < n * n; i++) {
        sum += (int64_t)C[i];
        h = fnv1a_i32(h, (int32_t)C[i]);
    }
    for (int i = 0; i < n; i++)
        trace += (int64_t)C[i * n + i];
    printf("matmul n=%d tile=%d positive=%u trace=%lld sum=%lld checksum=%016llx\n", n, TILE, positive,
           (long long)trace, (long long)sum, (unsigned long long)h);

    CHECK(cudaFree(dA));
    CHECK(cudaFree(dB));
    CHECK(cudaFree(dC));
    CHECK(cudaFree(dC2));
    free(A);
    free(B);
    free(C);
    return 0;
}
