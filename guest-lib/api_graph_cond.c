/* Conditional graph nodes (docs/graphs.md, "Conditional nodes"): handles,
 * If/While/Switch nodes whose body graphs live on the server (their
 * cudaGraph_t values are the server's handles, like every graph's), and
 * captures into a graph the program names.  Kernels set a handle's value
 * with cudaGraphSetConditional on the device: nothing of that is remoted. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "guest.h"

cudaError_t cudaGraphConditionalHandleCreate(cudaGraphConditionalHandle *pHandle_out, cudaGraph_t graph,
                                             unsigned int defaultLaunchValue, unsigned int flags)
{
    tdm_cond_handle_args a = { (uint64_t)(uintptr_t)graph, defaultLaunchValue, flags };
    tdm_u64_res r;
    cudaError_t err;

    if (!pHandle_out || !graph)
        return tdm_ret(cudaErrorInvalidValue);
    memset(&r, 0, sizeof(r));
    err = tdm_call(TDM_GRAPH_COND_HANDLE_CREATE, &a, &r);
    if (!err)
        err = (cudaError_t)r.err;
    if (!err)
        *pHandle_out = (cudaGraphConditionalHandle)r.value;
    return tdm_ret(err);
}

cudaError_t tdm_graph_add_cond_node(cudaGraphNode_t *node, cudaGraph_t graph, const cudaGraphNode_t *deps,
                                    size_t ndeps, struct cudaConditionalNodeParams *p)
{
    tdm_cond_node_args a;
    tdm_cond_node_res r;
    cudaGraph_t *bodies;
    cudaError_t err;

    if (!node || !graph || (ndeps && !deps) || ndeps > TDM_MAX_GRAPH_DEPS)
        return cudaErrorInvalidValue;
    if (p->size > TDM_MAX_COND_BODIES)
        return cudaErrorMemoryAllocation;   /* the server's bound on a node's bodies */
    /* The runtime owns the array for the node's life: the graph's nodes are
     * not tracked here, so it stays (a pointer per body). */
    if (!(bodies = calloc(p->size ? p->size : 1, sizeof(*bodies))))
        return cudaErrorMemoryAllocation;
    memset(&a, 0, sizeof(a));
    a.graph = (uint64_t)(uintptr_t)graph;
    a.deps.deps_val = (tdm_handle *)(uintptr_t)deps;   /* cudaGraphNode_t values are the server's handles */
    a.deps.deps_len = (u_int)ndeps;
    a.handle = p->handle;
    a.type = (int)p->type;
    a.size = p->size;
    memset(&r, 0, sizeof(r));
    err = tdm_call(TDM_GRAPH_ADD_COND_NODE, &a, &r);
    if (!err)
        err = (cudaError_t)r.err;
    if (!err && r.bodies.bodies_len != p->size)
        err = cudaErrorUnknown;
    if (!err) {
        for (u_int i = 0; i < r.bodies.bodies_len; i++)
            bodies[i] = (cudaGraph_t)(uintptr_t)r.bodies.bodies_val[i];
        p->phGraph_out = bodies;
        *node = (cudaGraphNode_t)(uintptr_t)r.node;
    } else {
        free(bodies);
    }
    xdr_free((xdrproc_t)xdr_tdm_cond_node_res, (char *)&r);
    return err;
}

/* Streams capturing into a graph the program named: their
 * cudaStreamEndCapture may have no graph output.  A process captures on a
 * few streams at a time. */
static struct {
    pthread_mutex_t lock;
    uint64_t *v;
    size_t n, cap;
} into_captures = { PTHREAD_MUTEX_INITIALIZER, NULL, 0, 0 };

static void capture_to_graph_began(uint64_t stream)
{
    pthread_mutex_lock(&into_captures.lock);
    if (into_captures.n == into_captures.cap) {
        size_t cap = into_captures.cap ? 2 * into_captures.cap : 8;
        uint64_t *v = realloc(into_captures.v, cap * sizeof(*v));
        if (v) {
            into_captures.v = v;
            into_captures.cap = cap;
        }
    }
    if (into_captures.n < into_captures.cap)
        into_captures.v[into_captures.n++] = stream;
    pthread_mutex_unlock(&into_captures.lock);
}

bool tdm_capture_to_graph_ended(uint64_t stream)
{
    bool found = false;

    pthread_mutex_lock(&into_captures.lock);
    for (size_t i = 0; i < into_captures.n && !found; i++)
        if (into_captures.v[i] == stream) {
            into_captures.v[i] = into_captures.v[--into_captures.n];
            found = true;
        }
    pthread_mutex_unlock(&into_captures.lock);
    return found;
}

static bool edges_default(const cudaGraphEdgeData *e, size_t n)
{
    static const cudaGraphEdgeData zero;

    for (size_t i = 0; e && i < n; i++)
        if (memcmp(&e[i], &zero, sizeof(zero)) != 0)
            return false;
    return true;
}

cudaError_t cudaStreamBeginCaptureToGraph(cudaStream_t stream, cudaGraph_t graph, const cudaGraphNode_t *pDependencies,
                                          const cudaGraphEdgeData *dependencyData, size_t numDependencies,
                                          enum cudaStreamCaptureMode mode)
{
    tdm_capture_to_graph_args a;
    cudaError_t err;

    if (!graph || (numDependencies && !pDependencies) || numDependencies > TDM_MAX_GRAPH_DEPS)
        return tdm_ret(cudaErrorInvalidValue);
    if (!edges_default(dependencyData, numDependencies))
        return tdm_ret(tdm_unsupported("cudaStreamBeginCaptureToGraph with edge data"));
    memset(&a, 0, sizeof(a));
    a.stream = tdm_stream_id(stream);
    a.graph = (uint64_t)(uintptr_t)graph;
    a.deps.deps_val = (tdm_handle *)(uintptr_t)pDependencies;
    a.deps.deps_len = (u_int)numDependencies;
    a.mode = (int)mode;
    err = tdm_call_err(TDM_STREAM_BEGIN_CAPTURE_TO_GRAPH, &a);
    if (!err) {
        capture_to_graph_began(a.stream);
        tdm_graph_mem_captures(1);   /* as cudaStreamBeginCapture: captured cudaMallocAsync */
    }
    return tdm_ret(err);
}

cudaError_t cudaStreamBeginCaptureToGraph_ptsz(cudaStream_t stream, cudaGraph_t graph,
                                               const cudaGraphNode_t *pDependencies,
                                               const cudaGraphEdgeData *dependencyData, size_t numDependencies,
                                               enum cudaStreamCaptureMode mode)
{
    return cudaStreamBeginCaptureToGraph(stream ? stream : cudaStreamPerThread, graph, pDependencies, dependencyData,
                                         numDependencies, mode);
}

/* What cudaStreamGetCaptureInfo answers in its arrays: the runtime keeps
 * them until the thread's next call on the stream; here until the
 * thread's next such call. */
static _Thread_local struct {
    cudaGraphNode_t *nodes;
    cudaGraphEdgeData *edges;
    size_t cap;
} info_arrays;

cudaError_t tdm_capture_graph_info(uint64_t stream, enum cudaStreamCaptureStatus *status, unsigned long long *id,
                                   cudaGraph_t *graph, const cudaGraphNode_t **deps, const cudaGraphEdgeData **edges,
                                   size_t *ndeps)
{
    tdm_capture_graph_res r;
    cudaError_t err;

    memset(&r, 0, sizeof(r));
    err = tdm_call(TDM_STREAM_CAPTURE_GRAPH, &stream, &r);
    if (!err)
        err = (cudaError_t)r.err;
    if (!err && r.deps.deps_len > info_arrays.cap) {
        cudaGraphNode_t *n = realloc(info_arrays.nodes, r.deps.deps_len * sizeof(*n));
        cudaGraphEdgeData *e = n ? realloc(info_arrays.edges, r.deps.deps_len * sizeof(*e)) : NULL;
        if (n)
            info_arrays.nodes = n;
        if (e) {
            info_arrays.edges = e;
            info_arrays.cap = r.deps.deps_len;
        } else {
            err = cudaErrorMemoryAllocation;
        }
    }
    if (!err) {
        for (u_int i = 0; i < r.deps.deps_len; i++) {
            info_arrays.nodes[i] = (cudaGraphNode_t)(uintptr_t)r.deps.deps_val[i];
            memset(&info_arrays.edges[i], 0, sizeof(info_arrays.edges[i]));   /* default edges */
        }
        *status = (enum cudaStreamCaptureStatus)r.status;
        if (id)
            *id = r.id;
        if (graph)
            *graph = (cudaGraph_t)(uintptr_t)r.graph;
        if (deps)
            *deps = r.deps.deps_len ? info_arrays.nodes : NULL;
        if (edges)
            *edges = r.deps.deps_len ? info_arrays.edges : NULL;
        if (ndeps)
            *ndeps = r.deps.deps_len;
    }
    xdr_free((xdrproc_t)xdr_tdm_capture_graph_res, (char *)&r);
    return err;
}

cudaError_t cudaStreamUpdateCaptureDependencies(cudaStream_t stream, cudaGraphNode_t *dependencies,
                                                const cudaGraphEdgeData *dependencyData, size_t numDependencies,
                                                unsigned int flags)
{
    tdm_capture_deps_args a;

    if ((numDependencies && !dependencies) || numDependencies > TDM_MAX_GRAPH_DEPS)
        return tdm_ret(cudaErrorInvalidValue);
    if (!edges_default(dependencyData, numDependencies))
        return tdm_ret(tdm_unsupported("cudaStreamUpdateCaptureDependencies with edge data"));
    memset(&a, 0, sizeof(a));
    a.stream = tdm_stream_id(stream);
    a.deps.deps_val = (tdm_handle *)(uintptr_t)dependencies;
    a.deps.deps_len = (u_int)numDependencies;
    a.flags = flags;
    return tdm_ret(tdm_call_err(TDM_STREAM_UPDATE_CAPTURE_DEPS, &a));
}

cudaError_t cudaStreamUpdateCaptureDependencies_ptsz(cudaStream_t stream, cudaGraphNode_t *dependencies,
                                                     const cudaGraphEdgeData *dependencyData,
                                                     size_t numDependencies, unsigned int flags)
{
    return cudaStreamUpdateCaptureDependencies(stream ? stream : cudaStreamPerThread, dependencies, dependencyData,
                                               numDependencies, flags);
}
