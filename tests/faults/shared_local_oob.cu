// SM exception: shared/local out-of-range address, CUDA_EXCEPTION_5 (Table 5:
// inline PTX ld.shared / ld.local to an out-of-range address).  An ld.shared
// 16 MiB into the shared window, far past the 228 KiB an SM has.
#include "fault_common.h"

__global__ void fault_shared_oob(unsigned *out, unsigned addr)
{
    __shared__ unsigned s[32];
    unsigned v;

    s[threadIdx.x & 31] = threadIdx.x;
    __syncthreads();
    asm volatile("ld.shared.u32 %0, [%1];" : "=r"(v) : "r"(addr) : "memory");
    out[threadIdx.x] = v + s[0];
}

int main()
{
    const char *name = "shared_local_oob";
    unsigned *out;

    fault_begin(name, "SM exception: shared/local out-of-range address (ld.shared at 16 MiB)");
    fault_setup_check(name, "cudaMalloc", cudaMalloc(&out, 32 * sizeof(unsigned)));
    fault_shared_oob<<<1, 32>>>(out, 16u << 20);
    fault_finish(name, FAULT_STATUS_SHARED_LOCAL_OOB, true, cudaGetLastError());
}
