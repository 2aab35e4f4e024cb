/* Stream attributes as a session sets and reads them (docs/runtime-api.md,
 * "Stream attributes"): the guest's value is checked here, as the driver
 * checks it, and an access policy window must lie in the session's own
 * allocations (it steers the shared L2 towards that memory: another
 * tenant's is not the guest's to name). */
#include "session.h"

#include <driver_types.h>

static bool is_access_property(int p)
{
    return p == cudaAccessPropertyNormal || p == cudaAccessPropertyStreaming || p == cudaAccessPropertyPersisting;
}

/* The backend's form of `a`, with the window's base as a device address. */
static int check_attribute(tdm_session *s, const tdm_bstream_attr *a, tdm_bstream_attr *out)
{
    *out = *a;
    switch (a->id) {
    case cudaLaunchAttributeAccessPolicyWindow:
        /* missProp may not be persisting (CUaccessPolicyWindow). */
        if (!(a->hit_ratio >= 0.0f && a->hit_ratio <= 1.0f) || !is_access_property(a->hit_prop) ||
            !is_access_property(a->miss_prop) || a->miss_prop == cudaAccessPropertyPersisting)
            return cudaErrorInvalidValue;
        /* An empty window is "no window", whatever its base. */
        if (!a->num_bytes)
            return 0;
        return tdm_session_resolve_range(s, "cudaStreamSetAttribute access policy window", a->base, a->num_bytes,
                                         &out->base, NULL);
    case cudaLaunchAttributeSynchronizationPolicy:
        return a->value >= cudaSyncPolicyAuto && a->value <= cudaSyncPolicyBlockingSync ? 0 : cudaErrorInvalidValue;
    case cudaLaunchAttributeMemSyncDomain:
        return a->value == cudaLaunchMemSyncDomainDefault || a->value == cudaLaunchMemSyncDomainRemote
                   ? 0
                   : cudaErrorInvalidValue;
    case cudaLaunchAttributeMemSyncDomainMap:
        /* Two domains on the devices Tandem serves (ids are unsigned char). */
        return a->value >= 0 && a->value <= 1 && a->value2 >= 0 && a->value2 <= 1 ? 0 : cudaErrorInvalidValue;
    default:
        /* Launch-only attributes, Priority (set at creation here,
         * cudaStreamCreateWithPriority), unknown ids. */
        return cudaErrorInvalidValue;
    }
}

int tdm_session_stream_set_attribute(tdm_session *s, uint64_t stream, const tdm_bstream_attr *a)
{
    tdm_stream_state *st = tdm_session_stream_state(s, stream);
    tdm_bstream_attr dev;
    int err;

    if (!st)
        return cudaErrorInvalidResourceHandle;
    err = check_attribute(s, a, &dev);
    if (err)
        return err;
    return s->srv->ops->stream_set_attribute(s->srv->be, st->bs, &dev);
}

int tdm_session_stream_get_attribute(tdm_session *s, uint64_t stream, tdm_bstream_attr *a)
{
    tdm_stream_state *st = tdm_session_stream_state(s, stream);
    int id = a->id;

    if (!st)
        return cudaErrorInvalidResourceHandle;
    if (id == cudaLaunchAttributePriority) {
        /* Answered as cudaStreamGetPriority answers. */
        a->value = 0;
        return tdm_session_stream_get_priority(s, stream, &a->value);
    }
    if (id != cudaLaunchAttributeAccessPolicyWindow && id != cudaLaunchAttributeSynchronizationPolicy &&
        id != cudaLaunchAttributeMemSyncDomain && id != cudaLaunchAttributeMemSyncDomainMap)
        return cudaErrorInvalidValue;
    return s->srv->ops->stream_get_attribute(s->srv->be, st->bs, a);
}
