// MMU fault #3, access mismatch on a GPU-resident managed page (Table 5:
// cudaMallocManaged + kernel read (migrate) + cudaMemAdvise(RO) + kernel
// write).
#include "managed_common.h"

__global__ void fault_am_gpu_read(const unsigned *p, unsigned *sum, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        atomicAdd(sum, p[i]);
}

__global__ void fault_am_gpu_write(unsigned *p, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        p[i] = 0x5a5a5a5au;
}

int main()
{
    const char *name = "am_gpu";
    const int n = 1 << 16;
    unsigned *p, *sum;
    bool setup;

    fault_begin(name, "MMU fault #3 (SM access mismatch, GPU-resident managed page): kernel read, then write to read-only managed memory");
    setup = fault_managed_or_device(name, &p, n * sizeof(unsigned));
    fault_setup_check(name, "cudaMalloc", cudaMalloc(&sum, sizeof(unsigned)));
    fault_setup_check(name, "cudaMemset", cudaMemset(p, 0, n * sizeof(unsigned)));
    fault_am_gpu_read<<<n / 256, 256>>>(p, sum, n); // migrates the pages to the GPU
    fault_setup_check(name, "read kernel", cudaDeviceSynchronize());
    if (setup)
        setup = fault_managed_make_readonly(name, p, n * sizeof(unsigned));
    fault_am_gpu_write<<<n / 256, 256>>>(p, n);
    fault_finish(name, FAULT_STATUS_AM_GPU, setup, cudaGetLastError());
}
