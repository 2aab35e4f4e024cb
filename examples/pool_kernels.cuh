// The kernels mem_pools.cu and graph_memory.cu share (the sim backend's
// twins in server/sim_kernels/mem_pools.c serve both).
#ifndef TANDEM_EXAMPLES_POOL_KERNELS_CUH
#define TANDEM_EXAMPLES_POOL_KERNELS_CUH

__global__ void pool_fill(unsigned int *p, int n, unsigned int v)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        p[i] = v + (unsigned int)i;
}

__global__ void pool_twice(const unsigned int *a, unsigned int *b, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        b[i] = 2u * a[i];
}

#endif
