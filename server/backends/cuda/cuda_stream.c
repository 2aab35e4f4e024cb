/* Streams and events: thin wrappers; the driver's handles are the objects. */
#include "cuda_backend_internal.h"

/* The runtime flags the guest may pass (driver_types.h), spelled out so a
 * flag we do not translate is refused rather than passed on silently. */
#define STREAM_FLAGS_KNOWN cudaStreamNonBlocking
#define EVENT_FLAGS_KNOWN (cudaEventBlockingSync | cudaEventDisableTiming | cudaEventInterprocess)

int tdm_cuda_stream_create(tdm_backend *b, unsigned flags, int priority, tdm_bspace *sp, tdm_bstream **out)
{
    CUstream cs = NULL;
    int err = tdm_cuda_enter(b);

    (void)sp; /* one context, one address space: tenants are apart by process */

    *out = NULL;
    if (err)
        return err;
    if (flags & ~(unsigned)STREAM_FLAGS_KNOWN)
        return cudaErrorInvalidValue;
    err = tdm_cuda_err(tdm_cu.cuStreamCreateWithPriority(&cs, (flags & cudaStreamNonBlocking)
                                                           ? CU_STREAM_NON_BLOCKING
                                                           : CU_STREAM_DEFAULT,
                                                  priority),
                       "cuStreamCreateWithPriority");
    if (err)
        return err;
    *out = (tdm_bstream *)cs;
    return cudaSuccess;
}

int tdm_cuda_stream_destroy(tdm_backend *b, tdm_bstream *s)
{
    int err = tdm_cuda_enter(b);

    if (err)
        return err;
    if (!s) /* the legacy stream is not ours to destroy */
        return cudaErrorInvalidResourceHandle;
    return tdm_cuda_err(tdm_cu.cuStreamDestroy(tdm_cuda_stream(s)), "cuStreamDestroy");
}

int tdm_cuda_stream_synchronize(tdm_backend *b, tdm_bstream *s)
{
    int err = tdm_cuda_enter(b);

    if (err)
        return err;
    return tdm_cuda_err(tdm_cu.cuStreamSynchronize(tdm_cuda_stream(s)), "cuStreamSynchronize");
}

int tdm_cuda_stream_query(tdm_backend *b, tdm_bstream *s)
{
    int err = tdm_cuda_enter(b);

    if (err)
        return err;
    return tdm_cuda_err(tdm_cu.cuStreamQuery(tdm_cuda_stream(s)), "cuStreamQuery");
}

int tdm_cuda_stream_wait_event(tdm_backend *b, tdm_bstream *s, tdm_bevent *e)
{
    int err = tdm_cuda_enter(b);

    if (err)
        return err;
    return tdm_cuda_err(tdm_cu.cuStreamWaitEvent(tdm_cuda_stream(s), tdm_cuda_event(e), 0),
                        "cuStreamWaitEvent");
}

int tdm_cuda_event_create(tdm_backend *b, unsigned flags, tdm_bevent **out)
{
    CUevent ce = NULL;
    unsigned cflags = CU_EVENT_DEFAULT;
    int err = tdm_cuda_enter(b);

    *out = NULL;
    if (err)
        return err;
    if (flags & ~(unsigned)EVENT_FLAGS_KNOWN)
        return cudaErrorInvalidValue;
    /* An interprocess event is shared between sessions of this process
     * (docs/ipc.md); the driver's flag keeps the driver's own checks. */
    if (flags & cudaEventInterprocess)
        cflags |= CU_EVENT_INTERPROCESS;
    if (flags & cudaEventBlockingSync)
        cflags |= CU_EVENT_BLOCKING_SYNC;
    if (flags & cudaEventDisableTiming)
        cflags |= CU_EVENT_DISABLE_TIMING;
    err = tdm_cuda_err(tdm_cu.cuEventCreate(&ce, cflags), "cuEventCreate");
    if (err)
        return err;
    *out = (tdm_bevent *)ce;
    return cudaSuccess;
}

int tdm_cuda_event_destroy(tdm_backend *b, tdm_bevent *e)
{
    int err = tdm_cuda_enter(b);

    if (err)
        return err;
    return tdm_cuda_err(tdm_cu.cuEventDestroy(tdm_cuda_event(e)), "cuEventDestroy");
}

int tdm_cuda_event_record(tdm_backend *b, tdm_bevent *e, tdm_bstream *s)
{
    int err = tdm_cuda_enter(b);

    if (err)
        return err;
    return tdm_cuda_err(tdm_cu.cuEventRecord(tdm_cuda_event(e), tdm_cuda_stream(s)), "cuEventRecord");
}

int tdm_cuda_event_synchronize(tdm_backend *b, tdm_bevent *e)
{
    int err = tdm_cuda_enter(b);

    if (err)
        return err;
    return tdm_cuda_err(tdm_cu.cuEventSynchronize(tdm_cuda_event(e)), "cuEventSynchronize");
}

int tdm_cuda_event_query(tdm_backend *b, tdm_bevent *e)
{
    int err = tdm_cuda_enter(b);

    if (err)
        return err;
    return tdm_cuda_err(tdm_cu.cuEventQuery(tdm_cuda_event(e)), "cuEventQuery");
}

int tdm_cuda_event_elapsed_ms(tdm_backend *b, tdm_bevent *start, tdm_bevent *end, float *ms)
{
    int err = tdm_cuda_enter(b);

    if (err)
        return err;
    return tdm_cuda_err(tdm_cu.cuEventElapsedTime(ms, tdm_cuda_event(start), tdm_cuda_event(end)),
                        "cuEventElapsedTime");
}
