/* cudaProfilerStart/Stop, answered in the guest.  With no profiler attached
 * (a program run through Tandem has none: a profiler would have to attach to
 * the server, which serves other tenants too) the runtime only makes sure
 * the device is initialised and answers cudaSuccess; so do we, connecting
 * first so that a program without a server learns it here as it would learn
 * of a missing device natively. */
#include <cuda_profiler_api.h>

#include "guest.h"

cudaError_t cudaProfilerStart(void)
{
    return tdm_ret(tdm_connect());
}

cudaError_t cudaProfilerStop(void)
{
    return tdm_ret(tdm_connect());
}
