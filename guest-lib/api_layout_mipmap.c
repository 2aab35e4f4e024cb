/* Mipmapped arrays (docs/memory-layouts.md "Mipmapped arrays"):
 * cudaMallocMipmappedArray, cudaFreeMipmappedArray,
 * cudaGetMipmappedArrayLevel and the mipmapped array queries.
 *
 * A cudaMipmappedArray_t the program holds is the server's handle for it;
 * a level is an array of the session (the server's handle, the same each
 * time), recorded with the process's arrays (api_layout_array.c) so that
 * the copies and cudaArrayGetInfo know it, and forgotten when its
 * mipmapped array is freed. */
#include <pthread.h>

#include "api_layout.h"
#include "grow.h"

enum { MAX_LEVELS = 64 };

typedef struct known_mipmap {
    uint64_t handle;
    struct cudaChannelFormatDesc desc;
    unsigned flags, levels;
    uint64_t level_array[MAX_LEVELS];   /* handles of the levels the program got; 0: none yet */
} known_mipmap;

/* The process's mipmapped arrays: once per process, as the runtime has them. */
static pthread_mutex_t mipmaps_lock = PTHREAD_MUTEX_INITIALIZER;
static known_mipmap *mipmaps;
static size_t nmipmaps, mipmaps_cap;

static known_mipmap *find_locked(uint64_t handle)
{
    for (size_t i = 0; i < nmipmaps; i++)
        if (mipmaps[i].handle == handle)
            return &mipmaps[i];
    return NULL;
}

static bool lookup(cudaMipmappedArray_const_t m, known_mipmap *out)
{
    known_mipmap *k;

    if (!m)
        return false;
    pthread_mutex_lock(&mipmaps_lock);
    k = find_locked((uint64_t)(uintptr_t)m);
    if (k)
        *out = *k;
    pthread_mutex_unlock(&mipmaps_lock);
    return k != NULL;
}

cudaError_t cudaMallocMipmappedArray(cudaMipmappedArray_t *mipmappedArray, const struct cudaChannelFormatDesc *desc,
                                     struct cudaExtent extent, unsigned int numLevels, unsigned int flags)
{
    tdm_mipmap_create_args a;
    tdm_mipmap_res r = { 0 };
    known_mipmap k;
    cudaError_t err;

    if (!mipmappedArray || !desc)
        return tdm_ret(cudaErrorInvalidValue);
    a = (tdm_mipmap_create_args){ .x = desc->x, .y = desc->y, .z = desc->z, .w = desc->w, .kind = desc->f,
                                  .width = extent.width, .height = extent.height, .depth = extent.depth,
                                  .flags = flags, .levels = numLevels };
    err = tdm_call(TDM_MIPMAP_CREATE, &a, &r);
    if (!err)
        err = (cudaError_t)r.err;
    if (err)
        return tdm_ret(err);
    k = (known_mipmap){ .handle = r.handle, .desc = *desc, .flags = flags, .levels = r.levels };
    pthread_mutex_lock(&mipmaps_lock);
    if (tdm_grow(&mipmaps, &mipmaps_cap, nmipmaps + 1, sizeof(*mipmaps), 16) == 0)
        mipmaps[nmipmaps++] = k;
    else
        err = cudaErrorMemoryAllocation;
    pthread_mutex_unlock(&mipmaps_lock);
    if (err) {
        tdm_handle h = r.handle;
        tdm_call_err(TDM_MIPMAP_DESTROY, &h);
        return tdm_ret(err);
    }
    *mipmappedArray = (cudaMipmappedArray_t)(uintptr_t)r.handle;
    return cudaSuccess;
}

cudaError_t cudaFreeMipmappedArray(cudaMipmappedArray_t mipmappedArray)
{
    known_mipmap k;
    tdm_handle h;
    cudaError_t err;

    if (!mipmappedArray)
        return cudaSuccess;
    if (!lookup(mipmappedArray, &k))
        return tdm_ret(cudaErrorInvalidValue);
    h = k.handle;
    if ((err = tdm_call_err(TDM_MIPMAP_DESTROY, &h)) != cudaSuccess)
        return tdm_ret(err);
    pthread_mutex_lock(&mipmaps_lock);
    known_mipmap *m = find_locked(k.handle);
    if (m) {
        for (unsigned i = 0; i < m->levels && i < MAX_LEVELS; i++)
            if (m->level_array[i])
                tdm_layout_array_forget(m->level_array[i]);
        *m = mipmaps[--nmipmaps];
    }
    pthread_mutex_unlock(&mipmaps_lock);
    return cudaSuccess;
}

cudaError_t cudaGetMipmappedArrayLevel(cudaArray_t *levelArray, cudaMipmappedArray_const_t mipmappedArray,
                                       unsigned int level)
{
    tdm_mipmap_level_args a;
    tdm_mipmap_level_res r = { 0 };
    known_mipmap k;
    cudaError_t err;

    if (!levelArray)
        return tdm_ret(cudaErrorInvalidValue);
    if (!lookup(mipmappedArray, &k))
        return tdm_ret(cudaErrorInvalidResourceHandle);
    if (level >= k.levels)
        return tdm_ret(cudaErrorInvalidValue);
    a = (tdm_mipmap_level_args){ .mipmap = k.handle, .level = level };
    err = tdm_call(TDM_MIPMAP_LEVEL, &a, &r);
    if (!err)
        err = (cudaError_t)r.err;
    if (err)
        return tdm_ret(err);
    err = tdm_layout_array_remember(r.handle, &k.desc,
                                    (struct cudaExtent){ .width = r.ext.width, .height = r.ext.height,
                                                         .depth = r.ext.depth },
                                    k.flags);
    if (err)
        return tdm_ret(err);
    pthread_mutex_lock(&mipmaps_lock);
    known_mipmap *m = find_locked(k.handle);
    if (m)
        m->level_array[level] = r.handle;
    pthread_mutex_unlock(&mipmaps_lock);
    *levelArray = (cudaArray_t)(uintptr_t)r.handle;
    return cudaSuccess;
}

/* As for arrays (api_layout_array.c): sparse and deferred-mapping
 * mipmapped arrays are refused at creation, so every one a program holds
 * gets the driver's answer for the others, cudaErrorInvalidValue. */
cudaError_t cudaMipmappedArrayGetSparseProperties(struct cudaArraySparseProperties *sparseProperties,
                                                  cudaMipmappedArray_t mipmap)
{
    known_mipmap k;

    if (!sparseProperties)
        return tdm_ret(cudaErrorInvalidValue);
    if (!lookup(mipmap, &k))
        return tdm_ret(cudaErrorInvalidResourceHandle);
    return tdm_ret(cudaErrorInvalidValue);
}

cudaError_t cudaMipmappedArrayGetMemoryRequirements(struct cudaArrayMemoryRequirements *memoryRequirements,
                                                    cudaMipmappedArray_t mipmap, int device)
{
    known_mipmap k;
    cudaError_t err;

    if (!memoryRequirements)
        return tdm_ret(cudaErrorInvalidValue);
    if (!lookup(mipmap, &k))
        return tdm_ret(cudaErrorInvalidResourceHandle);
    if ((err = tdm_check_device(device)) != cudaSuccess)
        return tdm_ret(err);
    return tdm_ret(cudaErrorInvalidValue);
}
