/* Internal interface of the guest library (libcudart.so.13).
 *
 * Process-wide state here is what the real CUDA runtime also has once per
 * process: the connection to the server, the registered fat binaries,
 * kernels and variables, and the table of the process's device allocations.
 * Last-error state is per thread, as in CUDA. */
#ifndef TANDEM_GUEST_H
#define TANDEM_GUEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#include "tandem_rpc.h"

/* ---- errors (errors.c) ---- */
/* Records err as the thread's last error when it is one, and returns it. */
cudaError_t tdm_ret(cudaError_t err);
/* Prints one line naming an entry point Tandem does not implement. */
cudaError_t tdm_unsupported(const char *name);

/* ---- the client: connection and call path (client.c) ---- */
typedef struct tdm_hello_info {
    char backend[32];
    bool simulated;
    int device_count;
    int driver_version;
    uint64_t arena_base, arena_size;
} tdm_hello_info;

/* Connects on first use (TANDEM_SERVER, default tcp://127.0.0.1:7710).
 * cudaSuccess, or cudaErrorDevicesUnavailable after printing why. */
cudaError_t tdm_connect(void);
const tdm_hello_info *tdm_hello(void);
/* Synchronous call of procedure `proc` (proto/calls.def gives its XDR
 * types); the reply's `err` is the caller's to read.  Returns a transport
 * failure as cudaErrorDevicesUnavailable. */
cudaError_t tdm_call(uint32_t proc, void *args, void *res);
/* The same, with the reply decoded by xres instead of the table's (copy.c
 * decodes a download straight into the program's buffer). */
cudaError_t tdm_call_decode(uint32_t proc, void *args, xdrproc_t xres, void *res);
/* One-way call. */
cudaError_t tdm_post(uint32_t proc, void *args);
/* Convenience for procedures whose result is a bare int error. */
cudaError_t tdm_call_err(uint32_t proc, void *args);
/* The shm transport's shared region (connecting first), or NULL over
 * another transport. */
const struct tdm_shm_region *tdm_shm(void);
/* Waits for a copy's completion slot; its error in *err.  If the server
 * dies meanwhile, the session resumes on its standby and the wait goes on
 * there. */
cudaError_t tdm_shm_wait_copy(uint32_t slot, uint32_t ticket, int *err);
/* The guest is about to refill data area chunk `chunk` (the journal keeps
 * the bytes a journaled copy still needs). */
void tdm_shm_chunk_reuse(uint32_t chunk);

/* ---- the program's streams and events (live_handles.c) ---- */
void tdm_live_handle_add(uint64_t handle);
void tdm_live_handle_remove(uint64_t handle);
bool tdm_live_handle_held(uint64_t handle);
void tdm_live_handles_clear(void);

/* The one device of this process's server exists (api_device.c):
 * cudaSuccess, cudaErrorInvalidDevice, or why there is none. */
cudaError_t tdm_check_device(int device);
/* An allocating call (TDM_MALLOC, TDM_MALLOC_ASYNC...) whose reply is a
 * tdm_malloc_res; the address goes into the allocation table (api_memory.c). */
cudaError_t tdm_malloc_call(uint32_t proc, void *args, size_t size, void **devPtr);

/* ---- the allocation table: the program's device allocations (allocs.c) ---- */
void tdm_allocs_add(uint64_t addr, uint64_t size, bool global);
/* A graph allocation node's memory (issue 14): frees leave it in the table
 * for the graph's next launch; a later allocation at its address replaces it. */
void tdm_allocs_add_graph(uint64_t addr, uint64_t size);
/* Captures the program began and has not ended (api_graph_mem.c): while
 * there are some, cudaMallocAsync asks whether its stream captures. */
void tdm_graph_mem_captures(int delta);
/* After cudaMallocAsync of [addr, +size) on stream: a captured allocation
 * is graph memory in the allocation table. */
void tdm_graph_mem_async_alloc(cudaStream_t stream, uint64_t addr, uint64_t size);
/* ---- conditional graph nodes (issue 14): api_graph_cond.c ---- */
/* cudaGraphAddNode of a conditional node: p->phGraph_out receives its bodies. */
cudaError_t tdm_graph_add_cond_node(cudaGraphNode_t *node, cudaGraph_t graph, const cudaGraphNode_t *deps,
                                    size_t ndeps, struct cudaConditionalNodeParams *p);
/* cudaStreamEndCapture of stream: whether its capture went into a graph
 * the program named (then its graph output may be NULL); forgets it. */
bool tdm_capture_to_graph_ended(uint64_t stream);
/* cudaStreamGetCaptureInfo asking for the graph or its dependencies. */
cudaError_t tdm_capture_graph_info(uint64_t stream, enum cudaStreamCaptureStatus *status, unsigned long long *id,
                                   cudaGraph_t *graph, const cudaGraphNode_t **deps, const cudaGraphEdgeData **edges,
                                   size_t *ndeps);
int tdm_allocs_remove(uint64_t addr);
/* True when [addr, addr+len) is inside one allocation or variable. */
bool tdm_allocs_covers(uint64_t addr, uint64_t len);
bool tdm_allocs_is_device(const void *p);
/* True when addr is the start of a device allocation the program holds. */
bool tdm_allocs_holds(uint64_t addr);
void tdm_allocs_clear(bool keep_globals);

/* ---- host allocations from cudaMallocHost/cudaHostAlloc (hostmem.c) ---- */
/* The block in *p; cudaErrorMemoryAllocation when no memory is left, or
 * the server's reason for refusing to pin it. */
cudaError_t tdm_host_alloc(size_t size, unsigned flags, void **p);
/* cudaErrorInvalidValue for a pointer not from tdm_host_alloc. */
cudaError_t tdm_host_free(void *p);
/* Flags of the pinned allocation containing p, or -1. */
int tdm_host_lookup(const void *p, void **base);
/* ---- memory models (issue 14) ---- */
/* The block of the shm region containing p: its start and the bytes it
 * takes there; -1 if p is in no block of the region. */
int tdm_host_region_block(const void *p, void **base, uint64_t *in_region);
/* Whether the device can map this program's host memory (api_mapped.c):
 * over shm only. */
bool tdm_mapped_available(void);
/* Flags of the cudaHostRegister'ed range containing p, or -1. */
int tdm_host_registered_flags(const void *p);
/* After a takeover over shm: registers every pinned block with the new
 * server on t, which knows none of them.  TDM_T_OK, TDM_T_BROKEN (t died)
 * or TDM_T_REJECTED (refused, or out of memory). */
struct tdm_transport;
int tdm_host_reregister(struct tdm_transport *t);

/* ---- registrations of fat binaries, kernels and variables; modules (registrations.c) ---- */
#define TDM_FUNCTION_MAGIC 0x7464666eu

typedef struct tdm_function {
    uint32_t magic;              /* TDM_FUNCTION_MAGIC: checks a cudaKernel_t */
    int ready;                   /* loaded without error; read without the lock */
    const void *host_fun;
    char *name;                  /* mangled device name */
    struct tdm_fatbin *fatbin;
    uint64_t handle;             /* server handle once loaded */
    int load_err;
    uint32_t nparams;
    uint32_t *param_offset, *param_size;
    uint32_t params_len;
} tdm_function;

typedef struct tdm_variable {
    const void *host_var;
    char *name;
    size_t size;
    struct tdm_fatbin *fatbin;
    uint64_t addr;               /* device address once loaded */
    int load_err;
} tdm_variable;

/* The function registered for host stub `host_fun`, loading its module on
 * first use; NULL with *err set otherwise. */
tdm_function *tdm_function_for_host(const void *host_fun, cudaError_t *err);
/* Same for a cudaKernel_t handed out by __cudaGetKernel. */
tdm_function *tdm_function_for_kernel(const void *kernel, cudaError_t *err);
/* Either of the two (cudaLaunchKernelExC takes both). */
tdm_function *tdm_function_for_stub_or_kernel(const void *func, cudaError_t *err);
/* nvcc's registration entry point, also behind cudaGetKernel. */
cudaError_t __cudaGetKernel(cudaKernel_t *kernel, const void *func);
tdm_variable *tdm_variable_for_host(const void *host_var, cudaError_t *err);
/* Forgets server-side state after cudaDeviceReset: modules reload on use. */
void tdm_registrations_reset(void);

/* ---- launch configuration stack (launch.c) ---- */
cudaError_t tdm_launch(tdm_function *f, dim3 grid, dim3 block, void **args, size_t shmem, cudaStream_t stream);
/* Packs a kernel's arguments into the layout the server reported for it
 * (buf has room for f->params_len bytes): a launch's, a kernel node's. */
void tdm_pack_params(const tdm_function *f, void **args, char *buf);

/* ---- copies (copy.c) ---- */
/* async: cudaMemcpyAsync semantics (a copy from or to pinned memory may
 * still be in flight when it returns). */
cudaError_t tdm_memcpy(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind, cudaStream_t stream,
                       bool async);

/* ---- copies through the shm transport's region (copy_shm.c) ---- */
struct tdm_shm_region;
cudaError_t tdm_shm_htod(const struct tdm_shm_region *r, uint64_t dst, const void *src, size_t n, uint64_t stream,
                         bool async);
cudaError_t tdm_shm_dtoh(const struct tdm_shm_region *r, void *dst, uint64_t src, size_t n, uint64_t stream,
                         bool async);
cudaError_t tdm_memset(void *dst, int value, size_t n, cudaStream_t stream);

static inline uint64_t tdm_stream_id(cudaStream_t s)
{
    return (uint64_t)(uintptr_t)s;
}

/* ---- device output (issue 14): device_output.c ---- */
struct tdm_call_info;
/* True when call's reply `res` said device output waits (the flag is
 * cleared from its err). */
bool tdm_output_flag_take(const struct tdm_call_info *call, void *res);
/* The same for an shm copy's completion error. */
bool tdm_output_flag_take_err(int *err);
/* Writes fetched output to the program's stdout and stderr, its own
 * pending stdout first. */
void tdm_output_write(const tdm_output_res *r);
/* Fetches the session's device output and writes it. */
void tdm_output_fetch(void);

/* ---- runtime (issue 14) ---- */
/* tdm_launch as call `proc` (TDM_LAUNCH, or the synchronous
 * TDM_LAUNCH_COOPERATIVE), the arguments packed alike (launch.c). */
cudaError_t tdm_launch_as(uint32_t proc, tdm_function *f, dim3 grid, dim3 block, void **args, size_t shmem,
                          cudaStream_t stream);

/* ---- managed memory (issue 14) ---- */
/* Flag of tdm_host_alloc's table marking a managed block (api_managed.c),
 * outside every cudaHostAlloc flag. */
#define TDM_HOST_MANAGED 0x80000000u
/* The managed block containing p: its start and size; false if none. */
bool tdm_managed_block(const void *p, void **base, uint64_t *size);
/* cudaFree of managed memory: *was_managed false (and nothing done) if p
 * is in no managed block. */
cudaError_t tdm_managed_free(void *p, bool *was_managed);

#endif
