/* Pitched, 2D and 3D memory of a session (docs/memory-layouts.md): every
 * box a guest names must lie, first byte to last, inside one of the
 * session's ranges, with rows that do not overlap, before the backend sees
 * it.  Guests are untrusted: pitches and extents are checked for overflow. */
#include "session.h"

#include <driver_types.h>

#include "log.h"

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

/* The box's device side, validated: its device address in *out. */
static int device_box(tdm_session *s, const char *what, tdm_session_box b, tdm_extent ext, tdm_box *out,
                      const tdm_range **range)
{
    uint64_t span;
    int err = box_span(s, b, ext, &span);

    if (!err)
        err = tdm_session_resolve_range(s, what, b.addr, span, &out->dev, range);
    out->host = NULL;
    out->pitch = b.pitch;
    out->rows = b.rows;
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
    if ((err = device_box(s, "3D memset", dst, ext, &d, &r)) != 0 ||
        (err = tdm_session_stream_work(s, stream, r, &bs)) != 0)
        return err;
    return ops(s)->memset_3d(s->srv->be, &d, value, ext, bs);
}
