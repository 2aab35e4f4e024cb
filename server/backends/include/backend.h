/* The device backend interface.
 *
 * The session layer (session.c) owns everything a guest can name: logical
 * handles, the address arena, quotas, legacy-stream ordering.  A backend only
 * knows how to make the device do things; it never sees guest ids and never
 * validates guest input (the session layer has done that before calling).
 *
 * Every function returns a cudaError_t value (0 = success) so the session
 * layer can pass it to the guest unchanged.  Opaque objects (tdm_bstream,
 * tdm_bevent, tdm_bmodule, tdm_bfunc, tdm_bmem) are owned by the backend.
 *
 * Threading: one backend instance serves every session of a server process.
 * Calls arrive concurrently from several connection threads, each for a
 * different session; a backend must be safe for that.  Calls for one session
 * come from one thread at a time. */
#ifndef TANDEM_SERVER_BACKEND_H
#define TANDEM_SERVER_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct tdm_backend tdm_backend;
typedef struct tdm_bstream tdm_bstream; /* NULL = the device's legacy stream */
typedef struct tdm_bevent tdm_bevent;
typedef struct tdm_bmodule tdm_bmodule;
typedef struct tdm_bfunc tdm_bfunc;
typedef struct tdm_bmem tdm_bmem;       /* one physical allocation */
typedef struct tdm_bgraph tdm_bgraph;   /* a graph (captured) */
typedef struct tdm_bgexec tdm_bgexec;   /* an executable graph */
typedef struct tdm_bgnode tdm_bgnode;   /* a node of a graph built node by node */
typedef struct tdm_bhold tdm_bhold;     /* a stream held for a host callback (issue 14) */
typedef struct tdm_bshare tdm_bshare;   /* a part of the device's SMs (issue 17: docs/sm-shares.md) */
typedef struct tdm_bspace tdm_bspace;   /* what one session's kernels may touch (issue 16) */

#define TDM_MAX_KERNEL_PARAMS 256
#define TDM_MAX_PARAM_BYTES 32764       /* CUDA 12.1+ kernel parameter limit */
#define TDM_DEVICE_ATTR_COUNT 160       /* covers every CUdevice_attribute < 160 */

typedef struct tdm_device_info {
    char name[256];
    uint8_t uuid[16];
    uint64_t total_mem;
    int32_t attrs[TDM_DEVICE_ATTR_COUNT]; /* indexed by cudaDeviceAttr / CUdevice_attribute */
    bool simulated;                       /* true only for the sim backend */
} tdm_device_info;

typedef struct tdm_param_info {
    uint32_t count;
    uint32_t offset[TDM_MAX_KERNEL_PARAMS];
    uint32_t size[TDM_MAX_KERNEL_PARAMS];
} tdm_param_info;

typedef struct tdm_func_attrs {
    int64_t shared_size_bytes, const_size_bytes, local_size_bytes;
    int32_t max_threads_per_block, num_regs, ptx_version, binary_version;
    int32_t cache_mode_ca, max_dynamic_shared_size_bytes, preferred_shmem_carveout;
} tdm_func_attrs;

typedef struct tdm_dim3 { uint32_t x, y, z; } tdm_dim3;

/* ---- layout (issue 14) ---- */
typedef struct tdm_barray tdm_barray;   /* a CUDA array */
typedef struct tdm_bmipmap tdm_bmipmap; /* a CUDA mipmapped array (issue 14, mipmapped arrays) */
/* One side of a 2D/3D copy: device memory at `dev`, or host memory at
 * `host` when that is not NULL, row r of slice z starting at
 * (z * rows + r) * pitch, as in CUDA_MEMCPY3D; or, when `array` is not
 * NULL, that array from byte x of row y of slice z. */
typedef struct tdm_box {
    uint64_t dev;
    void *host;
    uint64_t pitch, rows;
    tdm_barray *array;
    uint64_t x, y, z;
} tdm_box;
/* A CUDA array: channels of `bits` each (1, 2 or 4 of them) of a
 * cudaChannelFormatKind (signed, unsigned or float), an extent in elements
 * (height and depth 0 for fewer dimensions), cudaArray* flags. */
typedef struct tdm_array_desc {
    int kind, bits, channels;
    uint64_t width, height, depth;
    unsigned flags;
} tdm_array_desc;
typedef struct tdm_extent { uint64_t width, height, depth; } tdm_extent; /* width in bytes */
/* What a texture or surface object reads, validated by the session layer:
 * an array, or device memory (linear: size bytes; pitch2D: width x height
 * elements, rows pitch bytes apart) of a channel format as tdm_array_desc's. */
typedef struct tdm_tex_resource {
    int type;                       /* cudaResourceType: array, mipmapped array, linear or pitch2D */
    tdm_barray *array;
    uint64_t dev, size, width, height, pitch;
    int kind, bits, channels;
    tdm_bmipmap *mipmap;            /* cudaResourceTypeMipmappedArray */
} tdm_tex_resource;
struct cudaTextureDesc;
struct cudaResourceViewDesc;

typedef struct tdm_backend_config {
    int device;              /* physical device ordinal this server drives */
    uint64_t arena_base;     /* fixed virtual address of the logical arena */
    uint64_t arena_size;
    const char *sim_mps_domain; /* sim: the MPS domain to join (NULL: none) */
    /* ---- SM shares (issue 17): docs/sm-shares.md ---- */
    unsigned sim_sms;        /* sim: the device's SM count (0: 132, as an H100) */
    uint32_t sim_wave_us;    /* sim: modelled time of one wave of a kernel's blocks (0: no model) */
    unsigned sm_window_first; /* shares take SMs from here (--sm-window) ... */
    unsigned sm_window_sms;   /* ... this many of them (0: the whole device) */
} tdm_backend_config;

/* ---- graphs (issue 14): a node added to a graph ---- */
typedef enum tdm_gnode_kind {
    TDM_GNODE_EMPTY,
    TDM_GNODE_KERNEL,        /* func, grid, block, shared_mem, params */
    TDM_GNODE_COPY_HTOD,     /* dst, host, n: host must outlive the graph and its execs */
    TDM_GNODE_COPY_DTOD,     /* dst, src, n */
    TDM_GNODE_MEMSET,        /* dst, value, n */
    /* ---- graph memcpy nodes (issue 14) ---- */
    TDM_GNODE_COPY_DTOH,     /* host (written), src, n: host outlives the graph and its execs */
    /* ---- graph host nodes (issue 14) ---- */
    TDM_GNODE_HOST,          /* host_key: the guest's function, run at each launch (graph_launch_hosts) */
    /* ---- event nodes, child graphs, user objects (issue 14) ---- */
    TDM_GNODE_EVENT_RECORD,  /* event: recorded when the node runs */
    TDM_GNODE_EVENT_WAIT,    /* event: what follows waits for its latest record */
    /* ---- external semaphore nodes (issue 14) ---- */
    TDM_GNODE_EXTSEM_SIGNAL, /* n: how many semaphores, each naming none (docs/graphs.md); never instantiated */
    TDM_GNODE_EXTSEM_WAIT,
} tdm_gnode_kind;

typedef struct tdm_gnode_desc {
    tdm_gnode_kind kind;
    tdm_bfunc *func;
    tdm_dim3 grid, block;
    uint32_t shared_mem;
    const void *params;      /* packed as for launch; valid during the call */
    size_t params_len;
    uint64_t dst, src;
    const void *host;
    size_t n;
    uint8_t value;
    /* ---- graph host nodes (issue 14) ---- */
    uint64_t host_key;
    /* ---- event nodes, child graphs, user objects (issue 14) ---- */
    tdm_bevent *event;
} tdm_gnode_desc;

/* ---- graph host nodes (issue 14) ---- */
/* How a launch's host nodes become host callbacks (docs/graphs.md "Host
 * nodes"): graph_launch_hosts calls bind once per host node of the exec,
 * in graph order, on the caller's thread, with the hold it made for this
 * launch; bind returns the arg its due gets (as host_func_enqueue's). */
typedef struct tdm_bhost_binder {
    int (*bind)(void *ctx, uint64_t host_key, tdm_bhold *hold, void **due_arg);
    void (*due)(void *arg, int status);
    void *ctx;
} tdm_bhost_binder;

/* ---- launch ex and stream attributes (issue 14) ---- */
/* A stream attribute (a cudaStreamAttrID and its value), as
 * cuStreamSetAttribute takes it; `base` a device address.  For
 * memSyncDomainMap, `value` is default_ and `value2` remote; for
 * syncPolicy and memSyncDomain, `value`. */
typedef struct tdm_bstream_attr {
    int id;
    uint64_t base, num_bytes;
    float hit_ratio;
    int hit_prop, miss_prop;
    int value, value2;
} tdm_bstream_attr;

/* ---- cluster launch and device odds and ends (issue 14) ---- */
/* A launch with thread block clusters (cuLaunchKernelEx): cluster 0s for
 * none (the kernel's compile-time dimensions apply), preferred 0s for none,
 * policy a cudaClusterSchedulingPolicy. */
typedef struct tdm_cluster_config {
    tdm_dim3 grid, block;
    uint32_t shared_mem;
    tdm_dim3 cluster, preferred;
    int policy;
    bool cooperative;
} tdm_cluster_config;
/* cudaFuncAttributes' cluster fields, as cuFuncGetAttribute gives them. */
typedef struct tdm_func_cluster_attrs {
    int32_t dim_must_be_set, width, height, depth, non_portable, policy;
} tdm_func_cluster_attrs;
/* cudaAtomicOperation values 0..TDM_BACKEND_ATOMIC_OPS-1. */
#define TDM_BACKEND_ATOMIC_OPS 13

typedef struct tdm_backend_ops {
    const char *name;        /* "cuda" or "sim" */
    bool simulated;

    int (*init)(tdm_backend **out, const tdm_backend_config *cfg);
    void (*shutdown)(tdm_backend *b);
    /* Server stop (issue 16; optional): running kernels end at once, queued work is dropped
     * and waits are cut short, so that every session's thread returns and the server exits
     * within a bounded time; later work fails.  shutdown still follows.  NULL where the
     * process's exit ends the device's work (cuda: a context's kernels end with its process). */
    void (*end_work)(tdm_backend *b);

    int (*driver_version)(tdm_backend *b, int *version);
    int (*device_info)(tdm_backend *b, tdm_device_info *out);
    int (*mem_get_info)(tdm_backend *b, uint64_t *free_bytes, uint64_t *total_bytes);

    /* Address arena.  arena_reserve must place the arena at exactly
     * cfg->arena_base or fail with cudaErrorMemoryAllocation: a logical
     * address must mean the same on every server.  The granularity is the
     * unit of mem_map (2 MiB on current NVIDIA GPUs). */
    int (*arena_reserve)(tdm_backend *b);
    uint64_t (*granularity)(tdm_backend *b);
    /* Create physical memory of `size` bytes (a multiple of the granularity)
     * and map it read/write at arena address `addr`.  Contents are zero. */
    int (*mem_map)(tdm_backend *b, uint64_t addr, uint64_t size, tdm_bmem **out);
    /* Unmap it from `addr` and release the physical memory. */
    int (*mem_unmap)(tdm_backend *b, uint64_t addr, uint64_t size, tdm_bmem *mem);
    /* Standby support.  mem_export gives a POSIX fd (the caller's to close)
     * for the physical memory behind a mapping, to pass to another process;
     * mem_import maps such memory at `addr` (the same logical address as in
     * the exporter), contents as they are.  The fd stays the caller's.  An
     * imported mapping is released with mem_unmap like any other. */
    int (*mem_export)(tdm_backend *b, tdm_bmem *mem, int *fd_out);
    int (*mem_import)(tdm_backend *b, uint64_t addr, uint64_t size, int fd, tdm_bmem **out);

    /* Host memory shared with a guest (the shm transport's region, mapped
     * in this process).  host_register makes [p, p+n) (page-aligned) reachable
     * by the device's copy engines, so copies from and to it are DMA with
     * no staging copy; *handle goes back to host_unregister before the
     * memory is unmapped.  NULL in a backend that reads host memory
     * directly (sim): the session layer then skips registration. */
    int (*host_register)(tdm_backend *b, void *p, size_t n, void **handle);
    int (*host_unregister)(tdm_backend *b, void *handle);

    /* Modules.  `image` is a fat binary (cuda) as registered by the guest,
     * or (libraries, issue 14) a cubin or PTX text; it is only valid during
     * the call. */
    int (*module_load)(tdm_backend *b, const void *image, size_t len, tdm_bmodule **out);
    int (*module_unload)(tdm_backend *b, tdm_bmodule *m);
    /* cudaErrorInvalidDeviceFunction (cuda) or cudaErrorInvalidDeviceFunction
     * plus a log line naming the kernel (sim) when it does not exist. */
    int (*module_get_function)(tdm_backend *b, tdm_bmodule *m, const char *name,
                               tdm_bfunc **out, tdm_param_info *params);
    /* Address and size of a __device__/__constant__ variable.  The address
     * is a device address outside the arena (module memory). */
    int (*module_get_global)(tdm_backend *b, tdm_bmodule *m, const char *name,
                             uint64_t *addr, uint64_t *size);
    int (*func_get_attributes)(tdm_backend *b, tdm_bfunc *f, tdm_func_attrs *out);

    /* Address spaces (issue 16): a session's kernels touch only memory
     * granted to its space.  Optional (NULL): the sessions of one cuda
     * backend share its context's address space, and tenants are kept
     * apart by running in separate server processes (docs/security.md).
     * space_grant: the mapped memory holding addr becomes reachable by
     * kernels of `sp` until it is unmapped or revoked. */
    int (*space_create)(tdm_backend *b, tdm_bspace **out);
    void (*space_destroy)(tdm_backend *b, tdm_bspace *sp);
    int (*space_grant)(tdm_backend *b, tdm_bspace *sp, uint64_t addr);
    void (*space_revoke)(tdm_backend *b, tdm_bspace *sp, uint64_t addr);

    /* Streams and events.  flags/priority as in cudaStreamCreateWithPriority
     * and cudaEventCreateWithFlags; the stream's kernels run in `sp` (NULL:
     * unchecked, or a backend without spaces). */
    int (*stream_create)(tdm_backend *b, unsigned flags, int priority, tdm_bspace *sp, tdm_bstream **out);
    int (*stream_destroy)(tdm_backend *b, tdm_bstream *s);
    int (*stream_synchronize)(tdm_backend *b, tdm_bstream *s);
    int (*stream_query)(tdm_backend *b, tdm_bstream *s); /* 0 or cudaErrorNotReady */
    int (*stream_wait_event)(tdm_backend *b, tdm_bstream *s, tdm_bevent *e);
    int (*event_create)(tdm_backend *b, unsigned flags, tdm_bevent **out);
    int (*event_destroy)(tdm_backend *b, tdm_bevent *e);
    int (*event_record)(tdm_backend *b, tdm_bevent *e, tdm_bstream *s);
    int (*event_synchronize)(tdm_backend *b, tdm_bevent *e);
    int (*event_query)(tdm_backend *b, tdm_bevent *e);   /* 0 or cudaErrorNotReady */
    int (*event_elapsed_ms)(tdm_backend *b, tdm_bevent *start, tdm_bevent *end, float *ms);

    /* Work on a stream, asynchronous with respect to the caller.
     * memcpy_htod consumes `src` before it returns (copies it if it must),
     * except from memory given to host_register: that the device reads
     * later, in stream order, as CUDA does with pinned memory.
     * memcpy_dtoh_sync returns only when `dst` holds the data.
     * Addresses are device addresses the session layer has validated. */
    int (*memcpy_htod)(tdm_backend *b, uint64_t dst, const void *src, size_t n, tdm_bstream *s);
    int (*memcpy_dtoh_sync)(tdm_backend *b, void *dst, uint64_t src, size_t n, tdm_bstream *s);
    int (*memcpy_dtod)(tdm_backend *b, uint64_t dst, uint64_t src, size_t n, tdm_bstream *s);
    int (*memset_d8)(tdm_backend *b, uint64_t dst, uint8_t value, size_t n, tdm_bstream *s);
    /* `params` is the packed parameter buffer laid out as module_get_function
     * reported (param i at offset[i], size[i] bytes); valid only during the
     * call, so a backend that runs later must copy it. */
    int (*launch)(tdm_backend *b, tdm_bfunc *f, tdm_dim3 grid, tdm_dim3 block,
                  uint32_t shared_mem, tdm_bstream *s, const void *params, size_t params_len);

    /* Synchronize every stream of the device: used only by the session
     * layer when it has no narrower choice (device reset). */
    int (*device_synchronize)(tdm_backend *b);

    /* ---- health (issue 14) ---- */
    /* True if s's own work lost the device context (its kernel faulted
     * first), so the server can name the session at fault; false if it did
     * not, or the backend cannot tell (a GPU reports the loss to every
     * stream alike). */
    bool (*stream_lost_context)(tdm_backend *b, tdm_bstream *s);

    /* ---- layout (issue 14) ---- */
    /* The alignment of a pitched allocation's rows (cudaMallocPitch). */
    int (*pitch_alignment)(tdm_backend *b, uint64_t *align);
    /* A 2D/3D copy on s between boxes the session layer has validated.  A
     * host source is consumed before it returns (as memcpy_htod); a host
     * destination holds the data when it returns (as memcpy_dtoh_sync). */
    int (*copy_3d)(tdm_backend *b, const tdm_box *dst, const tdm_box *src, tdm_extent ext, tdm_bstream *s);
    int (*memset_3d)(tdm_backend *b, const tdm_box *dst, uint8_t value, tdm_extent ext, tdm_bstream *s);
    /* CUDA arrays.  The session layer waits for the session's work before
     * array_destroy, as cudaFreeArray does. */
    int (*array_create)(tdm_backend *b, const tdm_array_desc *d, tdm_barray **out);
    int (*array_destroy)(tdm_backend *b, tdm_barray *a);
    /* Texture and surface objects; *value is what a kernel is given.  view
     * may be NULL.  The descriptors are the CUDA runtime's structs. */
    int (*tex_object_create)(tdm_backend *b, const tdm_tex_resource *r, const struct cudaTextureDesc *tex,
                             const struct cudaResourceViewDesc *view, uint64_t *value);
    int (*tex_object_destroy)(tdm_backend *b, uint64_t value);
    int (*surf_object_create)(tdm_backend *b, const tdm_tex_resource *r, uint64_t *value);
    int (*surf_object_destroy)(tdm_backend *b, uint64_t value);

    /* ---- runtime (issue 14) ---- */
    /* The occupancy calculator (cuOccupancy*): resident blocks per SM of f
     * at block_size threads and dyn_smem bytes of dynamic shared memory
     * (flags: cudaOccupancyDefault or cudaOccupancyDisableCachingOverride),
     * and the dynamic shared memory per block left when num_blocks blocks of
     * block_size threads share an SM. */
    int (*occupancy_max_blocks)(tdm_backend *b, tdm_bfunc *f, int block_size, size_t dyn_smem,
                                unsigned flags, int *blocks);
    int (*occupancy_dyn_smem)(tdm_backend *b, tdm_bfunc *f, int num_blocks, int block_size, size_t *bytes);
    /* The stream priorities the device has: `least` (the default, 0) down
     * to `greatest` (numerically lowest), as cuCtxGetStreamPriorityRange. */
    int (*stream_priority_range)(tdm_backend *b, int *least, int *greatest);
    /* Device limits (cudaLimit values, checked by the session layer).
     * Every session of the server shares them, so they only grow:
     * limit_raise sets the limit to `value` when that is more than it is.
     * limit_get gives the limit's default (its value before any raise),
     * what a session that set nothing reads, whatever others raised. */
    int (*limit_get)(tdm_backend *b, int limit, uint64_t *value);
    int (*limit_raise)(tdm_backend *b, int limit, uint64_t value);
    /* A kernel's own settings (cudaFuncAttribute 8..15, cudaFuncCache). */
    int (*func_set_attribute)(tdm_backend *b, tdm_bfunc *f, int attr, int value);
    int (*func_set_cache_config)(tdm_backend *b, tdm_bfunc *f, int config);
    /* As launch, cooperatively (cuLaunchCooperativeKernel): every block
     * resident at once, else cudaErrorCooperativeLaunchTooLarge. */
    int (*launch_cooperative)(tdm_backend *b, tdm_bfunc *f, tdm_dim3 grid, tdm_dim3 block,
                              uint32_t shared_mem, tdm_bstream *s, const void *params, size_t params_len);
    /* The device's PCI bus id string ("domain:bus:device.function", as the
     * driver spells it), NUL-terminated in `len` bytes. */
    int (*pci_bus_id)(tdm_backend *b, char *buf, size_t len);

    /* ---- tcp bulk data (issue 14) ---- */
    /* As memcpy_dtoh_sync, but queued on s and returning at once: `dst`
     * (memory given to host_register) holds the data once s gets past this
     * point; the caller records an event after it to learn when.  An error
     * of the copy itself shows as the stream's error, as in CUDA. */
    int (*memcpy_dtoh_async)(tdm_backend *b, void *dst, uint64_t src, size_t n, tdm_bstream *s);

    /* ---- memory models (issue 14) ---- */
    /* Host memory of this process mapped for the device (zero-copy:
     * cudaHostAllocMapped over shm, docs/memory-models.md): [p, p+n),
     * page-aligned, already given to host_register where the backend has
     * it; *dev is the address kernels use for p.  host_unmap before
     * host_unregister and before the memory is unmapped. */
    int (*host_map)(tdm_backend *b, void *p, size_t n, uint64_t *dev);
    int (*host_unmap)(tdm_backend *b, void *p, size_t n);

    /* ---- graphs (issue 14) ---- */
    /* Stream capture, as cuStreamBeginCapture/EndCapture: while s captures,
     * work queued on it (and on streams that joined through an event) is
     * recorded into a graph instead of running.  mode: a
     * cudaStreamCaptureMode.  Synchronizing a capturing stream fails with
     * cudaErrorStreamCaptureUnsupported and invalidates the capture, whose
     * end then fails with cudaErrorStreamCaptureInvalidated. */
    int (*stream_begin_capture)(tdm_backend *b, tdm_bstream *s, int mode);
    int (*stream_end_capture)(tdm_backend *b, tdm_bstream *s, tdm_bgraph **out);
    /* *status: a cudaStreamCaptureStatus; *id: the capture's id (0 when none). */
    int (*stream_capture_info)(tdm_backend *b, tdm_bstream *s, int *status, uint64_t *id);
    int (*graph_destroy)(tdm_backend *b, tdm_bgraph *g);
    int (*graph_instantiate)(tdm_backend *b, tdm_bgraph *g, uint64_t flags, tdm_bgexec **out);
    int (*graph_exec_destroy)(tdm_backend *b, tdm_bgexec *x);
    int (*graph_launch)(tdm_backend *b, tdm_bgexec *x, tdm_bstream *s);
    /* cudaGraphExecUpdate: x takes g's parameters if g has x's topology;
     * else cudaErrorGraphExecUpdateFailure with *result (a
     * cudaGraphExecUpdateResult) saying why, and x as it was. */
    int (*graph_exec_update)(tdm_backend *b, tdm_bgexec *x, tdm_bgraph *g, int *result);
    /* Explicit construction, as cuGraphCreate/cuGraphAdd*Node/
     * cuGraphAddDependencies.  Nodes belong to their graph. */
    int (*graph_create)(tdm_backend *b, tdm_bgraph **out);
    int (*graph_add_node)(tdm_backend *b, tdm_bgraph *g, const tdm_gnode_desc *d, tdm_bgnode *const *deps,
                          size_t ndeps, tdm_bgnode **out);
    int (*graph_add_dependencies)(tdm_backend *b, tdm_bgraph *g, tdm_bgnode *const *from, tdm_bgnode *const *to,
                                  size_t n);
    /* New parameters (d: a TDM_GNODE_KERNEL) for kernel node n of a graph
     * (x NULL), or for its instance in x, an exec made from n's graph. */
    int (*graph_kernel_node_set)(tdm_backend *b, tdm_bgexec *x, tdm_bgnode *n, const tdm_gnode_desc *d);
    /* ---- launch ex and stream attributes (issue 14) ---- */
    /* Attribute a->id of stream s (checked by the session layer: an
     * access policy window, syncPolicy, memSyncDomain or its map), as
     * cuStreamSetAttribute/cuStreamGetAttribute; get fills *a from a->id. */
    int (*stream_set_attribute)(tdm_backend *b, tdm_bstream *s, const tdm_bstream_attr *a);
    int (*stream_get_attribute)(tdm_backend *b, tdm_bstream *s, tdm_bstream_attr *a);
    /* ---- host callbacks (issue 14) ---- */
    /* Holds s at this point of its work for a host function the guest
     * runs (docs/runtime-api.md, "Host callbacks"): once s's earlier work
     * is done, due(arg, status) is called on a thread of the backend, with
     * s's error (0 if none); it must return promptly.  s's later work waits
     * until host_func_release(*out).  due is called exactly once, also when
     * the release came first; the caller releases exactly once. */
    int (*host_func_enqueue)(tdm_backend *b, tdm_bstream *s, void (*due)(void *arg, int status), void *arg,
                             tdm_bhold **out);
    void (*host_func_release)(tdm_backend *b, tdm_bhold *h);

    /* ---- graph memcpy nodes, queries (issue 14) ---- */
    /* Host memory in memcpy nodes (TDM_GNODE_COPY_HTOD/DTOH) is read or
     * written at each launch, in the launch's stream order, as in CUDA. */
    /* A copy of g with every node and dependency (cuGraphClone): host
     * memory its copy nodes name is shared, not copied. */
    int (*graph_clone)(tdm_backend *b, tdm_bgraph *g, tdm_bgraph **out);
    /* g's nodes (cuGraphGetNodes): at most cap into out, *n all of them. */
    int (*graph_nodes)(tdm_backend *b, tdm_bgraph *g, tdm_bgnode **out, size_t cap, size_t *n);
    /* *type: n's cudaGraphNodeType. */
    int (*graph_node_type)(tdm_backend *b, tdm_bgnode *n, int *type);
    /* The nodes n depends on (cuGraphNodeGetDependencies), as graph_nodes. */
    int (*graph_node_deps)(tdm_backend *b, tdm_bgnode *n, tdm_bgnode **out, size_t cap, size_t *count);
    /* cuGraphRemoveDependencies: every edge from[i] -> to[i] must exist
     * (else cudaErrorInvalidValue and g as it was). */
    int (*graph_remove_dependencies)(tdm_backend *b, tdm_bgraph *g, tdm_bgnode *const *from, tdm_bgnode *const *to,
                                     size_t n);
    /* cuGraphDestroyNode: n and its edges leave g. */
    int (*graph_destroy_node)(tdm_backend *b, tdm_bgraph *g, tdm_bgnode *n);
    /* cuGraphNodeFindInClone: n's copy in clone (made by graph_clone from
     * n's graph while n was in it), else cudaErrorInvalidValue. */
    int (*graph_find_in_clone)(tdm_backend *b, tdm_bgraph *clone, tdm_bgnode *n, tdm_bgnode **out);
    /* ---- graph memory nodes (issue 14) ---- */
    /* cuThreadExchangeStreamCaptureMode for the calling thread: *mode (a
     * cudaStreamCaptureMode) becomes its mode, and *mode the one it had.
     * The session layer makes graph memory during a capture in relaxed
     * mode: the device's own allocation calls are not the program's. */
    int (*capture_mode_exchange)(tdm_backend *b, int *mode);
    /* ---- conditional graph nodes (issue 14) ---- */
    /* cuGraphConditionalHandleCreate on g: *handle is what kernels name
     * (cudaGraphSetConditional) and nodes of g and its bodies use. */
    int (*graph_cond_handle_create)(tdm_backend *b, tdm_bgraph *g, unsigned dflt, unsigned flags,
                                    uint64_t *handle);
    /* A conditional node (type: a cudaGraphConditionalNodeType) of handle
     * after deps; bodies[0..size) are its body graphs, owned by the node
     * (gone with g; never graph_destroy them). */
    int (*graph_add_cond_node)(tdm_backend *b, tdm_bgraph *g, uint64_t handle, int type, unsigned size,
                               tdm_bgnode *const *deps, size_t ndeps, tdm_bgnode **out, tdm_bgraph **bodies);
    /* cuStreamBeginCaptureToGraph: s's work becomes nodes of g, the first
     * after deps; stream_end_capture then answers g itself. */
    int (*stream_begin_capture_to_graph)(tdm_backend *b, tdm_bstream *s, tdm_bgraph *g, tdm_bgnode *const *deps,
                                         size_t ndeps, int mode);
    /* The graph s's active capture builds (*g NULL when none) and the
     * nodes its next captured work follows: up to cap of them in deps with
     * their cudaGraphNodeType in types, *ndeps how many there are.  From
     * then on the graph is also the caller's: destroyed by graph_destroy
     * after the capture ended, or by the backend if ending it fails. */
    int (*stream_capture_graph)(tdm_backend *b, tdm_bstream *s, tdm_bgraph **g, tdm_bgnode **deps, int *types,
                                size_t cap, size_t *ndeps);
    /* cuStreamUpdateCaptureDependencies: flags cudaStreamSetCaptureDependencies
     * replaces them, 0 (cudaStreamAddCaptureDependencies) adds. */
    int (*stream_update_capture_deps)(tdm_backend *b, tdm_bstream *s, tdm_bgnode *const *deps, size_t n,
                                      unsigned flags);
    /* ---- graph host nodes (issue 14) ---- */
    /* NULL where the backend has no host nodes (TDM_GNODE_HOST refused). */
    /* Records a host node (host_key) into s's capture. */
    int (*stream_capture_host)(tdm_backend *b, tdm_bstream *s, uint64_t host_key);
    /* graph_launch, binding each host node of x to a new hold (hb).  If it
     * fails nothing is queued, and the caller releases (host_func_release)
     * every hold its bind accepted; a hold whose bind failed is not its. */
    int (*graph_launch_hosts)(tdm_backend *b, tdm_bgexec *x, tdm_bstream *s, const tdm_bhost_binder *hb);
    /* ---- graph node parameters (issue 14) ---- */
    /* cuGraphNodeSetEnabled (set 0 or 1) or cuGraphNodeGetEnabled (set -1,
     * *enabled answered) of graph node n's instance in x, a kernel, memcpy
     * or memset node: a disabled node does nothing at later launches. */
    int (*graph_node_enabled)(tdm_backend *b, tdm_bgexec *x, tdm_bgnode *n, int set, unsigned *enabled);
    /* New parameters (d: a TDM_GNODE_MEMSET) for memset node n of a graph
     * (x NULL), or for its instance in x, an exec made from n's graph. */
    int (*graph_memset_node_set)(tdm_backend *b, tdm_bgexec *x, tdm_bgnode *n, const tdm_gnode_desc *d);
    /* The same for a memcpy node (d: a TDM_GNODE_COPY_*; its host memory
     * outlives the graph and its execs).  An exec's node keeps its
     * direction (cudaErrorInvalidValue, as the driver refuses a change of
     * memory type); a graph's node may change it. */
    int (*graph_memcpy_node_set)(tdm_backend *b, tdm_bgexec *x, tdm_bgnode *n, const tdm_gnode_desc *d);
    /* cuGraphKernelNodeSetAttribute of kernel node n: id
     * cudaLaunchAttributeCooperative or cudaLaunchAttributePriority. */
    int (*graph_kernel_node_attr)(tdm_backend *b, tdm_bgnode *n, int id, int value);
    /* Host node n's instance in x runs host_key from x's next launch
     * (cuGraphExecHostNodeSetParams); NULL where graph_launch_hosts is. */
    int (*graph_exec_host_node_set)(tdm_backend *b, tdm_bgexec *x, tdm_bgnode *n, uint64_t host_key);
    /* ---- event nodes, child graphs, user objects (issue 14) ---- */
    /* The event of event record or wait node n (as cuGraphEventRecordNodeGetEvent); a node of another type:
     * cudaErrorInvalidValue. */
    int (*graph_event_node_get)(tdm_backend *b, tdm_bgnode *n, tdm_bevent **out);
    /* Sets it for n (x NULL), or for n's instance in x, an exec made from n's graph (as
     * cuGraphExecEventRecordNodeSetEvent). */
    int (*graph_event_node_set)(tdm_backend *b, tdm_bgexec *x, tdm_bgnode *n, tdm_bevent *e);
    /* An external record (record) of e on s, or an external wait of s for e (cudaEventRecordExternal,
     * cudaEventWaitExternal): on a capturing stream an event node of its graph, else a record or wait. */
    int (*stream_event_external)(tdm_backend *b, tdm_bstream *s, tdm_bevent *e, bool record);
    /* cuGraphAddChildGraphNode: a node of g running a clone of child, after deps; *embedded is the clone,
     * owned by the node (gone with it; never graph_destroy it). */
    int (*graph_add_child_node)(tdm_backend *b, tdm_bgraph *g, tdm_bgraph *child, tdm_bgnode *const *deps,
                                size_t ndeps, tdm_bgnode **out, tdm_bgraph **embedded);
    /* cuGraphChildGraphNodeGetGraph: the embedded graph of child graph node n. */
    int (*graph_child_graph)(tdm_backend *b, tdm_bgnode *n, tdm_bgraph **out);
    /* cuGraphExecChildGraphNodeSetParams: n's instance in x runs child (of n's embedded graph's topology). */
    int (*graph_exec_child_set)(tdm_backend *b, tdm_bgexec *x, tdm_bgnode *n, tdm_bgraph *child);
    /* ---- libraries (issue 14) ---- */
    /* The names of every kernel of module m, loaded from image (a fat
     * binary, cubin or PTX: module_load takes all three), each once, in
     * *names (*n of them; the caller frees each and the array). */
    int (*module_kernel_names)(tdm_backend *b, tdm_bmodule *m, const void *image, size_t len, char ***names,
                               uint32_t *n);
    /* ---- mipmapped arrays (issue 14) ---- */
    /* cuMipmappedArrayCreate: d is level 0, levels already clamped by the
     * session layer (tdm_mipmap_levels). */
    int (*mipmap_create)(tdm_backend *b, const tdm_array_desc *d, unsigned levels, tdm_bmipmap **out);
    /* cuMipmappedArrayGetLevel: the level stays the mipmapped array's (never
     * passed to array_destroy); usable in copy_3d and objects as any array. */
    int (*mipmap_level)(tdm_backend *b, tdm_bmipmap *m, unsigned level, tdm_barray **out);
    /* The session layer has waited for the session's work. */
    int (*mipmap_destroy)(tdm_backend *b, tdm_bmipmap *m);
    /* ---- cluster launch and device odds and ends (issue 14) ---- */
    /* As launch, with clusters (cuLaunchKernelEx): bad cluster shapes are
     * refused with the driver's errors. */
    int (*launch_cluster)(tdm_backend *b, tdm_bfunc *f, const tdm_cluster_config *c, tdm_bstream *s,
                          const void *params, size_t params_len);
    /* cuOccupancyMaxActiveClusters (c->cluster 0s: f's own) and
     * cuOccupancyMaxPotentialClusterSize (c->cluster ignored). */
    int (*occupancy_max_active_clusters)(tdm_backend *b, tdm_bfunc *f, const tdm_cluster_config *c, int *clusters);
    int (*occupancy_max_cluster_size)(tdm_backend *b, tdm_bfunc *f, const tdm_cluster_config *c, int *size);
    int (*func_cluster_attrs)(tdm_backend *b, tdm_bfunc *f, tdm_func_cluster_attrs *out);
    /* cuDeviceGetTexture1DLinearMaxWidth for a format the session layer
     * checked (kind and bits as tdm_array_desc's, 1, 2 or 4 channels). */
    int (*tex1d_linear_max_width)(tdm_backend *b, int kind, int bits, int channels, uint64_t *width);
    /* cuDeviceGetHostAtomicCapabilities for every cudaAtomicOperation. */
    int (*host_atomic_caps)(tdm_backend *b, unsigned caps[TDM_BACKEND_ATOMIC_OPS]);
    /* ---- SM shares (issue 17): docs/sm-shares.md ---- */
    /* Optional (NULL: the backend cannot confine work to part of the device).
     * share_get: a part of at least `sms` of the device's SMs (1..device SMs,
     * checked by the session layer), ready for share_stream_create, so that
     * moving a session's streams there costs only stream creation; *granted
     * is how many SMs it really has (cuda rounds up to its partition size).
     * It is counted as in use until share_put, which the caller calls only
     * once every stream made in it was destroyed with its work done. */
    int (*share_get)(tdm_backend *b, unsigned sms, tdm_bshare **out, unsigned *granted);
    void (*share_put)(tdm_backend *b, tdm_bshare *sh);
    /* As stream_create, the stream's kernels running on sh's SMs only. */
    int (*share_stream_create)(tdm_backend *b, tdm_bshare *sh, unsigned flags, int priority, tdm_bspace *sp,
                               tdm_bstream **out);
} tdm_backend_ops;

extern const tdm_backend_ops tdm_backend_cuda_ops;
extern const tdm_backend_ops tdm_backend_sim_ops;

/* Looks a backend up by name ("cuda", "sim"); NULL if unknown or not built. */
const tdm_backend_ops *tdm_backend_find(const char *name);

/* ---- health and device properties (issue 14) ---- */
/* tdm_device_info.attrs value of an attribute the driver rejects (the guest
 * refuses it as the driver does); proto's TDM_ATTR_UNSUPPORTED. */
#define TDM_DEVICE_ATTR_UNSUPPORTED INT32_MIN

/* ---- mipmapped arrays (issue 14) ---- */
/* Level `level` of a mipmapped array whose level 0 is d: each dimension
 * halved and at least 1, absent ones (0) stay absent; the layers of a
 * layered or cubemap array (depth) are not levels' business. */
static inline tdm_array_desc tdm_mipmap_level_desc(const tdm_array_desc *d, unsigned level)
{
    tdm_array_desc l = *d;
    unsigned sh = level < 64 ? level : 63;

    l.width = d->width >> sh ? d->width >> sh : 1;
    if (d->height)
        l.height = d->height >> sh ? d->height >> sh : 1;
    if (d->depth && !(d->flags & (0x01u | 0x04u)))   /* cudaArrayLayered, cudaArrayCubemap */
        l.depth = d->depth >> sh ? d->depth >> sh : 1;
    return l;
}

/* cudaMallocMipmappedArray's level count: asked, clamped to
 * [1, 1 + floor(log2(largest dimension that has levels))]. */
static inline unsigned tdm_mipmap_levels(const tdm_array_desc *d, unsigned asked)
{
    uint64_t big = d->width > d->height ? d->width : d->height;
    unsigned most = 0;

    if (!(d->flags & (0x01u | 0x04u)) && d->depth > big)
        big = d->depth;
    while (big) {
        most++;
        big >>= 1;
    }
    if (most == 0)
        most = 1;
    return asked < 1 ? 1 : asked > most ? most : asked;
}

#endif
