// Managed-memory setup shared by the access-mismatch, zombie and
// non-migratable triggers.  Through Tandem (which does not remote managed
// memory) cudaMallocManaged answers cudaErrorNotSupported; the trigger then
// runs its kernel on plain device memory, which a real GPU serves without a
// fault and the sim backend's twin of the kernel faults as the GPU does with
// the setup in place (docs/faults.md).
#ifndef TANDEM_FAULT_MANAGED_COMMON_H
#define TANDEM_FAULT_MANAGED_COMMON_H

#include <sys/mman.h>

#include "fault_common.h"

// Allocates `bytes` of managed memory; false (and plain device memory in
// *p) when managed memory is not offered.
static inline bool fault_managed_or_device(const char *name, unsigned **p, size_t bytes)
{
    cudaError_t e = cudaMallocManaged(p, bytes);

    if (e == cudaSuccess)
        return true;
    (void)cudaGetLastError(); // not sticky: clear it so it is not reported as the fault
    printf("%s: cudaMallocManaged: %s: managed memory is not available from this runtime; "
           "running the trigger kernel on cudaMalloc memory instead\n",
           name, cudaGetErrorName(e));
    fault_setup_check(name, "cudaMalloc", cudaMalloc(p, bytes));
    return false;
}

// Declares the managed range read-only the ways a stock driver offers:
// read-mostly advice (Table 5's "cudaMemAdvise(RO)") and a read-only CPU
// mapping, whose protection UVM applies to GPU accesses of managed ranges.
static inline bool fault_managed_make_readonly(const char *name, void *p, size_t bytes)
{
    cudaError_t e = cudaMemAdvise(p, bytes, cudaMemAdviseSetReadMostly, cudaMemLocation{cudaMemLocationTypeDevice, 0});

    if (e != cudaSuccess) {
        printf("%s: cudaMemAdvise(ReadMostly): %s\n", name, cudaGetErrorName(e));
        (void)cudaGetLastError();
        return false;
    }
    if (mprotect(p, bytes, PROT_READ) != 0) {
        perror("mprotect(PROT_READ)");
        return false;
    }
    return true;
}

#endif
