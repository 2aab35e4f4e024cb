// The device code examples/library_load.cu loads as a library
// (cudaLibraryLoadData / cudaLibraryLoadFromFile).  Built by CMake into a
// cubin, a fat binary and PTX (never committed as binaries); the sim
// backend's twins are in server/sim_kernels/library.c.
__device__ int lib_bias;

// y[i] = a * x[i] + lib_bias
extern "C" __global__ void lib_axpb(float *y, const float *x, float a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = a * x[i] + (float)lib_bias;
}

// out[i] = (int)(i * step * scale): parameters of four sizes, for their layout
extern "C" __global__ void lib_fill(int *out, int n, char step, double scale)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = (int)((double)(i * step) * scale);
}
