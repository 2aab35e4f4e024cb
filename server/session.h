/* A session: one guest process's CUDA state on this server.  Everything a
 * guest sends is checked here before it reaches the backend: handles must be
 * the session's own, device ranges must lie inside the session's allocations,
 * sizes must fit the quota.  Functions return a cudaError_t value.
 *
 * Errors of one-way (asynchronous) calls are kept as the session's deferred
 * error and returned by the next synchronizing call, as CUDA does.
 *
 * What happens to a session (resources made and freed, writes about to
 * happen, the session closing) is told to the server's session hooks
 * (session_hooks.h); the core knows nothing else of who listens. */
#ifndef TANDEM_SERVER_SESSION_H
#define TANDEM_SERVER_SESSION_H

#include <stdbool.h>
#include <stdint.h>

#include "handle_table.h"
#include "placement_key.h"
#include "range_map.h"
#include "server.h"
#include "session_stats.h"
#include "wire_timeouts.h"

/* Guest stream handles with fixed meaning, as in the CUDA runtime. */
#define TDM_STREAM_NULL 0x0ull
#define TDM_STREAM_LEGACY 0x1ull
#define TDM_STREAM_PER_THREAD 0x2ull

#define TDM_SESSION_LIMITS 7 /* cudaLimit values 0..6 (issue 14, session_runtime.c) */

/* ---- tenants (issue 16) ---- */
/* What one session may hold: the server's defaults (--session-quota, --session-streams,
 * --session-events), or its tenant's overrides once its credential was accepted (front/tenants.h).
 * 0 lifts a bound. */
typedef struct tdm_session_bounds {
    uint64_t mem_quota;          /* bytes of device memory */
    bool mem_quota_placed;       /* mem_quota is its placement's memory (APP_GPU_MEMORY; front/placement.c) */
    uint32_t streams, events;    /* live at once */
    uint32_t modules;            /* modules and libraries loaded at once (--session-modules) */
    uint64_t host_memory;        /* bytes of host memory it holds: its code images (--session-host-memory) */
    uint32_t idle_timeout_s;     /* close it after this long without a call (--idle-timeout) */
} tdm_session_bounds;

struct tdm_tenant;               /* front/tenants.h: the core only carries it */

/* What all sessions of one tenant hold together, and its bounds on that (tenant_memory,
 * tenant_host_memory; 0 = none).  The tenant's (front/tenants.h); the core adds and takes away
 * what its session holds (session_bounds.c). */
typedef struct tdm_tenant_usage {
    uint64_t mem_limit, host_limit;
    _Atomic uint64_t mem, host;
} tdm_tenant_usage;

typedef struct tdm_stream_state {
    tdm_bstream *bs;
    bool blocking;               /* synchronizes with the session's null stream */
    uint64_t epoch;              /* operations enqueued so far */
    uint64_t epoch_seen_by_null; /* this stream's epoch the null stream last waited for */
    uint64_t null_epoch_seen;    /* the null stream's epoch this stream last waited for */
    tdm_bevent *order_ev;        /* internal event used to order against the null stream */
    unsigned flags;              /* as created: a new standby creates it alike */
    int priority;
} tdm_stream_state;

typedef struct tdm_event_entry {
    tdm_bevent *ev;
    unsigned flags;
    /* ---- ipc (issue 14) ---- */
    struct tdm_ipc_export *ipc;  /* its export (session_ipc.c), or NULL: ev is then the entry's own */
    bool ipc_imported;           /* opened from another session's export */
} tdm_event_entry;

typedef struct tdm_func_entry {
    tdm_bfunc *bf;
    uint64_t module;
    tdm_param_info params;
    uint32_t params_len;         /* offset + size of the last parameter */
} tdm_func_entry;

/* A module's variable: its range's record (tdm_range.backing). */
typedef struct tdm_var_entry {
    uint64_t addr;               /* where the guest knows it, in the range map */
    /* Where this process's copy lives: addr itself, except for a module a
     * standby reloaded, whose variables sit elsewhere in its memory. */
    uint64_t dev;
} tdm_var_entry;

typedef struct tdm_module_entry {
    tdm_bmodule *bm;
    uint64_t *funcs;             /* handles of its functions, for unload */
    uint32_t nfuncs;
    tdm_var_entry *vars;         /* its variables in the range map */
    uint32_t nvars;
    /* ---- libraries (issue 14) ---- */
    bool library;                /* loaded by cudaLibraryLoadData (counted against its bound) */
    uint64_t image_bytes;        /* host memory charged for its image (issue 16; session_bounds.c) */
    uint32_t vars_cap;           /* room in vars for the globals asked for after the load */
} tdm_module_entry;

typedef struct tdm_session {
    tdm_server *srv;
    uint64_t id;
    int pid;
    char client[128];
    tdm_range_map ranges;
    tdm_bspace *space;               /* what its kernels may touch, where the backend has spaces (issue 16) */
    tdm_handle_table streams, events, modules, funcs;
    tdm_stream_state null_stream;    /* the session's own legacy stream */
    uint64_t mem_used;               /* bytes mapped for cudaMalloc */
    int deferred_err;
    struct tdm_shm_guest *shm;       /* the guest's shared region (shm transport); NULL over TCP */
    void *hook_state;                /* the session hooks' own state for it (session_hooks.h) */
    /* ---- device output (issue 14) ---- */
    struct tdm_device_output *output; /* its kernels' printf/assert output for the guest (device_output.h) */
    /* ---- health (issue 14) ---- */
    uint64_t ctx_generation;         /* the device context it was admitted to (health.h) */
    struct tdm_session_layout *layout; /* ---- layout (issue 14): its CUDA arrays (session_layout.c) ---- */
    /* ---- runtime (issue 14) ---- */
    uint64_t limits[TDM_SESSION_LIMITS]; /* what the session set with cudaDeviceSetLimit */
    uint32_t limits_set;                 /* bit per cudaLimit it set */
    /* ---- tcp bulk data (issue 14) ---- */
    struct tdm_copy_staging *copy_staging;   /* session_copy.c; NULL until a bulk copy */
    /* ---- memory models (issue 14) ---- */
    struct tdm_session_memory *memory; /* pools and stream-ordered frees (session_memory.c); NULL until used */
    /* ---- managed memory (issue 14) ---- */
    struct tdm_session_managed *managed; /* managed blocks' aliases (session_managed.c); NULL until used */
    /* ---- graphs (issue 14): session_graph.c ---- */
    tdm_handle_table graphs, graph_execs, graph_nodes;
    struct tdm_capture_entry *captures; /* captures begun on its streams and not ended */
    size_t ncaptures, captures_cap;
    uint64_t kept_bytes;             /* host bytes kept for captured copies (bounded) */
    /* ---- ipc (issue 14) ---- */
    struct tdm_session_ipc *ipc;     /* its imports (session_ipc.c); NULL until it uses IPC */
    /* ---- host callbacks (issue 14) ---- */
    struct tdm_session_callbacks *callbacks; /* session_callbacks.c; NULL until the first */
    /* ---- graph memcpy nodes (issue 14): session_graph_copy.c ---- */
    struct tdm_kept_bytes **graph_pending; /* launched with device-to-host staging the guest has not fetched */
    size_t ngraph_pending, graph_pending_cap;
    uint64_t graph_io_keys;          /* names of captured host-to-device staging */
    /* ---- graph memory nodes (issue 14) ---- */
    struct tdm_session_graph_mem *graph_mem; /* session_graph_mem.c; NULL until used */
    /* ---- conditional graph nodes (issue 14) ---- */
    struct tdm_cond_handle *cond_handles; /* session_graph_cond.c: the handles made, with their graphs */
    size_t ncond_handles, cond_handles_cap;
    /* ---- tcp lanes (issue 14) ---- */
    struct tdm_lanes *lanes;         /* its connection's lanes (server/lanes.h); NULL over shm. The connection's */
    /* ---- mipmapped arrays (issue 14) ---- */
    struct tdm_session_mipmap *mipmap; /* session_layout_mipmap.c; NULL until the first */
    /* ---- peer and batch copies, pool selection and sharing (issue 14) ---- */
    struct tdm_session_pool_share *pool_share; /* session_pool_share.c; NULL until used */
    /* ---- tenants (issue 16) ---- */
    tdm_session_bounds bounds;       /* what it may hold (the server's defaults until its tenant is known) */
    struct tdm_tenant *tenant;       /* whose session it is, once HELLO or RESUME presented the credential;
                                      * NULL without --tenants (front/tenants.c) */
    const char *tenant_name;         /* its name for log lines; NULL without a tenant */
    char peer[128];                  /* who connected (TCP address, or shm and pid), for log lines */
    long peer_uid;                   /* an shm guest's user (SO_PEERCRED); -1 over TCP */
    /* ---- host resources and time limits (issue 16): session_bounds.c ---- */
    uint64_t host_held;              /* bytes of host memory charged to it (its modules' images) */
    tdm_tenant_usage *usage;         /* its tenant's totals, which it counts in; NULL without a tenant */
    tdm_wire_timeouts wire;          /* its connection's time limits (--frame-timeout, idle_timeout) */
    /* ---- SM shares (issue 17) ---- */
    struct tdm_session_share *share; /* the SMs its work runs on (session_share.c); NULL only while made */
    /* ---- control plane (issue 17): session_stats.h ---- */
    tdm_session_stats stats;         /* its calls and their latencies, for the control socket */
    /* ---- on-boarding (issue 17) ---- */
    char placement[TDM_PLACEMENT_KEY_SIZE]; /* the orchestrator's key from HELLO or RESUME ("" without
                                      * one): names its reservation (front/placement.c) */
} tdm_session;

int tdm_session_create(tdm_server *srv, tdm_session **out);
/* Waits for the session's work without consuming its deferred error
 * (which stays for the next synchronizing call). */
int tdm_session_quiesce(tdm_session *s);
/* Waits for the session's work, then releases everything it holds (the
 * hooks hear of each range); the session stays usable. */
void tdm_session_release_all(tdm_session *s);
/* The connection's session `s` becomes `from` (a session a standby
 * mirrored): s takes from's state, hook state included, and from gets s's
 * old state to be destroyed.  What belongs to the connection (an shm
 * guest's region, its lanes, its peer and the tenant it was admitted as,
 * with that tenant's bounds) stays with s. */
void tdm_session_take_over(tdm_session *s, tdm_session *from);
/* The device address behind the start of r (a range of the session). */
uint64_t tdm_session_range_dev(const tdm_range *r);
/* Waits for the session's work, then releases everything it holds. */
void tdm_session_destroy(tdm_session *s);

/* Records an error from a one-way call for the next synchronizing call. */
void tdm_session_defer(tdm_session *s, int err);
/* Returns err, or the deferred error if err is success (and clears it). */
int tdm_session_sync_result(tdm_session *s, int err);

int tdm_session_malloc(tdm_session *s, uint64_t size, uint64_t *addr);
/* The server's own potentially unsafe calls (mapping memory, registering host memory) while a
 * guest may capture: the session's thread goes to relaxed capture mode, in which the driver
 * allows them, and back.  A guest's global-mode capture runs in thread-local mode on that
 * thread (session_graph.c), which would refuse them and invalidate the capture.  relax returns
 * false when the backend keeps no modes (then there is nothing to restore). */
bool tdm_session_capture_relax(tdm_session *s, int *saved);
void tdm_session_capture_restore(tdm_session *s, int saved);
int tdm_session_free(tdm_session *s, uint64_t addr);
/* A standby's mirror: records memory imported at the active's address as
 * the session's allocation. */
int tdm_session_adopt_mem(tdm_session *s, uint64_t addr, uint64_t mapped, uint64_t size, tdm_bmem *mem);
/* Kernels of the session may (grant) or may no longer (revoke) touch the
 * mapped memory at device address dev (issue 16; nothing to do on a backend
 * without address spaces). */
int tdm_session_grant(tdm_session *s, uint64_t dev);
void tdm_session_revoke(tdm_session *s, uint64_t dev);
/* Adds r to the session's ranges and grants its kernels the memory behind
 * it: what the session may copy, its kernels may touch.  0, or -1 (an
 * overlap, or no memory for the map or the grant) with nothing added. */
int tdm_session_ranges_add(tdm_session *s, const tdm_range *r);
int tdm_session_mem_get_info(tdm_session *s, uint64_t *free_bytes, uint64_t *total);

int tdm_session_memcpy_htod(tdm_session *s, uint64_t dst, const void *src, uint64_t n, uint64_t stream);
/* As memcpy_htod, and returns only once the device has read src: the
 * guest reuses those bytes next (a chunk of the shm data area), and
 * registered host memory is read asynchronously. */
int tdm_session_memcpy_htod_wait(tdm_session *s, uint64_t dst, const void *src, uint64_t n, uint64_t stream);
int tdm_session_memcpy_dtoh(tdm_session *s, void *dst, uint64_t src, uint64_t n, uint64_t stream);
int tdm_session_memcpy_dtod(tdm_session *s, uint64_t dst, uint64_t src, uint64_t n, uint64_t stream);
int tdm_session_memset(tdm_session *s, uint64_t dst, uint8_t value, uint64_t n, uint64_t stream);

/* ---- host resources (issue 16) ---- */
/* Room for one more module or library with an image of len bytes: within the session's
 * session_modules, and its host memory charged (tdm_session_host_take).  The charge is then
 * tdm_session_module_adopt's, or the caller's to give back when the load fails before it. */
int tdm_session_module_admit(tdm_session *s, uint64_t len, const char *call);

/* Loads a fat binary and resolves the named kernels and variables.
 * var_logical (NULL normally): a standby reloading the active's module gives
 * the addresses the guest knows for the variables.  A kernel
 * or variable that cannot be resolved gets its own error in func_err/var_err
 * and does not fail the module. */
int tdm_session_module_load(tdm_session *s, const void *image, uint64_t len,
                            const char *const *func_names, uint32_t nfuncs,
                            const char *const *var_names, uint32_t nvars, const uint64_t *var_logical,
                            uint64_t *module, uint64_t *func_handles, int *func_err,
                            uint64_t *var_addr, uint64_t *var_size, int *var_err);
int tdm_session_module_unload(tdm_session *s, uint64_t module);
/* ---- libraries (issue 14) ---- */
/* tdm_session_module_load for a module the backend has loaded already (bm,
 * and the charge of len bytes tdm_session_module_admit took, are the
 * session's from then on: unloaded and given back on failure too). */
int tdm_session_module_adopt(tdm_session *s, tdm_bmodule *bm, const void *image, uint64_t len,
                             const char *const *func_names, uint32_t nfuncs,
                             const char *const *var_names, uint32_t nvars, const uint64_t *var_logical,
                             uint64_t *module, uint64_t *func_handles, int *func_err,
                             uint64_t *var_addr, uint64_t *var_size, int *var_err);
const tdm_func_entry *tdm_session_func(tdm_session *s, uint64_t func);
int tdm_session_func_attrs(tdm_session *s, uint64_t func, tdm_func_attrs *out);
int tdm_session_launch(tdm_session *s, uint64_t func, tdm_dim3 grid, tdm_dim3 block,
                       uint32_t shared_mem, uint64_t stream, const void *params, uint32_t params_len);
/* Every launch's last step before the backend's: the stream its work goes
 * on, once the hooks have seen the kernel's parameters; NULL with *err. */
tdm_stream_state *tdm_session_launch_stream(tdm_session *s, const tdm_func_entry *f, uint64_t stream,
                                            const void *params, int *err);

int tdm_session_stream_create(tdm_session *s, unsigned flags, int priority, uint64_t *out);
int tdm_session_stream_destroy(tdm_session *s, uint64_t stream);
int tdm_session_stream_synchronize(tdm_session *s, uint64_t stream);
int tdm_session_stream_query(tdm_session *s, uint64_t stream);
/* The flags the stream was created with (0 for the session's null stream,
 * which the legacy and per-thread handles name). */
int tdm_session_stream_get_flags(tdm_session *s, uint64_t stream, unsigned *flags);
int tdm_session_stream_wait_event(tdm_session *s, uint64_t stream, uint64_t event);

int tdm_session_event_create(tdm_session *s, unsigned flags, uint64_t *out);
int tdm_session_event_destroy(tdm_session *s, uint64_t event);
int tdm_session_event_record(tdm_session *s, uint64_t event, uint64_t stream);
int tdm_session_event_synchronize(tdm_session *s, uint64_t event);
int tdm_session_event_query(tdm_session *s, uint64_t event);
int tdm_session_event_elapsed(tdm_session *s, uint64_t start, uint64_t end, float *ms);

int tdm_session_device_synchronize(tdm_session *s);
/* Releases every resource of the session; the session stays usable. */
int tdm_session_reset(tdm_session *s);

/* ---- health (issue 14): session_health.c, docs/health.md ---- */
/* Waits while the context is lost and being rebuilt; then the session
 * belongs to the current context.  cudaErrorDevicesUnavailable if it is
 * not back within a minute. */
int tdm_session_health_admit(tdm_session *s);
/* The session saw a context-fatal error: the first one names it in the log
 * and starts the drain. */
void tdm_session_health_lost(tdm_session *s, int err);
/* The error every call of a session of a lost context gets; 0 if its
 * context is fine. */
int tdm_session_health_err(tdm_session *s);
/* The session is about to end, its streams still there: a culprit that
 * never synchronized is named now. */
void tdm_session_health_closing(tdm_session *s);
/* The session ended: the last one of a lost context rebuilds it. */
void tdm_session_health_ended(tdm_session *s);

/* ---- layout (issue 14): session_layout.c, and what it uses of session.c ---- */
/* The device address of [addr, addr+n), which must lie in one range of the
 * session; otherwise logs `what` and returns cudaErrorInvalidValue. */
int tdm_session_resolve_range(tdm_session *s, const char *what, uint64_t addr, uint64_t n, uint64_t *dev,
                              const tdm_range **range);
/* The backend stream for new work on `stream`, ordered as the legacy rules
 * say; `written` (NULL if none) is the range the work may write. */
int tdm_session_stream_work(tdm_session *s, uint64_t stream, const tdm_range *written, tdm_bstream **bs);

int tdm_session_pitch_alignment(tdm_session *s, uint64_t *align);
/* Boxes as in tandem.x's tdm_pitched: row r of slice z at addr + (z * rows + r) * pitch. */
/* With array != 0, the box is in that CUDA array from byte addr of row y of slice z. */
typedef struct tdm_session_box { uint64_t addr, pitch, rows, array, y, z; } tdm_session_box;
/* src: width * height * depth packed bytes (n of them). */
int tdm_session_memcpy3d_htod(tdm_session *s, tdm_session_box dst, tdm_extent ext, const void *src, uint64_t n,
                              uint64_t stream);
/* Fills dst with the box packed (width * height * depth bytes). */
int tdm_session_memcpy3d_dtoh(tdm_session *s, void *dst, tdm_session_box src, tdm_extent ext, uint64_t stream);
int tdm_session_memcpy3d_dtod(tdm_session *s, tdm_session_box dst, tdm_session_box src, tdm_extent ext,
                              uint64_t stream);
int tdm_session_memset3d(tdm_session *s, tdm_session_box dst, uint8_t value, tdm_extent ext, uint64_t stream);
/* CUDA arrays, at most TDM_SESSION_MAX_ARRAYS per session, their bytes
 * counted in the session's quota. */
#define TDM_SESSION_MAX_ARRAYS 4096
int tdm_session_array_create(tdm_session *s, const int bits[4], int kind, tdm_extent ext, unsigned flags,
                             uint64_t *out);
int tdm_session_array_destroy(tdm_session *s, uint64_t array);
/* Texture (surface false) and surface objects: res, tex and view are the
 * CUDA runtime's cudaResourceDesc, cudaTextureDesc, cudaResourceViewDesc
 * as the guest sent them (tex and view empty for a surface, view optional);
 * *value is the object a kernel reads.  At most TDM_SESSION_MAX_OBJECTS. */
#define TDM_SESSION_MAX_OBJECTS 4096
int tdm_session_object_create(tdm_session *s, bool surface, const void *res, size_t res_len, const void *tex,
                              size_t tex_len, const void *view, size_t view_len, uint64_t *value);
int tdm_session_object_destroy(tdm_session *s, bool surface, uint64_t value);
/* Destroys every array and object of the session (release_all). */
void tdm_session_layout_release(tdm_session *s);

/* ---- runtime (issue 14): session_runtime.c ---- */
/* The occupancy calculator on a kernel of the session: cudaErrorInvalid-
 * DeviceFunction for a kernel it does not have, cudaErrorInvalidValue for a
 * block size or block count below 1 or unknown flags. */
int tdm_session_occupancy_max_blocks(tdm_session *s, uint64_t func, int block_size, uint64_t dyn_smem,
                                     unsigned flags, int *blocks);
int tdm_session_occupancy_dyn_smem(tdm_session *s, uint64_t func, int num_blocks, int block_size, uint64_t *bytes);
int tdm_session_stream_priority_range(tdm_session *s, int *least, int *greatest);
/* The priority the device gives the stream: as created, clamped into the
 * device's range as the driver clamps it (0 for the default streams). */
int tdm_session_stream_get_priority(tdm_session *s, uint64_t stream, int *priority);
/* cudaDeviceSetLimit: the device's limit only grows (every session shares
 * it); the session reads back what it set, or the limit's default if it
 * set nothing.  cudaErrorUnsupportedLimit for a limit CUDA does not have. */
int tdm_session_set_limit(tdm_session *s, unsigned limit, uint64_t value);
int tdm_session_get_limit(tdm_session *s, unsigned limit, uint64_t *value);
/* Forgets the limits the session set (cudaDeviceReset). */
void tdm_session_runtime_reset(tdm_session *s);
int tdm_session_func_set_attribute(tdm_session *s, uint64_t func, int attr, int value);
int tdm_session_func_set_cache_config(tdm_session *s, uint64_t func, int config);
int tdm_session_pci_bus_id(tdm_session *s, char *buf, size_t len);
/* tdm_session_launch, cooperatively (session.c, beside the plain launch). */
int tdm_session_launch_cooperative(tdm_session *s, uint64_t func, tdm_dim3 grid, tdm_dim3 block,
                                   uint32_t shared_mem, uint64_t stream, const void *params, uint32_t params_len);

/* ---- tcp bulk data (issue 14): docs/protocol.md "Bulk data over TCP" ---- */
struct tdm_dtoh_stream_res;
/* As memcpy_htod, and records done on the stream after the copy, so the
 * caller knows when src (host_register'ed staging) may be written again. */
int tdm_session_memcpy_htod_fenced(tdm_session *s, uint64_t dst, const void *src, uint64_t n, uint64_t stream,
                                   tdm_bevent *done);
/* Queues a device-to-host copy into dst (host_register'ed staging) and
 * records done after it; the data is there once done completes. */
int tdm_session_memcpy_dtoh_queue(tdm_session *s, void *dst, uint64_t src, uint64_t n, uint64_t stream,
                                  tdm_bevent *done);
/* What a copy from [addr, addr+n) on stream would be refused for, checked
 * before any of it is queued; also hands over a deferred error. */
int tdm_session_check_copy(tdm_session *s, uint64_t addr, uint64_t n, uint64_t stream);
/* session_copy.c: the session's staging buffers (two of TDM_MAX_CHUNK,
 * pinned where the backend can). */
/* Where the next MEMCPY_HTOD's bytes may be decoded: a staging buffer that
 * no queued copy still reads, or NULL (then the decoder allocates). */
void *tdm_session_htod_space(tdm_session *s);
bool tdm_session_is_staging(const tdm_session *s, const void *p);
/* MEMCPY_HTOD from src, which may be a staging buffer htod_space gave. */
int tdm_session_memcpy_htod_bulk(tdm_session *s, uint64_t dst, const void *src, uint64_t n, uint64_t stream);
/* Starts MEMCPY_DTOH_STREAM: validates, then points r at the source that
 * copies the bytes through the staging buffers while the reply is sent. */
int tdm_session_dtoh_stream_begin(tdm_session *s, uint64_t src, uint64_t n, uint64_t stream,
                                  struct tdm_dtoh_stream_res *r);
void tdm_session_copy_staging_release(tdm_session *s);

/* ---- memory models (issue 14) ---- */
/* The backend stream for work on a guest stream, ordered as all work is
 * (legacy null-stream semantics); NULL with *err set if unknown. */
tdm_bstream *tdm_session_work_stream(tdm_session *s, uint64_t stream, int *err);
/* Releases an allocation already taken out of the range map (hooks,
 * backend, arena, quota). */
int tdm_session_release_alloc(tdm_session *s, tdm_range *r);

/* session_memory.c: stream-ordered allocation and memory pools. */
int tdm_session_malloc_async(tdm_session *s, uint64_t size, uint64_t pool, uint64_t stream, uint64_t *addr);
int tdm_session_free_async(tdm_session *s, uint64_t addr, uint64_t stream);
int tdm_session_mem_pool_create(tdm_session *s, uint64_t max_size, uint64_t *out);
int tdm_session_mem_pool_destroy(tdm_session *s, uint64_t pool);
int tdm_session_mem_pool_set_attr(tdm_session *s, uint64_t pool, int attr, uint64_t value);
int tdm_session_mem_pool_get_attr(tdm_session *s, uint64_t pool, int attr, uint64_t *value);
int tdm_session_mem_pool_trim(tdm_session *s, uint64_t pool, uint64_t keep);
int tdm_session_set_mem_pool(tdm_session *s, uint64_t pool);
int tdm_session_get_mem_pool(tdm_session *s, uint64_t *pool);
/* cudaFree of an address: a pool's allocation leaves its pool. */
void tdm_session_memory_forget(tdm_session *s, uint64_t addr);
/* After the session's work is done: releases stream-ordered frees still
 * held and every pool (session end, cudaDeviceReset). */
void tdm_session_memory_release(tdm_session *s);
/* Zero-copy over shm: maps the registered block [off, off+size) of the
 * guest's region for kernels (*dev: its device address; the same block
 * again answers the same address). */
int tdm_session_shm_host_map(tdm_session *s, uint64_t off, uint64_t size, uint64_t *dev);
/* The block is being unregistered: its mapping ends first. */
void tdm_session_shm_host_unmapping(tdm_session *s, uint64_t off, uint64_t size);

/* ---- managed memory (issue 14) ---- */
/* session_managed.c: over shm, the registered block [off, off+size) of the
 * guest's region mapped here and for the device at the guest's own address
 * `addr`, so one pointer serves program and kernels. */
int tdm_session_shm_managed_map(tdm_session *s, uint64_t off, uint64_t size, uint64_t addr);
/* The block is being unregistered: its alias ends first. */
void tdm_session_shm_managed_unmapping(tdm_session *s, uint64_t off, uint64_t size);
/* Session end, after its work: every alias ends. */
void tdm_session_managed_release(tdm_session *s);

/* ---- graphs (issue 14): session_graph.c (docs/graphs.md) ---- */
/* Bounds on what one session may hold. */
#define TDM_SESSION_MAX_GRAPHS 4096        /* graphs, and executable graphs, each */
#define TDM_SESSION_MAX_KEPT_BYTES (1ull << 30) /* captured host-to-device bytes */
#define TDM_SESSION_MAX_GRAPH_NODES 65536   /* nodes added node by node */

void tdm_session_graphs_init(tdm_session *s);
/* Ends the session's open captures and destroys its graphs and executable
 * graphs (before its streams go). */
void tdm_session_graphs_release(tdm_session *s);
/* True if st's work is being captured into a graph (cheap while the
 * session has no capture open). */
bool tdm_session_capturing(tdm_session *s, const tdm_stream_state *st);
/* A copy of n bytes at src that lives as long as the graph being captured
 * on st (a host-to-device copy captured from a buffer that dies with the
 * call); NULL with *err set. */
const void *tdm_session_capture_keep(tdm_session *s, tdm_stream_state *st, const void *src, uint64_t n, int *err);
/* A host-to-device copy from memory that stays the guest's (pinned memory
 * of its shm region): captured, it reads that memory at each launch. */
int tdm_session_memcpy_htod_pinned(tdm_session *s, uint64_t dst, const void *src, uint64_t n, uint64_t stream);
/* Resolves a stream handle and orders it for new work (legacy rules). */
tdm_stream_state *tdm_session_stream_for_work(tdm_session *s, uint64_t handle, int *err);
tdm_stream_state *tdm_session_stream_state(tdm_session *s, uint64_t handle);

int tdm_session_begin_capture(tdm_session *s, uint64_t stream, int mode);
int tdm_session_end_capture(tdm_session *s, uint64_t stream, uint64_t *graph);
int tdm_session_capture_info(tdm_session *s, uint64_t stream, int *status, uint64_t *id);
int tdm_session_graph_destroy(tdm_session *s, uint64_t graph);
int tdm_session_graph_instantiate(tdm_session *s, uint64_t graph, uint64_t flags, uint64_t *exec);
int tdm_session_graph_exec_destroy(tdm_session *s, uint64_t exec);
int tdm_session_graph_launch(tdm_session *s, uint64_t exec, uint64_t stream);
/* *result: a cudaGraphExecUpdateResult. */
int tdm_session_graph_exec_update(tdm_session *s, uint64_t exec, uint64_t graph, int *result);
/* The range of the session's memory holding [addr, addr+n), with the device
 * address of addr in *dev; NULL if none does. */
const tdm_range *tdm_session_resolve(tdm_session *s, uint64_t addr, uint64_t n, uint64_t *dev);

/* A node to add (explicit construction): type is a cudaGraphNodeType. */
typedef struct tdm_node_request {
    int type;
    uint64_t func;               /* kernel */
    tdm_dim3 grid, block;
    uint32_t shared_mem;
    const void *params;
    uint32_t params_len;
    uint64_t dst, src, n;        /* memcpy (src unused when host is set), memset */
    const void *host;            /* memcpy: the bytes of a host-to-device copy */
    uint8_t value;               /* memset */
    bool internal;               /* the server's own node (graph memory): not the guest's to ask for */
} tdm_node_request;

int tdm_session_graph_create(tdm_session *s, unsigned flags, uint64_t *graph);
int tdm_session_graph_add_node(tdm_session *s, uint64_t graph, const uint64_t *deps, uint32_t ndeps,
                               const tdm_node_request *req, uint64_t *node);
int tdm_session_graph_add_dependencies(tdm_session *s, uint64_t graph, const uint64_t *from, const uint64_t *to,
                                       uint32_t n);
int tdm_session_graph_node_type(tdm_session *s, uint64_t node, int *type);
/* New parameters (req: a kernel) for a kernel node of a graph (exec 0) or
 * for that node in an exec made from its graph. */
int tdm_session_kernel_node_set(tdm_session *s, uint64_t exec, uint64_t node, const tdm_node_request *req);

/* ---- launch ex and stream attributes (issue 14): session_stream_attr.c ---- */
/* cudaStreamSetAttribute on a stream of the session: the value checked as
 * the driver checks it, an access policy window inside the session's
 * allocations; cudaErrorInvalidValue otherwise. */
int tdm_session_stream_set_attribute(tdm_session *s, uint64_t stream, const tdm_bstream_attr *a);
/* cudaStreamGetAttribute: fills *a from a->id. */
int tdm_session_stream_get_attribute(tdm_session *s, uint64_t stream, tdm_bstream_attr *a);
 
/* ---- graph memcpy nodes, queries (issue 14): session_graph_copy.c, session_graph_query.c ---- */
/* A memcpy node: kind a resolved cudaMemcpyKind; dst/src device addresses
 * or the guest's host address; region: the host side's bytes in the shm
 * region (NULL: staged, see docs/graphs.md). */
typedef struct tdm_memcpy_node_request {
    int kind;
    uint64_t dst, src, n;
    void *region;
} tdm_memcpy_node_request;
int tdm_session_graph_add_memcpy_node(tdm_session *s, uint64_t graph, const uint64_t *deps, uint32_t ndeps,
                                      const tdm_memcpy_node_request *q, uint64_t *node);
/* Bytes for a host-to-device node's staging, for exec's next launch. */
int tdm_session_graph_host_upload(tdm_session *s, uint64_t exec, uint64_t key, uint64_t off, const void *data,
                                  uint64_t n);
/* One piece of a finished launch's device-to-host staging (*got 0: none
 * ready); *more: launches with host outputs still running.  *data points
 * into the session's staging, valid until its next call. */
int tdm_session_graph_host_fetch(tdm_session *s, int *got, int *more, uint64_t *dst, const void **data,
                                 uint64_t *n);
/* A device-to-host copy captured on a capturing stream into the guest's
 * host memory at dst, through staging. */
int tdm_session_graph_capture_dtoh(tdm_session *s, uint64_t stream, uint64_t src, uint64_t n, uint64_t dst);
/* A host-to-device copy on stream from the guest's host memory at src:
 * TDM_ERR_NOT_CAPTURING unless the stream captures; captured, through
 * staging named *key of capture *id. */
int tdm_session_graph_capture_htod(tdm_session *s, uint64_t stream, uint64_t dst, uint64_t n, uint64_t src,
                                   uint64_t *key, uint64_t *id);
/* tdm_session_memcpy_dtoh into the session's pinned shm memory: on a
 * capturing stream the graph writes it at each launch. */
int tdm_session_memcpy_dtoh_pinned(tdm_session *s, void *dst, uint64_t src, uint64_t n, uint64_t stream);
/* The node handles of a graph (all, its roots), and its edges; the caller
 * frees *out. */
int tdm_session_graph_get_nodes(tdm_session *s, uint64_t graph, bool roots, uint64_t **out, uint32_t *n);
int tdm_session_graph_get_edges(tdm_session *s, uint64_t graph, uint64_t **from, uint64_t **to, uint32_t *n);
int tdm_session_graph_clone(tdm_session *s, uint64_t graph, uint64_t *clone);
/* The nodes node depends on (dependents false) or that depend on it. */
int tdm_session_graph_node_neighbours(tdm_session *s, uint64_t node, bool dependents, uint64_t **out, uint32_t *n);
int tdm_session_graph_remove_dependencies(tdm_session *s, uint64_t graph, const uint64_t *from, const uint64_t *to,
                                          uint32_t n);
int tdm_session_graph_destroy_node(tdm_session *s, uint64_t node);
/* node's copy in the graph clone (cloned from node's graph). */
int tdm_session_graph_node_find_in_clone(tdm_session *s, uint64_t node, uint64_t clone, uint64_t *out);
/* Releases what session_graph_copy.c holds (the session ends). */
void tdm_session_graph_copy_release(tdm_session *s);

/* ---- ipc (issue 14): session_ipc.c (docs/ipc.md) ---- */
/* Imports a session may hold: opened memory and event handles, each open
 * counted. */
#define TDM_SESSION_MAX_IPC_HOLDS 4096
/* cudaIpcGetMemHandle of the allocation starting at addr. */
int tdm_session_ipc_get_mem_handle(tdm_session *s, uint64_t addr, uint8_t handle[64]);
/* cudaIpcOpenMemHandle: *addr is the exporter's address of the allocation
 * (every session shares one device address space), *size its size. */
int tdm_session_ipc_open_mem(tdm_session *s, const uint8_t handle[64], unsigned flags, uint64_t *addr,
                             uint64_t *size);
int tdm_session_ipc_close_mem(tdm_session *s, uint64_t addr);
int tdm_session_ipc_get_event_handle(tdm_session *s, uint64_t event, uint8_t handle[64]);
int tdm_session_ipc_open_event(tdm_session *s, const uint8_t handle[64], uint64_t *event);
/* An allocation of the session is being released (range r, out of its
 * map, its hooks told): true when the export table keeps it for sessions
 * that opened it; the memory is then no longer the session's to unmap. */
bool tdm_session_ipc_keeps(tdm_session *s, const tdm_range *r);
/* Bytes the session freed that its importers keep (its quota counts them). */
uint64_t tdm_session_ipc_kept(tdm_session *s);
/* Lets go of an exported or imported event entry e (its table slot is
 * already gone); the backend event goes with its last holder. */
int tdm_session_ipc_event_put(tdm_session *s, tdm_event_entry *e);
/* Closes every memory import (before the session's own memory goes). */
void tdm_session_ipc_release_imports(tdm_session *s);
/* The session ends: its exports kept for importers are nobody's now. */
void tdm_session_ipc_ended(tdm_session *s);

/* ---- host callbacks (issue 14): session_callbacks.c ---- */
/* At most this many callbacks handed out or reported done per poll
 * (tandem.x's TDM_MAX_CALLBACKS_POLLED). */
#define TDM_CB_POLL_MAX 64
typedef struct tdm_cb_due_out { uint64_t seq, fn; int status; } tdm_cb_due_out;
/* Queues the guest's host function `fn` (its key) on stream: the stream
 * waits there, once its earlier work is done, until a poll reports it run.
 * cudaErrorLaunchOutOfResources beyond TDM_CBQ_MAX pending. */
int tdm_session_callback_enqueue(tdm_session *s, uint64_t stream, uint64_t fn);
/* Releases the streams of the callbacks in done (each one the guest was
 * given and has not reported before: otherwise cudaErrorInvalidValue, the
 * others still count), then hands out up to max due ones, oldest first.
 * *pending: callbacks not reported done. */
int tdm_session_callback_poll(tdm_session *s, const uint64_t *done, size_t ndone, tdm_cb_due_out *due,
                              size_t max, size_t *ndue, uint32_t *pending);
/* The session ends: releases every held stream (first, so its work can
 * drain). */
void tdm_session_callbacks_close(tdm_session *s);

/* ---- graph memory nodes (issue 14): session_graph_mem.c (docs/graphs.md, "Graph memory") ---- */
/* Who has a memory node: a capture (by its id), a graph, an executable graph. */
enum { TDM_GMEM_CAPTURE = 1, TDM_GMEM_GRAPH, TDM_GMEM_EXEC };
/* An allocation node of size bytes (*addr: its memory, fixed for the
 * graph's life), or with free a node freeing *addr, which must start a
 * graph allocation of the session. */
int tdm_session_graph_add_mem_node(tdm_session *s, uint64_t graph, const uint64_t *deps, uint32_t ndeps, bool free,
                                   uint64_t size, uint64_t *addr, uint64_t *node);
int tdm_session_graph_mem_node_params(tdm_session *s, uint64_t node, bool *free, uint64_t *addr, uint64_t *size);
int tdm_session_graph_mem_trim(tdm_session *s);
/* attr: a cudaGraphMemAttributeType. */
int tdm_session_graph_mem_get_attr(tdm_session *s, int attr, uint64_t *value);
int tdm_session_graph_mem_set_attr(tdm_session *s, int attr, uint64_t value);
/* cudaMallocAsync / cudaFreeAsync: false when the stream is not capturing
 * (the caller goes on as usual); else the graph memory layer did it (*err). */
bool tdm_session_graph_mem_capture_alloc(tdm_session *s, uint64_t stream, uint64_t size, uint64_t *addr, int *err);
bool tdm_session_graph_mem_capture_free(tdm_session *s, uint64_t stream, uint64_t addr, int *err);
/* cudaFree (sync) or cudaFreeAsync of addr: false when addr is not graph
 * memory, or is no graph's any more (then the caller frees it as an
 * ordinary allocation); else done here (*err). */
bool tdm_session_graph_mem_user_free(tdm_session *s, uint64_t addr, bool sync, int *err);
/* From session_graph.c: a capture ended into graph (0: it failed); an
 * owner went away; an exec was made; a launch is checked before the
 * backend's, and accounted after it (the launch is tracked on its stream
 * until the device has finished it). */
void tdm_session_graph_mem_moved(tdm_session *s, uint64_t capture, uint64_t graph);
void tdm_session_graph_mem_dropped(tdm_session *s, int kind, uint64_t owner);
int tdm_session_graph_mem_instantiated(tdm_session *s, uint64_t graph, uint64_t exec, uint64_t flags);
int tdm_session_graph_mem_check_launch(tdm_session *s, uint64_t exec);
int tdm_session_graph_mem_launched(tdm_session *s, uint64_t exec, uint64_t stream);
/* Session end or reset: forgets it all (the memory is the range map's) and
 * destroys the events that tracked launches. */
void tdm_session_graph_mem_release(tdm_session *s);
/* session_graph.c: the id of the capture the stream's work goes to, 0 when
 * none; whether the session has the graph. */
uint64_t tdm_session_capture_id(tdm_session *s, uint64_t stream);
bool tdm_session_graph_exists(tdm_session *s, uint64_t graph);

/* ---- conditional graph nodes (issue 14): session_graph_cond.c, session_graph.c
 * (docs/graphs.md, "Conditional nodes") ---- */
#define TDM_SESSION_MAX_COND_HANDLES 4096  /* conditional handles of live graphs */
#define TDM_SESSION_MAX_COND_DEPTH 8       /* conditional bodies inside bodies */
#define TDM_SESSION_MAX_COND_BODIES 256    /* bodies of one node (the protocol's TDM_MAX_COND_BODIES) */
int tdm_session_cond_handle_create(tdm_session *s, uint64_t graph, unsigned dflt, unsigned flags, uint64_t *handle);
/* A conditional node of handle (checked: one of graph's or of a graph it
 * is a body of); bodies[0..size) receive its body graphs' handles. */
int tdm_session_cond_node_add(tdm_session *s, uint64_t graph, const uint64_t *deps, uint32_t ndeps, uint64_t handle,
                              int type, unsigned size, uint64_t *node, uint64_t *bodies);
/* A graph went away: its handles with it. */
void tdm_session_graph_cond_dropped(tdm_session *s, uint64_t graph);
void tdm_session_cond_release(tdm_session *s);
/* session_graph.c: */
int tdm_session_begin_capture_to_graph(tdm_session *s, uint64_t stream, uint64_t graph, const uint64_t *deps,
                                       uint32_t ndeps, int mode);
int tdm_session_graph_add_cond_node(tdm_session *s, uint64_t graph, const uint64_t *deps, uint32_t ndeps,
                                    uint64_t handle, int type, unsigned size, uint64_t *node, uint64_t *bodies);
/* Conditional bodies around graph (0: a graph of its own; -1: no graph). */
int tdm_session_graph_depth(tdm_session *s, uint64_t graph);
/* graph is ancestor or lies (as a body) inside it. */
bool tdm_session_graph_within(tdm_session *s, uint64_t graph, uint64_t ancestor);
tdm_bgraph *tdm_session_graph_backend(tdm_session *s, uint64_t graph);
/* cudaStreamGetCaptureInfo with graph and dependency outputs: while active,
 * the capture's graph handle and up to cap dependency node handles. */
int tdm_session_capture_graph(tdm_session *s, uint64_t stream, int *status, uint64_t *id, uint64_t *graph,
                              uint64_t *deps, uint32_t cap, uint32_t *ndeps);
/* flags: cudaStreamAddCaptureDependencies or cudaStreamSetCaptureDependencies. */
int tdm_session_update_capture_deps(tdm_session *s, uint64_t stream, const uint64_t *deps, uint32_t n,
                                    unsigned flags);

/* ---- graph host nodes (issue 14): session_callbacks.c ---- */
/* Launches bx on bs, each of its host nodes a host callback of this
 * session (docs/graphs.md "Host nodes"). */
int tdm_session_callbacks_launch_graph(tdm_session *s, tdm_bgexec *bx, tdm_bstream *bs);
/* session_graph_host.c: the piece of launched graphs' staged
 * device-to-host bytes at cursor (bytes already taken), as they are now:
 * *got 0 once all were taken. */
int tdm_session_graph_host_fetch_now(tdm_session *s, uint64_t cursor, int *got, uint64_t *dst, const void **data,
                                     uint64_t *n);

/* ---- tcp lanes (issue 14): session_copy.c ---- */
/* MEMCPY_HTOD_LANES: n bytes received by the lanes into an upload staging
 * buffer (waiting for the device to be done with it), then copied to dst
 * as MEMCPY_HTOD copies them (the copy's error deferred as its).  0 or
 * TDM_ERR_LANE_FAILED. */
int tdm_session_htod_lanes(tdm_session *s, uint64_t dst, uint64_t n, uint64_t stream, uint32_t xfer,
                           unsigned nlanes);
/* MEMCPY_DTOH_LANES: the bytes sent over the lanes through the download
 * staging, the device copy of one piece overlapping the sending of the
 * one before.  r->err / r->copy_err as MEMCPY_DTOH_STREAM's. */
void tdm_session_dtoh_lanes(tdm_session *s, uint64_t src, uint64_t n, uint64_t stream, uint32_t xfer,
                            unsigned nlanes, int *err, int *copy_err);

/* ---- graph node parameters (issue 14): session_graph_params.c ---- */
/* cudaGraphNodeSetEnabled (set 0 or 1) / cudaGraphNodeGetEnabled (set -1)
 * of node's instance in exec: a kernel, memcpy or memset node of the graph
 * exec was made from; cudaErrorInvalidValue otherwise, as the driver. */
int tdm_session_graph_node_enabled(tdm_session *s, uint64_t exec, uint64_t node, int set, unsigned *enabled);
/* cudaGraphExecGetFlags: the flags exec was instantiated with. */
int tdm_session_graph_exec_flags(tdm_session *s, uint64_t exec, uint64_t *flags);
/* New parameters for a memset node (exec 0) or its instance in exec: n
 * bytes of value at dst, a range of the session's memory. */
int tdm_session_memset_node_set(tdm_session *s, uint64_t exec, uint64_t node, uint64_t dst, uint64_t n,
                                uint8_t value);
/* New parameters for a memcpy node (exec 0) or its instance in exec, as
 * GRAPH_ADD_MEMCPY_NODE asks them (q->kind resolved).  A node whose host
 * side is staged keeps a staged side of the same direction and size, one
 * without staging needs none (cudaErrorNotSupported: docs/graphs.md). */
int tdm_session_memcpy_node_set(tdm_session *s, uint64_t exec, uint64_t node, const tdm_memcpy_node_request *q);
/* cudaGraphKernelNodeSetAttribute's cooperative or priority attribute of
 * a kernel node (the guest keeps the hints that change nothing on the device). */
int tdm_session_kernel_node_attr(tdm_session *s, uint64_t node, int id, int value);
/* cudaGraphExecHostNodeSetParams: exec's instance of a host node runs the
 * guest's function under key from its next launch. */
int tdm_session_exec_host_node_set(tdm_session *s, uint64_t exec, uint64_t node, uint64_t key);

/* ---- event nodes, child graphs, user objects (issue 14): session_graph_events.c ---- */
/* An event record (record) or wait node's event: the program's handle. */
int tdm_session_graph_event_node_get(tdm_session *s, uint64_t node, bool record, uint64_t *event);
/* Names event in that node (exec 0), or in its instance in exec. */
int tdm_session_graph_event_node_set(tdm_session *s, uint64_t exec, uint64_t node, bool record, uint64_t event);
/* cudaEventRecordExternal (record) or cudaEventWaitExternal: on a capturing
 * stream an event node of the capture's graph, else an ordinary record or wait. */
int tdm_session_event_external(tdm_session *s, uint64_t event, uint64_t stream, bool record);
/* A child graph node of graph embedding a clone of child. */
int tdm_session_graph_add_child_node(tdm_session *s, uint64_t graph, const uint64_t *deps, uint32_t ndeps,
                                     uint64_t child, uint64_t *node);
/* The embedded graph of a child graph node (a handle made on first use). */
int tdm_session_graph_child_graph(tdm_session *s, uint64_t node, uint64_t *graph);
/* cudaGraphExecChildGraphNodeSetParams. */
int tdm_session_graph_exec_child_set(tdm_session *s, uint64_t exec, uint64_t node, uint64_t child);
/* Whether graph has memory nodes (session_graph_mem.c). */
bool tdm_session_graph_mem_has_nodes(tdm_session *s, uint64_t graph);

/* ---- libraries (issue 14): session_library.c ---- */
#define TDM_SESSION_MAX_LIBRARIES 1024       /* libraries loaded and not unloaded */

/* ---- host resources (issue 16): session_bounds.c ----
 * Every bound here: 0 is none.  A refusal is logged naming the tenant, the limit and the value,
 * and answered with cudaErrorMemoryAllocation, as a GPU out of that resource answers. */
/* Whether `want` more fits beside `held` under `limit` (0: no limit); no overflow. */
bool tdm_bound_admits(uint64_t held, uint64_t want, uint64_t limit);
/* Adds want to *held if it fits under limit, atomically (sessions of a tenant, or of the
 * server, take from one total): true when it did. */
bool tdm_bound_take(_Atomic uint64_t *held, uint64_t want, uint64_t limit);
/* A creation refused at the session's bound: the line "CALL refused: the session of tenant T
 * holds HELD WHAT (session_KEY of tenant T)", or "(--session-KEY)" without a tenant.
 * cudaErrorMemoryAllocation. */
int tdm_session_refuse_at_bound(tdm_session *s, const char *call, uint64_t held, const char *what, const char *key);
/* Host memory the session is to hold (n bytes, for `call`): within its session_host_memory,
 * its tenant's tenant_host_memory and the server's --host-budget, or refused. */
int tdm_session_host_take(tdm_session *s, uint64_t n, const char *call);
void tdm_session_host_give(tdm_session *s, uint64_t n);
/* Device memory the session is to hold (n bytes): counted in s->mem_used and within its
 * tenant's tenant_memory, or refused.  call NULL: counted whatever the bound (memory the
 * session holds already, as a standby adopts it). */
int tdm_session_mem_take(tdm_session *s, uint64_t n, const char *call);
void tdm_session_mem_give(tdm_session *s, uint64_t n);
/* The session starts or stops counting in its tenant's totals (admitted, released, or its
 * state taken over from another session). */
void tdm_session_usage_enter(tdm_session *s, tdm_tenant_usage *u);
void tdm_session_usage_leave(tdm_session *s);
#define TDM_LIBRARY_MAX_GLOBALS 1024         /* globals asked for, per library */
/* Loads a fat binary, cubin or PTX image as a library: every kernel of it
 * gets a function handle (names, handles and errors in *names/funcs/errs,
 * *nkernels of them; names[] the caller frees with tdm_library_names_free). */
int tdm_session_library_load(tdm_session *s, const void *image, uint64_t len, uint64_t *library, char ***names,
                             uint64_t **funcs, int **errs, uint32_t *nkernels);
void tdm_library_names_free(char **names, uint32_t n);
int tdm_session_library_unload(tdm_session *s, uint64_t library);
/* A global of the library, in the session's ranges from then on (until unload). */
int tdm_session_library_global(tdm_session *s, uint64_t library, const char *name, uint64_t *addr, uint64_t *size);
/* A standby reproducing its active's: the variable `name` of `library` at the address the
 * active gave the guest (issue 15).  A cudaError_t. */
int tdm_session_library_global_at(tdm_session *s, uint64_t library, const char *name, uint64_t addr);
/* Module m's next variable (m->vars[m->nvars], room made by the caller) at device address dev:
 * its range at `at` (a standby: the address the guest holds) or at dev.  0, or -1. */
int tdm_session_module_add_var(tdm_session *s, tdm_module_entry *m, uint64_t dev, uint64_t size, uint64_t at,
                               uint64_t *addr);


/* ---- mipmapped arrays (issue 14): session_layout_mipmap.c ---- */
/* cudaMallocMipmappedArray: counted against TDM_SESSION_MAX_ARRAYS with the
 * session's arrays, every level's bytes in its quota; *levels the levels
 * it has (CUDA's clamp). */
int tdm_session_mipmap_create(tdm_session *s, const int bits[4], int kind, tdm_extent ext, unsigned flags,
                              unsigned asked, uint64_t *out, unsigned *levels);
int tdm_session_mipmap_destroy(tdm_session *s, uint64_t mipmap);
/* The level as an array of the session (the same handle each time) and its
 * extent in elements, as cudaArrayGetInfo gives it. */
int tdm_session_mipmap_level(tdm_session *s, uint64_t mipmap, unsigned level, uint64_t *array, tdm_extent *ext);
/* The backend's mipmapped array behind a handle of the session; NULL if none. */
tdm_bmipmap *tdm_session_mipmap_backend(tdm_session *s, uint64_t mipmap);
/* Mipmapped arrays the session holds (they share the arrays' bound). */
size_t tdm_session_mipmap_count(tdm_session *s);
/* Destroys every mipmapped array of the session (layout release). */
void tdm_session_mipmap_release(tdm_session *s);
/* session_layout.c, for the levels: cudaChannelFormatDesc's rules; the
 * arrays held; a level becomes an array of the session that array_destroy
 * refuses and whose bytes are its owner's (adopt), and stops being one
 * (disown). */
size_t tdm_session_array_count(tdm_session *s);
int tdm_session_array_adopt(tdm_session *s, tdm_barray *ba, const tdm_array_desc *d, uint64_t *out);
void tdm_session_array_disown(tdm_session *s, uint64_t handle);

/* ---- peer and batch copies, pool selection and sharing (issue 14) ---- */
/* session_memory.c: the pool the allocation starting at addr came from
 * (cudaErrorInvalidValue: not a stream-ordered allocation, or its pool was
 * destroyed). */
int tdm_session_mem_pool_of(tdm_session *s, uint64_t addr, uint64_t *pool);
/* session_pool_share.c (docs/ipc.md "Sharing memory pools"). */
#define TDM_SESSION_MAX_POOL_IMPORTS 1024
int tdm_session_pool_shareable(tdm_session *s, uint64_t pool, unsigned types);
int tdm_session_pool_export(tdm_session *s, uint64_t pool, unsigned type, uint8_t handle[64]);
int tdm_session_pool_import(tdm_session *s, const uint8_t handle[64], uint64_t *pool);
int tdm_session_pool_share_release(tdm_session *s, uint64_t pool);
int tdm_session_pool_export_ptr(tdm_session *s, uint64_t addr, uint8_t data[64]);
int tdm_session_pool_import_ptr(tdm_session *s, uint64_t pool, const uint8_t data[64], uint64_t *addr,
                                uint64_t *size);
/* The session ends or resets: its pool exports and imports go. */
void tdm_session_pool_share_ended(tdm_session *s);

/* ---- cluster launch and device odds and ends (issue 14): session_cluster.c ---- */
/* A launch with thread block clusters, one-way as tdm_session_launch. */
int tdm_session_launch_cluster(tdm_session *s, uint64_t func, const tdm_cluster_config *c, uint64_t stream,
                               const void *params, uint32_t params_len);
/* what: TDM_CLUSTER_MAX_ACTIVE or TDM_CLUSTER_MAX_POTENTIAL_SIZE (proto). */
int tdm_session_cluster_occupancy(tdm_session *s, int what, uint64_t func, const tdm_cluster_config *c, int *value);
int tdm_session_func_cluster_attrs(tdm_session *s, uint64_t func, tdm_func_cluster_attrs *out);
/* kind and bits[4] of a cudaChannelFormatDesc. */
int tdm_session_tex1d_linear_max_width(tdm_session *s, int kind, const int bits[4], uint64_t *width);
int tdm_session_host_atomic_caps(tdm_session *s, unsigned caps[TDM_BACKEND_ATOMIC_OPS]);
/* session_layout.c: the channel count of a format CUDA arrays and
 * textures take, else cudaErrorInvalidChannelDescriptor. */
int tdm_session_channel_format(const int bits[4], int kind, int *channels);

/* ---- SM shares (issue 17): session_share.c, docs/sm-shares.md ---- */
/* The session's work runs on `sms` of the device's SMs from its next piece
 * of work on: what is queued finishes at the old share, no device memory
 * moves, the guest sees no error.  Any thread may call it while the session
 * lives (the control socket's set_share, the reservation at HELLO).
 * cudaErrorInvalidValue for sms outside [1, device SMs], cudaErrorNotSupported
 * on a backend without shares; the reason is logged.  *applied_ns: how long
 * making the share ready took (cuda: its green context; cached after). */
int tdm_session_set_sm_share(tdm_session *s, unsigned sms, uint64_t *applied_ns);
/* The SMs of its latest share, asked or in force (the device's without one). */
unsigned tdm_session_sm_share(tdm_session *s);
/* At creation, before its first stream: the server's default share (--session-sms). */
int tdm_session_share_init(tdm_session *s);
/* The session's thread: moves its streams to a share asked for since (cheap when none was). */
void tdm_session_share_apply(tdm_session *s);
/* A new backend stream of the session, in its share. */
int tdm_session_share_stream_create(tdm_session *s, unsigned flags, int priority, tdm_bstream **out);
/* At the end, its streams destroyed: waits for retired streams, gives its shares back. */
void tdm_session_share_release(tdm_session *s);

#endif
