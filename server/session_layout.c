/* Pitched, 2D and 3D memory and CUDA arrays of a session
 * (docs/memory-layouts.md): every box a guest names must lie, first byte to
 * last, inside one of the session's ranges (or arrays), with rows that do
 * not overlap, before the backend sees it.  Guests are untrusted: pitches
 * and extents are checked for overflow, arrays are counted and bounded. */
#include "session.h"

#include <stdlib.h>

#include <string.h>

#include <driver_types.h>
#include <texture_types.h>

#include "grow.h"
#include "log.h"

enum { TAG_ARRAY = 0x41 };

typedef struct layout_object {
    uint64_t value;            /* the backend's (the driver's) */
    bool surface;
} layout_object;

/* What a session holds of this area, made on first use. */
struct tdm_session_layout {
    tdm_handle_table arrays;   /* of layout_array */
    layout_object *objects;    /* texture and surface objects */
    size_t nobjects, objects_cap;
};

typedef struct layout_array {
    tdm_barray *ba;
    uint64_t row_bytes, rows, depth;   /* rows and depth at least 1 */
    uint64_t bytes;                    /* counted in the session's quota */
    bool level;                        /* a mipmapped array's level: its owner frees it */
} layout_array;

static struct tdm_session_layout *layout_of(tdm_session *s)
{
    if (!s->layout && (s->layout = calloc(1, sizeof(*s->layout))) != NULL)
        tdm_handles_init(&s->layout->arrays, TAG_ARRAY);
    return s->layout;
}

static layout_array *array_of(tdm_session *s, uint64_t handle)
{
    return s->layout ? tdm_handles_get(&s->layout->arrays, handle) : NULL;
}

static const tdm_backend_ops *ops(tdm_session *s)
{
    return s->srv->ops;
}

static bool empty(tdm_extent ext)
{
    return ext.width == 0 || ext.height == 0 || ext.depth == 0;
}

/* The bytes from the box's first to one past its last (ext not empty):
 * ((depth - 1) * rows + height - 1) * pitch + width. */
static int box_span(tdm_session *s, tdm_session_box b, tdm_extent ext, uint64_t *span)
{
    uint64_t last_row, off;

    if ((ext.height > 1 || ext.depth > 1) && b.pitch < ext.width) {
        tdm_log_session(s->id, "pitch %llu is smaller than the width %llu", (unsigned long long)b.pitch,
                        (unsigned long long)ext.width);
        return cudaErrorInvalidPitchValue;
    }
    if (ext.depth > 1 && b.rows < ext.height) {
        tdm_log_session(s->id, "a slice of %llu rows cannot hold a height of %llu", (unsigned long long)b.rows,
                        (unsigned long long)ext.height);
        return cudaErrorInvalidValue;
    }
    if (__builtin_mul_overflow(ext.depth - 1, b.rows, &last_row) ||
        __builtin_add_overflow(last_row, ext.height - 1, &last_row) ||
        __builtin_mul_overflow(last_row, b.pitch, &off) || __builtin_add_overflow(off, ext.width, span)) {
        tdm_log_session(s->id, "a 3D extent of %llu x %llu x %llu with pitch %llu overflows",
                        (unsigned long long)ext.width, (unsigned long long)ext.height,
                        (unsigned long long)ext.depth, (unsigned long long)b.pitch);
        return cudaErrorInvalidValue;
    }
    return 0;
}

/* A box in an array: inside its rows, slices and row bytes. */
static int array_box(tdm_session *s, const char *what, tdm_session_box b, tdm_extent ext, tdm_box *out)
{
    layout_array *a = array_of(s, b.array);
    uint64_t xe, ye, ze;

    if (!a) {
        tdm_log_session(s->id, "%s: unknown CUDA array %#llx", what, (unsigned long long)b.array);
        return cudaErrorInvalidResourceHandle;
    }
    if (__builtin_add_overflow(b.addr, ext.width, &xe) || __builtin_add_overflow(b.y, ext.height, &ye) ||
        __builtin_add_overflow(b.z, ext.depth, &ze) || xe > a->row_bytes || ye > a->rows || ze > a->depth) {
        tdm_log_session(s->id, "%s: %llu x %llu x %llu at (%llu, %llu, %llu) is outside a CUDA array of "
                        "%llu bytes x %llu x %llu", what, (unsigned long long)ext.width,
                        (unsigned long long)ext.height, (unsigned long long)ext.depth, (unsigned long long)b.addr,
                        (unsigned long long)b.y, (unsigned long long)b.z, (unsigned long long)a->row_bytes,
                        (unsigned long long)a->rows, (unsigned long long)a->depth);
        return cudaErrorInvalidValue;
    }
    *out = (tdm_box){ .array = a->ba, .x = b.addr, .y = b.y, .z = b.z };
    return 0;
}

/* The box's device side, validated: its device address in *out, and the
 * range it lies in (NULL for an array). */
static int device_box(tdm_session *s, const char *what, tdm_session_box b, tdm_extent ext, tdm_box *out,
                      const tdm_range **range)
{
    uint64_t span;
    int err;

    if (range)
        *range = NULL;
    if (b.array)
        return array_box(s, what, b, ext, out);
    /* The address is the box's first byte: no offsets on top of it.  (Left
     * unset, the cuda backend read the caller's stack as x/y/z and the copy
     * faulted on the H100, losing the context; the sim ignores them.) */
    *out = (tdm_box){ .pitch = b.pitch, .rows = b.rows };
    err = box_span(s, b, ext, &span);
    if (!err)
        err = tdm_session_resolve_range(s, what, b.addr, span, &out->dev, range);
    return err;
}

static bool packed_size(tdm_extent ext, uint64_t *n)
{
    uint64_t plane;

    return !__builtin_mul_overflow(ext.width, ext.height, &plane) && !__builtin_mul_overflow(plane, ext.depth, n);
}

int tdm_session_pitch_alignment(tdm_session *s, uint64_t *align)
{
    return ops(s)->pitch_alignment(s->srv->be, align);
}

int tdm_session_memcpy3d_htod(tdm_session *s, tdm_session_box dst, tdm_extent ext, const void *src, uint64_t n,
                              uint64_t stream)
{
    const tdm_range *r;
    tdm_bstream *bs;
    tdm_box d, h = { .host = (void *)src, .pitch = ext.width, .rows = ext.height };
    uint64_t want;
    int err;

    if (!packed_size(ext, &want) || want != n) {
        tdm_log_session(s->id, "a 3D upload carries %llu bytes for an extent of %llu x %llu x %llu",
                        (unsigned long long)n, (unsigned long long)ext.width, (unsigned long long)ext.height,
                        (unsigned long long)ext.depth);
        return cudaErrorInvalidValue;
    }
    if (empty(ext))
        return 0;
    if ((err = device_box(s, "3D copy destination", dst, ext, &d, &r)) != 0 ||
        (err = tdm_session_stream_work(s, stream, r, &bs)) != 0)
        return err;
    return ops(s)->copy_3d(s->srv->be, &d, &h, ext, bs);
}

int tdm_session_memcpy3d_dtoh(tdm_session *s, void *dst, tdm_session_box src, tdm_extent ext, uint64_t stream)
{
    tdm_bstream *bs;
    tdm_box d = { .host = dst, .pitch = ext.width, .rows = ext.height }, sb;
    int err;

    if (empty(ext))
        return tdm_session_sync_result(s, 0);
    if ((err = device_box(s, "3D copy source", src, ext, &sb, NULL)) != 0 ||
        (err = tdm_session_stream_work(s, stream, NULL, &bs)) != 0)
        return err;
    return tdm_session_sync_result(s, ops(s)->copy_3d(s->srv->be, &d, &sb, ext, bs));
}

int tdm_session_memcpy3d_dtod(tdm_session *s, tdm_session_box dst, tdm_session_box src, tdm_extent ext,
                              uint64_t stream)
{
    const tdm_range *r;
    tdm_bstream *bs;
    tdm_box d, sb;
    int err;

    if (empty(ext))
        return 0;
    if ((err = device_box(s, "3D copy destination", dst, ext, &d, &r)) != 0 ||
        (err = device_box(s, "3D copy source", src, ext, &sb, NULL)) != 0 ||
        (err = tdm_session_stream_work(s, stream, r, &bs)) != 0)
        return err;
    return ops(s)->copy_3d(s->srv->be, &d, &sb, ext, bs);
}

int tdm_session_memset3d(tdm_session *s, tdm_session_box dst, uint8_t value, tdm_extent ext, uint64_t stream)
{
    const tdm_range *r;
    tdm_bstream *bs;
    tdm_box d;
    int err;

    if (empty(ext))
        return 0;
    if (dst.array) {
        tdm_log_session(s->id, "a memset of a CUDA array");
        return cudaErrorInvalidValue;
    }
    if ((err = device_box(s, "3D memset", dst, ext, &d, &r)) != 0 ||
        (err = tdm_session_stream_work(s, stream, r, &bs)) != 0)
        return err;
    return ops(s)->memset_3d(s->srv->be, &d, value, ext, bs);
}

/* ---- CUDA arrays ---- */

/* cudaChannelFormatDesc's rules for an array: 1, 2 or 4 channels of equal
 * width from x on, 8, 16 or 32 bits (floats 16 or 32), signed, unsigned or
 * float; what the driver's CUarray_format can express. */
int tdm_session_channel_format(const int bits[4], int kind, int *channels)
{
    int n = 0;

    while (n < 4 && bits[n] != 0)
        n++;
    for (int i = 0; i < 4; i++)
        if ((i < n && bits[i] != bits[0]) || (i >= n && bits[i] != 0))
            return cudaErrorInvalidChannelDescriptor;
    if (n == 0 || n == 3)
        return cudaErrorInvalidChannelDescriptor;
    if (bits[0] != 8 && bits[0] != 16 && bits[0] != 32)
        return cudaErrorInvalidChannelDescriptor;
    if (kind != cudaChannelFormatKindSigned && kind != cudaChannelFormatKindUnsigned &&
        (kind != cudaChannelFormatKindFloat || bits[0] == 8))
        return cudaErrorInvalidChannelDescriptor;
    *channels = n;
    return 0;
}

int tdm_session_array_create(tdm_session *s, const int bits[4], int kind, tdm_extent ext, unsigned flags,
                             uint64_t *out)
{
    const unsigned known = cudaArrayLayered | cudaArraySurfaceLoadStore | cudaArrayCubemap | cudaArrayTextureGather;
    uint64_t quota = s->bounds.mem_quota;
    tdm_array_desc d = { .kind = kind, .width = ext.width, .height = ext.height, .depth = ext.depth,
                         .flags = flags };
    struct tdm_session_layout *l = layout_of(s);
    layout_array *a;
    int err;

    *out = 0;
    if (!l)
        return cudaErrorMemoryAllocation;
    if ((err = tdm_session_channel_format(bits, kind, &d.channels)) != 0)
        return err;
    d.bits = bits[0];
    if (flags & ~known) {
        tdm_log_session(s->id, "CUDA array flags %#x: sparse and deferred-mapping arrays are not remoted", flags);
        return cudaErrorNotSupported;
    }
    if (ext.width == 0 || (ext.height == 0 && ext.depth != 0 && !(flags & cudaArrayLayered)))
        return cudaErrorInvalidValue;
    if (l->arrays.live + tdm_session_mipmap_count(s) >= TDM_SESSION_MAX_ARRAYS) {
        tdm_log_session(s->id, "a session may hold %d CUDA arrays and mipmapped arrays", TDM_SESSION_MAX_ARRAYS);
        return cudaErrorMemoryAllocation;
    }
    if (!(a = calloc(1, sizeof(*a))))
        return cudaErrorMemoryAllocation;
    a->rows = ext.height ? ext.height : 1;
    a->depth = ext.depth ? ext.depth : 1;
    if (__builtin_mul_overflow(ext.width, (uint64_t)(d.bits / 8 * d.channels), &a->row_bytes) ||
        __builtin_mul_overflow(a->row_bytes, a->rows, &a->bytes) ||
        __builtin_mul_overflow(a->bytes, a->depth, &a->bytes) ||
        (quota && (a->bytes > quota || s->mem_used > quota - a->bytes))) {
        tdm_log_session(s->id, "a CUDA array of %llu x %llu x %llu elements exceeds the session's memory",
                        (unsigned long long)ext.width, (unsigned long long)ext.height,
                        (unsigned long long)ext.depth);
        free(a);
        return cudaErrorMemoryAllocation;
    }
    if ((err = ops(s)->array_create(s->srv->be, &d, &a->ba)) != 0) {
        free(a);
        return err;
    }
    if (!(*out = tdm_handles_add(&l->arrays, a))) {
        ops(s)->array_destroy(s->srv->be, a->ba);
        free(a);
        return cudaErrorMemoryAllocation;
    }
    /* ---- tenants (issue 16): within its tenant's memory ---- */
    if ((err = tdm_session_mem_take(s, a->bytes, "cudaMallocArray")) != 0) {
        tdm_handles_remove(&l->arrays, *out);
        *out = 0;
        ops(s)->array_destroy(s->srv->be, a->ba);
        free(a);
        return err;
    }
    return 0;
}

static void array_free(tdm_session *s, layout_array *a)
{
    if (!a->level)
        ops(s)->array_destroy(s->srv->be, a->ba);
    tdm_session_mem_give(s, a->bytes);
    free(a);
}

int tdm_session_array_destroy(tdm_session *s, uint64_t array)
{
    layout_array *a = array_of(s, array);

    if (!a)
        return cudaErrorInvalidValue;   /* what cudaFreeArray answers for an array it does not know */
    if (a->level) {
        tdm_log_session(s->id, "cudaFreeArray of a mipmapped array's level (the mipmapped array owns it)");
        return cudaErrorInvalidValue;
    }
    /* cudaFreeArray waits for the work that may use the array; an error of
     * that work stays deferred for the next synchronizing call. */
    (void)tdm_session_quiesce(s);
    array_free(s, tdm_handles_remove(&s->layout->arrays, array));
    return 0;
}

/* ---- texture and surface objects ---- */

static int object_destroy(tdm_session *s, const layout_object *o)
{
    return o->surface ? ops(s)->surf_object_destroy(s->srv->be, o->value)
                      : ops(s)->tex_object_destroy(s->srv->be, o->value);
}

/* The resource an object reads, from the guest's cudaResourceDesc: an
 * array of the session, or memory inside one of its ranges. */
static int object_resource(tdm_session *s, const struct cudaResourceDesc *rd, bool surface, tdm_tex_resource *r)
{
    uint64_t elem, row, span;
    int err;

    memset(r, 0, sizeof(*r));
    r->type = rd->resType;
    if (rd->flags != 0)
        return cudaErrorInvalidValue;
    if (rd->resType == cudaResourceTypeArray) {
        layout_array *a = array_of(s, (uint64_t)(uintptr_t)rd->res.array.array);
        if (!a) {
            tdm_log_session(s->id, "a texture or surface object of an unknown CUDA array");
            return cudaErrorInvalidResourceHandle;
        }
        r->array = a->ba;
        return 0;
    }
    if (surface)   /* surfaces are of arrays only, as the driver's */
        return cudaErrorInvalidValue;
    if (rd->resType == cudaResourceTypeMipmappedArray) {
        r->mipmap = tdm_session_mipmap_backend(s, (uint64_t)(uintptr_t)rd->res.mipmap.mipmap);
        if (!r->mipmap) {
            tdm_log_session(s->id, "a texture object of an unknown mipmapped array");
            return cudaErrorInvalidResourceHandle;
        }
        return 0;
    }
    if (rd->resType != cudaResourceTypeLinear && rd->resType != cudaResourceTypePitch2D)
        return cudaErrorInvalidValue;
    const struct cudaChannelFormatDesc *d =
        rd->resType == cudaResourceTypeLinear ? &rd->res.linear.desc : &rd->res.pitch2D.desc;
    const int cb[4] = { d->x, d->y, d->z, d->w };
    if ((err = tdm_session_channel_format(cb, d->f, &r->channels)) != 0)
        return err;
    r->kind = d->f;
    r->bits = d->x;
    elem = (uint64_t)(r->bits / 8 * r->channels);
    if (rd->resType == cudaResourceTypeLinear) {
        r->size = rd->res.linear.sizeInBytes;
        return r->size ? tdm_session_resolve_range(s, "a linear texture", (uint64_t)(uintptr_t)rd->res.linear.devPtr,
                                                   r->size, &r->dev, NULL)
                       : cudaErrorInvalidValue;
    }
    r->width = rd->res.pitch2D.width;
    r->height = rd->res.pitch2D.height;
    r->pitch = rd->res.pitch2D.pitchInBytes;
    if (r->width == 0 || r->height == 0 || __builtin_mul_overflow(r->width, elem, &row) || row > r->pitch ||
        __builtin_mul_overflow(r->height - 1, r->pitch, &span) || __builtin_add_overflow(span, row, &span))
        return cudaErrorInvalidValue;
    return tdm_session_resolve_range(s, "a pitch2D texture", (uint64_t)(uintptr_t)rd->res.pitch2D.devPtr, span,
                                     &r->dev, NULL);
}

int tdm_session_object_create(tdm_session *s, bool surface, const void *res, size_t res_len, const void *tex,
                              size_t tex_len, const void *view, size_t view_len, uint64_t *value)
{
    struct tdm_session_layout *l = layout_of(s);
    struct cudaResourceDesc rd;
    struct cudaTextureDesc td;
    struct cudaResourceViewDesc vd;
    tdm_tex_resource r;
    uint64_t v = 0;
    int err;

    *value = 0;
    if (!l)
        return cudaErrorMemoryAllocation;
    /* The runtime's structs, exactly: a surface has no texture or view. */
    if (res_len != sizeof(rd) || (surface ? tex_len != 0 || view_len != 0 : tex_len != sizeof(td)) ||
        (view_len != 0 && view_len != sizeof(vd))) {
        tdm_log_session(s->id, "a %s object's descriptors have the wrong sizes", surface ? "surface" : "texture");
        return cudaErrorInvalidValue;
    }
    if (l->nobjects >= TDM_SESSION_MAX_OBJECTS) {
        tdm_log_session(s->id, "a session may hold %d texture and surface objects", TDM_SESSION_MAX_OBJECTS);
        return cudaErrorMemoryAllocation;
    }
    memcpy(&rd, res, sizeof(rd));
    if ((err = object_resource(s, &rd, surface, &r)) != 0)
        return err;
    if (tdm_grow(&l->objects, &l->objects_cap, l->nobjects + 1, sizeof(*l->objects), 16) != 0)
        return cudaErrorMemoryAllocation;
    if (surface) {
        err = ops(s)->surf_object_create(s->srv->be, &r, &v);
    } else {
        memcpy(&td, tex, sizeof(td));
        if (view_len)
            memcpy(&vd, view, sizeof(vd));
        err = ops(s)->tex_object_create(s->srv->be, &r, &td, view_len ? &vd : NULL, &v);
    }
    if (err)
        return err;
    l->objects[l->nobjects++] = (layout_object){ .value = v, .surface = surface };
    *value = v;
    return 0;
}

int tdm_session_object_destroy(tdm_session *s, bool surface, uint64_t value)
{
    struct tdm_session_layout *l = s->layout;

    for (size_t i = 0; l && i < l->nobjects; i++) {
        if (l->objects[i].value != value || l->objects[i].surface != surface)
            continue;
        int err = object_destroy(s, &l->objects[i]);
        l->objects[i] = l->objects[--l->nobjects];
        return err;
    }
    tdm_log_session(s->id, "destroying an unknown %s object %#llx", surface ? "surface" : "texture",
                    (unsigned long long)value);
    return cudaErrorInvalidValue;
}

void tdm_session_layout_release(tdm_session *s)
{
    void *obj;

    if (!s->layout) {
        tdm_session_mipmap_release(s);   /* ---- mipmapped arrays (issue 14): a session may hold only them ---- */
        return;
    }
    /* Objects first: they read arrays. */
    for (size_t i = 0; i < s->layout->nobjects; i++)
        object_destroy(s, &s->layout->objects[i]);
    free(s->layout->objects);
    tdm_session_mipmap_release(s);   /* ---- mipmapped arrays (issue 14): forgets its levels ---- */
    while ((obj = tdm_handles_pop(&s->layout->arrays, NULL)))
        array_free(s, obj);
    tdm_handles_release(&s->layout->arrays);
    free(s->layout);
    s->layout = NULL;
}

/* ---- mipmapped arrays (issue 14): what session_layout_mipmap.c shares ---- */

size_t tdm_session_array_count(tdm_session *s)
{
    return s->layout ? s->layout->arrays.live : 0;
}

int tdm_session_array_adopt(tdm_session *s, tdm_barray *ba, const tdm_array_desc *d, uint64_t *out)
{
    struct tdm_session_layout *l = layout_of(s);
    layout_array *a;

    *out = 0;
    if (!l || !(a = calloc(1, sizeof(*a))))
        return cudaErrorMemoryAllocation;
    /* Its bytes are the mipmapped array's, counted once there. */
    *a = (layout_array){ .ba = ba, .row_bytes = d->width * (uint64_t)(d->bits / 8 * d->channels),
                         .rows = d->height ? d->height : 1, .depth = d->depth ? d->depth : 1, .level = true };
    if (!(*out = tdm_handles_add(&l->arrays, a))) {
        free(a);
        return cudaErrorMemoryAllocation;
    }
    return 0;
}

void tdm_session_array_disown(tdm_session *s, uint64_t handle)
{
    layout_array *a = array_of(s, handle);

    if (a && a->level)
        free(tdm_handles_remove(&s->layout->arrays, handle));
}
