/* Texture and surface objects on the GPU (docs/memory-layouts.md): the
 * runtime's descriptors translated to the driver's, the object value the
 * driver's own, so a kernel reads it as it would natively. */
#include "cuda_backend_internal.h"

#include <string.h>

#include <texture_types.h>

static int resource(const tdm_tex_resource *r, CUDA_RESOURCE_DESC *rd)
{
    CUarray_format f;
    int err;

    memset(rd, 0, sizeof(*rd));
    if (r->type == cudaResourceTypeArray) {
        rd->resType = CU_RESOURCE_TYPE_ARRAY;
        rd->res.array.hArray = (CUarray)r->array;
        return 0;
    }
    if (r->type == cudaResourceTypeMipmappedArray) {
        rd->resType = CU_RESOURCE_TYPE_MIPMAPPED_ARRAY;
        rd->res.mipmap.hMipmappedArray = (CUmipmappedArray)r->mipmap;
        return 0;
    }
    if ((err = tdm_cuda_array_format(r->kind, r->bits, &f)) != 0)
        return err;
    if (r->type == cudaResourceTypeLinear) {
        rd->resType = CU_RESOURCE_TYPE_LINEAR;
        rd->res.linear.devPtr = (CUdeviceptr)r->dev;
        rd->res.linear.format = f;
        rd->res.linear.numChannels = (unsigned)r->channels;
        rd->res.linear.sizeInBytes = r->size;
        return 0;
    }
    rd->resType = CU_RESOURCE_TYPE_PITCH2D;
    rd->res.pitch2D.devPtr = (CUdeviceptr)r->dev;
    rd->res.pitch2D.format = f;
    rd->res.pitch2D.numChannels = (unsigned)r->channels;
    rd->res.pitch2D.width = r->width;
    rd->res.pitch2D.height = r->height;
    rd->res.pitch2D.pitchInBytes = r->pitch;
    return 0;
}

/* As the runtime does: its enums have the driver's values, its booleans
 * become CU_TRSF_* flags. */
static void texture(const struct cudaTextureDesc *t, CUDA_TEXTURE_DESC *td)
{
    memset(td, 0, sizeof(*td));
    for (int i = 0; i < 3; i++)
        td->addressMode[i] = (CUaddress_mode)t->addressMode[i];
    td->filterMode = (CUfilter_mode)t->filterMode;
    td->flags = (t->readMode == cudaReadModeElementType ? CU_TRSF_READ_AS_INTEGER : 0) |
                (t->normalizedCoords ? CU_TRSF_NORMALIZED_COORDINATES : 0) | (t->sRGB ? CU_TRSF_SRGB : 0) |
                (t->disableTrilinearOptimization ? CU_TRSF_DISABLE_TRILINEAR_OPTIMIZATION : 0) |
                (t->seamlessCubemap ? CU_TRSF_SEAMLESS_CUBEMAP : 0);
    td->maxAnisotropy = t->maxAnisotropy;
    td->mipmapFilterMode = (CUfilter_mode)t->mipmapFilterMode;
    td->mipmapLevelBias = t->mipmapLevelBias;
    td->minMipmapLevelClamp = t->minMipmapLevelClamp;
    td->maxMipmapLevelClamp = t->maxMipmapLevelClamp;
    memcpy(td->borderColor, t->borderColor, sizeof(td->borderColor));
}

static void view_of(const struct cudaResourceViewDesc *v, CUDA_RESOURCE_VIEW_DESC *vd)
{
    memset(vd, 0, sizeof(*vd));
    vd->format = (CUresourceViewFormat)v->format;
    vd->width = v->width;
    vd->height = v->height;
    vd->depth = v->depth;
    vd->firstMipmapLevel = v->firstMipmapLevel;
    vd->lastMipmapLevel = v->lastMipmapLevel;
    vd->firstLayer = v->firstLayer;
    vd->lastLayer = v->lastLayer;
}

int tdm_cuda_tex_object_create(tdm_backend *b, const tdm_tex_resource *r, const struct cudaTextureDesc *tex,
                               const struct cudaResourceViewDesc *view, uint64_t *value)
{
    CUDA_RESOURCE_DESC rd;
    CUDA_TEXTURE_DESC td;
    CUDA_RESOURCE_VIEW_DESC vd;
    CUtexObject obj = 0;
    int err = tdm_cuda_enter(b);

    if (err || (err = resource(r, &rd)) != 0)
        return err;
    texture(tex, &td);
    if (view)
        view_of(view, &vd);
    err = tdm_cuda_err(tdm_cu.cuTexObjectCreate(&obj, &rd, &td, view ? &vd : NULL), "cuTexObjectCreate");
    if (!err)
        *value = obj;
    return err;
}

int tdm_cuda_tex_object_destroy(tdm_backend *b, uint64_t value)
{
    int err = tdm_cuda_enter(b);

    return err ? err : tdm_cuda_err(tdm_cu.cuTexObjectDestroy((CUtexObject)value), "cuTexObjectDestroy");
}

int tdm_cuda_surf_object_create(tdm_backend *b, const tdm_tex_resource *r, uint64_t *value)
{
    CUDA_RESOURCE_DESC rd;
    CUsurfObject obj = 0;
    int err = tdm_cuda_enter(b);

    if (err || (err = resource(r, &rd)) != 0)
        return err;
    err = tdm_cuda_err(tdm_cu.cuSurfObjectCreate(&obj, &rd), "cuSurfObjectCreate");
    if (!err)
        *value = obj;
    return err;
}

int tdm_cuda_surf_object_destroy(tdm_backend *b, uint64_t value)
{
    int err = tdm_cuda_enter(b);

    return err ? err : tdm_cuda_err(tdm_cu.cuSurfObjectDestroy((CUsurfObject)value), "cuSurfObjectDestroy");
}
