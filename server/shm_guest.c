#include "shm_guest.h"

#include <stdio.h>
#include <stdlib.h>

#include <driver_types.h>

#include "log.h"
#include "session.h"
#include "grow.h"

#define PAGE 4096u

static bool inside(uint64_t off, uint64_t len, uint64_t area_off, uint64_t area_size)
{
    return off >= area_off && len <= area_size && off - area_off <= area_size - len;
}

static int backend_register(tdm_session *s, uint64_t off, uint64_t size, void **handle)
{
    tdm_server *srv = s->srv;
    int saved, err;
    bool relaxed;

    *handle = NULL;
    if (!srv->ops->host_register)
        return 0;
    /* The session's stream may be capturing (the first copy through the
     * data area may be a captured one): registering is an unsafe call,
     * which in the program's capture mode would invalidate the capture. */
    relaxed = tdm_session_capture_relax(s, &saved);
    err = srv->ops->host_register(srv->be, tdm_shm_at(&s->shm->conn.region, off), size, handle);
    if (relaxed)
        tdm_session_capture_restore(s, saved);
    return err;
}

void tdm_shm_guest_touch(tdm_session *s, uint64_t off, uint64_t len)
{
    tdm_shm_guest *g = s->shm;
    const tdm_shm_geom *geo = &g->conn.region.g;

    if (g->data_tried || !inside(off, len, geo->data_off, geo->data_size))
        return;
    g->data_tried = true;
    if (backend_register(s, geo->data_off, geo->data_size, &g->data_handle) != 0) {
        tdm_log_session(s->id, "cannot register the shm data area with the device; "
                        "copies through it will be staged");
        g->data_handle = NULL;
    }
}

int tdm_shm_guest_register(tdm_session *s, uint64_t off, uint64_t size)
{
    tdm_shm_guest *g = s->shm;
    const tdm_shm_geom *geo;
    void *handle = NULL;
    int err;

    if (!g)
        return cudaErrorInvalidValue;
    geo = &g->conn.region.g;
    if (size == 0 || off % PAGE || size % PAGE || !inside(off, size, geo->host_off, geo->host_size)) {
        tdm_log_session(s->id, "pinned block [%llu, +%llu) is not whole pages of the "
                        "region's host memory area", (unsigned long long)off,
                        (unsigned long long)size);
        return cudaErrorInvalidValue;
    }
    for (size_t i = 0; i < g->nregs; i++) {
        /* The same block again: a guest resuming here registers every
         * block it has, and may then retry the registration that its dead
         * server never answered. */
        if (g->regs[i].off == off && g->regs[i].size == size)
            return 0;
        if (off < g->regs[i].off + g->regs[i].size && g->regs[i].off < off + size)
            return cudaErrorHostMemoryAlreadyRegistered;
    }
    if (tdm_grow(&g->regs, &g->cap, g->nregs + 1, sizeof(*g->regs), 16) != 0)
        return cudaErrorMemoryAllocation;
    err = backend_register(s, off, size, &handle);
    if (err)
        return err == cudaErrorHostMemoryAlreadyRegistered ? cudaErrorMemoryAllocation : err;
    g->regs[g->nregs++] = (tdm_shm_reg){ off, size, handle };
    return 0;
}

int tdm_shm_guest_unregister(tdm_session *s, uint64_t off, uint64_t size)
{
    tdm_shm_guest *g = s->shm;
    int err, uerr = 0;

    if (!g)
        return cudaErrorInvalidValue;
    for (size_t i = 0; i < g->nregs; i++) {
        tdm_shm_reg r = g->regs[i];
        if (r.off != off || r.size != size)
            continue;
        /* As cudaFreeHost: the device may still be copying from or to it. */
        err = tdm_session_device_synchronize(s);
        tdm_session_shm_host_unmapping(s, off, size);
        tdm_session_shm_managed_unmapping(s, off, size);
        if (r.handle)
            uerr = s->srv->ops->host_unregister(s->srv->be, r.handle);
        g->regs[i] = g->regs[--g->nregs];
        return err ? err : uerr;
    }
    return cudaErrorInvalidValue;
}

void tdm_shm_guest_release(tdm_server *srv, tdm_shm_guest *g)
{
    for (size_t i = 0; i < g->nregs; i++)
        if (g->regs[i].handle)
            srv->ops->host_unregister(srv->be, g->regs[i].handle);
    if (g->data_handle)
        srv->ops->host_unregister(srv->be, g->data_handle);
    free(g->regs);
    g->regs = NULL;
    g->nregs = g->cap = 0;
    g->data_handle = NULL;
}
