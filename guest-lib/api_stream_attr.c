/* cudaStreamSetAttribute/cudaStreamGetAttribute (docs/runtime-api.md,
 * "Stream attributes"): forwarded with the value unpacked, so that the
 * server can check it (an access policy window must lie in the session's
 * allocations) and give it to the driver as the driver's own type. */
#include <string.h>

#include "guest.h"

static void to_wire(cudaStreamAttrID id, const cudaStreamAttrValue *v, tdm_stream_attr *w)
{
    memset(w, 0, sizeof(*w));
    w->id = (int)id;
    switch (id) {
    case cudaStreamAttributeAccessPolicyWindow:
        w->base = (tdm_addr)(uintptr_t)v->accessPolicyWindow.base_ptr;
        w->num_bytes = v->accessPolicyWindow.num_bytes;
        w->hit_ratio = v->accessPolicyWindow.hitRatio;
        w->hit_prop = (int)v->accessPolicyWindow.hitProp;
        w->miss_prop = (int)v->accessPolicyWindow.missProp;
        break;
    case cudaStreamAttributeSynchronizationPolicy:
        w->value = (int)v->syncPolicy;
        break;
    case cudaStreamAttributeMemSyncDomain:
        w->value = (int)v->memSyncDomain;
        break;
    case cudaStreamAttributeMemSyncDomainMap:
        w->value = v->memSyncDomainMap.default_;
        w->value2 = v->memSyncDomainMap.remote;
        break;
    case cudaStreamAttributePriority:
        w->value = v->priority;
        break;
    default:
        break; /* the server refuses the id */
    }
}

static void from_wire(const tdm_stream_attr *w, cudaStreamAttrValue *v)
{
    memset(v, 0, sizeof(*v));
    switch (w->id) {
    case cudaStreamAttributeAccessPolicyWindow:
        v->accessPolicyWindow.base_ptr = (void *)(uintptr_t)w->base;
        v->accessPolicyWindow.num_bytes = (size_t)w->num_bytes;
        v->accessPolicyWindow.hitRatio = w->hit_ratio;
        v->accessPolicyWindow.hitProp = (enum cudaAccessProperty)w->hit_prop;
        v->accessPolicyWindow.missProp = (enum cudaAccessProperty)w->miss_prop;
        break;
    case cudaStreamAttributeSynchronizationPolicy:
        v->syncPolicy = (enum cudaSynchronizationPolicy)w->value;
        break;
    case cudaStreamAttributeMemSyncDomain:
        v->memSyncDomain = (cudaLaunchMemSyncDomain)w->value;
        break;
    case cudaStreamAttributeMemSyncDomainMap:
        v->memSyncDomainMap.default_ = (unsigned char)w->value;
        v->memSyncDomainMap.remote = (unsigned char)w->value2;
        break;
    case cudaStreamAttributePriority:
        v->priority = w->value;
        break;
    default:
        break;
    }
}

cudaError_t cudaStreamSetAttribute(cudaStream_t hStream, cudaStreamAttrID attr, const cudaStreamAttrValue *value)
{
    tdm_stream_attr_args a;

    if (!value)
        return tdm_ret(cudaErrorInvalidValue);
    a.stream = tdm_stream_id(hStream);
    to_wire(attr, value, &a.attr);
    return tdm_ret(tdm_call_err(TDM_STREAM_SET_ATTRIBUTE, &a));
}

cudaError_t cudaStreamGetAttribute(cudaStream_t hStream, cudaStreamAttrID attr, cudaStreamAttrValue *value_out)
{
    tdm_stream_attr_args a;
    tdm_stream_attr_res r;
    cudaError_t err;

    if (!value_out)
        return tdm_ret(cudaErrorInvalidValue);
    memset(&a, 0, sizeof(a));
    memset(&r, 0, sizeof(r));
    a.stream = tdm_stream_id(hStream);
    a.attr.id = (int)attr;
    err = tdm_call(TDM_STREAM_GET_ATTRIBUTE, &a, &r);
    if (!err)
        err = (cudaError_t)r.err;
    if (!err)
        from_wire(&r.attr, value_out);
    return tdm_ret(err);
}

cudaError_t cudaStreamSetAttribute_ptsz(cudaStream_t hStream, cudaStreamAttrID attr,
                                        const cudaStreamAttrValue *value)
{
    return cudaStreamSetAttribute(hStream ? hStream : cudaStreamPerThread, attr, value);
}

cudaError_t cudaStreamGetAttribute_ptsz(cudaStream_t hStream, cudaStreamAttrID attr, cudaStreamAttrValue *value_out)
{
    return cudaStreamGetAttribute(hStream ? hStream : cudaStreamPerThread, attr, value_out);
}
