/* Copies over the shm transport: the bytes go through the shared region,
 * never through a call.
 *
 * Pinned memory (cudaMallocHost over shm) already lies in the region's host
 * memory area, so a copy from or to it is one call naming its offset, and
 * the server's device DMAs from or into those very pages.  Other (pageable)
 * memory goes through the data area in chunks, one completion slot per
 * chunk, pipelined: the guest fills chunk k+1 while the server copies chunk
 * k (host to device), or copies chunk k out while the server fetches chunk
 * k+1 (device to host).
 *
 * A slot is reused only after the server reported the previous copy in it
 * done (its ticket).  slots_lock serializes the copies of a process's
 * threads over the data area; it is taken before the transport's lock,
 * never after. */
#include <pthread.h>
#include <string.h>

#include "guest.h"
#include "shm_region.h"
#include "xdr_extra.h"

static pthread_mutex_t slots_lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t tickets[TDM_SHM_MAX_SLOTS];
static bool in_flight[TDM_SHM_MAX_SLOTS];

/* The region offset of [p, p+n) if it lies in the host memory area (at
 * the region's address, or at a registered range's). */
bool tdm_shm_host_offset(const tdm_shm_region *r, const void *p, size_t n, uint64_t *off)
{
    uintptr_t a = (uintptr_t)p, lo = (uintptr_t)r->base + r->g.host_off;

    if (a < lo || n > r->g.host_size || a - lo > r->g.host_size - n)
        return tdm_host_alias_offset(r, p, n, off);   /* cudaHostRegister'ed pages moved into the region */
    *off = r->g.host_off + (a - lo);
    return true;
}

/* Waits for the slot's previous copy; its error in *err (0 if none). */
static cudaError_t slot_free(uint32_t slot, int *err)
{
    *err = 0;
    if (!in_flight[slot])
        return cudaSuccess;
    in_flight[slot] = false;
    return tdm_shm_wait_copy(slot, tickets[slot], err);
}

static cudaError_t post(uint32_t proc, uint64_t dev, uint64_t stream, uint64_t off, uint64_t n, uint32_t slot)
{
    tdm_shm_copy_args a = { .dev = dev, .stream = stream, .offset = off, .size = n, .slot = slot };

    if (slot == TDM_SHM_NO_SLOT)
        return tdm_post(proc, &a);
    a.ticket = ++tickets[slot];
    in_flight[slot] = true;
    /* A chunk the thread will wait for (a copy in slots): posted as a piece, so that no
     * protection check (possibly a fail-back) comes between the chunks of one copy. */
    return tdm_post_piece(proc, &a, n, false);
}

/* A pinned copy that must be complete when it returns. */
static cudaError_t pinned_sync(uint32_t proc, uint64_t dev, uint64_t off, uint64_t n, uint64_t stream, int *err)
{
    cudaError_t rc = slot_free(0, err);

    if (!rc)
        rc = post(proc, dev, stream, off, n, 0);
    if (!rc)
        rc = slot_free(0, err);
    return rc;
}

cudaError_t tdm_shm_htod(const tdm_shm_region *r, uint64_t dst, const void *src, size_t n, uint64_t stream,
                         bool async)
{
    const char *s = src;
    cudaError_t rc = cudaSuccess;
    uint64_t off;
    int err;

    if (tdm_shm_host_offset(r, src, n, &off)) {
        if (async)
            return post(TDM_SHM_HTOD, dst, stream, off, n, TDM_SHM_NO_SLOT);
        pthread_mutex_lock(&slots_lock);
        /* Errors of host-to-device copies surface at the next sync. */
        rc = pinned_sync(TDM_SHM_HTOD, dst, off, n, stream, &err);
        pthread_mutex_unlock(&slots_lock);
        return rc;
    }
    pthread_mutex_lock(&slots_lock);
    for (uint64_t k = 0; n > 0 && !rc; k++) {
        uint32_t slot = (uint32_t)(k % r->g.nslots);
        size_t len = n < r->g.chunk ? n : r->g.chunk;
        uint64_t chunk_off = r->g.data_off + slot * r->g.chunk;

        rc = slot_free(slot, &err);
        if (rc)
            break;
        tdm_shm_chunk_reuse(slot);
        memcpy(r->base + chunk_off, s, len);
        rc = post(TDM_SHM_HTOD, dst, stream, chunk_off, len, slot);
        dst += len;
        s += len;
        n -= len;
    }
    pthread_mutex_unlock(&slots_lock);
    /* The data is in the region: the caller's buffer is free, as after a
     * staged pageable copy. */
    return rc;
}

cudaError_t tdm_shm_dtoh(const tdm_shm_region *r, void *dst, uint64_t src, size_t n, uint64_t stream,
                         bool async)
{
    uint64_t off, nchunks = (n + r->g.chunk - 1) / r->g.chunk, issued = 0;
    cudaError_t rc = cudaSuccess;
    char *d = dst;
    int err = 0;

    if (tdm_shm_host_offset(r, dst, n, &off)) {
        if (async)   /* the server copies it in stream order; a later sync reports errors */
            return post(TDM_SHM_DTOH, src, stream, off, n, TDM_SHM_NO_SLOT);
        pthread_mutex_lock(&slots_lock);
        rc = pinned_sync(TDM_SHM_DTOH, src, off, n, stream, &err);
        pthread_mutex_unlock(&slots_lock);
        return rc ? rc : (cudaError_t)err;
    }
    pthread_mutex_lock(&slots_lock);
    for (uint64_t k = 0; k < nchunks && !rc && !err; k++) {
        uint32_t slot = (uint32_t)(k % r->g.nslots);
        uint64_t len = k == nchunks - 1 ? n - k * r->g.chunk : r->g.chunk;

        /* Keep every slot busy: ask for the chunks ahead of the one we wait for. */
        while (!rc && issued < nchunks && issued < k + r->g.nslots) {
            uint32_t is = (uint32_t)(issued % r->g.nslots);
            uint64_t ilen = issued == nchunks - 1 ? n - issued * r->g.chunk : r->g.chunk;
            int earlier;   /* an earlier copy's, reported by the sync after it */

            rc = slot_free(is, &earlier);
            if (!rc)
                rc = post(TDM_SHM_DTOH, src + issued * r->g.chunk, stream, r->g.data_off + is * r->g.chunk, ilen, is);
            issued++;
        }
        if (!rc)
            rc = slot_free(slot, &err);
        if (!rc && !err)
            memcpy(d + k * r->g.chunk, r->base + r->g.data_off + slot * r->g.chunk, len);
    }
    pthread_mutex_unlock(&slots_lock);
    return rc ? rc : (cudaError_t)err;
}
