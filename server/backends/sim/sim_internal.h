/* Shared state of the sim backend: a simulated GPU in host memory, for tests
 * and the no-GPU demo.  Private to server/backends/sim_*.c. */
#ifndef TANDEM_SERVER_SIM_INTERNAL_H
#define TANDEM_SERVER_SIM_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <driver_types.h>

#include "backend.h"
#include "log.h"
#include "kernel_table.h"
#include "sim_kernel.h"

#define SIM_GRANULARITY (2ull << 20)   /* as the H100's VMM: addresses match the cuda backend */
#define SIM_TOTAL_MEM (16ull << 30)
#define SIM_DRIVER_VERSION 13000
#define SIM_MAX_DYN_SHARED (48u << 10) /* without the opt-in attribute, as on the GPU */
#define SIM_GLOBALS_WINDOW (1ull << 30) /* module globals, right after the arena (sim_module.c) */
#define SIM_LIMIT_COUNT 7              /* cudaLimit values 0..6 (issue 14, sim_runtime_ops.c) */

/* ---- the mapped-memory table (sim_mapped.c): every access is checked against it ---- */

/* What one session's kernels may touch (issue 16): the server makes one per
 * session and grants it each range the session holds, as separate CUDA
 * contexts have separate address spaces.  Only its address matters (ranges
 * list the spaces they are granted to); C wants a member. */
struct tdm_bspace {
    char unused;
};

/* Whether [addr, addr + n) lies inside [base, base + size), without
 * overflow for any guest-given addr and n. */
static inline bool sim_span_holds(uint64_t base, uint64_t size, uint64_t addr, uint64_t n)
{
    return addr >= base && n <= size && addr - base <= size - n;
}

typedef struct sim_range {
    uint64_t addr, size;
    bool arena;              /* an arena mapping (counts against total memory) */
    atomic_int pins;         /* operations using it now: an unmap waits for them */
    bool removed;            /* out of the table; the remover waits for pins to drop */
    /* The spaces whose kernels may touch it (the allocating session's, and
     * those that opened it by IPC); a range no space holds is reachable by
     * copies the server checked itself, never by a kernel. */
    tdm_bspace **spaces;
    size_t nspaces, cap_spaces;
} sim_range;

/* Sorted, non-overlapping, one heap object per range.  The lock guards the
 * table and each range's spaces, and is held only for a lookup: an operation
 * pins what it uses instead, so a map or unmap never waits for another
 * session's long kernel or copy (issue 16, finding 2), and an unmap waits
 * only for the operations that use the range it removes. */
typedef struct sim_mapped {
    pthread_rwlock_t lock;
    pthread_mutex_t pin_lock;
    pthread_cond_t unpinned;
    sim_range **v;
    size_t n, cap;
    uint64_t arena_bytes;    /* sum of arena ranges */
} sim_mapped;

int sim_mapped_init(sim_mapped *m);
void sim_mapped_release(sim_mapped *m);
/* insert fails with cudaErrorInvalidValue on overlap and with
 * cudaErrorMemoryAllocation when arena ranges would exceed SIM_TOTAL_MEM.
 * remove returns once no operation uses the range any more. */
int sim_mapped_insert(sim_mapped *m, uint64_t addr, uint64_t size, bool arena);
int sim_mapped_remove(sim_mapped *m, uint64_t addr, uint64_t size);
/* The range holding all of [addr, addr + n), pinned, if there is one and
 * `space` may touch it (NULL: any); NULL otherwise.  *denied tells a range
 * that is there but not the space's. */
sim_range *sim_mapped_pin(sim_mapped *m, uint64_t addr, uint64_t n, const tdm_bspace *space, bool *denied);
void sim_mapped_unpin(sim_mapped *m, sim_range *r);
/* The range holding addr may be touched by kernels of `space` from now on
 * (until it is unmapped, or revoked).  cudaErrorInvalidValue if nothing is
 * mapped at addr. */
int sim_mapped_grant(sim_mapped *m, uint64_t addr, tdm_bspace *space);
void sim_mapped_revoke(sim_mapped *m, uint64_t addr, const tdm_bspace *space);
/* Forgets `space` on every range (it is destroyed). */
void sim_mapped_forget_space(sim_mapped *m, const tdm_bspace *space);
/* Bytes of arena ranges mapped now. */
uint64_t sim_mapped_arena_bytes(sim_mapped *m);
/* The lowest address >= lo where `size` bytes (aligned to `align`) fit
 * below hi between mapped ranges; 0 if none. */
uint64_t sim_mapped_find_gap(sim_mapped *m, uint64_t lo, uint64_t hi, uint64_t size, uint64_t align);

struct tdm_bmem {
    int fd;                  /* the memfd: the analogue of a shareable handle */
    uint64_t addr, size;
    struct tdm_bmem *prev, *next;   /* b->mems, for shutdown */
};

/* ---- device output (issue 14): sim_output.c ---- */

/* What a stream's kernels printed (sim_printf, a failing sim_assert),
 * held as the GPU holds it in its printf FIFO until the host synchronizes
 * with the stream; then written through stdio in the synchronizing thread,
 * as the driver does (docs/device-output.md). */
#define SIM_OUTPUT_MAX (1u << 20)      /* as the driver's default printf FIFO */
typedef struct sim_output_piece {
    int fd;                  /* 1 stdout, 2 stderr */
    char *bytes;
    size_t len;
} sim_output_piece;
typedef struct sim_output {
    pthread_mutex_t lock;    /* a worker adds while the host may flush */
    sim_output_piece *v;
    size_t n, cap, bytes;
    bool dropped;            /* overflowed since the last flush (logged once) */
} sim_output;

void sim_output_init(sim_output *o);
void sim_output_release(sim_output *o);
/* Writes what o holds to the process's stdout and stderr, in order. */
void sim_output_flush(sim_output *o);
/* The same in two steps, for a caller that finds o under b->lock: take
 * there, write (and free) after letting go of it. */
void sim_output_take(sim_output *o, sim_output_piece **v, size_t *n);
void sim_output_write(sim_output_piece *v, size_t n);

/* ---- the work queue of a stream ---- */

typedef enum sim_op_kind {
    SIM_OP_HTOD,
    SIM_OP_DTOH,
    SIM_OP_DTOD,
    SIM_OP_MEMSET,
    SIM_OP_LAUNCH,
    SIM_OP_RECORD,
    SIM_OP_WAIT,
    SIM_OP_HOST,             /* ---- host callbacks (issue 14): sim_callbacks.c ---- */
    SIM_OP_COND,             /* a conditional node, or its launch's default values (sim_graph.c) */
} sim_op_kind;

typedef struct sim_op {
    struct sim_op *next;
    sim_op_kind kind;
    uint64_t seq;            /* position in its stream */
    uint64_t dst, src;       /* device addresses */
    size_t n;
    uint8_t value;           /* memset */
    void *host;              /* htod: owned copy; dtoh: the caller's buffer */
    int *result;             /* dtoh: where the caller waits for the outcome */
    tdm_bfunc *func;         /* launch: holds a reference on its module */
    tdm_dim3 grid, block;
    uint32_t shared_mem;
    void *params;            /* launch: owned copy */
    tdm_bevent *event;       /* record, wait: holds a reference */
    uint64_t event_seq;      /* record: this record's number; wait: the one awaited */
    struct tdm_bstream *stream; /* where it was queued (a launch prints into its output) */
    /* ---- host callbacks (issue 14) ---- */
    void (*due)(void *arg, int status); /* host: told when the stream got here */
    void *due_arg;
    tdm_bhold *hold;         /* host: the stream waits here until it is released */
    /* ---- graph memcpy nodes (issue 14) ---- */
    const void *live_src;    /* htod in a graph: read at each launch (host stays owned by its graph) */
    struct sim_cond *cond;   /* SIM_OP_COND: holds a reference (sim_graph.c) */
    /* ---- graph host nodes (issue 14) ---- */
    uint64_t host_key;       /* host in a graph: the guest's function; a launch binds due and hold */
    /* ---- graph node parameters (issue 14) ---- */
    bool disabled;           /* an exec's op: launches leave it out (cudaGraphNodeSetEnabled) */
} sim_op;

/* ---- launch ex and stream attributes (issue 14) ---- */
/* A stream's attributes, as set; all zero is "never set". */
typedef struct sim_stream_attrs {
    tdm_bstream_attr window;
    bool sync_policy_set, domain_set, domain_map_set;
    int sync_policy, domain, domain_map_default, domain_map_remote;
} sim_stream_attrs;

struct tdm_bstream {
    tdm_backend *b;
    pthread_t thread;
    pthread_cond_t wake;     /* the worker: work arrived or stop */
    sim_op *head, *tail;     /* head stays queued while it runs */
    uint64_t enqueued, completed;
    int sticky;              /* first fault; later work is skipped */
    uint64_t mps_gen;        /* the MPS domain's fault generation at creation */
    const tdm_bspace *space; /* whose memory its kernels may touch (NULL: any) */
    bool lost_context;       /* its kernel's fault lost the context (sim_health.c) */
    bool stop;               /* drain, then exit */
    struct tdm_bstream *next;
    sim_output output;       /* its kernels' printf/assert output (issue 14) */
    /* ---- graphs (issue 14) ---- */
    struct sim_capture *capture; /* the capture its work goes to, or NULL (sim_graph.c) */
    /* ---- launch ex and stream attributes (issue 14) ---- */
    sim_stream_attrs attrs;  /* as set, or the driver's defaults (sim_stream_attr.c) */
    /* ---- SM shares (issue 17) ---- */
    unsigned sms;            /* the SMs of the share it was made in (0: the whole device); sim_share.c */
};

struct tdm_bevent {
    unsigned flags;
    int refs;                /* the creator's, plus one per queued op */
    uint64_t recorded;       /* records issued */
    uint64_t completed;      /* highest record that ran */
    double t_ms;             /* CLOCK_MONOTONIC when that record ran */
    struct tdm_bevent *prev, *next;
    /* The stream of its latest record, whose device output an event
     * synchronize writes out (NULL once that stream is gone). */
    struct tdm_bstream *recorded_on;
    /* ---- graphs (issue 14) ---- */
    struct sim_capture *capture; /* its last record was captured there (sim_graph.c) */
};

struct tdm_bmodule {
    tdm_backend *b;
    int refs;                /* the loader's, plus one per queued launch */
    uint32_t nglobals;       /* sim_global_count() */
    void **storage;          /* per global of the kernel table, in the block below */
    uint64_t globals_at, globals_size; /* the block in the globals window (sim_module.c) */
    struct tdm_bfunc *funcs;
    struct tdm_bmodule *prev, *next;
};

struct tdm_bfunc {
    const sim_kernel *k;
    tdm_bmodule *m;
    tdm_param_info layout;
    uint32_t params_len;
    uint64_t *globals;       /* addresses of k->globals in m */
    struct tdm_bfunc *next;
    /* ---- cluster launch (issue 14): sim_cluster.c ---- */
    /* Set with cudaFuncSetAttribute: cudaFuncAttribute 10..15 minus 10;
     * the required dimensions only where k has none of its own. */
    int cluster_attr[6];
};

struct tdm_backend {
    tdm_backend_config cfg;
    sim_mapped mapped;
    void *arena;             /* NULL until arena_reserve succeeded */
    void *globals_window;    /* reserved with the arena, right after it */
    atomic_bool stopping;    /* shutdown: skip queued work, end running kernels */

    /* One lock for every queue, event and module reference count: the
     * traffic is a few operations per guest call, and one lock keeps
     * cross-stream waits free of lock-order questions. */
    pthread_mutex_t lock;
    pthread_cond_t progress; /* any op completed (events included) */
    tdm_bstream *streams;    /* every live stream, the legacy one included */
    tdm_bstream *legacy;     /* what a NULL stream means */
    tdm_bevent *events;      /* live events */
    tdm_bmodule *modules;    /* loaded or still referenced */
    tdm_bmem *mems;          /* mapped physical memory */
    struct sim_mps *mps;     /* the MPS domain joined (sim_mps.c), or NULL */
    /* ---- health (issue 14) ---- */
    int lost_err;            /* the fatal fault that lost this context (sim_health.c); b->lock */
    /* ---- runtime (issue 14) ---- */
    uint64_t limits[SIM_LIMIT_COUNT]; /* raised device limits, 0 = default (sim_runtime_ops.c); under lock */
    /* ---- graphs (issue 14) ---- */
    uint64_t last_capture_id; /* ids of stream captures, as the driver's: unique per process */
    /* ---- conditional graph nodes (issue 14) ---- */
    struct sim_condvar *condvars; /* live conditional handles (sim_graph.c); under lock */
    uint64_t last_cond_id;
};

/* The per-launch state behind sim_launch.exec. */
struct sim_exec {
    sim_mapped *mapped;
    const atomic_bool *stopping;
    const tdm_bspace *space; /* the launching session's (NULL: unchecked) */
    uint64_t own_at, own_size; /* the launching module's globals block, always its own */
    sim_range *last;         /* the range of the previous access: most hit it */
    sim_range **pinned;      /* every range the launch touched, pinned until it ends */
    size_t npinned, cap_pinned;
    int err;
    sim_output *output;      /* the launching stream's device output */
    tdm_backend *b;          /* conditional handles a twin sets (sim_set_conditional) */
    unsigned sms;            /* the SMs the launch runs on: its stream's share, or the device's */
};
/* Unpins what the launch touched. */
void sim_exec_release(sim_exec *x);

/* A line with the tandem-server[sim] prefix (tests and docs/sim-backend.md
 * name it): what the simulated device did, such as a kernel's fault, which
 * surfaces to the guest later as an error code. */
#define sim_log(...) tdm_log_from("tandem-server[sim]", __VA_ARGS__)

/* sim_arena.c */
int sim_arena_reserve(tdm_backend *b);
void sim_arena_release(tdm_backend *b);
uint64_t sim_granularity(tdm_backend *b);
/* Where module globals go: SIM_GLOBALS_WINDOW bytes after the arena. */
uint64_t sim_globals_window(const tdm_backend *b);
int sim_mem_map(tdm_backend *b, uint64_t addr, uint64_t size, tdm_bmem **out);
int sim_mem_unmap(tdm_backend *b, uint64_t addr, uint64_t size, tdm_bmem *mem);
int sim_mem_export(tdm_backend *b, tdm_bmem *mem, int *fd_out);
int sim_mem_import(tdm_backend *b, uint64_t addr, uint64_t size, int fd, tdm_bmem **out);
int sim_mem_get_info(tdm_backend *b, uint64_t *free_bytes, uint64_t *total_bytes);
/* Closes what the session layer left mapped (shutdown). */
void sim_mems_free_all(tdm_backend *b);

/* sim_stream.c */
int sim_stream_create(tdm_backend *b, unsigned flags, int priority, tdm_bspace *sp, tdm_bstream **out);
/* sim_space.c: the space ops */
int sim_space_create(tdm_backend *b, tdm_bspace **out);
void sim_space_destroy(tdm_backend *b, tdm_bspace *sp);
int sim_space_grant(tdm_backend *b, tdm_bspace *sp, uint64_t addr);
void sim_space_revoke(tdm_backend *b, tdm_bspace *sp, uint64_t addr);
int sim_stream_destroy(tdm_backend *b, tdm_bstream *s);
int sim_stream_synchronize(tdm_backend *b, tdm_bstream *s);
int sim_stream_query(tdm_backend *b, tdm_bstream *s);
int sim_device_synchronize(tdm_backend *b);
/* Queues op on s (NULL: the legacy stream) and wakes its worker; the op
 * belongs to the stream from then on.  Returns its sequence number. */
uint64_t sim_enqueue(tdm_backend *b, tdm_bstream *s, sim_op *op);
/* Waits until op `seq` of s completed; b->lock held. */
void sim_wait_seq_locked(tdm_backend *b, tdm_bstream *s, uint64_t seq);
tdm_bstream *sim_stream_or_legacy(tdm_backend *b, tdm_bstream *s);
/* Shutdown: stops every worker (queued work is dropped once b->stopping is
 * set) and frees the streams, the legacy one included. */
void sim_streams_free_all(tdm_backend *b);

/* sim_event.c */
int sim_event_create(tdm_backend *b, unsigned flags, tdm_bevent **out);
int sim_event_destroy(tdm_backend *b, tdm_bevent *e);
int sim_event_record(tdm_backend *b, tdm_bevent *e, tdm_bstream *s);
int sim_event_synchronize(tdm_backend *b, tdm_bevent *e);
int sim_event_query(tdm_backend *b, tdm_bevent *e);
int sim_event_elapsed_ms(tdm_backend *b, tdm_bevent *start, tdm_bevent *end, float *ms);
int sim_stream_wait_event(tdm_backend *b, tdm_bstream *s, tdm_bevent *e);
/* b->lock held.  Drops one reference; frees a destroyed event at zero. */
void sim_event_unref_locked(tdm_backend *b, tdm_bevent *e);
/* b->lock held.  The record op `seq` of e ran now. */
void sim_event_complete_locked(tdm_backend *b, tdm_bevent *e, uint64_t seq);
void sim_events_free_all(tdm_backend *b);

/* sim_work.c: enqueueing and running operations */
int sim_memcpy_htod(tdm_backend *b, uint64_t dst, const void *src, size_t n, tdm_bstream *s);
int sim_memcpy_dtoh_sync(tdm_backend *b, void *dst, uint64_t src, size_t n, tdm_bstream *s);
int sim_memcpy_dtoh_async(tdm_backend *b, void *dst, uint64_t src, size_t n, tdm_bstream *s);
int sim_memcpy_dtod(tdm_backend *b, uint64_t dst, uint64_t src, size_t n, tdm_bstream *s);
int sim_memset_d8(tdm_backend *b, uint64_t dst, uint8_t value, size_t n, tdm_bstream *s);
int sim_launch_kernel(tdm_backend *b, tdm_bfunc *f, tdm_dim3 grid, tdm_dim3 block, uint32_t shared_mem,
                      tdm_bstream *s, const void *params, size_t params_len);
/* Runs a copy, memset or launch on the calling worker; b->lock not held.
 * Returns the fault it caused, if any. */
int sim_op_execute(tdm_backend *b, sim_op *op);
/* b->lock held.  Releases what op holds and frees it. */
void sim_op_free_locked(tdm_backend *b, sim_op *op);

/* sim_module.c */
int sim_module_load(tdm_backend *b, const void *image, size_t len, tdm_bmodule **out);
int sim_module_unload(tdm_backend *b, tdm_bmodule *m);
int sim_module_get_function(tdm_backend *b, tdm_bmodule *m, const char *name, tdm_bfunc **out,
                            tdm_param_info *params);
int sim_module_get_global(tdm_backend *b, tdm_bmodule *m, const char *name, uint64_t *addr, uint64_t *size);
int sim_func_get_attributes(tdm_backend *b, tdm_bfunc *f, tdm_func_attrs *out);
/* b->lock held. */
void sim_module_unref_locked(tdm_backend *b, tdm_bmodule *m);
void sim_modules_free_all(tdm_backend *b);

/* sim_mps.c: the MPS domain shared by sim servers (docs/sim-backend.md) */
/* Joins domain `name` (NULL: none). */
int sim_mps_join(tdm_backend *b, const char *name);
void sim_mps_leave(tdm_backend *b);
/* The domain's fault generation now (0 without a domain). */
uint64_t sim_mps_generation(const tdm_backend *b);
/* A kernel of this server failed with err: if it is fatal, every client of
 * the domain dies. */
void sim_mps_kernel_fault(tdm_backend *b, int err);
/* b->lock held.  Makes s sticky with the domain's error if a fatal fault
 * happened in the domain since s was created. */
void sim_mps_poll_locked(tdm_backend *b, tdm_bstream *s);

/* sim_device.c */
int sim_device_info(tdm_backend *b, tdm_device_info *out);

/* ---- SM shares (issue 17): sim_share.c, docs/sm-shares.md ---- */
/* The device's SM count (cfg.sim_sms, or an H100's). */
unsigned sim_device_sms(const tdm_backend *b);
int sim_share_get(tdm_backend *b, unsigned sms, tdm_bshare **out, unsigned *granted);
void sim_share_put(tdm_backend *b, tdm_bshare *sh);
int sim_share_stream_create(tdm_backend *b, tdm_bshare *sh, unsigned flags, int priority, tdm_bspace *sp,
                            tdm_bstream **out);
uint64_t sim_now_ns(void);
/* Kernel op (of stream s), which started at started_ns and whose twin has
 * run: returns once the time the share model gives it has passed (or the
 * server stops).  b->lock not held. */
void sim_share_hold(tdm_backend *b, const tdm_bstream *s, const sim_op *op, uint64_t started_ns);

/* ---- health (issue 14): sim_health.c ---- */
/* A kernel fault that loses the context (as on a GPU). */
bool sim_error_is_fatal(int err);
/* b->lock held.  A kernel of this server failed with err: a fatal one loses
 * the context for every stream (and tells the MPS domain, if any). */
void sim_context_kernel_fault_locked(tdm_backend *b, tdm_bstream *s, int err);
bool sim_stream_lost_context(tdm_backend *b, tdm_bstream *s);
/* b->lock held.  Makes s sticky if its context (or its MPS domain) is lost. */
void sim_context_poll_locked(tdm_backend *b, tdm_bstream *s);

/* ---- layout (issue 14): sim_layout.c ---- */
int sim_pitch_alignment(tdm_backend *b, uint64_t *align);
int sim_copy_3d(tdm_backend *b, const tdm_box *dst, const tdm_box *src, tdm_extent ext, tdm_bstream *s);
int sim_memset_3d(tdm_backend *b, const tdm_box *dst, uint8_t value, tdm_extent ext, tdm_bstream *s);
int sim_array_create(tdm_backend *b, const tdm_array_desc *d, tdm_barray **out);
int sim_array_destroy(tdm_backend *b, tdm_barray *a);
/* sim_texture.c */
int sim_tex_object_create(tdm_backend *b, const tdm_tex_resource *r, const struct cudaTextureDesc *tex,
                         const struct cudaResourceViewDesc *view, uint64_t *value);
int sim_tex_object_destroy(tdm_backend *b, uint64_t value);
int sim_surf_object_create(tdm_backend *b, const tdm_tex_resource *r, uint64_t *value);
int sim_surf_object_destroy(tdm_backend *b, uint64_t value);

/* ---- runtime (issue 14) ---- */
/* sim_runtime_ops.c */
int sim_occupancy_max_blocks(tdm_backend *b, tdm_bfunc *f, int block_size, size_t dyn_smem, unsigned flags,
                             int *blocks);
int sim_occupancy_dyn_smem(tdm_backend *b, tdm_bfunc *f, int num_blocks, int block_size, size_t *bytes);
int sim_stream_priority_range(tdm_backend *b, int *least, int *greatest);
int sim_limit_get(tdm_backend *b, int limit, uint64_t *value);
int sim_limit_raise(tdm_backend *b, int limit, uint64_t value);
int sim_func_set_attribute(tdm_backend *b, tdm_bfunc *f, int attr, int value);
int sim_func_set_cache_config(tdm_backend *b, tdm_bfunc *f, int config);
int sim_pci_bus_id(tdm_backend *b, char *buf, size_t len);
int sim_launch_cooperative(tdm_backend *b, tdm_bfunc *f, tdm_dim3 grid, tdm_dim3 block, uint32_t shared_mem,
                           tdm_bstream *s, const void *params, size_t params_len);

/* ---- memory models (issue 14): sim_memory_models.c ---- */
int sim_host_map(tdm_backend *b, void *p, size_t n, uint64_t *dev);
int sim_host_unmap(tdm_backend *b, void *p, size_t n);

/* ---- graphs (issue 14): sim_graph.c ---- */
int sim_stream_begin_capture(tdm_backend *b, tdm_bstream *s, int mode);
int sim_stream_end_capture(tdm_backend *b, tdm_bstream *s, tdm_bgraph **out);
int sim_stream_capture_info(tdm_backend *b, tdm_bstream *s, int *status, uint64_t *id);
int sim_graph_destroy(tdm_backend *b, tdm_bgraph *g);
int sim_graph_instantiate(tdm_backend *b, tdm_bgraph *g, uint64_t flags, tdm_bgexec **out);
int sim_graph_exec_destroy(tdm_backend *b, tdm_bgexec *x);
int sim_graph_launch(tdm_backend *b, tdm_bgexec *x, tdm_bstream *s);
int sim_graph_exec_update(tdm_backend *b, tdm_bgexec *x, tdm_bgraph *g, int *result);
int sim_graph_create(tdm_backend *b, tdm_bgraph **out);
int sim_graph_kernel_node_set(tdm_backend *b, tdm_bgexec *x, tdm_bgnode *n, const tdm_gnode_desc *d);
int sim_graph_add_node(tdm_backend *b, tdm_bgraph *g, const tdm_gnode_desc *d, tdm_bgnode *const *deps, size_t ndeps,
                       tdm_bgnode **out);
int sim_graph_add_dependencies(tdm_backend *b, tdm_bgraph *g, tdm_bgnode *const *from, tdm_bgnode *const *to,
                               size_t n);
/* b->lock held.  If s captures, op goes into its capture instead of the
 * queue (true: the op is the capture's now). */
bool sim_capture_take_locked(tdm_backend *b, tdm_bstream *s, sim_op *op);
/* b->lock held.  A synchronizing call on s: if s captures, the capture is
 * invalidated and the call fails with cudaErrorStreamCaptureUnsupported. */
int sim_capture_refuse_sync_locked(tdm_backend *b, tdm_bstream *s);
/* b->lock held.  Whether an open capture forbids the calling thread potentially unsafe calls
 * (cudaMalloc) unless it is in relaxed mode, as in CUDA: one begun in global mode on any
 * thread, or in thread-local mode on this one. */
bool sim_capture_forbids_unsafe_locked(tdm_backend *b);
/* The calling thread's capture mode (sim_graph_mem.c): cudaStreamCaptureModeRelaxed lets it
 * allocate while a global capture is open. */
int sim_thread_capture_mode(void);
/* b->lock held.  An event record on s: true if s captures (then the
 * record is a dependency inside the graph, not an operation: e only
 * remembers the capture, for streams that wait on it to join). */
bool sim_capture_record_locked(tdm_backend *b, tdm_bevent *e, tdm_bstream *s);
/* b->lock held.  s is being destroyed: a capture it began ends with it
 * (its work dropped), a capture it joined goes on without it. */
void sim_capture_stream_gone_locked(tdm_backend *b, tdm_bstream *s);
/* b->lock held.  A wait of s on e: 1 if capture handled it (s joined e's
 * capture, or both are in it), 0 to queue it as usual, or a cudaError_t
 * (negated) when it would merge two captures. */
int sim_capture_wait_locked(tdm_backend *b, tdm_bstream *s, tdm_bevent *e);

/* ---- launch ex and stream attributes (issue 14): sim_stream_attr.c ---- */
int sim_stream_set_attribute(tdm_backend *b, tdm_bstream *s, const tdm_bstream_attr *a);
/* ---- graph memory nodes (issue 14): sim_graph_mem.c ---- */
int sim_capture_mode_exchange(tdm_backend *b, int *mode);
int sim_stream_get_attribute(tdm_backend *b, tdm_bstream *s, tdm_bstream_attr *a);
/* ---- graph memcpy nodes, queries (issue 14): sim_graph.c ---- */
int sim_graph_clone(tdm_backend *b, tdm_bgraph *g, tdm_bgraph **out);
int sim_graph_nodes(tdm_backend *b, tdm_bgraph *g, tdm_bgnode **out, size_t cap, size_t *n);
int sim_graph_node_type(tdm_backend *b, tdm_bgnode *n, int *type);
int sim_graph_node_deps(tdm_backend *b, tdm_bgnode *n, tdm_bgnode **out, size_t cap, size_t *count);
int sim_graph_remove_dependencies(tdm_backend *b, tdm_bgraph *g, tdm_bgnode *const *from, tdm_bgnode *const *to,
                                  size_t n);
int sim_graph_destroy_node(tdm_backend *b, tdm_bgraph *g, tdm_bgnode *n);
int sim_graph_find_in_clone(tdm_backend *b, tdm_bgraph *clone, tdm_bgnode *n, tdm_bgnode **out);

/* ---- host callbacks (issue 14): sim_callbacks.c ---- */
int sim_host_func_enqueue(tdm_backend *b, tdm_bstream *s, void (*due)(void *arg, int status), void *arg,
                          tdm_bhold **out);
void sim_host_func_release(tdm_backend *b, tdm_bhold *h);
/* The worker reached a SIM_OP_HOST: tells its owner, then waits for the
 * release.  b->lock held; dropped while due runs. */
void sim_host_run_locked(tdm_backend *b, tdm_bstream *s, sim_op *op);
/* b->lock held.  The op's share of its hold ends. */
void sim_host_unref_locked(tdm_bhold *h);

/* ---- conditional graph nodes (issue 14): sim_graph.c ---- */
int sim_graph_cond_handle_create(tdm_backend *b, tdm_bgraph *g, unsigned dflt, unsigned flags, uint64_t *handle);
int sim_graph_add_cond_node(tdm_backend *b, tdm_bgraph *g, uint64_t handle, int type, unsigned size,
                            tdm_bgnode *const *deps, size_t ndeps, tdm_bgnode **out, tdm_bgraph **bodies);
int sim_stream_begin_capture_to_graph(tdm_backend *b, tdm_bstream *s, tdm_bgraph *g, tdm_bgnode *const *deps,
                                      size_t ndeps, int mode);
int sim_stream_capture_graph(tdm_backend *b, tdm_bstream *s, tdm_bgraph **g, tdm_bgnode **deps, int *types,
                           size_t cap, size_t *ndeps);
int sim_stream_update_capture_deps(tdm_backend *b, tdm_bstream *s, tdm_bgnode *const *deps, size_t n, unsigned flags);
/* Drops op->cond's reference (from sim_op_free_locked). */
void sim_cond_unref_locked(tdm_backend *b, struct sim_cond *c);
/* Runs a SIM_OP_COND on its stream's worker: the body its handle picks,
 * or the launch's default values. */
int sim_cond_execute(tdm_backend *b, sim_op *op);

/* ---- graph host nodes (issue 14): sim_callbacks.c, sim_graph.c ---- */
int sim_stream_capture_host(tdm_backend *b, tdm_bstream *s, uint64_t host_key);
int sim_graph_launch_hosts(tdm_backend *b, tdm_bgexec *x, tdm_bstream *s, const tdm_bhost_binder *hb);
/* A launch's copy of a host node (op) gets its own hold, bound by hb. */
int sim_host_bind(sim_op *op, const tdm_bhost_binder *hb);

/* ---- graph node parameters (issue 14): sim_graph.c ---- */
int sim_graph_node_enabled(tdm_backend *b, tdm_bgexec *x, tdm_bgnode *n, int set, unsigned *enabled);
int sim_graph_memset_node_set(tdm_backend *b, tdm_bgexec *x, tdm_bgnode *n, const tdm_gnode_desc *d);
int sim_graph_memcpy_node_set(tdm_backend *b, tdm_bgexec *x, tdm_bgnode *n, const tdm_gnode_desc *d);
int sim_graph_kernel_node_attr(tdm_backend *b, tdm_bgnode *n, int id, int value);
int sim_graph_exec_host_node_set(tdm_backend *b, tdm_bgexec *x, tdm_bgnode *n, uint64_t host_key);

/* ---- event nodes, child graphs, user objects (issue 14): sim_graph.c ---- */
int sim_graph_event_node_get(tdm_backend *b, tdm_bgnode *n, tdm_bevent **out);
int sim_graph_event_node_set(tdm_backend *b, tdm_bgexec *x, tdm_bgnode *n, tdm_bevent *e);
int sim_stream_event_external(tdm_backend *b, tdm_bstream *s, tdm_bevent *e, bool record);
int sim_graph_add_child_node(tdm_backend *b, tdm_bgraph *g, tdm_bgraph *child, tdm_bgnode *const *deps,
                             size_t ndeps, tdm_bgnode **out, tdm_bgraph **embedded);
int sim_graph_child_graph(tdm_backend *b, tdm_bgnode *n, tdm_bgraph **out);
int sim_graph_exec_child_set(tdm_backend *b, tdm_bgexec *x, tdm_bgnode *n, tdm_bgraph *child);

/* ---- libraries (issue 14): sim_library.c ---- */
int sim_module_kernel_names(tdm_backend *b, tdm_bmodule *m, const void *image, size_t len, char ***names,
                            uint32_t *n);


/* ---- mipmapped arrays (issue 14): sim_mipmap.c ---- */
int sim_mipmap_create(tdm_backend *b, const tdm_array_desc *d, unsigned levels, tdm_bmipmap **out);
int sim_mipmap_level(tdm_backend *b, tdm_bmipmap *m, unsigned level, tdm_barray **out);
int sim_mipmap_destroy(tdm_backend *b, tdm_bmipmap *m);

/* ---- cluster launch and device odds and ends (issue 14): sim_cluster.c ---- */
int sim_func_set_cluster_attribute(tdm_backend *b, tdm_bfunc *f, int attr, int value);
/* The backend's launch op: sim_launch_kernel after the kernel's own
 * cluster dimensions are checked against the grid. */
int sim_launch_plain(tdm_backend *b, tdm_bfunc *f, tdm_dim3 grid, tdm_dim3 block, uint32_t shared_mem, tdm_bstream *s,
                     const void *params, size_t params_len);
int sim_launch_cluster(tdm_backend *b, tdm_bfunc *f, const tdm_cluster_config *c, tdm_bstream *s, const void *params,
                       size_t params_len);
int sim_occupancy_max_active_clusters(tdm_backend *b, tdm_bfunc *f, const tdm_cluster_config *c, int *clusters);
int sim_occupancy_max_cluster_size(tdm_backend *b, tdm_bfunc *f, const tdm_cluster_config *c, int *size);
int sim_func_cluster_attrs(tdm_backend *b, tdm_bfunc *f, tdm_func_cluster_attrs *out);
int sim_tex1d_linear_max_width(tdm_backend *b, int kind, int bits, int channels, uint64_t *width);
int sim_host_atomic_caps(tdm_backend *b, unsigned caps[TDM_BACKEND_ATOMIC_OPS]);

#endif
