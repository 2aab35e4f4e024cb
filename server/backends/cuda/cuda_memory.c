/* The logical address arena and the physical memory mapped into it.
 *
 * The arena is one virtual reservation at a fixed address, the same on every
 * server, so a guest pointer means the same thing wherever its session runs.
 * mem_map backs a piece of it with a fresh physical allocation. */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "cuda_backend_internal.h"

struct tdm_bmem {
    CUmemGenericAllocationHandle handle;
    int fd;      /* imported memory: the exporter's fd, kept to hand on (a
                  * standby passing a session to its own standby or back) */
};

int tdm_cuda_arena_reserve(tdm_backend *b)
{
    CUdeviceptr p = 0;
    int err = tdm_cuda_enter(b);

    if (err)
        return err;
    if (b->arena)
        return cudaSuccess;
    err = tdm_cuda_err(tdm_cu.cuMemAddressReserve(&p, b->cfg.arena_size, b->gran, b->cfg.arena_base, 0),
                       "cuMemAddressReserve");
    if (err)
        return cudaErrorMemoryAllocation;
    /* The fixed address is only a hint to the driver: anywhere else is
     * useless to us, so give it back and fail. */
    if (p != b->cfg.arena_base) {
        tdm_cuda_log("arena wanted at 0x%llx, driver offered 0x%llx",
                     (unsigned long long)b->cfg.arena_base, (unsigned long long)p);
        tdm_cuda_err(tdm_cu.cuMemAddressFree(p, b->cfg.arena_size), "cuMemAddressFree");
        return cudaErrorMemoryAllocation;
    }
    b->arena = p;
    return cudaSuccess;
}

void tdm_cuda_arena_free(tdm_backend *b)
{
    if (!b->arena)
        return;
    tdm_cuda_err(tdm_cu.cuMemAddressFree(b->arena, b->cfg.arena_size), "cuMemAddressFree");
    b->arena = 0;
}

uint64_t tdm_cuda_granularity(tdm_backend *b)
{
    return b->gran;
}

/* Maps physical memory at addr, read/write for the device. */
static int map_handle(tdm_backend *b, uint64_t addr, uint64_t size, CUmemGenericAllocationHandle h)
{
    CUmemAccessDesc access = { .location = b->prop.location,
                               .flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE };
    int err = tdm_cuda_err(tdm_cu.cuMemMap(addr, size, 0, h, 0), "cuMemMap");

    if (err)
        return err;
    err = tdm_cuda_err(tdm_cu.cuMemSetAccess(addr, size, &access, 1), "cuMemSetAccess");
    if (err)
        tdm_cuda_err(tdm_cu.cuMemUnmap(addr, size), "cuMemUnmap");
    return err;
}

int tdm_cuda_mem_map(tdm_backend *b, uint64_t addr, uint64_t size, tdm_bmem **out)
{
    tdm_bmem *m;
    int err = tdm_cuda_enter(b);

    *out = NULL;
    if (err)
        return err;
    m = calloc(1, sizeof(*m));
    if (!m)
        return cudaErrorMemoryAllocation;
    m->fd = -1;
    err = tdm_cuda_err(tdm_cu.cuMemCreate(&m->handle, size, &b->prop, 0), "cuMemCreate");
    if (err)
        goto out_free;
    err = map_handle(b, addr, size, m->handle);
    if (err)
        goto out_release;
    /* cuMemCreate does not clear memory and the interface promises zeros.
     * The clear runs on a private stream and is waited for here: on the
     * legacy stream a guest's non-blocking stream could overtake it. */
    err = tdm_cuda_err(tdm_cu.cuMemsetD8Async(addr, 0, size, b->zero_stream), "cuMemsetD8Async(zero)");
    if (!err)
        err = tdm_cuda_err(tdm_cu.cuStreamSynchronize(b->zero_stream), "cuStreamSynchronize(zero)");
    if (err)
        goto out_unmap;
    *out = m;
    return cudaSuccess;

out_unmap:
    tdm_cuda_err(tdm_cu.cuMemUnmap(addr, size), "cuMemUnmap");
out_release:
    tdm_cuda_err(tdm_cu.cuMemRelease(m->handle), "cuMemRelease");
out_free:
    free(m);
    return err;
}

int tdm_cuda_mem_export(tdm_backend *b, tdm_bmem *mem, int *fd_out)
{
    int fd = -1;
    int err = tdm_cuda_enter(b);

    *fd_out = -1;
    if (err)
        return err;
    if (mem->fd >= 0) {
        *fd_out = fcntl(mem->fd, F_DUPFD_CLOEXEC, 0);
        return *fd_out >= 0 ? cudaSuccess : cudaErrorMemoryAllocation;
    }
    if (b->prop.requestedHandleTypes != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)
        return cudaErrorNotSupported;
    err = tdm_cuda_err(tdm_cu.cuMemExportToShareableHandle(&fd, mem->handle,
                                                            CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
                       "cuMemExportToShareableHandle");
    if (!err)
        *fd_out = fd;
    return err;
}

int tdm_cuda_mem_import(tdm_backend *b, uint64_t addr, uint64_t size, int fd, tdm_bmem **out)
{
    tdm_bmem *m;
    int err = tdm_cuda_enter(b);

    *out = NULL;
    if (err)
        return err;
    m = calloc(1, sizeof(*m));
    if (!m)
        return cudaErrorMemoryAllocation;
    m->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (m->fd < 0) {
        free(m);
        return cudaErrorMemoryAllocation;
    }
    err = tdm_cuda_err(tdm_cu.cuMemImportFromShareableHandle(&m->handle, (void *)(uintptr_t)fd,
                                                              CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR),
                       "cuMemImportFromShareableHandle");
    if (err)
        goto out_free;
    /* The exporter's contents are the point: no clearing here. */
    err = map_handle(b, addr, size, m->handle);
    if (err)
        goto out_release;
    *out = m;
    return cudaSuccess;

out_release:
    tdm_cuda_err(tdm_cu.cuMemRelease(m->handle), "cuMemRelease");
out_free:
    close(m->fd);
    free(m);
    return err;
}

int tdm_cuda_mem_unmap(tdm_backend *b, uint64_t addr, uint64_t size, tdm_bmem *mem)
{
    int err = tdm_cuda_enter(b);
    int rel;

    if (err)
        return err;
    /* Like cudaFree: queued work may still touch the range, and unmapping
     * under a running kernel would fault it.  The context is shared by every
     * session, so this waits for their work too; frees are rare enough. */
    err = tdm_cuda_err(tdm_cu.cuCtxSynchronize(), "cuCtxSynchronize(unmap)");
    if (err)
        return err;
    err = tdm_cuda_err(tdm_cu.cuMemUnmap(addr, size), "cuMemUnmap");
    if (err)
        return err;
    rel = tdm_cuda_err(tdm_cu.cuMemRelease(mem->handle), "cuMemRelease");
    if (mem->fd >= 0)
        close(mem->fd);
    free(mem);
    return rel;
}
