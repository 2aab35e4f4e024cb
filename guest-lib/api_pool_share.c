/* Pools by memory location (CUDA 13's cudaMemGetDefaultMemPool,
 * cudaMemGetMemPool, cudaMemSetMemPool) and, below, sharing pools between
 * processes (docs/memory-models.md, docs/ipc.md "Sharing memory pools"). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "grow.h"
#include "guest.h"

/* ---- pools by location ---- */

/* What a (location, allocation type) pair names.  Device 0's pinned
 * pools are the device's pools (cudaDeviceGetDefaultMemPool and kin).
 * Host and host-NUMA pinned pools and managed pools are not remoted: the
 * memory of a host pool would be the guest's pinned memory handed out in
 * stream order by the server, which no transport does yet, and managed
 * pools need concurrentManagedAccess, which Tandem reports 0 (the driver
 * answers cudaErrorNotSupported on such a device).  A device id past the
 * device count is cudaErrorInvalidValue for all three calls, and a pinned
 * pool at a location type the header does not name is
 * cudaErrorNotSupported: both what the driver answered on the H100 run of
 * 2026-11-24 (cuMemGetDefaultMemPool documents invalid device, but does
 * not return it).  Other pairs are cudaErrorInvalidValue. */
static cudaError_t device_pinned(const struct cudaMemLocation *loc, enum cudaMemAllocationType type)
{
    if (!loc)
        return cudaErrorInvalidValue;
    if (type == cudaMemAllocationTypePinned) {
        switch (loc->type) {
        case cudaMemLocationTypeDevice:
            return tdm_check_device(loc->id) == cudaSuccess ? cudaSuccess : cudaErrorInvalidValue;
        case cudaMemLocationTypeHost:
        case cudaMemLocationTypeHostNuma:
        case cudaMemLocationTypeHostNumaCurrent:
            return cudaErrorNotSupported;
        case cudaMemLocationTypeNone:
            return cudaErrorInvalidValue;
        default:
            return cudaErrorNotSupported;
        }
    }
    if (type == cudaMemAllocationTypeManaged) {
        switch (loc->type) {
        case cudaMemLocationTypeDevice:
        case cudaMemLocationTypeNone:
        case cudaMemLocationTypeHost:
        case cudaMemLocationTypeHostNuma:
        case cudaMemLocationTypeHostNumaCurrent:
            return cudaErrorNotSupported;
        default:
            return cudaErrorInvalidValue;
        }
    }
    return cudaErrorInvalidValue;
}

cudaError_t cudaMemGetDefaultMemPool(cudaMemPool_t *memPool, struct cudaMemLocation *location,
                                     enum cudaMemAllocationType type)
{
    cudaError_t err = memPool ? device_pinned(location, type) : cudaErrorInvalidValue;

    if (err)
        return tdm_ret(err);
    return cudaDeviceGetDefaultMemPool(memPool, location->id);
}

cudaError_t cudaMemGetMemPool(cudaMemPool_t *memPool, struct cudaMemLocation *location,
                              enum cudaMemAllocationType type)
{
    cudaError_t err = memPool ? device_pinned(location, type) : cudaErrorInvalidValue;

    if (err)
        return tdm_ret(err);
    return cudaDeviceGetMemPool(memPool, location->id);
}

cudaError_t cudaMemSetMemPool(struct cudaMemLocation *location, enum cudaMemAllocationType type,
                              cudaMemPool_t memPool)
{
    cudaError_t err = device_pinned(location, type);

    if (err)
        return tdm_ret(err);
    return cudaDeviceSetMemPool(location->id, memPool);
}

/* ---- sharing pools between processes ---- */

/* The process's imported pools (their destroy is a release) and imported
 * pointers with their opens (cudaFree closes one; the allocation table
 * forgets the pointer with the last).  The server bounds both and checks
 * every use; without room here a table merely forgets. */
typedef struct imported_ptr {
    uint64_t addr;
    uint32_t refs;
} imported_ptr;

static pthread_mutex_t share_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t *imported_pools, *shareable_pools;
static size_t npools, cap_pools, nshareable, cap_shareable;
static imported_ptr *imported_ptrs;
static size_t nptrs, cap_ptrs;

static uint64_t pool_id(cudaMemPool_t pool)
{
    return (uint64_t)(uintptr_t)pool;
}

cudaError_t tdm_pool_share_created(cudaMemPool_t pool, unsigned types)
{
    tdm_pool_share_args a = { .pool = pool_id(pool), .types = types };
    tdm_handle h = pool_id(pool);
    cudaError_t err = tdm_call_err(TDM_MEM_POOL_SHAREABLE, &a);

    if (!err) {
        pthread_mutex_lock(&share_lock);
        if (tdm_grow(&shareable_pools, &cap_shareable, nshareable + 1, sizeof(*shareable_pools), 8) == 0)
            shareable_pools[nshareable++] = a.pool;
        else
            err = cudaErrorMemoryAllocation;
        pthread_mutex_unlock(&share_lock);
    }
    if (err)
        tdm_call_err(TDM_MEM_POOL_DESTROY, &h);
    return err;
}

/* Takes pool out of a list; true if it was there. */
static bool take_pool(uint64_t *list, size_t *n, uint64_t pool)
{
    bool found = false;

    pthread_mutex_lock(&share_lock);
    for (size_t i = 0; i < *n; i++)
        if (list[i] == pool) {
            list[i] = list[--*n];
            found = true;
            break;
        }
    pthread_mutex_unlock(&share_lock);
    return found;
}

bool tdm_pool_share_destroy(cudaMemPool_t pool, cudaError_t *err)
{
    tdm_handle h = pool_id(pool);

    if (take_pool(imported_pools, &npools, h)) {
        *err = tdm_call_err(TDM_MEM_POOL_SHARE_RELEASE, &h);
        return true;
    }
    /* One of the process's own: a shareable one's export goes with it
     * (no new imports), before the pool itself. */
    if (take_pool(shareable_pools, &nshareable, h))
        tdm_call_err(TDM_MEM_POOL_SHARE_RELEASE, &h);
    return false;
}

/* One more open of an imported pointer. */
static void ptr_opened(uint64_t addr, uint64_t size)
{
    pthread_mutex_lock(&share_lock);
    for (size_t i = 0; i < nptrs; i++)
        if (imported_ptrs[i].addr == addr) {
            imported_ptrs[i].refs++;
            goto out;
        }
    if (tdm_grow(&imported_ptrs, &cap_ptrs, nptrs + 1, sizeof(*imported_ptrs), 8) != 0)
        goto out;
    imported_ptrs[nptrs++] = (imported_ptr){ addr, 1 };
    tdm_allocs_add_import(addr, size);
out:
    pthread_mutex_unlock(&share_lock);
}

bool tdm_pool_share_free(const void *p, cudaError_t *err)
{
    tdm_addr a = (uint64_t)(uintptr_t)p;
    bool found = false, last = false;

    pthread_mutex_lock(&share_lock);
    for (size_t i = 0; i < nptrs; i++)
        if (imported_ptrs[i].addr == a) {
            found = true;
            if (--imported_ptrs[i].refs == 0) {
                imported_ptrs[i] = imported_ptrs[--nptrs];
                last = true;
            }
            break;
        }
    pthread_mutex_unlock(&share_lock);
    if (!found)
        return false;
    /* Natively the importer frees before the owner; closing at once keeps
     * the memory valid for its queued work (the owner's memory stays until
     * the owner frees it, and the server waits for this session's work
     * before memory whose last holder this was goes). */
    *err = tdm_call_err(TDM_IPC_CLOSE_MEM_HANDLE, &a);
    if (last)
        tdm_allocs_remove_import(a);
    return true;
}

/* A POSIX file descriptor holding the server's 64-byte pool handle (a
 * sealed memfd): the program passes it to another process as it would
 * the driver's, and that process's guest reads the handle back. */
static cudaError_t handle_fd(const uint8_t handle[TDM_IPC_HANDLE_BYTES], int *fd_out)
{
    int fd = memfd_create("tandem-mempool", MFD_ALLOW_SEALING);

    if (fd < 0)
        return cudaErrorOperatingSystem;
    if (pwrite(fd, handle, TDM_IPC_HANDLE_BYTES, 0) != TDM_IPC_HANDLE_BYTES ||
        fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) != 0) {
        close(fd);
        return cudaErrorOperatingSystem;
    }
    *fd_out = fd;
    return cudaSuccess;
}

cudaError_t cudaMemPoolExportToShareableHandle(void *shareableHandle, cudaMemPool_t memPool,
                                               enum cudaMemAllocationHandleType handleType, unsigned int flags)
{
    tdm_pool_share_args a = { .pool = pool_id(memPool), .types = (unsigned)handleType };
    tdm_ipc_handle_res r;
    cudaError_t err;

    if (!shareableHandle || !memPool || flags != 0)
        return tdm_ret(cudaErrorInvalidValue);
    memset(&r, 0, sizeof(r));
    err = tdm_call(TDM_MEM_POOL_EXPORT, &a, &r);
    if (!err)
        err = (cudaError_t)r.err;
    if (!err)
        err = handle_fd((const uint8_t *)r.handle.bytes, (int *)shareableHandle);
    return tdm_ret(err);
}

cudaError_t cudaMemPoolImportFromShareableHandle(cudaMemPool_t *memPool, void *shareableHandle,
                                                 enum cudaMemAllocationHandleType handleType, unsigned int flags)
{
    int fd = (int)(intptr_t)shareableHandle;
    tdm_ipc_handle h;
    tdm_handle_res r;
    cudaError_t err;

    if (!memPool || flags != 0 || handleType != cudaMemHandleTypePosixFileDescriptor)
        return tdm_ret(cudaErrorInvalidValue);
    /* Anything but a handle the server minted is refused there (a file
     * that cannot be read at an offset, such as a pipe, is read as it
     * comes). */
    ssize_t got = pread(fd, h.bytes, TDM_IPC_HANDLE_BYTES, 0);
    if (got < 0 && errno == ESPIPE)
        got = read(fd, h.bytes, TDM_IPC_HANDLE_BYTES);
    if (got != TDM_IPC_HANDLE_BYTES)
        return tdm_ret(cudaErrorInvalidValue);
    memset(&r, 0, sizeof(r));
    err = tdm_call(TDM_MEM_POOL_IMPORT, &h, &r);
    if (!err)
        err = (cudaError_t)r.err;
    if (err)
        return tdm_ret(err);
    pthread_mutex_lock(&share_lock);
    if (tdm_grow(&imported_pools, &cap_pools, npools + 1, sizeof(*imported_pools), 8) == 0)
        imported_pools[npools++] = r.handle;
    else
        err = cudaErrorMemoryAllocation;
    pthread_mutex_unlock(&share_lock);
    if (err) {
        tdm_call_err(TDM_MEM_POOL_SHARE_RELEASE, &r.handle);
        return tdm_ret(err);
    }
    *memPool = (cudaMemPool_t)(uintptr_t)r.handle;
    return cudaSuccess;
}

cudaError_t cudaMemPoolExportPointer(struct cudaMemPoolPtrExportData *exportData, void *ptr)
{
    tdm_addr a = (uint64_t)(uintptr_t)ptr;
    tdm_ipc_handle_res r;
    cudaError_t err;

    if (!exportData || !ptr)
        return tdm_ret(cudaErrorInvalidValue);
    memset(&r, 0, sizeof(r));
    err = tdm_call(TDM_MEM_POOL_EXPORT_PTR, &a, &r);
    if (!err)
        err = (cudaError_t)r.err;
    if (!err)
        memcpy(exportData->reserved, r.handle.bytes, sizeof(exportData->reserved));
    return tdm_ret(err);
}

cudaError_t cudaMemPoolImportPointer(void **ptr, cudaMemPool_t memPool, struct cudaMemPoolPtrExportData *exportData)
{
    tdm_pool_import_ptr_args a = { .pool = pool_id(memPool) };
    tdm_ipc_open_mem_res r;
    cudaError_t err;

    if (!ptr || !memPool || !exportData)
        return tdm_ret(cudaErrorInvalidValue);
    memcpy(a.data.bytes, exportData->reserved, TDM_IPC_HANDLE_BYTES);
    memset(&r, 0, sizeof(r));
    err = tdm_call(TDM_MEM_POOL_IMPORT_PTR, &a, &r);
    if (!err)
        err = (cudaError_t)r.err;
    if (err)
        return tdm_ret(err);
    ptr_opened(r.addr, r.size);
    *ptr = (void *)(uintptr_t)r.addr;
    return cudaSuccess;
}
