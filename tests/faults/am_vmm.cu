// MMU fault #4, access mismatch on VMM memory (Table 5: cuMemCreate +
// cuMemMap + cuMemSetAccess(RO) + kernel write).  The Driver API is reached
// through cudaGetDriverEntryPointByVersion, so the program needs no libcuda
// at link time; through Tandem (no Driver API) it falls back to cudaMalloc
// memory, which a real GPU writes without a fault and the sim twin faults.
#include "fault_common.h"

__global__ void fault_am_vmm_write(unsigned *p, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        p[i] = 0x3c3c3c3cu;
}

typedef CUresult (*mem_create_fn)(CUmemGenericAllocationHandle *, size_t, const CUmemAllocationProp *, unsigned long long);
typedef CUresult (*gran_fn)(size_t *, const CUmemAllocationProp *, CUmemAllocationGranularity_flags);
typedef CUresult (*reserve_fn)(CUdeviceptr *, size_t, size_t, CUdeviceptr, unsigned long long);
typedef CUresult (*map_fn)(CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle, unsigned long long);
typedef CUresult (*access_fn)(CUdeviceptr, size_t, const CUmemAccessDesc *, size_t);

// Maps `bytes` of VMM memory readable but not writable by device 0.
static bool vmm_readonly(const char *name, unsigned **out, size_t *bytes)
{
    mem_create_fn create = (mem_create_fn)fault_driver_fn("cuMemCreate");
    gran_fn gran = (gran_fn)fault_driver_fn("cuMemGetAllocationGranularity");
    reserve_fn reserve = (reserve_fn)fault_driver_fn("cuMemAddressReserve");
    map_fn map = (map_fn)fault_driver_fn("cuMemMap");
    access_fn access = (access_fn)fault_driver_fn("cuMemSetAccess");
    CUmemAllocationProp prop = {};
    CUmemGenericAllocationHandle h;
    CUmemAccessDesc ad = {};
    CUdeviceptr va;
    size_t g = 0;

    if (!create || !gran || !reserve || !map || !access) {
        printf("%s: the Driver API (cuMemCreate ...) is not available from this runtime\n", name);
        return false;
    }
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = 0;
    ad.location = prop.location;
    ad.flags = CU_MEM_ACCESS_FLAGS_PROT_READ;
    if (gran(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM) != CUDA_SUCCESS || create(&h, g, &prop, 0) != CUDA_SUCCESS ||
        reserve(&va, g, 0, 0, 0) != CUDA_SUCCESS || map(va, g, 0, h, 0) != CUDA_SUCCESS ||
        access(va, g, &ad, 1) != CUDA_SUCCESS) {
        printf("%s: setup failed: VMM create/map/set-access\n", name);
        exit(FAULT_EXIT_FAILED);
    }
    *out = (unsigned *)va;
    *bytes = g;
    return true;
}

int main()
{
    const char *name = "am_vmm";
    size_t bytes = 2u << 20;
    unsigned *p;
    bool setup;

    fault_begin(name, "MMU fault #4 (SM access mismatch, VMM memory): kernel write to a read-only cuMemMap mapping");
    fault_setup_check(name, "cudaFree(0)", cudaFree(0)); // the primary context the Driver API calls use
    setup = vmm_readonly(name, &p, &bytes);
    if (!setup)
        fault_setup_check(name, "cudaMalloc", cudaMalloc(&p, bytes));
    int n = (int)(bytes / sizeof(unsigned));
    fault_am_vmm_write<<<(n + 255) / 256, 256>>>(p, n);
    fault_finish(name, FAULT_STATUS_AM_VMM, setup, cudaGetLastError());
}
