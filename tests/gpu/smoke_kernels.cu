// Kernels for tests/gpu/cuda_backend_smoke.c, loaded as a fat binary
// (nvcc -fatbin -arch=sm_90).  extern "C" keeps the names unmangled so the
// test can look them up as plain strings.

extern "C" __device__ int smoke_global = 42;

extern "C" __global__ void add_one(int *p, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        p[i] += 1;
}

// Keeps a stream busy for about `cycles` clock cycles, so the test can
// queue work behind it and observe that it has not run yet.
extern "C" __global__ void spin(long long cycles)
{
    long long start = clock64();
    while (clock64() - start < cycles)
        ;
}
