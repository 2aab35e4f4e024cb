/* Shared state and helpers of the cuda backend (real GPU, CUDA Driver API).
 * Private to server/backends/cuda_*.c. */
#ifndef TANDEM_SERVER_CUDA_BACKEND_INTERNAL_H
#define TANDEM_SERVER_CUDA_BACKEND_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cuda.h>
#include "cuda_driver.h"
#include <driver_types.h>

#include "backend.h"
#include "log.h"

/* Everything here is written once by init/arena_reserve and only read
 * afterwards, so the many session threads share it without a lock; the
 * driver itself is thread-safe. */
#define TDM_CUDA_LIMITS 7 /* cudaLimit values 0..6 (issue 14) */

struct tdm_backend {
    tdm_backend_config cfg;
    CUdevice dev;
    CUcontext ctx;              /* the device's primary context, retained */
    CUstream zero_stream;       /* private: zeroing fresh memory in mem_map */
    CUmemAllocationProp prop;   /* what mem_map creates */
    uint64_t gran;              /* mapping unit (minimum granularity) */
    CUdeviceptr arena;          /* 0 until arena_reserve succeeded */
    int max_threads_per_block;  /* launch limits, to tell a bad launch */
    int max_block[3];           /* configuration from a bad argument */
    int max_grid[3];
    /* ---- runtime (issue 14) ---- */
    /* Each limit's value before the first raise (cuda_runtime_ops.c), what
     * a session that set none reads; bit per limit once known. */
    uint64_t limit_default[TDM_CUDA_LIMITS];
    uint32_t limit_default_known;
    /* ---- host callbacks (issue 14) ---- */
    struct tdm_cuda_holds *holds;  /* cuda_callbacks.c: the words held streams wait on */
    /* ---- graph host nodes (issue 14) ---- */
    struct tdm_cuda_hostnodes *hostnodes;  /* cuda_graph_host.c */
    /* ---- SM shares (issue 17) ---- */
    struct tdm_cuda_shares *shares;        /* cuda_share.c: SM groups and green contexts */
    atomic_bool kernel_fallback_told;      /* cuda_launch.c logged its first CUkernel launch */
};

/* CUresult -> cudaError_t, without logging (for expected outcomes). */
int tdm_cuda_map_error(CUresult r);
/* Maps r and, unless it is success or "not ready", logs the driver's own
 * name and string for it with `what` (the call that failed). */
int tdm_cuda_err(CUresult r, const char *what);
/* Logs a backend message with the tandem-server[cuda] prefix.  The backend
 * has no session to name: the session layer logs what a failure means for
 * the guest; this line says what the driver said. */
#define tdm_cuda_log(...) tdm_log_from("tandem-server[cuda]", __VA_ARGS__)

/* Makes the primary context current on the calling thread.  Session threads
 * come and go, so every entry point calls this first; when the context is
 * already current it costs one driver TLS read. */
static inline int tdm_cuda_enter(tdm_backend *b)
{
    CUcontext cur = NULL;

    if (tdm_cu.cuCtxGetCurrent(&cur) == CUDA_SUCCESS && cur == b->ctx)
        return cudaSuccess;
    return tdm_cuda_err(tdm_cu.cuCtxSetCurrent(b->ctx), "cuCtxSetCurrent");
}

/* tdm_bstream and tdm_bevent are the driver's own handles, cast: they carry
 * no state of ours, so wrapping them would only add an allocation. */
static inline CUstream tdm_cuda_stream(tdm_bstream *s)
{
    return s ? (CUstream)s : CU_STREAM_LEGACY;
}

static inline CUevent tdm_cuda_event(tdm_bevent *e)
{
    return (CUevent)e;
}

/* cuda_memory.c */
int tdm_cuda_arena_reserve(tdm_backend *b);
void tdm_cuda_arena_free(tdm_backend *b);
uint64_t tdm_cuda_granularity(tdm_backend *b);
int tdm_cuda_mem_map(tdm_backend *b, uint64_t addr, uint64_t size, tdm_bmem **out);
int tdm_cuda_mem_unmap(tdm_backend *b, uint64_t addr, uint64_t size, tdm_bmem *mem);
int tdm_cuda_mem_export(tdm_backend *b, tdm_bmem *mem, int *fd_out);
int tdm_cuda_mem_import(tdm_backend *b, uint64_t addr, uint64_t size, int fd, tdm_bmem **out);

/* cuda_copy.c */
int tdm_cuda_host_register(tdm_backend *b, void *p, size_t n, void **handle);
int tdm_cuda_host_unregister(tdm_backend *b, void *handle);
int tdm_cuda_memcpy_htod(tdm_backend *b, uint64_t dst, const void *src, size_t n, tdm_bstream *s);
int tdm_cuda_memcpy_dtoh_sync(tdm_backend *b, void *dst, uint64_t src, size_t n, tdm_bstream *s);
int tdm_cuda_memcpy_dtoh_async(tdm_backend *b, void *dst, uint64_t src, size_t n, tdm_bstream *s);
int tdm_cuda_memcpy_dtod(tdm_backend *b, uint64_t dst, uint64_t src, size_t n, tdm_bstream *s);
int tdm_cuda_memset_d8(tdm_backend *b, uint64_t dst, uint8_t value, size_t n, tdm_bstream *s);

/* cuda_module.c */
int tdm_cuda_module_load(tdm_backend *b, const void *image, size_t len, tdm_bmodule **out);
int tdm_cuda_module_unload(tdm_backend *b, tdm_bmodule *m);
int tdm_cuda_module_get_function(tdm_backend *b, tdm_bmodule *m, const char *name,
                                 tdm_bfunc **out, tdm_param_info *params);
int tdm_cuda_module_get_global(tdm_backend *b, tdm_bmodule *m, const char *name,
                               uint64_t *addr, uint64_t *size);
int tdm_cuda_func_get_attributes(tdm_backend *b, tdm_bfunc *f, tdm_func_attrs *out);

/* cuda_launch.c */
int tdm_cuda_launch(tdm_backend *b, tdm_bfunc *f, tdm_dim3 grid, tdm_dim3 block,
                    uint32_t shared_mem, tdm_bstream *s, const void *params, size_t params_len);
/* The function behind f and the parameter layout it was reported with. */
CUfunction tdm_cuda_func_handle(const tdm_bfunc *f);
const tdm_param_info *tdm_cuda_func_params(const tdm_bfunc *f);

/* cuda_stream.c */
int tdm_cuda_stream_create(tdm_backend *b, unsigned flags, int priority, tdm_bspace *sp, tdm_bstream **out);
int tdm_cuda_stream_destroy(tdm_backend *b, tdm_bstream *s);
int tdm_cuda_stream_synchronize(tdm_backend *b, tdm_bstream *s);
int tdm_cuda_stream_query(tdm_backend *b, tdm_bstream *s);
int tdm_cuda_stream_wait_event(tdm_backend *b, tdm_bstream *s, tdm_bevent *e);
int tdm_cuda_event_create(tdm_backend *b, unsigned flags, tdm_bevent **out);
int tdm_cuda_event_destroy(tdm_backend *b, tdm_bevent *e);
int tdm_cuda_event_record(tdm_backend *b, tdm_bevent *e, tdm_bstream *s);
int tdm_cuda_event_synchronize(tdm_backend *b, tdm_bevent *e);
int tdm_cuda_event_query(tdm_backend *b, tdm_bevent *e);
int tdm_cuda_event_elapsed_ms(tdm_backend *b, tdm_bevent *start, tdm_bevent *end, float *ms);

/* ---- health (issue 14): cuda_health.c ---- */
/* Lets go of the backend's context; a lost one (its synchronize failed) is
 * reset so that the next backend's context is a new one. */
void tdm_cuda_release_context(tdm_backend *b, bool lost);
bool tdm_cuda_stream_lost_context(tdm_backend *b, tdm_bstream *s);

/* ---- layout (issue 14): cuda_layout.c ---- */
int tdm_cuda_pitch_alignment(tdm_backend *b, uint64_t *align);
int tdm_cuda_copy_3d(tdm_backend *b, const tdm_box *dst, const tdm_box *src, tdm_extent ext, tdm_bstream *s);
int tdm_cuda_memset_3d(tdm_backend *b, const tdm_box *dst, uint8_t value, tdm_extent ext, tdm_bstream *s);
int tdm_cuda_array_create(tdm_backend *b, const tdm_array_desc *d, tdm_barray **out);
int tdm_cuda_array_destroy(tdm_backend *b, tdm_barray *a);
/* The driver's format of channels of `bits` of a cudaChannelFormatKind. */
int tdm_cuda_array_format(int kind, int bits, CUarray_format *f);
/* The driver's descriptor of an array (or mipmapped array) described by d. */
int tdm_cuda_array_desc(const tdm_array_desc *d, CUDA_ARRAY3D_DESCRIPTOR *desc);
/* cuda_texture.c */
int tdm_cuda_tex_object_create(tdm_backend *b, const tdm_tex_resource *r, const struct cudaTextureDesc *tex,
                         const struct cudaResourceViewDesc *view, uint64_t *value);
int tdm_cuda_tex_object_destroy(tdm_backend *b, uint64_t value);
int tdm_cuda_surf_object_create(tdm_backend *b, const tdm_tex_resource *r, uint64_t *value);
int tdm_cuda_surf_object_destroy(tdm_backend *b, uint64_t value);

/* ---- runtime (issue 14) ---- */
/* cuda_runtime_ops.c */
int tdm_cuda_occupancy_max_blocks(tdm_backend *b, tdm_bfunc *f, int block_size, size_t dyn_smem, unsigned flags,
                                  int *blocks);
int tdm_cuda_occupancy_dyn_smem(tdm_backend *b, tdm_bfunc *f, int num_blocks, int block_size, size_t *bytes);
int tdm_cuda_stream_priority_range(tdm_backend *b, int *least, int *greatest);
int tdm_cuda_limit_get(tdm_backend *b, int limit, uint64_t *value);
int tdm_cuda_limit_raise(tdm_backend *b, int limit, uint64_t value);
int tdm_cuda_func_set_attribute(tdm_backend *b, tdm_bfunc *f, int attr, int value);
int tdm_cuda_func_set_cache_config(tdm_backend *b, tdm_bfunc *f, int config);
int tdm_cuda_pci_bus_id(tdm_backend *b, char *buf, size_t len);
/* cuda_launch.c */
int tdm_cuda_launch_cooperative(tdm_backend *b, tdm_bfunc *f, tdm_dim3 grid, tdm_dim3 block, uint32_t shared_mem,
                                tdm_bstream *s, const void *params, size_t params_len);

/* ---- memory models (issue 14): cuda_memory_models.c ---- */
int tdm_cuda_host_map(tdm_backend *b, void *p, size_t n, uint64_t *dev);
int tdm_cuda_host_unmap(tdm_backend *b, void *p, size_t n);

/* ---- graphs (issue 14): cuda_graph.c ---- */
int tdm_cuda_stream_begin_capture(tdm_backend *b, tdm_bstream *s, int mode);
int tdm_cuda_stream_end_capture(tdm_backend *b, tdm_bstream *s, tdm_bgraph **out);
int tdm_cuda_stream_capture_info(tdm_backend *b, tdm_bstream *s, int *status, uint64_t *id);
int tdm_cuda_graph_destroy(tdm_backend *b, tdm_bgraph *g);
int tdm_cuda_graph_instantiate(tdm_backend *b, tdm_bgraph *g, uint64_t flags, tdm_bgexec **out);
int tdm_cuda_graph_exec_destroy(tdm_backend *b, tdm_bgexec *x);
int tdm_cuda_graph_launch(tdm_backend *b, tdm_bgexec *x, tdm_bstream *s);
int tdm_cuda_graph_exec_update(tdm_backend *b, tdm_bgexec *x, tdm_bgraph *g, int *result);
int tdm_cuda_graph_create(tdm_backend *b, tdm_bgraph **out);
int tdm_cuda_graph_kernel_node_set(tdm_backend *b, tdm_bgexec *x, tdm_bgnode *n, const tdm_gnode_desc *d);
int tdm_cuda_graph_add_node(tdm_backend *b, tdm_bgraph *g, const tdm_gnode_desc *d, tdm_bgnode *const *deps,
                            size_t ndeps, tdm_bgnode **out);
int tdm_cuda_graph_add_dependencies(tdm_backend *b, tdm_bgraph *g, tdm_bgnode *const *from, tdm_bgnode *const *to,
                                    size_t n);

/* ---- launch ex and stream attributes (issue 14): cuda_stream_attr.c ---- */
int tdm_cuda_stream_set_attribute(tdm_backend *b, tdm_bstream *s, const tdm_bstream_attr *a);
/* ---- graph memory nodes (issue 14): cuda_graph_mem.c ---- */
int tdm_cuda_capture_mode_exchange(tdm_backend *b, int *mode);
int tdm_cuda_stream_get_attribute(tdm_backend *b, tdm_bstream *s, tdm_bstream_attr *a);
/* ---- graph memcpy nodes, queries (issue 14): cuda_graph_query.c ---- */
int tdm_cuda_graph_clone(tdm_backend *b, tdm_bgraph *g, tdm_bgraph **out);
int tdm_cuda_graph_nodes(tdm_backend *b, tdm_bgraph *g, tdm_bgnode **out, size_t cap, size_t *n);
int tdm_cuda_graph_node_type(tdm_backend *b, tdm_bgnode *n, int *type);
int tdm_cuda_graph_node_deps(tdm_backend *b, tdm_bgnode *n, tdm_bgnode **out, size_t cap, size_t *count);
int tdm_cuda_graph_remove_dependencies(tdm_backend *b, tdm_bgraph *g, tdm_bgnode *const *from, tdm_bgnode *const *to,
                                       size_t n);
int tdm_cuda_graph_destroy_node(tdm_backend *b, tdm_bgraph *g, tdm_bgnode *n);
int tdm_cuda_graph_find_in_clone(tdm_backend *b, tdm_bgraph *clone, tdm_bgnode *n, tdm_bgnode **out);

/* ---- host callbacks (issue 14): cuda_callbacks.c ---- */
/* The pool of pinned words of b's context (pages made on demand); free
 * after the context's work is done, before the context goes (lost: its
 * pages went with the context). */
int tdm_cuda_holds_init(tdm_backend *b);
void tdm_cuda_holds_free(tdm_backend *b, bool lost);
int tdm_cuda_host_func_enqueue(tdm_backend *b, tdm_bstream *s, void (*due)(void *arg, int status), void *arg,
                               tdm_bhold **out);
void tdm_cuda_host_func_release(tdm_backend *b, tdm_bhold *h);

/* ---- conditional graph nodes (issue 14): cuda_graph_cond.c ---- */
int tdm_cuda_graph_cond_handle_create(tdm_backend *b, tdm_bgraph *g, unsigned dflt, unsigned flags, uint64_t *handle);
int tdm_cuda_graph_add_cond_node(tdm_backend *b, tdm_bgraph *g, uint64_t handle, int type, unsigned size,
                                 tdm_bgnode *const *deps, size_t ndeps, tdm_bgnode **out, tdm_bgraph **bodies);
int tdm_cuda_stream_begin_capture_to_graph(tdm_backend *b, tdm_bstream *s, tdm_bgraph *g, tdm_bgnode *const *deps,
                                           size_t ndeps, int mode);
int tdm_cuda_stream_capture_graph(tdm_backend *b, tdm_bstream *s, tdm_bgraph **g, tdm_bgnode **deps, int *types,
                           size_t cap, size_t *ndeps);
int tdm_cuda_stream_update_capture_deps(tdm_backend *b, tdm_bstream *s, tdm_bgnode *const *deps, size_t n, unsigned flags);

/* ---- graph host nodes (issue 14): cuda_callbacks.c, cuda_graph_host.c ---- */
/* A hold a graph's host node runs (tdm_cuda_hold_run, on the driver's
 * host-function thread): its due is told, then the run waits for the
 * release.  drop: never run (unbound: never handed to the session). */
int tdm_cuda_hold_new(tdm_backend *b, tdm_bhold **out);
void tdm_cuda_hold_bind(tdm_bhold *h, void (*due)(void *arg, int status), void *arg);
void tdm_cuda_hold_drop(tdm_bhold *h, bool unbound);
void tdm_cuda_hold_run(tdm_bhold *h);
int tdm_cuda_hostnodes_init(tdm_backend *b);
void tdm_cuda_hostnodes_free(tdm_backend *b, bool lost);
int tdm_cuda_graph_add_host_node(tdm_backend *b, CUgraph g, const CUgraphNode *deps, size_t ndeps, uint64_t key,
                                 CUgraphNode *out);
int tdm_cuda_stream_capture_host(tdm_backend *b, tdm_bstream *s, uint64_t host_key);
/* Which of x's nodes are host nodes of ours (x made from g); forget: x goes. */
int tdm_cuda_hostnodes_scan(tdm_backend *b, CUgraphExec x, CUgraph g);
void tdm_cuda_hostnodes_forget(tdm_backend *b, CUgraphExec x);
int tdm_cuda_graph_launch_hosts(tdm_backend *b, tdm_bgexec *x, tdm_bstream *s, const tdm_bhost_binder *hb);

/* ---- graph node parameters (issue 14): cuda_graph_params.c ---- */
int tdm_cuda_graph_node_enabled(tdm_backend *b, tdm_bgexec *x, tdm_bgnode *n, int set, unsigned *enabled);
int tdm_cuda_graph_memset_node_set(tdm_backend *b, tdm_bgexec *x, tdm_bgnode *n, const tdm_gnode_desc *d);
int tdm_cuda_graph_memcpy_node_set(tdm_backend *b, tdm_bgexec *x, tdm_bgnode *n, const tdm_gnode_desc *d);
int tdm_cuda_graph_kernel_node_attr(tdm_backend *b, tdm_bgnode *n, int id, int value);
/* cuda_graph_host.c: x's instance of host node n runs host_key from now. */
int tdm_cuda_graph_exec_host_node_set(tdm_backend *b, tdm_bgexec *x, tdm_bgnode *n, uint64_t host_key);
/* A one-row copy node's parameters (d: a TDM_GNODE_COPY_*), cuda_graph.c. */
CUDA_MEMCPY3D tdm_cuda_graph_copy_params(const tdm_gnode_desc *d);

/* ---- event nodes, child graphs, user objects (issue 14): cuda_graph_events.c ---- */
int tdm_cuda_graph_add_event_node(CUgraph g, const CUgraphNode *deps, size_t ndeps, bool record, tdm_bevent *e,
                                  CUgraphNode *out);
/* ---- external semaphore nodes (issue 14) ---- */
int tdm_cuda_graph_add_extsem_node(CUgraph g, const CUgraphNode *deps, size_t ndeps, bool signal, size_t n,
                                   CUgraphNode *out);
int tdm_cuda_graph_event_node_get(tdm_backend *b, tdm_bgnode *n, tdm_bevent **out);
int tdm_cuda_graph_event_node_set(tdm_backend *b, tdm_bgexec *x, tdm_bgnode *n, tdm_bevent *e);
int tdm_cuda_stream_event_external(tdm_backend *b, tdm_bstream *s, tdm_bevent *e, bool record);
int tdm_cuda_graph_add_child_node(tdm_backend *b, tdm_bgraph *g, tdm_bgraph *child, tdm_bgnode *const *deps,
                                  size_t ndeps, tdm_bgnode **out, tdm_bgraph **embedded);
int tdm_cuda_graph_child_graph(tdm_backend *b, tdm_bgnode *n, tdm_bgraph **out);
int tdm_cuda_graph_exec_child_set(tdm_backend *b, tdm_bgexec *x, tdm_bgnode *n, tdm_bgraph *child);

/* ---- libraries (issue 14): cuda_library.c ---- */
int tdm_cuda_module_kernel_names(tdm_backend *b, tdm_bmodule *m, const void *image, size_t len, char ***names,
                                 uint32_t *n);
/* The driver's module behind m (cuda_module.c). */
CUmodule tdm_cuda_module_handle(const tdm_bmodule *m);


/* ---- mipmapped arrays (issue 14): cuda_mipmap.c ---- */
int tdm_cuda_mipmap_create(tdm_backend *b, const tdm_array_desc *d, unsigned levels, tdm_bmipmap **out);
int tdm_cuda_mipmap_level(tdm_backend *b, tdm_bmipmap *m, unsigned level, tdm_barray **out);
int tdm_cuda_mipmap_destroy(tdm_backend *b, tdm_bmipmap *m);

/* ---- cluster launch and device odds and ends (issue 14): cuda_cluster.c ---- */
int tdm_cuda_launch_cluster(tdm_backend *b, tdm_bfunc *f, const tdm_cluster_config *c, tdm_bstream *s,
                            const void *params, size_t params_len);
int tdm_cuda_occupancy_max_active_clusters(tdm_backend *b, tdm_bfunc *f, const tdm_cluster_config *c, int *clusters);
int tdm_cuda_occupancy_max_cluster_size(tdm_backend *b, tdm_bfunc *f, const tdm_cluster_config *c, int *size);
int tdm_cuda_func_cluster_attrs(tdm_backend *b, tdm_bfunc *f, tdm_func_cluster_attrs *out);
int tdm_cuda_tex1d_linear_max_width(tdm_backend *b, int kind, int bits, int channels, uint64_t *width);
int tdm_cuda_host_atomic_caps(tdm_backend *b, unsigned caps[TDM_BACKEND_ATOMIC_OPS]);

/* ---- SM shares (issue 17): cuda_share.c, docs/sm-shares.md ---- */
int tdm_cuda_shares_init(tdm_backend *b);
/* After the context's work is done: destroys every green context. */
void tdm_cuda_shares_free(tdm_backend *b);
int tdm_cuda_share_get(tdm_backend *b, unsigned sms, tdm_bshare **out, unsigned *granted);
void tdm_cuda_share_put(tdm_backend *b, tdm_bshare *sh);
int tdm_cuda_share_stream_create(tdm_backend *b, tdm_bshare *sh, unsigned flags, int priority, tdm_bspace *sp,
                                 tdm_bstream **out);
/* cuda_module.c: f as a context-independent kernel (cuLibraryGetKernel on
 * its module's image, loaded as a library at the first need), launchable
 * on a green context's stream whatever the driver thinks of f's CUfunction,
 * which belongs to the primary context. */
int tdm_cuda_func_kernel(tdm_backend *b, tdm_bfunc *f, CUfunction *out);

#endif
