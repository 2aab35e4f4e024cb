// MMU fault #5, zombie range access (Table 5: "UVM debug ioctl (de-register
// backing)").  A zombie is a managed range whose CPU mapping is gone while the
// range lives on; UVM makes one only in its multi-process sharing mode or
// through its UVM_TEST ioctls, neither of which a stock driver offers to a
// CUDA program (the test ioctls need the nvidia-uvm module parameter
// uvm_enable_builtin_tests=1).  So on a GPU this program says so and runs its
// kernel on ordinary managed memory: no fault.  The sim backend's twin of the
// kernel raises what the GPU raises for a zombie access: an illegal address.
#include "managed_common.h"

__global__ void fault_zombie_touch(unsigned *p, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        p[i] += 1u;
}

int main()
{
    const char *name = "zombie";
    const int n = 1 << 16;
    unsigned *p;

    fault_begin(name, "MMU fault #5 (SM zombie range access)");
    printf("%s: unreachable on a stock driver: a zombie range needs UVM's test ioctls "
           "(uvm_enable_builtin_tests=1) or its multi-process sharing mode; running the kernel "
           "on ordinary memory\n", name);
    (void)fault_managed_or_device(name, &p, n * sizeof(unsigned));
    fault_zombie_touch<<<n / 256, 256>>>(p, n);
    fault_finish(name, FAULT_STATUS_ZOMBIE, false, cudaGetLastError());
}
