/* The shm transport's copy procedures: device memory to and from the
 * guest's shared region.  The guest names region bytes by offset; the span
 * is checked against the region's data and host memory areas (our own copy
 * of its geometry) before the backend touches it. */
#include "dispatch.h"

#include <stdio.h>

#include <driver_types.h>

#include "dispatch_output.h"
#include "log.h"
#include "session.h"
#include "shm_guest.h"
#include "tandem_rpc.h"

static void *region_span(tdm_session *s, const tdm_shm_copy_args *a)
{
    void *p = s->shm ? tdm_shm_conn_span(&s->shm->conn, a->offset, a->size) : NULL;

    if (p)
        tdm_shm_guest_touch(s, a->offset, a->size);

    if (!p)
        tdm_log_session(s->id, "shm copy of [%llu, +%llu) %s", (unsigned long long)a->offset, (unsigned long long)a->size,
                        s->shm ? "is outside the region's data and host memory areas" : "on a session without a region");
    return p;
}

static void complete(tdm_session *s, const tdm_shm_copy_args *a, int err)
{
    if (s->shm && tdm_shm_conn_complete(&s->shm->conn, a->slot, a->ticket, err) != 0) {
        tdm_log_session(s->id, "shm copy names completion slot %u, which does not exist", a->slot);
        tdm_session_defer(s, cudaErrorInvalidValue);
    }
}

bool tdm_serve_SHM_HTOD(void *ctx, void *args, void *res)
{
    tdm_session *s = ctx;
    tdm_shm_copy_args *a = args;
    const void *src = region_span(s, a);
    int err;

    if (!src)
        err = cudaErrorInvalidValue;
    else if (a->slot == TDM_SHM_NO_SLOT)    /* cudaMemcpyAsync from pinned memory */
        err = tdm_session_memcpy_htod_pinned(s, a->dev, src, a->size, a->stream);
    else                                    /* the guest reuses the bytes once told */
        err = tdm_session_memcpy_htod_wait(s, a->dev, src, a->size, a->stream);
    /* Host-to-device is one-way: its error surfaces at the next sync. */
    tdm_session_defer(s, err);
    complete(s, a, err);
    return true;
}

bool tdm_serve_SHM_DTOH(void *ctx, void *args, void *res)
{
    tdm_session *s = ctx;
    tdm_shm_copy_args *a = args;
    void *dst = region_span(s, a);
    int err = !dst                           ? cudaErrorInvalidValue
              : a->slot == TDM_SHM_NO_SLOT ? tdm_session_memcpy_dtoh_pinned(s, dst, a->dev, a->size, a->stream)
                                           : tdm_session_memcpy_dtoh(s, dst, a->dev, a->size, a->stream);

    if (a->slot == TDM_SHM_NO_SLOT)
        tdm_session_defer(s, err);           /* cudaMemcpyAsync into pinned memory */
    else                                     /* the guest waits for this one */
        complete(s, a, err | tdm_output_pending_flag(s->output));
    return true;
}

bool tdm_serve_SHM_HOST_REGISTER(void *ctx, void *args, void *res)
{
    tdm_shm_span *a = args;

    *(int *)res = tdm_shm_guest_register(ctx, a->offset, a->size);
    return true;
}

bool tdm_serve_SHM_HOST_UNREGISTER(void *ctx, void *args, void *res)
{
    tdm_shm_span *a = args;

    *(int *)res = tdm_shm_guest_unregister(ctx, a->offset, a->size);
    return true;
}
