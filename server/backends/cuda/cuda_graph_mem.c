/* Graph memory on the GPU (docs/graphs.md, "Graph memory"): the session
 * layer gives an allocation node arena memory, made while the session's
 * stream may be capturing; in relaxed mode the driver allows it. */
#include "cuda_backend_internal.h"

int tdm_cuda_capture_mode_exchange(tdm_backend *b, int *mode)
{
    CUstreamCaptureMode m = (CUstreamCaptureMode)*mode;   /* the runtime's values */
    int err = tdm_cuda_enter(b);

    if (err)
        return err;
    err = tdm_cuda_err(tdm_cu.cuThreadExchangeStreamCaptureMode(&m), "cuThreadExchangeStreamCaptureMode");
    if (!err)
        *mode = (int)m;
    return err;
}
