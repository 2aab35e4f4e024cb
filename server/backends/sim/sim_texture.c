/* Texture and surface objects of the simulated GPU: each is a record of
 * what it reads and how (no kernel twin samples textures yet); its value is
 * the record's address, which the session layer only ever hands back for
 * objects of its own. */
#include "sim_internal.h"

#include <stdlib.h>
#include <string.h>

#include <texture_types.h>

typedef struct sim_object {
    tdm_tex_resource r;
    struct cudaTextureDesc tex;    /* zero for a surface */
    bool surface;
} sim_object;

static int create(const tdm_tex_resource *r, const struct cudaTextureDesc *tex, uint64_t *value)
{
    sim_object *o = calloc(1, sizeof(*o));

    if (!o)
        return cudaErrorMemoryAllocation;
    o->r = *r;
    if (tex)
        o->tex = *tex;
    o->surface = tex == NULL;
    *value = (uint64_t)(uintptr_t)o;
    return 0;
}

int sim_tex_object_create(tdm_backend *b, const tdm_tex_resource *r, const struct cudaTextureDesc *tex,
                          const struct cudaResourceViewDesc *view, uint64_t *value)
{
    (void)b;
    (void)view;
    return create(r, tex, value);
}

int sim_tex_object_destroy(tdm_backend *b, uint64_t value)
{
    (void)b;
    free((sim_object *)(uintptr_t)value);
    return 0;
}

int sim_surf_object_create(tdm_backend *b, const tdm_tex_resource *r, uint64_t *value)
{
    (void)b;
    return create(r, NULL, value);
}

int sim_surf_object_destroy(tdm_backend *b, uint64_t value)
{
    (void)b;
    free((sim_object *)(uintptr_t)value);
    return 0;
}
