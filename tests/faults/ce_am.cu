// MMU fault #8, copy-engine access mismatch (Table 5: cudaMallocManaged(RO) +
// cuMemcpy write).  A host-to-device copy into managed memory declared
// read-only.  Through Tandem (no managed memory) the copy goes to ordinary
// device memory and succeeds: not reachable (exit status 3).
#include <cstring>
#include <vector>

#include "managed_common.h"

int main()
{
    const char *name = "ce_am";
    const int n = 1 << 16;
    std::vector<unsigned> host(n, 9u);
    unsigned *p;
    bool setup;

    fault_begin(name, "MMU fault #8 (CE access mismatch): host-to-device copy into read-only managed memory");
    setup = fault_managed_or_device(name, &p, n * sizeof(unsigned));
    if (setup) {
        memset(p, 1, n * sizeof(unsigned));
        setup = fault_managed_make_readonly(name, p, n * sizeof(unsigned));
    }
    cudaError_t e = cudaMemcpy(p, host.data(), n * sizeof(unsigned), cudaMemcpyHostToDevice);
    fault_finish(name, FAULT_STATUS_CE_AM, setup, e);
}
