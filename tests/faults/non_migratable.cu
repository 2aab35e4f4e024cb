// MMU fault #6, non-migratable range access (Table 5: "UVM debug ioctl (pin
// to host memory)").  Pinning a managed range to the CPU so that UVM refuses
// to migrate it is a UVM_TEST ioctl, absent from a stock driver (it needs the
// nvidia-uvm module parameter uvm_enable_builtin_tests=1); the public
// cudaMemAdviseSetPreferredLocation is only a preference UVM may override.
// On a GPU this program says so and runs its kernel on ordinary managed
// memory: no fault.  The sim backend's twin raises what the GPU raises for a
// non-migratable access: an illegal address.
#include "managed_common.h"

__global__ void fault_nonmigratable_touch(unsigned *p, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        p[i] += 2u;
}

int main()
{
    const char *name = "non_migratable";
    const int n = 1 << 16;
    unsigned *p;

    fault_begin(name, "MMU fault #6 (SM non-migratable range access)");
    printf("%s: unreachable on a stock driver: pinning a managed range against migration needs "
           "UVM's test ioctls (uvm_enable_builtin_tests=1); running the kernel on ordinary memory\n",
           name);
    (void)fault_managed_or_device(name, &p, n * sizeof(unsigned));
    fault_nonmigratable_touch<<<n / 256, 256>>>(p, n);
    fault_finish(name, FAULT_STATUS_NON_MIGRATABLE, false, cudaGetLastError());
}
