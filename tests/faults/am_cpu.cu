// MMU fault #2, access mismatch on a CPU-resident managed page (Table 5:
// cudaMallocManaged + cudaMemAdvise(RO) + kernel write).  The pages are
// written by the CPU (so they reside there), declared read-only, then written
// by a kernel.
#include <cstring>

#include "managed_common.h"

__global__ void fault_am_cpu_write(unsigned *p, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        p[i] = 0xa5a5a5a5u;
}

int main()
{
    const char *name = "am_cpu";
    const int n = 1 << 16;
    unsigned *p;
    bool setup;

    fault_begin(name, "MMU fault #2 (SM access mismatch, CPU-resident managed page): kernel write to read-only managed memory");
    setup = fault_managed_or_device(name, &p, n * sizeof(unsigned));
    if (setup) {
        memset(p, 1, n * sizeof(unsigned)); // CPU-resident
        setup = fault_managed_make_readonly(name, p, n * sizeof(unsigned));
    }
    fault_am_cpu_write<<<n / 256, 256>>>(p, n);
    fault_finish(name, FAULT_STATUS_AM_CPU, setup, cudaGetLastError());
}
