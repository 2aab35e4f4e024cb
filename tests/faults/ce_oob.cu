// MMU fault #7, copy-engine out-of-bounds (Table 5: cudaMalloc + cuMemcpy to
// an OOB address).  A host-to-device cudaMemcpy whose destination is 64 GiB
// past a 2 MiB allocation.  Tandem checks every pointer against the
// session's allocations, so through Tandem the copy is refused with
// cudaErrorInvalidValue and never reaches a copy engine (exit status 5).
#include <cstring>
#include <vector>

#include "fault_common.h"

int main()
{
    const char *name = "ce_oob";
    std::vector<unsigned> host(1 << 16, 7u);
    unsigned *p;

    fault_begin(name, "MMU fault #7 (CE OOB): host-to-device copy to 64 GiB past a cudaMalloc allocation");
    fault_setup_check(name, "cudaMalloc", cudaMalloc(&p, 2u << 20));
    unsigned *oob = (unsigned *)((char *)p + (64ull << 30));
    cudaError_t e = cudaMemcpy(oob, host.data(), host.size() * sizeof(unsigned), cudaMemcpyHostToDevice);
    fault_finish(name, FAULT_STATUS_CE_OOB, true, e);
}
