/* CUDA IPC (docs/ipc.md): the handles are the server's, 64 opaque bytes the
 * program passes between its processes however it likes; each process is
 * its own session of the same server.  The guest only carries them. */
#include <pthread.h>
#include <string.h>

#include "grow.h"
#include "guest.h"

/* The process's opens of each imported allocation: the server counts them
 * too, the allocation table needs to know when the last one closes. */
typedef struct import_ref {
    uint64_t addr;
    uint32_t refs;
} import_ref;

static pthread_mutex_t imports_lock = PTHREAD_MUTEX_INITIALIZER;
static import_ref *imports;
static size_t nimports, cap_imports;

static void import_opened(uint64_t addr, uint64_t size)
{
    pthread_mutex_lock(&imports_lock);
    for (size_t i = 0; i < nimports; i++)
        if (imports[i].addr == addr) {
            imports[i].refs++;
            goto out;
        }
    /* Without room the table merely forgets it: the server still checks
     * every use of the memory. */
    if (tdm_grow(&imports, &cap_imports, nimports + 1, sizeof(*imports), 8) != 0)
        goto out;
    imports[nimports++] = (import_ref){ addr, 1 };
    tdm_allocs_add_import(addr, size);
out:
    pthread_mutex_unlock(&imports_lock);
}

static void import_closed(uint64_t addr)
{
    pthread_mutex_lock(&imports_lock);
    for (size_t i = 0; i < nimports; i++)
        if (imports[i].addr == addr) {
            if (--imports[i].refs == 0) {
                imports[i] = imports[--nimports];
                tdm_allocs_remove_import(addr);
            }
            break;
        }
    pthread_mutex_unlock(&imports_lock);
}

static cudaError_t get_handle(uint32_t proc, void *args, void *out)
{
    tdm_ipc_handle_res r;
    cudaError_t err;

    memset(&r, 0, sizeof(r));
    err = tdm_call(proc, args, &r);
    if (!err)
        err = (cudaError_t)r.err;
    if (!err)
        memcpy(out, r.handle.bytes, TDM_IPC_HANDLE_BYTES);
    return err;
}

cudaError_t cudaIpcGetMemHandle(cudaIpcMemHandle_t *handle, void *devPtr)
{
    tdm_addr a = (uint64_t)(uintptr_t)devPtr;

    if (!handle || !devPtr)
        return tdm_ret(cudaErrorInvalidValue);
    return tdm_ret(get_handle(TDM_IPC_GET_MEM_HANDLE, &a, handle->reserved));
}

cudaError_t cudaIpcOpenMemHandle(void **devPtr, cudaIpcMemHandle_t handle, unsigned int flags)
{
    tdm_ipc_open_mem_args a;
    tdm_ipc_open_mem_res r;
    cudaError_t err;

    if (!devPtr)
        return tdm_ret(cudaErrorInvalidValue);
    memcpy(a.handle.bytes, handle.reserved, TDM_IPC_HANDLE_BYTES);
    a.flags = flags;
    memset(&r, 0, sizeof(r));
    err = tdm_call(TDM_IPC_OPEN_MEM_HANDLE, &a, &r);
    if (!err)
        err = (cudaError_t)r.err;
    if (err)
        return tdm_ret(err);
    import_opened(r.addr, r.size);
    *devPtr = (void *)(uintptr_t)r.addr;
    return cudaSuccess;
}

cudaError_t cudaIpcCloseMemHandle(void *devPtr)
{
    tdm_addr a = (uint64_t)(uintptr_t)devPtr;
    cudaError_t err;

    if (!devPtr)
        return tdm_ret(cudaErrorInvalidValue);
    err = tdm_call_err(TDM_IPC_CLOSE_MEM_HANDLE, &a);
    if (!err)
        import_closed(a);
    return tdm_ret(err);
}

cudaError_t cudaIpcGetEventHandle(cudaIpcEventHandle_t *handle, cudaEvent_t event)
{
    tdm_handle h = (uint64_t)(uintptr_t)event;

    if (!handle)
        return tdm_ret(cudaErrorInvalidValue);
    if (!event)
        return tdm_ret(cudaErrorInvalidResourceHandle);
    return tdm_ret(get_handle(TDM_IPC_GET_EVENT_HANDLE, &h, handle->reserved));
}

cudaError_t cudaIpcOpenEventHandle(cudaEvent_t *event, cudaIpcEventHandle_t handle)
{
    tdm_ipc_handle a;
    tdm_handle_res r;
    cudaError_t err;

    if (!event)
        return tdm_ret(cudaErrorInvalidValue);
    memcpy(a.bytes, handle.reserved, TDM_IPC_HANDLE_BYTES);
    memset(&r, 0, sizeof(r));
    err = tdm_call(TDM_IPC_OPEN_EVENT_HANDLE, &a, &r);
    if (!err)
        err = (cudaError_t)r.err;
    if (err)
        return tdm_ret(err);
    *event = (cudaEvent_t)(uintptr_t)r.handle;
    tdm_live_handle_add(r.handle);
    tdm_ipc_event_note(r.handle);
    return cudaSuccess;
}

/* ---- interprocess events ---- */
/* Handles of the process's interprocess events (made with
 * cudaEventInterprocess or opened).  One-way calls wait in the send buffer
 * until something pushes them out; another process ordering its work on
 * such an event must find this process's record or wait already queued,
 * as natively, so those calls are fenced. */
static pthread_mutex_t events_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t *shared_events;
static size_t nshared, cap_shared;

void tdm_ipc_event_note(uint64_t handle)
{
    pthread_mutex_lock(&events_lock);
    if (tdm_grow(&shared_events, &cap_shared, nshared + 1, sizeof(*shared_events), 8) == 0)
        shared_events[nshared++] = handle;
    pthread_mutex_unlock(&events_lock);
}

void tdm_ipc_event_forget(uint64_t handle)
{
    pthread_mutex_lock(&events_lock);
    for (size_t i = 0; i < nshared; i++)
        if (shared_events[i] == handle) {
            shared_events[i] = shared_events[--nshared];
            break;
        }
    pthread_mutex_unlock(&events_lock);
}

static bool is_shared(uint64_t handle)
{
    bool found = false;

    pthread_mutex_lock(&events_lock);
    for (size_t i = 0; i < nshared && !found; i++)
        found = shared_events[i] == handle;
    pthread_mutex_unlock(&events_lock);
    return found;
}

cudaError_t tdm_ipc_event_fence(uint64_t handle, cudaError_t posted)
{
    if (posted || !is_shared(handle))
        return posted;
    return tdm_call_err(TDM_IPC_FENCE, NULL);
}

void tdm_ipc_reset(void)
{
    pthread_mutex_lock(&imports_lock);
    nimports = 0;   /* the allocation table was cleared with them */
    pthread_mutex_unlock(&imports_lock);
    pthread_mutex_lock(&events_lock);
    nshared = 0;
    pthread_mutex_unlock(&events_lock);
}
