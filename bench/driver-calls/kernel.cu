// The kernel bench/driver-calls launches: eight parameters of the kinds
// PyTorch's kernels take (pointers, ints, a float, a 64-bit int), so a
// launch packs a realistic parameter block.  Launched with n = 0 it only
// reads its parameters: what the benchmark measures is the launch call.
// Built into a fat binary (bench/CMakeLists.txt) that the program loads
// with cuLibraryLoadData; the sim twin is server/sim_kernels/bench_driver_calls.c.
__global__ void drvcalls_step(float *y, const float *x, const int *idx, unsigned *count, int n, int stride, float a,
                              long long tag)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;

    if (i < n) {
        y[i] = a * x[(i * stride) % n] + (float)idx[i] + (float)(tag & 1);
        atomicAdd(count, 1u);
    }
}
