/* Handlers of the layout calls (pitched, 2D and 3D memory; issue 14):
 * decode, hand to session_layout.c. */
#include "dispatch.h"


#include <stdlib.h>

#include <driver_types.h>

#include "session.h"
#include "tandem_rpc.h"

static tdm_session_box box(const tdm_pitched *p)
{
    return (tdm_session_box){ .addr = p->addr, .pitch = p->pitch, .rows = p->rows, .array = p->array, .y = p->y,
                              .z = p->z };
}

static tdm_extent extent(const tdm_extent3 *e)
{
    return (tdm_extent){ .width = e->width, .height = e->height, .depth = e->depth };
}

bool tdm_serve_PITCH_ALIGNMENT(void *ctx, void *args, void *res)
{
    tdm_pitch_res *r = res;
    uint64_t align = 0;

    (void)args;
    r->err = tdm_session_pitch_alignment(ctx, &align);
    r->align = align;
    return true;
}

bool tdm_serve_MEMCPY_3D_DTOH(void *ctx, void *args, void *res)
{
    tdm_memcpy3d_dtoh_args *a = args;
    tdm_memcpy_dtoh_res *r = res;
    tdm_extent ext = extent(&a->ext);
    uint64_t n;

    /* The reply carries the box packed: at most one chunk. */
    if (__builtin_mul_overflow(ext.width, ext.height, &n) || __builtin_mul_overflow(n, ext.depth, &n) ||
        n > TDM_MAX_CHUNK) {
        r->err = cudaErrorInvalidValue;
        return true;
    }
    r->data.data_val = malloc(n ? n : 1);
    if (!r->data.data_val) {
        r->err = cudaErrorMemoryAllocation;
        return true;
    }
    r->err = tdm_session_memcpy3d_dtoh(ctx, r->data.data_val, box(&a->src), ext, a->stream);
    r->data.data_len = r->err ? 0 : (u_int)n;
    return true;
}

bool tdm_serve_ARRAY_CREATE(void *ctx, void *args, void *res)
{
    tdm_array_create_args *a = args;
    tdm_handle_res *r = res;
    const int bits[4] = { a->x, a->y, a->z, a->w };
    uint64_t h = 0;

    r->err = tdm_session_array_create(ctx, bits, a->kind,
                                      (tdm_extent){ .width = a->width, .height = a->height, .depth = a->depth },
                                      a->flags, &h);
    r->handle = h;
    return true;
}

bool tdm_serve_ARRAY_DESTROY(void *ctx, void *args, void *res)
{
    *(int *)res = tdm_session_array_destroy(ctx, *(tdm_handle *)args);
    return true;
}

static void object_create(void *ctx, bool surface, const tdm_object_create_args *a, tdm_object_res *r)
{
    uint64_t v = 0;

    r->err = tdm_session_object_create(ctx, surface, a->res.res_val, a->res.res_len, a->tex.tex_val,
                                       a->tex.tex_len, a->view.view_val, a->view.view_len, &v);
    r->value = v;
}

bool tdm_serve_TEX_OBJECT_CREATE(void *ctx, void *args, void *res)
{
    object_create(ctx, false, args, res);
    return true;
}

bool tdm_serve_TEX_OBJECT_DESTROY(void *ctx, void *args, void *res)
{
    *(int *)res = tdm_session_object_destroy(ctx, false, *(uint64_t *)args);
    return true;
}

bool tdm_serve_SURF_OBJECT_CREATE(void *ctx, void *args, void *res)
{
    object_create(ctx, true, args, res);
    return true;
}

bool tdm_serve_SURF_OBJECT_DESTROY(void *ctx, void *args, void *res)
{
    *(int *)res = tdm_session_object_destroy(ctx, true, *(uint64_t *)args);
    return true;
}

/* ---- one-way ---- */

bool tdm_serve_MEMCPY_3D_HTOD(void *ctx, void *args, void *res)
{
    tdm_memcpy3d_htod_args *a = args;

    (void)res;
    tdm_session_defer(ctx, tdm_session_memcpy3d_htod(ctx, box(&a->dst), extent(&a->ext), a->data.data_val,
                                                     a->data.data_len, a->stream));
    return true;
}

bool tdm_serve_MEMCPY_3D_DTOD(void *ctx, void *args, void *res)
{
    tdm_memcpy3d_dtod_args *a = args;

    (void)res;
    tdm_session_defer(ctx, tdm_session_memcpy3d_dtod(ctx, box(&a->dst), box(&a->src), extent(&a->ext), a->stream));
    return true;
}

bool tdm_serve_MEMSET_3D(void *ctx, void *args, void *res)
{
    tdm_memset3d_args *a = args;

    (void)res;
    tdm_session_defer(ctx, tdm_session_memset3d(ctx, box(&a->dst), (uint8_t)a->value, extent(&a->ext), a->stream));
    return true;
}
