/* Texture and surface objects (docs/memory-layouts.md).  The object value a
 * program gets is the driver's, from the server, so kernels read it as they
 * would natively.  The process keeps the descriptors each object was made
 * with and answers the cudaGet*Object*Desc queries from them, as the
 * runtime does. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "api_layout.h"
#include "grow.h"

typedef struct known_object {
    uint64_t value;
    bool surface;
    struct cudaResourceDesc res;
    struct cudaTextureDesc tex;
    struct cudaResourceViewDesc view;   /* zero when none was given */
} known_object;

/* The process's objects: once per process, as the runtime has them. */
static pthread_mutex_t objects_lock = PTHREAD_MUTEX_INITIALIZER;
static known_object *objects;
static size_t nobjects, objects_cap;

static bool lookup(uint64_t value, bool surface, known_object *out)
{
    bool found = false;

    pthread_mutex_lock(&objects_lock);
    for (size_t i = 0; i < nobjects && !found; i++)
        if (objects[i].value == value && objects[i].surface == surface) {
            *out = objects[i];
            found = true;
        }
    pthread_mutex_unlock(&objects_lock);
    return found;
}

static void forget(uint64_t value, bool surface)
{
    pthread_mutex_lock(&objects_lock);
    for (size_t i = 0; i < nobjects; i++)
        if (objects[i].value == value && objects[i].surface == surface) {
            objects[i] = objects[--nobjects];
            break;
        }
    pthread_mutex_unlock(&objects_lock);
}

static cudaError_t create(bool surface, const struct cudaResourceDesc *res, const struct cudaTextureDesc *tex,
                          const struct cudaResourceViewDesc *view, uint64_t *value)
{
    tdm_object_create_args a;
    tdm_object_res r = { 0 };
    known_object k = { .surface = surface, .res = *res };
    cudaError_t err;

    memset(&a, 0, sizeof(a));
    a.res.res_val = (char *)res;
    a.res.res_len = sizeof(*res);
    if (tex) {
        k.tex = *tex;
        a.tex.tex_val = (char *)tex;
        a.tex.tex_len = sizeof(*tex);
    }
    if (view) {
        k.view = *view;
        a.view.view_val = (char *)view;
        a.view.view_len = sizeof(*view);
    }
    err = tdm_call(surface ? TDM_SURF_OBJECT_CREATE : TDM_TEX_OBJECT_CREATE, &a, &r);
    if (!err)
        err = (cudaError_t)r.err;
    if (err)
        return err;
    k.value = r.value;
    pthread_mutex_lock(&objects_lock);
    err = tdm_grow(&objects, &objects_cap, nobjects + 1, sizeof(*objects), 16) == 0 ? cudaSuccess
                                                                                      : cudaErrorMemoryAllocation;
    if (!err)
        objects[nobjects++] = k;
    pthread_mutex_unlock(&objects_lock);
    if (err) {
        tdm_u64 v = r.value;
        tdm_call_err(surface ? TDM_SURF_OBJECT_DESTROY : TDM_TEX_OBJECT_DESTROY, &v);
        return err;
    }
    *value = r.value;
    return cudaSuccess;
}

static cudaError_t destroy(bool surface, uint64_t value)
{
    tdm_u64 v = value;
    cudaError_t err;

    if (value == 0)
        return cudaSuccess;   /* as the runtime: destroying object 0 does nothing */
    err = tdm_call_err(surface ? TDM_SURF_OBJECT_DESTROY : TDM_TEX_OBJECT_DESTROY, &v);
    if (!err)
        forget(value, surface);
    return err;
}

cudaError_t cudaCreateTextureObject(cudaTextureObject_t *pTexObject, const struct cudaResourceDesc *pResDesc,
                                    const struct cudaTextureDesc *pTexDesc,
                                    const struct cudaResourceViewDesc *pResViewDesc)
{
    uint64_t v;
    cudaError_t err;

    if (!pTexObject || !pResDesc || !pTexDesc)
        return tdm_ret(cudaErrorInvalidValue);
    if ((err = create(false, pResDesc, pTexDesc, pResViewDesc, &v)) != cudaSuccess)
        return tdm_ret(err);
    *pTexObject = v;
    return cudaSuccess;
}

cudaError_t cudaDestroyTextureObject(cudaTextureObject_t texObject)
{
    return tdm_ret(destroy(false, texObject));
}

cudaError_t cudaGetTextureObjectResourceDesc(struct cudaResourceDesc *pResDesc, cudaTextureObject_t texObject)
{
    known_object k;

    if (!pResDesc)
        return tdm_ret(cudaErrorInvalidValue);
    if (!lookup(texObject, false, &k))
        return tdm_ret(cudaErrorInvalidValue);
    *pResDesc = k.res;
    return cudaSuccess;
}

cudaError_t cudaGetTextureObjectTextureDesc(struct cudaTextureDesc *pTexDesc, cudaTextureObject_t texObject)
{
    known_object k;

    if (!pTexDesc)
        return tdm_ret(cudaErrorInvalidValue);
    if (!lookup(texObject, false, &k))
        return tdm_ret(cudaErrorInvalidValue);
    *pTexDesc = k.tex;
    return cudaSuccess;
}

cudaError_t cudaGetTextureObjectResourceViewDesc(struct cudaResourceViewDesc *pResViewDesc,
                                                 cudaTextureObject_t texObject)
{
    known_object k;

    if (!pResViewDesc)
        return tdm_ret(cudaErrorInvalidValue);
    if (!lookup(texObject, false, &k))
        return tdm_ret(cudaErrorInvalidValue);
    *pResViewDesc = k.view;
    return cudaSuccess;
}

cudaError_t cudaCreateSurfaceObject(cudaSurfaceObject_t *pSurfObject, const struct cudaResourceDesc *pResDesc)
{
    uint64_t v;
    cudaError_t err;

    if (!pSurfObject || !pResDesc)
        return tdm_ret(cudaErrorInvalidValue);
    if ((err = create(true, pResDesc, NULL, NULL, &v)) != cudaSuccess)
        return tdm_ret(err);
    *pSurfObject = v;
    return cudaSuccess;
}

cudaError_t cudaDestroySurfaceObject(cudaSurfaceObject_t surfObject)
{
    return tdm_ret(destroy(true, surfObject));
}

cudaError_t cudaGetSurfaceObjectResourceDesc(struct cudaResourceDesc *pResDesc, cudaSurfaceObject_t surfObject)
{
    known_object k;

    if (!pResDesc)
        return tdm_ret(cudaErrorInvalidValue);
    if (!lookup(surfObject, true, &k))
        return tdm_ret(cudaErrorInvalidValue);
    *pResDesc = k.res;
    return cudaSuccess;
}
