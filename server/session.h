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
#include "range_map.h"
#include "server.h"

/* Guest stream handles with fixed meaning, as in the CUDA runtime. */
#define TDM_STREAM_NULL 0x0ull
#define TDM_STREAM_LEGACY 0x1ull
#define TDM_STREAM_PER_THREAD 0x2ull

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
} tdm_module_entry;

typedef struct tdm_session {
    tdm_server *srv;
    uint64_t id;
    int pid;
    char client[128];
    tdm_range_map ranges;
    tdm_handle_table streams, events, modules, funcs;
    tdm_stream_state null_stream;    /* the session's own legacy stream */
    uint64_t mem_used;               /* bytes mapped for cudaMalloc */
    int deferred_err;
    struct tdm_shm_guest *shm;       /* the guest's shared region (shm transport); NULL over TCP */
    void *hook_state;                /* the session hooks' own state for it (session_hooks.h) */
    /* ---- graphs (issue 14): session_graph.c ---- */
    tdm_handle_table graphs, graph_execs, graph_nodes;
    struct tdm_capture_entry *captures; /* captures begun on its streams and not ended */
    size_t ncaptures, captures_cap;
    uint64_t kept_bytes;             /* host bytes kept for captured copies (bounded) */
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
 * guest's region) stays with s. */
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
int tdm_session_free(tdm_session *s, uint64_t addr);
/* A standby's mirror: records memory imported at the active's address as
 * the session's allocation. */
int tdm_session_adopt_mem(tdm_session *s, uint64_t addr, uint64_t mapped, uint64_t size, tdm_bmem *mem);
int tdm_session_mem_get_info(tdm_session *s, uint64_t *free_bytes, uint64_t *total);

int tdm_session_memcpy_htod(tdm_session *s, uint64_t dst, const void *src, uint64_t n, uint64_t stream);
/* As memcpy_htod, and returns only once the device has read src: the
 * guest reuses those bytes next (a chunk of the shm data area), and
 * registered host memory is read asynchronously. */
int tdm_session_memcpy_htod_wait(tdm_session *s, uint64_t dst, const void *src, uint64_t n, uint64_t stream);
int tdm_session_memcpy_dtoh(tdm_session *s, void *dst, uint64_t src, uint64_t n, uint64_t stream);
int tdm_session_memcpy_dtod(tdm_session *s, uint64_t dst, uint64_t src, uint64_t n, uint64_t stream);
int tdm_session_memset(tdm_session *s, uint64_t dst, uint8_t value, uint64_t n, uint64_t stream);

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
const tdm_func_entry *tdm_session_func(tdm_session *s, uint64_t func);
int tdm_session_func_attrs(tdm_session *s, uint64_t func, tdm_func_attrs *out);
int tdm_session_launch(tdm_session *s, uint64_t func, tdm_dim3 grid, tdm_dim3 block,
                       uint32_t shared_mem, uint64_t stream, const void *params, uint32_t params_len);

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

#endif
