/* Mipmapped arrays on the GPU (docs/memory-layouts.md "Mipmapped
 * arrays"): the driver's own, a level the driver's CUarray for it. */
#include "cuda_backend_internal.h"

/* tdm_bmipmap is the driver's CUmipmappedArray, cast, as arrays are. */
int tdm_cuda_mipmap_create(tdm_backend *b, const tdm_array_desc *d, unsigned levels, tdm_bmipmap **out)
{
    CUDA_ARRAY3D_DESCRIPTOR desc;
    CUmipmappedArray m = NULL;
    int err = tdm_cuda_enter(b);

    if (err)
        return err;
    if ((err = tdm_cuda_array_desc(d, &desc)) != 0)
        return err;
    err = tdm_cuda_err(tdm_cu.cuMipmappedArrayCreate(&m, &desc, levels), "cuMipmappedArrayCreate");
    if (!err)
        *out = (tdm_bmipmap *)m;
    return err;
}

int tdm_cuda_mipmap_level(tdm_backend *b, tdm_bmipmap *m, unsigned level, tdm_barray **out)
{
    CUarray a = NULL;
    int err = tdm_cuda_enter(b);

    if (err)
        return err;
    err = tdm_cuda_err(tdm_cu.cuMipmappedArrayGetLevel(&a, (CUmipmappedArray)m, level), "cuMipmappedArrayGetLevel");
    if (!err)
        *out = (tdm_barray *)a;
    return err;
}

int tdm_cuda_mipmap_destroy(tdm_backend *b, tdm_bmipmap *m)
{
    int err = tdm_cuda_enter(b);

    return err ? err : tdm_cuda_err(tdm_cu.cuMipmappedArrayDestroy((CUmipmappedArray)m), "cuMipmappedArrayDestroy");
}
