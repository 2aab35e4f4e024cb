// SM exception: misaligned address, CUDA_EXCEPTION_6 (Table 5: unaligned
// global memory access).  A 4-byte store one byte into an allocation.
#include "fault_common.h"

__global__ void fault_misaligned_write(unsigned *p, unsigned byte_offset)
{
    if (blockIdx.x == 0 && threadIdx.x == 0)
        *(unsigned *)((char *)p + byte_offset) = 0x01020304u;
}

int main()
{
    const char *name = "misaligned";
    unsigned *p;

    fault_begin(name, "SM exception: misaligned address (4-byte store at offset 1)");
    fault_setup_check(name, "cudaMalloc", cudaMalloc(&p, 4096));
    fault_misaligned_write<<<1, 32>>>(p, 1u);
    fault_finish(name, FAULT_STATUS_MISALIGNED, true, cudaGetLastError());
}
