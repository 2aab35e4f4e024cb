// MMU fault #11, PBDMA out-of-bounds (Table 5: cuStreamWaitValue32 on an
// unmapped VA).  The semaphore acquire is executed by the host interface
// (PBDMA), not by an SM or a copy engine.  The address is 64 GiB past a
// cudaMalloc allocation.  Tandem does not remote the Driver API, so through
// Tandem this is not reachable (exit status 3).
#include "fault_common.h"

typedef CUresult (*wait_fn)(CUstream, CUdeviceptr, cuuint32_t, unsigned int);

int main()
{
    const char *name = "pbdma_oob";
    unsigned *p;
    cudaStream_t s;

    fault_begin(name, "MMU fault #11 (PBDMA OOB): cuStreamWaitValue32 on an unmapped address");
    fault_setup_check(name, "cudaMalloc", cudaMalloc(&p, 2u << 20));
    fault_setup_check(name, "cudaStreamCreate", cudaStreamCreate(&s));
    wait_fn wait = (wait_fn)fault_driver_fn("cuStreamWaitValue32");
    if (!wait) {
        printf("%s: cuStreamWaitValue32 (Driver API) is not available from this runtime\n", name);
        fault_finish(name, FAULT_STATUS_PBDMA_OOB, false, cudaSuccess);
    }
    CUdeviceptr oob = (CUdeviceptr)p + (64ull << 30);
    // GEQ 0 holds for any value: the wait ends at once unless the read faults.
    CUresult r = wait((CUstream)s, oob, 0, CU_STREAM_WAIT_VALUE_GEQ);
    if (r != CUDA_SUCCESS) {
        printf("%s: cuStreamWaitValue32 refused the address: CUresult %d\n", name, (int)r);
        exit(FAULT_EXIT_REFUSED);
    }
    fault_finish(name, FAULT_STATUS_PBDMA_OOB, true, cudaStreamSynchronize(s));
}
