/* The server's side of one shm guest: its connection (region, rings) and
 * the parts of its region registered with the device.
 *
 * Registration pins pages, which costs time in proportion to their size, so
 * nothing is registered when the session starts: the data area when a copy
 * first goes through it, host memory block by block as the guest's
 * cudaMallocHost asks (the cost CUDA's own cudaMallocHost has). */
#ifndef TANDEM_SERVER_SHM_GUEST_H
#define TANDEM_SERVER_SHM_GUEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "server.h"
#include "shm_server.h"

typedef struct tdm_shm_reg {
    uint64_t off, size;
    void *handle;             /* the backend's; NULL where it has no host_register */
} tdm_shm_reg;

typedef struct tdm_shm_guest {
    tdm_shm_conn conn;
    bool data_tried;          /* registration of the data area attempted */
    void *data_handle;
    tdm_shm_reg *regs;        /* host memory blocks, unordered */
    size_t nregs, cap;
} tdm_shm_guest;

struct tdm_session;

/* Registers the data area if [off, off+len) lies in it and that was not
 * tried yet.  A failure only means copies are staged by the driver. */
void tdm_shm_guest_touch(struct tdm_session *s, uint64_t off, uint64_t len);

/* cudaMallocHost / cudaFreeHost of a block of the host memory area:
 * page-aligned, inside the area, not overlapping another block (register),
 * exactly a registered block (unregister).  cudaError_t values. */
int tdm_shm_guest_register(struct tdm_session *s, uint64_t off, uint64_t size);
int tdm_shm_guest_unregister(struct tdm_session *s, uint64_t off, uint64_t size);

/* Unregisters everything; the session's work must be finished. */
void tdm_shm_guest_release(tdm_server *srv, tdm_shm_guest *g);

#endif
