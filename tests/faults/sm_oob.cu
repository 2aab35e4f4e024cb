// MMU fault #1, SM out-of-bounds (seed 000 Table 5: cudaMalloc + kernel write
// past the allocation).  The write lands 64 GiB past a 2 MiB allocation:
// past the granule the allocation was rounded to, in address space nothing
// maps (inside Tandem's reserved arena when run through Tandem).
#include "fault_common.h"

__global__ void fault_sm_oob_write(unsigned *p, unsigned long long word)
{
    if (blockIdx.x == 0 && threadIdx.x == 0)
        p[word] = 0xdeadbeefu;
}

int main()
{
    const char *name = "sm_oob";
    unsigned *p;

    fault_begin(name, "MMU fault #1 (SM OOB): kernel write 64 GiB past a cudaMalloc allocation");
    fault_setup_check(name, "cudaMalloc", cudaMalloc(&p, 2u << 20));
    fault_sm_oob_write<<<1, 32>>>(p, (64ull << 30) / sizeof(unsigned));
    fault_finish(name, FAULT_STATUS_SM_OOB, true, cudaGetLastError());
}
