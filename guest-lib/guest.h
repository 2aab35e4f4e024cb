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
/* Adds err to the process's error log, cudaLogs* (api_logs.c). */
void tdm_logs_note(cudaError_t err);
/* Prints one line naming an entry point Tandem does not implement. */
cudaError_t tdm_unsupported(const char *name);
cudaError_t tdm_not_carried(const char *name, const char *why);

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
/* The session's device count while it is connected, else 0 (then tdm_connect says why); takes
 * no lock, for the device checks every driver query makes. */
int tdm_session_devices(void);
/* Synchronous call of procedure `proc` (proto/calls.def gives its XDR
 * types); the reply's `err` is the caller's to read.  Returns a transport
 * failure as cudaErrorDevicesUnavailable. */
cudaError_t tdm_call(uint32_t proc, void *args, void *res);
/* The same, with the reply decoded by xres instead of the table's (copy.c
 * decodes a download straight into the program's buffer). */
cudaError_t tdm_call_decode(uint32_t proc, void *args, xdrproc_t xres, void *res);
/* One-way call. */
cudaError_t tdm_post(uint32_t proc, void *args);
/* tdm_post of one piece of a host-to-device copy of copy_bytes in all: the
 * transport may carry a large copy's pieces otherwise (TCP's lanes).
 * more: pieces of the copy follow, so the transport may return before the
 * server took this one; the last piece returns once it took them all.
 * A piece is never preceded by a protection check (resume.c, posting()):
 * shm copies post their slot chunks as pieces for that alone. */
cudaError_t tdm_post_piece(uint32_t proc, void *args, uint64_t copy_bytes, bool more);
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
/* Whether any capture (into a new graph or a named one) may be under way:
 * while none is, no stream captures (the driver's cuStreamIsCapturing
 * answers without a round trip). */
bool tdm_graph_mem_captures_open(void);
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
/* The allocation, variable or import containing addr: its start and size
 * (the driver's cuMemGetAddressRange, cuPointerGetAttribute); false if none. */
bool tdm_allocs_range(uint64_t addr, uint64_t *base, uint64_t *size);
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
/* The same, with its start and size. */
int tdm_host_block(const void *p, void **base, size_t *size);
/* Over shm: pinned blocks that a kernel's packed arguments point into are
 * made reachable by the device at their host address (unified addressing). */
void tdm_host_map_kernel_args(const char *params, uint32_t len);
/* cudaFreeHost over TCP: the device memory that mapped the block, if any,
 * goes with it (api_mapped.c). */
cudaError_t tdm_mapped_release(void *p);
/* ---- memory models (issue 14) ---- */
/* The block of the shm region containing p (at its region address, or at
 * the program's address for a registered range): its start as the program
 * names it, the bytes it takes in the region and its region address; -1 if
 * p is in no block of the region. */
int tdm_host_region_block(const void *p, void **base, uint64_t *in_region, uint64_t *region_addr);
/* Flags of the cudaHostRegister'ed range containing p, or -1. */
int tdm_host_registered_flags(const void *p);
/* After a takeover over shm: registers every pinned block with the new
 * server on t, which knows none of them, then maps each block kernels
 * reach by address where they reach it (SHM_MANAGED_MAP).  TDM_T_OK,
 * TDM_T_BROKEN (t died) or TDM_T_REJECTED (refused, logged with the block
 * and why, or out of memory). */
struct tdm_transport;
int tdm_host_reregister(struct tdm_transport *t);
/* Over shm: moves the program's whole pages [lo, lo+len) into a pinned
 * block of the region mapped at the same address (cudaHostRegister).
 * *moved false, and cudaSuccess, when they stay where they are (no shm, the
 * region's host area full: logged); an error when the server refused. */
cudaError_t tdm_host_register_pages(void *lo, size_t len, unsigned flags, bool *moved);
/* Undoes it: the bytes go back to private pages at lo.  The server's error
 * (an earlier asynchronous one, as cudaHostUnregister returns). */
cudaError_t tdm_host_unregister_pages(void *lo);
/* Private anonymous pages with the same bytes replace [lo, lo+len); -errno. */
int tdm_host_restore_private(void *lo, size_t len);
/* The region offset of [p, p+n) inside a registered range moved into the
 * region (copy_shm.c's translation of the program's address). */
bool tdm_host_alias_offset(const struct tdm_shm_region *r, const void *p, size_t n, uint64_t *off);

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
/* The same lookup for the calls that ask about or configure a kernel:
 * unknown is cudaErrorInvalidResourceHandle there (registrations.c). */
tdm_function *tdm_function_for_func(const void *func, cudaError_t *err);
/* nvcc's registration entry point, also behind cudaGetKernel. */
cudaError_t __cudaGetKernel(cudaKernel_t *kernel, const void *func);
tdm_variable *tdm_variable_for_host(const void *host_var, cudaError_t *err);
/* Forgets server-side state after cudaDeviceReset: modules reload on use. */
void tdm_registrations_reset(void);

/* ---- libraries (api_library.c) ---- */

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
/* The same without the coherence step (coherent.c moves host copies with it). */
cudaError_t tdm_memcpy_direct(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind, cudaStream_t stream,
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
/* The managed block containing p: its start and size; false if none. */
bool tdm_managed_block(const void *p, void **base, uint64_t *size);
/* cudaFree of managed memory: *was_managed false (and nothing done) if p
 * is in no managed block. */
cudaError_t tdm_managed_free(void *p, bool *was_managed);
/* cudaDeviceReset released the session's memory: every managed host copy
 * goes, and mapped blocks lose their device memory (mapped again on the
 * next cudaHostGetDevicePointer). */
void tdm_managed_reset(void);

/* ---- host copies kept coherent with device memory (issue 14): coherent.c ---- */
/* Tracks host copy [host, host+span) of device memory [dev, dev+size)
 * (span: whole pages, size <= span).  valid: the two agree now (the host
 * copy starts CLEAN), else the device has the bytes (INVALID). */
cudaError_t tdm_coherent_add(uintptr_t host, uint64_t dev, uint64_t size, uint64_t span, int attach, bool valid);
/* Forgets the pair whose host copy starts at host; its pages read-write again. */
void tdm_coherent_remove(uintptr_t host);
/* Forgets every pair (cudaDeviceReset released their device memory). */
void tdm_coherent_clear(void);
/* The state of the host copy's block holding addr: 0 INVALID, 1 CLEAN,
 * 2 DIRTY; -1 if addr is in no host copy (for tests and diagnostics). */
int tdm_coherent_state(const void *addr);
/* The pair whose host copy or device memory contains addr. */
bool tdm_coherent_lookup(const void *addr, void **host, uint64_t *dev);
/* cudaStreamAttachMemAsync's effect on which launches reach the pair. */
cudaError_t tdm_coherent_attach(const void *host, int attach, uint64_t stream);
/* Before a launch on stream (every_stream: a graph's, whose nodes may run
 * anywhere): DIRTY blocks uploaded on the stream, then all INVALID. */
cudaError_t tdm_coherent_before_launch(uint64_t stream, bool every_stream);
/* Rewrites a copy whose sides name coherent memory into a device copy. */
cudaError_t tdm_coherent_copy(void **dst, const void **src, size_t n, enum cudaMemcpyKind *kind, uint64_t stream);
/* A device-side write of [*dst, +n) (memset): translated and invalidated. */
cudaError_t tdm_coherent_device_write(void **dst, size_t n, uint64_t stream);
/* cudaMemPrefetchAsync: to the host fetches now, to the device flushes. */
cudaError_t tdm_coherent_prefetch(const void *addr, size_t n, bool to_host, uint64_t stream);
/* A stream starts or ends capturing a graph: its work moves no data. */
void tdm_coherent_capture(uint64_t stream, bool on);
/* Pinned memory by its host pointer over TCP: device memory at host's
 * own address, the block its host copy, all DIRTY (the host's bytes are
 * the block's); a launch leaves it valid. */
cudaError_t tdm_coherent_add_pinned(uintptr_t host, uint64_t size, uint64_t span);
/* Around a call that waits for the device: before, the DIRTY blocks of
 * pinned pairs a launch may use go up on a non-blocking stream (a kernel
 * waiting for the host's write sees it); after, they become INVALID. */
void tdm_coherent_before_wait(void);
void tdm_coherent_after_wait(void);
/* Over TCP: whether p lies in a pinned block with device memory at its own
 * address (made coherent the first time it is asked: hostmem.c). */
bool tdm_host_by_pointer(const void *p);
/* Over shm: the region block holding p (pinned, or a registered range)
 * mapped for the device at the program's own address; true once it is. */
bool tdm_host_map_own(const void *p);
/* Over shm, where the block holding p cannot be at its own address: the
 * device address of the server's own mapping of it (SHM_HOST_MAP, asked
 * once per block), plus p's offset, in *dev. */
cudaError_t tdm_host_map_elsewhere(const void *p, void **dev);
/* cudaDeviceReset: pinned blocks over TCP that lie at device memory of
 * their own are released with it (as a reset releases pinned memory
 * natively): the arena may hand their addresses out again. */
void tdm_host_reset(void);
/* The library's own non-blocking stream: pinned uploads (over TCP), and
 * the device work that sets up memory handed out as coherent (managed
 * memory's zeroing, a mapped block's first upload over TCP), which must be
 * done for every stream's work before the program gets the pointer: a
 * non-blocking stream of the program's does not wait for the legacy one. */
cudaStream_t tdm_host_upload_stream(void);
/* Work on `stream` after this waits for the uploads queued on it so far. */
cudaError_t tdm_host_upload_fence(uint64_t stream);
/* Returns once the work queued on it so far is done. */
cudaError_t tdm_host_upload_drain(void);
/* After cudaDeviceReset, which destroyed the stream: made again when next needed. */
void tdm_host_upload_reset(void);

/* ---- ipc (issue 14) ---- */
/* Memory another process exported, opened with cudaIpcOpenMemHandle: device
 * memory for classifying pointers, never an allocation cudaFree takes. */
void tdm_allocs_add_import(uint64_t addr, uint64_t size);
void tdm_allocs_remove_import(uint64_t addr);
/* Interprocess events (api_ipc.c): noted when made or opened, forgotten
 * when destroyed; a record of or wait on one, once posted (`posted` its
 * result), is fenced so the server has it before the call returns. */
void tdm_ipc_event_note(uint64_t handle);
void tdm_ipc_event_forget(uint64_t handle);
cudaError_t tdm_ipc_event_fence(uint64_t handle, cudaError_t posted);
/* cudaDeviceReset closed every import and destroyed every event. */
void tdm_ipc_reset(void);

/* ---- host callbacks (issue 14): callbacks.c ---- */
/* Queues a host function (host, or stream_cb with the stream's status) on
 * stream; it runs on the callback thread when the stream gets there. */
cudaError_t tdm_callback_enqueue(cudaStream_t stream, cudaHostFn_t host, cudaStreamCallback_t stream_cb,
                                 void *data);
/* A host callback may not call CUDA (cudaErrorNotPermitted, as natively):
 * true for every call but the callback thread's own polls, there. */
bool tdm_callbacks_refuse(const struct tdm_call_info *call);
/* True on the callback thread. */
bool tdm_callbacks_on_thread(void);
/* With the client's lock held: true when call must not be sent while host
 * callbacks may be pending (it could make the server wait for a stream
 * that a callback holds); then wait with tdm_callbacks_wait_idle, unlocked. */
bool tdm_callbacks_must_wait(const struct tdm_call_info *call);
void tdm_callbacks_wait_idle(void);

/* ---- graph memcpy nodes (issue 14): graph_host.c (docs/graphs.md) ---- */
/* A host-to-device node of graph reads src (n bytes) at each launch: key
 * is its node handle, which uploads name. */
cudaError_t tdm_graph_host_source(uint64_t graph, uint64_t key, const void *src, uint64_t n);
/* Some graph writes host memory through staging: launches are fetched. */
void tdm_graph_host_output(void);
/* `to` (a graph or exec handle) reads what `from` reads (clone,
 * instantiate, exec update); forget: a handle is destroyed. */
cudaError_t tdm_graph_host_copy(uint64_t from, bool from_exec, uint64_t to, bool to_exec);
void tdm_graph_host_forget(uint64_t handle, bool exec);
/* Uploads exec's staged sources before its launch is posted. */
cudaError_t tdm_graph_host_before_launch(uint64_t exec);
bool tdm_graph_host_fetch_due(void);
/* Brings finished launches' device-to-host bytes into the program's memory. */
void tdm_graph_host_fetch(void);
/* A device-to-host copy on a capturing stream the server could not reach
 * (it answered TDM_ERR_CAPTURE_STAGE): captured through staging. */
cudaError_t tdm_graph_capture_dtoh(void *dst, uint64_t src, size_t n, uint64_t stream);
/* Captures this process began and did not end (a hint: copies ask the
 * server whether they are captured only while some may be). */
void tdm_graph_capture_opened(void);
void tdm_graph_capture_closed(void);
bool tdm_graph_captures_open(void);
/* A host-to-device copy from src on a stream that may capture: the
 * server's answer (TDM_ERR_NOT_CAPTURING: copy as usual). */
cudaError_t tdm_graph_capture_htod(void *dst, const void *src, size_t n, uint64_t stream);
/* Before the end of the capture on stream, and after it (graph 0: failed):
 * the captured host-to-device sources become graph's. */
uint64_t tdm_graph_capture_ending(uint64_t stream);
void tdm_graph_capture_ended(uint64_t id, uint64_t graph);
/* The device address of [offset, +count) of a registered __device__
 * variable (api_memory.c); cudaErrorInvalidValue past its end. */
cudaError_t tdm_symbol_range(const void *symbol, size_t count, size_t offset, uint64_t *addr);
/* The region offset of [p, p+n) if it lies in the shm region's host
 * (pinned) memory area (copy_shm.c). */
bool tdm_shm_host_offset(const struct tdm_shm_region *r, const void *p, size_t n, uint64_t *off);

/* ---- graph host nodes (issue 14): callbacks.c, api_graph_host.c ---- */
/* At most this many host nodes' functions kept per process. */
#define TDM_MAX_HOST_NODES 65536
/* Keeps fn(data) for a graph's host node under *key (its node not yet added). */
cudaError_t tdm_callback_host_node(cudaHostFn_t fn, void *data, uint64_t *key);
/* The node added for key (its parameters can be asked by it). */
void tdm_callback_host_node_named(uint64_t key, uint64_t node);
/* The node was not added: key is forgotten. */
void tdm_callback_host_node_drop(uint64_t key);
/* Gets or sets the function of node (cudaGraphAddHostNode's);
 * cudaErrorInvalidValue if it is no such node. */
cudaError_t tdm_callback_host_node_params(uint64_t node, cudaHostFn_t *fn, void **data, bool set);
/* Around a graph launch's post: waits first until no host callback or
 * host node is pending (docs/graphs.md "Host nodes"); true if the launch
 * may run host nodes (then call tdm_callback_graph_launch_end once it is
 * sent). */
bool tdm_callback_graph_launch_begin(void);
void tdm_callback_graph_launch_end(void);
/* Sends a node to add (api_graph.c); a->kind and its fields are the caller's. */
cudaError_t tdm_graph_add_node_call(cudaGraphNode_t *pNode, cudaGraph_t graph, const cudaGraphNode_t *deps,
                                    size_t ndeps, tdm_graph_add_node_args *a);

/* ---- graph node parameters (issue 14): api_graph_params.c ---- */
/* What the program gave node (added to graph; 0: the graph of its record)
 * for the get calls to answer; node's earlier record is dropped. */
void tdm_graph_params_kernel(uint64_t node, uint64_t graph, const struct cudaKernelNodeParams *p);
void tdm_graph_params_memset(uint64_t node, uint64_t graph, const struct cudaMemsetParams *p);
void tdm_graph_params_memcpy(uint64_t node, uint64_t graph, const struct cudaMemcpy3DParms *p);
/* The node, or every node of the graph, is gone. */
void tdm_graph_params_forget_node(uint64_t node);
void tdm_graph_params_forget_graph(uint64_t graph);
/* The exec is gone or runs its graph's host node functions again
 * (cudaGraphExecUpdate): its own host node keys are not reused. */
void tdm_graph_params_forget_exec(uint64_t exec);
/* A memcpy node's cudaMemcpyDefault resolved by where dst and src lie
 * (api_graph_nodes.c). */
enum cudaMemcpyKind tdm_graph_copy_kind(const void *dst, const void *src, enum cudaMemcpyKind kind);
/* The one contiguous range a graph memcpy node's 3D parameters copy
 * (api_graph_nodes.c); arrays and boxes with gaps are not remoted. */
cudaError_t tdm_graph_copy_flat(const struct cudaMemcpy3DParms *p, void **dst, const void **src, size_t *n);
/* A staged host-to-device source of node (key) now reads src: in exec's
 * record (exec true), or in the record of the graph holding it (graph_host.c). */
void tdm_graph_host_retarget(uint64_t key, bool exec, uint64_t handle, const void *src);
/* Key (a host node's, callbacks.c) runs fn(data) from now on, when no host
 * function of the process is pending (none of key's earlier runs is); false
 * otherwise, and for an unknown key. */
bool tdm_callback_host_key_update(uint64_t key, cudaHostFn_t fn, void *data);

/* ---- event nodes, child graphs, user objects (issue 14): user_objects.c, callbacks.c ---- */
/* Runs fn(data) on the callback thread soon, outside any CUDA call (a user
 * object's destructor). */
cudaError_t tdm_callback_post(cudaHostFn_t fn, void *data);
/* The graph from's user object references, copied to graph or exec `to`
 * (a clone, an instantiation; an updated exec's own references go first). */
cudaError_t tdm_user_objects_copy(uint64_t from, uint64_t to, bool to_exec);
/* A graph or exec destroyed: its references go (an exec's once the streams
 * it was launched into are done). */
void tdm_user_objects_forget(uint64_t handle, bool exec);
/* exec was launched into stream. */
void tdm_user_objects_launched(uint64_t exec, cudaStream_t stream);

/* ---- libraries (issue 14): api_library.c ---- */
/* The kernel record of a library's (cudaLibraryGetKernel hands it out as
 * the cudaKernel_t) if p is one, live or unloaded; NULL otherwise.  Found
 * by address in the records, so p is never dereferenced. */
tdm_function *tdm_library_kernel_record(const void *p);
/* The loaded library holding kernel record f, NULL if none does (the Driver API's
 * cuKernelGetLibrary and cuFuncGetModule, issue 15). */
cudaLibrary_t tdm_library_of_kernel(const tdm_function *f);
/* cudaDeviceReset released the session's modules: every library's kernels
 * stop being valid (tdm_registrations_reset). */
void tdm_libraries_reset(void);

/* ---- peer and batch copies, pool selection and sharing (issue 14): api_pool_share.c ---- */
/* A pool was created with handle types (cudaMemPoolCreate): the server
 * learns them; the pool is destroyed again if it cannot. */
cudaError_t tdm_pool_share_created(cudaMemPool_t pool, unsigned types);
/* cudaMemPoolDestroy: true when pool is an imported pool, released here
 * (*err says how); false for the caller to destroy its own pool. */
bool tdm_pool_share_destroy(cudaMemPool_t pool, cudaError_t *err);
/* cudaFree/cudaFreeAsync: true when p is a pointer imported from a pool,
 * closed here (*err says how). */
bool tdm_pool_share_free(const void *p, cudaError_t *err);

/* ---- cluster launch (issue 14) ---- */
/* A launch with thread block clusters: c's cluster, preferred, policy and
 * cooperative are the caller's, its launch part is filled here (launch.c).
 * One-way: the driver's errors come at the next synchronizing call. */
cudaError_t tdm_launch_cluster(tdm_function *f, dim3 grid, dim3 block, void **args, size_t shmem, cudaStream_t stream,
                               tdm_cluster_launch_args *c);
/* The cluster launch attributes a configuration carries, as c's fields;
 * *any true when a cluster or preferred cluster dimension is set
 * (api_cluster.c). */
cudaError_t tdm_cluster_attribute(const cudaLaunchAttribute *a, tdm_cluster_launch_args *c, bool *any);
/* cudaFuncAttributes' cluster fields of f (api_cluster.c). */
cudaError_t tdm_cluster_func_attrs(tdm_function *f, struct cudaFuncAttributes *attr);

#endif
