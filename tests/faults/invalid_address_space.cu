// SM exception: invalid address space, CUDA_EXCEPTION_7 (Table 5:
// atom.global.add on a shared-space address).  The generic address of a
// __shared__ word is used as the operand of a global-space atomic.
#include "fault_common.h"

__global__ void fault_invalid_address_space(unsigned *out)
{
    __shared__ unsigned s[32];
    unsigned old;

    s[threadIdx.x & 31] = 0;
    __syncthreads();
    unsigned long long generic = (unsigned long long)(void *)&s[threadIdx.x & 31];
    asm volatile("atom.global.add.u32 %0, [%1], 1;" : "=r"(old) : "l"(generic) : "memory");
    out[threadIdx.x] = old + s[threadIdx.x & 31];
}

int main()
{
    const char *name = "invalid_address_space";
    unsigned *out;

    fault_begin(name, "SM exception: invalid address space (atom.global.add on a shared address)");
    fault_setup_check(name, "cudaMalloc", cudaMalloc(&out, 32 * sizeof(unsigned)));
    fault_invalid_address_space<<<1, 32>>>(out);
    fault_finish(name, FAULT_STATUS_INVALID_ADDRESS_SPACE, true, cudaGetLastError());
}
