/* Stream attributes on the sim (docs/runtime-api.md, "Stream attributes"):
 * recorded on the stream and answered back; none changes how the sim runs
 * work (it has no L2 to set aside, one memory domain, and its waits do
 * not spin).  The session layer checked the values. */
#include <driver_types.h>

#include "sim_internal.h"

int sim_stream_set_attribute(tdm_backend *b, tdm_bstream *s, const tdm_bstream_attr *a)
{
    int err = 0;

    if (!s)
        return cudaErrorInvalidResourceHandle;
    pthread_mutex_lock(&b->lock);
    switch (a->id) {
    case cudaLaunchAttributeAccessPolicyWindow:
        s->attrs.window = *a;
        break;
    case cudaLaunchAttributeSynchronizationPolicy:
        s->attrs.sync_policy_set = true;
        s->attrs.sync_policy = a->value;
        break;
    case cudaLaunchAttributeMemSyncDomain:
        s->attrs.domain_set = true;
        s->attrs.domain = a->value;
        break;
    case cudaLaunchAttributeMemSyncDomainMap:
        s->attrs.domain_map_set = true;
        s->attrs.domain_map_default = a->value;
        s->attrs.domain_map_remote = a->value2;
        break;
    default:
        err = cudaErrorInvalidValue;
    }
    pthread_mutex_unlock(&b->lock);
    return err;
}

int sim_stream_get_attribute(tdm_backend *b, tdm_bstream *s, tdm_bstream_attr *a)
{
    int err = 0, id = a->id;

    if (!s)
        return cudaErrorInvalidResourceHandle;
    pthread_mutex_lock(&b->lock);
    switch (id) {
    case cudaLaunchAttributeAccessPolicyWindow:
        /* Never set: the empty window, as the driver answers. */
        *a = s->attrs.window;
        a->id = id;
        break;
    case cudaLaunchAttributeSynchronizationPolicy:
        a->value = s->attrs.sync_policy_set ? s->attrs.sync_policy : cudaSyncPolicyAuto;
        break;
    case cudaLaunchAttributeMemSyncDomain:
        a->value = s->attrs.domain_set ? s->attrs.domain : cudaLaunchMemSyncDomainDefault;
        break;
    case cudaLaunchAttributeMemSyncDomainMap:
        /* The driver's default map: default kernels to domain 0, remote to 1. */
        a->value = s->attrs.domain_map_set ? s->attrs.domain_map_default : 0;
        a->value2 = s->attrs.domain_map_set ? s->attrs.domain_map_remote : 1;
        break;
    default:
        err = cudaErrorInvalidValue;
    }
    pthread_mutex_unlock(&b->lock);
    return err;
}
