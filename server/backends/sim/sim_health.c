/* The simulated device context's loss, as on a GPU (docs/health.md): a
 * kernel's fatal fault (an illegal address, a misaligned access, a trap...)
 * loses the whole context, so every stream of this backend, whichever
 * session made it, reports that error from then on; streams made later
 * too.  Only a new backend (the server's context rebuild) is usable again.
 * Under a sim MPS domain the domain's faults reach this context as well
 * (sim_mps.c). */
#include "sim_internal.h"

bool sim_error_is_fatal(int err)
{
    return err == cudaErrorIllegalAddress || err == cudaErrorLaunchFailure || err == cudaErrorHardwareStackError ||
           err == cudaErrorIllegalInstruction || err == cudaErrorMisalignedAddress ||
           err == cudaErrorInvalidAddressSpace || err == cudaErrorInvalidPc || err == cudaErrorAssert;
}

void sim_context_kernel_fault_locked(tdm_backend *b, tdm_bstream *s, int err)
{
    sim_mps_kernel_fault(b, err);
    if (!sim_error_is_fatal(err) || b->lost_err)
        return;
    b->lost_err = err;
    s->lost_context = true;
    sim_log("a kernel's fatal fault (cudaError %d) lost the simulated device context: every stream of this "
            "server reports it from now on",
            err);
}

void sim_context_poll_locked(tdm_backend *b, tdm_bstream *s)
{
    sim_mps_poll_locked(b, s);
    if (!s->sticky && b->lost_err)
        s->sticky = b->lost_err;
}

bool sim_stream_lost_context(tdm_backend *b, tdm_bstream *s)
{
    bool lost;

    s = sim_stream_or_legacy(b, s);
    pthread_mutex_lock(&b->lock);
    lost = s->lost_context;
    pthread_mutex_unlock(&b->lock);
    return lost;
}
