/* Handlers of the mipmapped array calls (issue 14): decode, hand to
 * session_layout_mipmap.c. */
#include "dispatch.h"

#include "session.h"
#include "tandem_rpc.h"

bool tdm_serve_MIPMAP_CREATE(void *ctx, void *args, void *res)
{
    tdm_mipmap_create_args *a = args;
    tdm_mipmap_res *r = res;
    const int bits[4] = { a->x, a->y, a->z, a->w };
    uint64_t h = 0;
    unsigned levels = 0;

    r->err = tdm_session_mipmap_create(ctx, bits, a->kind,
                                       (tdm_extent){ .width = a->width, .height = a->height, .depth = a->depth },
                                       a->flags, a->levels, &h, &levels);
    r->handle = h;
    r->levels = levels;
    return true;
}

bool tdm_serve_MIPMAP_DESTROY(void *ctx, void *args, void *res)
{
    *(int *)res = tdm_session_mipmap_destroy(ctx, *(tdm_handle *)args);
    return true;
}

bool tdm_serve_MIPMAP_LEVEL(void *ctx, void *args, void *res)
{
    tdm_mipmap_level_args *a = args;
    tdm_mipmap_level_res *r = res;
    tdm_extent e = { 0 };
    uint64_t h = 0;

    r->err = tdm_session_mipmap_level(ctx, a->mipmap, a->level, &h, &e);
    r->handle = h;
    r->ext = (tdm_extent3){ .width = e.width, .height = e.height, .depth = e.depth };
    return true;
}
