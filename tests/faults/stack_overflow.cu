// SM exception: lane user stack overflow, CUDA_EXCEPTION_2 (Table 5: deep
// recursion + cudaLimitStackSize = 1 KiB).  Every level keeps a 128-byte
// volatile array on the stack and adds to the callee's result, so the
// recursion can be neither flattened nor turned into a loop.
#include "fault_common.h"

__device__ __noinline__ unsigned fault_recurse(unsigned d)
{
    volatile unsigned local[32];
    for (int k = 0; k < 32; k++)
        local[k] = d + (unsigned)k;
    if (d == 0)
        return local[5];
    return fault_recurse(d - 1) + local[d & 31];
}

__global__ void fault_stack_overflow(unsigned *out, unsigned depth)
{
    out[blockIdx.x * blockDim.x + threadIdx.x] = fault_recurse(depth);
}

int main()
{
    const char *name = "stack_overflow";
    unsigned *out;

    fault_begin(name, "SM exception: lane user stack overflow (recursion 100000 deep, 1 KiB stack)");
    cudaError_t e = cudaDeviceSetLimit(cudaLimitStackSize, 1024);
    if (e != cudaSuccess) {
        // Tandem does not forward limits yet; 1 KiB is the default anyway.
        printf("%s: cudaDeviceSetLimit: %s; keeping the default stack size\n", name, cudaGetErrorName(e));
        (void)cudaGetLastError();
    }
    fault_setup_check(name, "cudaMalloc", cudaMalloc(&out, 32 * sizeof(unsigned)));
    fault_stack_overflow<<<1, 32>>>(out, 100000u);
    fault_finish(name, FAULT_STATUS_STACK_OVERFLOW, true, cudaGetLastError());
}
