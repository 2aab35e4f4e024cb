/* The calling thread's capture mode, as CUDA keeps one per thread (cudaThreadExchange-
 * StreamCaptureMode): the server exchanges it around its own potentially unsafe calls, and
 * sim_mem_map refuses an allocation, as the driver does, while a global capture is open and
 * the thread is not relaxed (docs/graphs.md, "Graph memory"). */
#include "sim_internal.h"

static _Thread_local int thread_mode = cudaStreamCaptureModeGlobal;

int sim_capture_mode_exchange(tdm_backend *b, int *mode)
{
    int old = thread_mode;

    (void)b;
    if (*mode < cudaStreamCaptureModeGlobal || *mode > cudaStreamCaptureModeRelaxed)
        return cudaErrorInvalidValue;
    thread_mode = *mode;
    *mode = old;
    return 0;
}

int sim_thread_capture_mode(void)
{
    return thread_mode;
}
