/* Copies and memsets.  Over TCP, host-to-device data travels inside
 * one-way calls of up to TDM_MAX_CHUNK bytes each, sent back to back (the
 * server decodes each into pinned staging and copies it to the device while
 * the next arrives), so the application's buffer is free again when
 * cudaMemcpy returns, as with CUDA's staged pageable copies.  Device-to-host
 * is one round trip whatever the size: MEMCPY_DTOH_STREAM's reply streams
 * the bytes straight into the caller's buffer (docs/protocol.md, "Bulk data
 * over TCP").  Over shm, copies go through the shared region instead
 * (copy_shm.c). */
#include <string.h>

#include "guest.h"

static uint64_t dev(const void *p)
{
    return (uint64_t)(uintptr_t)p;
}

static enum cudaMemcpyKind resolve_kind(const void *dst, const void *src, enum cudaMemcpyKind kind)
{
    if (kind != cudaMemcpyDefault)
        return kind;
    bool d = tdm_allocs_is_device(dst), s = tdm_allocs_is_device(src);
    return d ? (s ? cudaMemcpyDeviceToDevice : cudaMemcpyHostToDevice)
             : (s ? cudaMemcpyDeviceToHost : cudaMemcpyHostToHost);
}

static cudaError_t htod(uint64_t dst, const char *src, size_t n, uint64_t stream)
{
    const uint64_t total = n;

    while (n > 0) {
        size_t chunk = n < TDM_MAX_CHUNK ? n : TDM_MAX_CHUNK;
        tdm_memcpy_htod_args a = { .dst = dst, .stream = stream };
        a.data.data_val = (char *)src;
        a.data.data_len = (u_int)chunk;
        /* The transport sees the whole copy's size: over TCP every piece
         * of a large copy, the tail too, goes over the lanes.  And whether
         * more follow: it may send the next piece before the server took
         * this one, and the last returns once it took them all (the
         * program's buffer is free again when the copy returns). */
        cudaError_t err = tdm_post_piece(TDM_MEMCPY_HTOD, &a, total, chunk < n);
        if (err)
            return err;
        dst += chunk;
        src += chunk;
        n -= chunk;
    }
    return cudaSuccess;
}

static cudaError_t dtoh(char *dst, uint64_t src, size_t n, uint64_t stream)
{
    tdm_memcpy_dtoh_args a = { .src = src, .size = n, .stream = stream };
    tdm_dtoh_stream_res r = { .size = n, .buf = dst };
    cudaError_t err = tdm_call_decode(TDM_MEMCPY_DTOH_STREAM, &a, (xdrproc_t)xdr_tdm_dtoh_stream_res, &r);

    if (err)
        return err;
    if (r.err || r.copy_err)
        return (cudaError_t)(r.err ? r.err : r.copy_err);
    /* Nothing came, yet no error said why. */
    return r.got == n ? cudaSuccess : cudaErrorUnknown;
}

/* Memory kept coherent with a host copy (managed memory; mapped memory over
 * TCP) is copied as the device memory it is, the host copy flushed or
 * invalidated around it (coherent.c): the library never reads or writes a
 * host copy the device may have changed. */
cudaError_t tdm_memcpy(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind, cudaStream_t stream,
                       bool async)
{
    cudaError_t err;

    if (n == 0)
        return cudaSuccess;
    if (!dst || !src)
        return tdm_ret(cudaErrorInvalidValue);
    err = tdm_coherent_copy(&dst, &src, n, &kind, tdm_stream_id(stream));
    if (err)
        return tdm_ret(err);
    return tdm_memcpy_direct(dst, src, n, kind, stream, async);
}

cudaError_t tdm_memcpy_direct(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind, cudaStream_t stream,
                              bool async)
{
    uint64_t sid = tdm_stream_id(stream);
    const struct tdm_shm_region *shm;
    cudaError_t err;

    if (n == 0)
        return cudaSuccess;
    if (!dst || !src)
        return tdm_ret(cudaErrorInvalidValue);
    switch (resolve_kind(dst, src, kind)) {
    case cudaMemcpyHostToHost:
        memmove(dst, src, n);
        return cudaSuccess;
    case cudaMemcpyHostToDevice:
        if (!tdm_allocs_covers(dev(dst), n))
            return tdm_ret(cudaErrorInvalidValue);
        /* A copy a capture may take reads the bytes of each launch (docs/graphs.md). */
        if (tdm_graph_captures_open() && (err = tdm_graph_capture_htod(dst, src, n, sid)) != TDM_ERR_NOT_CAPTURING)
            return tdm_ret(err);
        if ((shm = tdm_shm()) != NULL)
            return tdm_ret(tdm_shm_htod(shm, dev(dst), src, n, sid, async));
        return tdm_ret(htod(dev(dst), src, n, sid));
    case cudaMemcpyDeviceToHost:
        if (!tdm_allocs_covers(dev(src), n))
            return tdm_ret(cudaErrorInvalidValue);
        err = (shm = tdm_shm()) != NULL ? tdm_shm_dtoh(shm, dst, dev(src), n, sid, async)
                                        : dtoh(dst, dev(src), n, sid);
        /* The stream captures and the server cannot reach dst (docs/graphs.md). */
        if ((int)err == TDM_ERR_CAPTURE_STAGE)
            err = tdm_graph_capture_dtoh(dst, dev(src), n, sid);
        /* A synchronous copy over shm shows progress without a call that
         * says so: graphs' host outputs come in now (docs/graphs.md). */
        else if (!err && !async && shm && tdm_graph_host_fetch_due())
            tdm_graph_host_fetch();
        return tdm_ret(err);
    case cudaMemcpyDeviceToDevice: {
        if (!tdm_allocs_covers(dev(dst), n) || !tdm_allocs_covers(dev(src), n))
            return tdm_ret(cudaErrorInvalidValue);
        tdm_memcpy_dtod_args a = { .dst = dev(dst), .src = dev(src), .size = n, .stream = sid };
        return tdm_ret(tdm_post(TDM_MEMCPY_DTOD, &a));
    }
    default:
        return tdm_ret(cudaErrorInvalidMemcpyDirection);
    }
}

cudaError_t tdm_memset(void *dst, int value, size_t n, cudaStream_t stream)
{
    cudaError_t err;

    if (n == 0)
        return cudaSuccess;
    err = tdm_coherent_device_write(&dst, n, tdm_stream_id(stream));
    if (err)
        return tdm_ret(err);
    if (!tdm_allocs_covers(dev(dst), n))
        return tdm_ret(cudaErrorInvalidValue);
    tdm_memset_args a = { .dst = dev(dst), .value = (u_int)(value & 0xff), .size = n,
                          .stream = tdm_stream_id(stream) };
    return tdm_ret(tdm_post(TDM_MEMSET, &a));
}
