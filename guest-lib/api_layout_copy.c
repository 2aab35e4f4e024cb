/* 2D and 3D copies and memsets (docs/memory-layouts.md).
 *
 * A device-to-device copy or a memset is one one-way call whatever its
 * shape: the server does it with one cuMemcpy3DAsync (or a 2D memset per
 * slice).  Between host and device the host side's rows are gathered here
 * (or scattered, coming back) so that only the bytes of the box cross, once,
 * packed, in as few calls as the protocol's chunk allows: whole slices per
 * call when a slice fits in a chunk, else whole rows, else parts of a row.
 * A host side that is already packed is sent from where it lies. */
#include <stdlib.h>
#include <string.h>

#include "api_layout.h"

static uint64_t dev(const void *p)
{
    return (uint64_t)(uintptr_t)p;
}

static bool is_empty(struct cudaExtent e)
{
    return e.width == 0 || e.height == 0 || e.depth == 0;
}

/* One past the box's last byte, from its first; false on overflow. */
static bool span(tdm_layout_side s, struct cudaExtent e, size_t *out)
{
    size_t rows, off;

    return !__builtin_mul_overflow(e.depth - 1, s.rows, &rows) && !__builtin_add_overflow(rows, e.height - 1, &rows) &&
           !__builtin_mul_overflow(rows, s.pitch, &off) && !__builtin_add_overflow(off, e.width, out);
}

static char *at(tdm_layout_side s, size_t x, size_t y, size_t z)
{
    return s.ptr + (z * s.rows + y) * s.pitch + x;
}

/* The side moved by (x bytes, y rows, z slices). */
static tdm_layout_side shift(tdm_layout_side s, size_t x, size_t y, size_t z)
{
    if (s.array) {
        s.x += x;
        s.y += y;
        s.z += z;
    } else {
        s.ptr = at(s, x, y, z);
    }
    return s;
}

/* Native checks: every pitch holds a row, every slice its rows, the box fits
 * in the address space. */
static cudaError_t check_side(tdm_layout_side s, struct cudaExtent e, size_t *len)
{
    *len = 0;
    if (s.array)   /* checked against the array's own extent (device_covers) */
        return cudaSuccess;
    if (!s.ptr)
        return cudaErrorInvalidValue;
    if (s.pitch < e.width)
        return cudaErrorInvalidPitchValue;
    if (e.depth > 1 && s.rows < e.height)
        return cudaErrorInvalidValue;
    return span(s, e, len) ? cudaSuccess : cudaErrorInvalidValue;
}

static bool device_covers(tdm_layout_side s, struct cudaExtent e, size_t len)
{
    if (s.array)
        return tdm_layout_array_covers(s.array, s.x, s.y, s.z, e);
    return tdm_allocs_covers(dev(s.ptr), len);
}

static tdm_pitched pitched(tdm_layout_side s, struct cudaExtent e)
{
    if (s.array)
        return (tdm_pitched){ .addr = s.x, .array = s.array, .y = s.y, .z = s.z };
    return (tdm_pitched){ .addr = dev(s.ptr), .pitch = s.pitch, .rows = e.depth > 1 ? s.rows : e.height };
}

static tdm_extent3 extent3(struct cudaExtent e)
{
    return (tdm_extent3){ .width = e.width, .height = e.height, .depth = e.depth };
}

/* Between the box and `buf`, where its rows lie packed. */
static void gather(char *buf, tdm_layout_side s, struct cudaExtent e)
{
    for (size_t z = 0; z < e.depth; z++)
        for (size_t y = 0; y < e.height; y++)
            memcpy(buf + (z * e.height + y) * e.width, at(s, 0, y, z), e.width);
}

static void scatter(tdm_layout_side s, const char *buf, struct cudaExtent e)
{
    for (size_t z = 0; z < e.depth; z++)
        for (size_t y = 0; y < e.height; y++)
            memcpy(at(s, 0, y, z), buf + (z * e.height + y) * e.width, e.width);
}

static bool packed(tdm_layout_side s, struct cudaExtent e)
{
    return (e.height == 1 || s.pitch == e.width) && (e.depth == 1 || s.rows == e.height);
}

/* One piece: a sub-box of at most TDM_MAX_CHUNK packed bytes. */
typedef struct piece_io {
    tdm_layout_side dst, src;   /* the whole copy's sides */
    uint64_t stream;
    char *stage;                /* TDM_MAX_CHUNK bytes, for gathering or scattering */
} piece_io;

static cudaError_t upload(piece_io *io, size_t x, size_t y, size_t z, struct cudaExtent pe)
{
    tdm_layout_side d = shift(io->dst, x, y, z), s = shift(io->src, x, y, z);
    tdm_memcpy3d_htod_args a = { .ext = extent3(pe), .stream = io->stream };

    a.dst = pitched(d, pe);
    if (packed(s, pe)) {
        a.data.data_val = s.ptr;
    } else {
        gather(io->stage, s, pe);
        a.data.data_val = io->stage;
    }
    a.data.data_len = (u_int)(pe.width * pe.height * pe.depth);
    return tdm_post(TDM_MEMCPY_3D_HTOD, &a);
}

static cudaError_t download(piece_io *io, size_t x, size_t y, size_t z, struct cudaExtent pe)
{
    tdm_layout_side d = shift(io->dst, x, y, z), s = shift(io->src, x, y, z);
    tdm_memcpy3d_dtoh_args a = { .ext = extent3(pe), .stream = io->stream };
    tdm_memcpy_dtoh_res r;
    size_t n = pe.width * pe.height * pe.depth;
    cudaError_t err;

    a.src = pitched(s, pe);
    memset(&r, 0, sizeof(r));
    err = tdm_call(TDM_MEMCPY_3D_DTOH, &a, &r);
    if (!err)
        err = (cudaError_t)r.err;
    if (!err && r.data.data_len != n)
        err = cudaErrorUnknown;
    if (!err)
        scatter(d, r.data.data_val, pe);
    xdr_free((xdrproc_t)xdr_tdm_memcpy_dtoh_res, (char *)&r);
    return err;
}

typedef cudaError_t (*piece_fn)(piece_io *io, size_t x, size_t y, size_t z, struct cudaExtent pe);

/* Whole slices per piece when a slice fits in a chunk, else whole rows,
 * else parts of a row. */
static cudaError_t for_each_piece(piece_io *io, struct cudaExtent e, piece_fn fn)
{
    const size_t max = TDM_MAX_CHUNK;
    cudaError_t err = cudaSuccess;

    if (e.width * e.height <= max) {
        size_t k = max / (e.width * e.height);
        for (size_t z = 0; z < e.depth && !err; z += k)
            err = fn(io, 0, 0, z, (struct cudaExtent){ e.width, e.height, e.depth - z < k ? e.depth - z : k });
    } else if (e.width <= max) {
        size_t k = max / e.width;
        for (size_t z = 0; z < e.depth && !err; z++)
            for (size_t y = 0; y < e.height && !err; y += k)
                err = fn(io, 0, y, z, (struct cudaExtent){ e.width, e.height - y < k ? e.height - y : k, 1 });
    } else {
        for (size_t z = 0; z < e.depth && !err; z++)
            for (size_t y = 0; y < e.height && !err; y++)
                for (size_t x = 0; x < e.width && !err; x += max)
                    err = fn(io, x, y, z, (struct cudaExtent){ e.width - x < max ? e.width - x : max, 1, 1 });
    }
    return err;
}

static cudaError_t host_device(tdm_layout_side dst, tdm_layout_side src, struct cudaExtent e, uint64_t stream,
                               piece_fn fn)
{
    piece_io io = { .dst = dst, .src = src, .stream = stream };
    cudaError_t err;

    if (fn == upload && !(io.stage = malloc(TDM_MAX_CHUNK)))
        return cudaErrorMemoryAllocation;
    err = for_each_piece(&io, e, fn);
    free(io.stage);
    return err;
}

static bool is_device(tdm_layout_side s)
{
    return s.array || tdm_allocs_is_device(s.ptr);
}

/* An array side is device memory whatever the kind says of it: native CUDA
 * takes the array's side of the kind as given. */
static enum cudaMemcpyKind resolve_kind(tdm_layout_side dst, tdm_layout_side src, enum cudaMemcpyKind kind)
{
    if (kind != cudaMemcpyDefault)
        return kind;
    bool d = is_device(dst), s = is_device(src);
    return d ? (s ? cudaMemcpyDeviceToDevice : cudaMemcpyHostToDevice)
             : (s ? cudaMemcpyDeviceToHost : cudaMemcpyHostToHost);
}

static cudaError_t copy(tdm_layout_side dst, tdm_layout_side src, struct cudaExtent e, enum cudaMemcpyKind kind,
                        cudaStream_t stream)
{
    uint64_t sid = tdm_stream_id(stream);
    size_t dlen, slen;
    cudaError_t err;

    if ((err = check_side(dst, e, &dlen)) != cudaSuccess || (err = check_side(src, e, &slen)) != cudaSuccess)
        return err;
    switch (resolve_kind(dst, src, kind)) {
    case cudaMemcpyHostToHost:
        if (dst.array || src.array)
            return cudaErrorInvalidMemcpyDirection;
        for (size_t z = 0; z < e.depth; z++)
            for (size_t y = 0; y < e.height; y++)
                memmove(at(dst, 0, y, z), at(src, 0, y, z), e.width);
        return cudaSuccess;
    case cudaMemcpyHostToDevice:
        if (src.array)
            return cudaErrorInvalidMemcpyDirection;
        if (!device_covers(dst, e, dlen))
            return cudaErrorInvalidValue;
        return host_device(dst, src, e, sid, upload);
    case cudaMemcpyDeviceToHost:
        if (dst.array)
            return cudaErrorInvalidMemcpyDirection;
        if (!device_covers(src, e, slen))
            return cudaErrorInvalidValue;
        return host_device(dst, src, e, sid, download);
    case cudaMemcpyDeviceToDevice: {
        if (!device_covers(dst, e, dlen) || !device_covers(src, e, slen))
            return cudaErrorInvalidValue;
        tdm_memcpy3d_dtod_args a = { .dst = pitched(dst, e), .src = pitched(src, e), .ext = extent3(e),
                                     .stream = sid };
        return tdm_post(TDM_MEMCPY_3D_DTOD, &a);
    }
    default:
        return cudaErrorInvalidMemcpyDirection;
    }
}

cudaError_t tdm_layout_copy(tdm_layout_side dst, tdm_layout_side src, struct cudaExtent ext,
                            enum cudaMemcpyKind kind, cudaStream_t stream)
{
    if (is_empty(ext))
        return cudaSuccess;
    return tdm_ret(copy(dst, src, ext, kind, stream));
}

cudaError_t tdm_layout_memset(tdm_layout_side dst, int value, struct cudaExtent ext, cudaStream_t stream)
{
    size_t len;
    cudaError_t err;

    if (is_empty(ext))
        return cudaSuccess;
    if ((err = check_side(dst, ext, &len)) != cudaSuccess)
        return tdm_ret(err);
    if (!device_covers(dst, ext, len))
        return tdm_ret(cudaErrorInvalidValue);
    tdm_memset3d_args a = { .dst = pitched(dst, ext), .ext = extent3(ext), .value = (u_int)(value & 0xff),
                            .stream = tdm_stream_id(stream) };
    return tdm_ret(tdm_post(TDM_MEMSET_3D, &a));
}
