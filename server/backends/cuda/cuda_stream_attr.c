/* Stream attributes (docs/runtime-api.md, "Stream attributes"): the
 * session layer has checked the value; the driver keeps it on the stream. */
#include <string.h>

#include "cuda_backend_internal.h"

int tdm_cuda_stream_set_attribute(tdm_backend *b, tdm_bstream *s, const tdm_bstream_attr *a)
{
    CUstreamAttrValue v;
    int err = tdm_cuda_enter(b);

    if (err)
        return err;
    memset(&v, 0, sizeof(v));
    switch (a->id) {
    case CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW:
        v.accessPolicyWindow.base_ptr = (void *)(uintptr_t)a->base;
        v.accessPolicyWindow.num_bytes = (size_t)a->num_bytes;
        v.accessPolicyWindow.hitRatio = a->hit_ratio;
        v.accessPolicyWindow.hitProp = (CUaccessProperty)a->hit_prop;
        v.accessPolicyWindow.missProp = (CUaccessProperty)a->miss_prop;
        break;
    case CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY:
        v.syncPolicy = (CUsynchronizationPolicy)a->value;
        break;
    case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN:
        v.memSyncDomain = (CUlaunchMemSyncDomain)a->value;
        break;
    case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP:
        v.memSyncDomainMap.default_ = (unsigned char)a->value;
        v.memSyncDomainMap.remote = (unsigned char)a->value2;
        break;
    default:
        return cudaErrorInvalidValue;
    }
    return tdm_cuda_err(tdm_cu.cuStreamSetAttribute(tdm_cuda_stream(s), (CUstreamAttrID)a->id, &v),
                        "cuStreamSetAttribute");
}

int tdm_cuda_stream_get_attribute(tdm_backend *b, tdm_bstream *s, tdm_bstream_attr *a)
{
    CUstreamAttrValue v;
    int err = tdm_cuda_enter(b);

    if (err)
        return err;
    memset(&v, 0, sizeof(v));
    err = tdm_cuda_err(tdm_cu.cuStreamGetAttribute(tdm_cuda_stream(s), (CUstreamAttrID)a->id, &v),
                       "cuStreamGetAttribute");
    if (err)
        return err;
    switch (a->id) {
    case CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW:
        a->base = (uint64_t)(uintptr_t)v.accessPolicyWindow.base_ptr;
        a->num_bytes = v.accessPolicyWindow.num_bytes;
        a->hit_ratio = v.accessPolicyWindow.hitRatio;
        a->hit_prop = (int)v.accessPolicyWindow.hitProp;
        a->miss_prop = (int)v.accessPolicyWindow.missProp;
        break;
    case CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY:
        a->value = (int)v.syncPolicy;
        break;
    case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN:
        a->value = (int)v.memSyncDomain;
        break;
    case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP:
        a->value = v.memSyncDomainMap.default_;
        a->value2 = v.memSyncDomainMap.remote;
        break;
    default:
        return cudaErrorInvalidValue;
    }
    return 0;
}
