/* Graph memory (docs/graphs.md, "Graph memory"): allocation and free nodes
 * and the device's graph memory attributes.  The server gives an
 * allocation node its memory when the node is made; the address it answers
 * is the node's for the graph's life.  cudaMallocAsync and cudaFreeAsync on
 * a capturing stream become such nodes on the server (api_pools.c sends
 * them as usual). */
#include <stdatomic.h>
#include <string.h>

#include "guest.h"

/* One count per process, as the program's captures are. */
static atomic_int captures_open;

void tdm_graph_mem_captures(int delta)
{
    if (delta > 0 || atomic_load(&captures_open) > 0)
        atomic_fetch_add(&captures_open, delta);
}

bool tdm_graph_mem_captures_open(void)
{
    return atomic_load(&captures_open) > 0;
}

void tdm_graph_mem_async_alloc(cudaStream_t stream, uint64_t addr, uint64_t size)
{
    enum cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;

    if (atomic_load(&captures_open) <= 0)
        return;                         /* no RPC while nothing captures */
    if (cudaStreamIsCapturing(stream, &status) == cudaSuccess && status == cudaStreamCaptureStatusActive)
        tdm_allocs_add_graph(addr, size);
}

static cudaError_t add_mem_node(cudaGraphNode_t *pNode, cudaGraph_t graph, const cudaGraphNode_t *deps, size_t ndeps,
                                bool free, uint64_t size, uint64_t *addr)
{
    tdm_graph_mem_node_args a;
    tdm_graph_mem_node_res r;
    cudaError_t err;

    if (!pNode || !graph || (ndeps && !deps) || ndeps > TDM_MAX_GRAPH_DEPS)
        return cudaErrorInvalidValue;
    memset(&a, 0, sizeof(a));
    a.graph = (uint64_t)(uintptr_t)graph;
    /* cudaGraphNode_t values are the server's node handles. */
    a.deps.deps_val = (tdm_handle *)(uintptr_t)deps;
    a.deps.deps_len = (u_int)ndeps;
    a.free = free;
    a.size = size;
    a.addr = *addr;
    memset(&r, 0, sizeof(r));
    err = tdm_call(TDM_GRAPH_ADD_MEM_NODE, &a, &r);
    if (!err)
        err = (cudaError_t)r.err;
    if (err)
        return err;
    *pNode = (cudaGraphNode_t)(uintptr_t)r.node;
    *addr = r.addr;
    return cudaSuccess;
}

/* One device, memory of its own: what an allocation node may ask for. */
static bool alloc_params_valid(const struct cudaMemAllocNodeParams *p)
{
    static const unsigned char zero[sizeof(p->poolProps.reserved)];

    if (!p || !p->bytesize || p->poolProps.allocType != cudaMemAllocationTypePinned ||
        p->poolProps.handleTypes != cudaMemHandleTypeNone || p->poolProps.location.type != cudaMemLocationTypeDevice ||
        tdm_check_device(p->poolProps.location.id) != cudaSuccess ||
        memcmp(p->poolProps.reserved, zero, sizeof(zero)) != 0)
        return false;
    if (p->accessDescCount > 1 || (p->accessDescCount && !p->accessDescs))
        return false;
    /* The owning device always has read-write access: a descriptor may only say so. */
    return !p->accessDescCount || (p->accessDescs[0].location.type == cudaMemLocationTypeDevice &&
                                   p->accessDescs[0].location.id == p->poolProps.location.id &&
                                   p->accessDescs[0].flags == cudaMemAccessFlagsProtReadWrite);
}

cudaError_t cudaGraphAddMemAllocNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                     const cudaGraphNode_t *pDependencies, size_t numDependencies,
                                     struct cudaMemAllocNodeParams *nodeParams)
{
    uint64_t addr = 0;
    cudaError_t err;

    if (!alloc_params_valid(nodeParams))
        return tdm_ret(cudaErrorInvalidValue);
    err = add_mem_node(pGraphNode, graph, pDependencies, numDependencies, false, nodeParams->bytesize, &addr);
    if (err)
        return tdm_ret(err);
    nodeParams->dptr = (void *)(uintptr_t)addr;
    tdm_allocs_add_graph(addr, nodeParams->bytesize);
    return cudaSuccess;
}

cudaError_t cudaGraphAddMemFreeNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                    const cudaGraphNode_t *pDependencies, size_t numDependencies, void *dptr)
{
    uint64_t addr = (uint64_t)(uintptr_t)dptr;

    if (!dptr)
        return tdm_ret(cudaErrorInvalidValue);
    return tdm_ret(add_mem_node(pGraphNode, graph, pDependencies, numDependencies, true, 0, &addr));
}

/* The parameters of memory node `node` of the wanted kind, for an output
 * the caller gave (`out`). */
static cudaError_t node_params(cudaGraphNode_t node, const void *out, bool want_free, tdm_graph_mem_params_res *r)
{
    tdm_handle h = (uint64_t)(uintptr_t)node;
    cudaError_t err;

    if (!node || !out)
        return cudaErrorInvalidValue;
    memset(r, 0, sizeof(*r));
    err = tdm_call(TDM_GRAPH_MEM_NODE_GET_PARAMS, &h, r);
    if (!err)
        err = (cudaError_t)r->err;
    if (!err && (r->free != 0) != want_free)
        err = cudaErrorInvalidValue;    /* a node of the other kind */
    return err;
}

cudaError_t cudaGraphMemAllocNodeGetParams(cudaGraphNode_t node, struct cudaMemAllocNodeParams *params_out)
{
    tdm_graph_mem_params_res r;
    cudaError_t err = node_params(node, params_out, false, &r);

    if (err)
        return tdm_ret(err);
    memset(params_out, 0, sizeof(*params_out));
    params_out->poolProps.allocType = cudaMemAllocationTypePinned;
    params_out->poolProps.location.type = cudaMemLocationTypeDevice;
    params_out->poolProps.location.id = 0;
    params_out->bytesize = r.size;
    params_out->dptr = (void *)(uintptr_t)r.addr;
    return cudaSuccess;
}

cudaError_t cudaGraphMemFreeNodeGetParams(cudaGraphNode_t node, void *dptr_out)
{
    tdm_graph_mem_params_res r;
    cudaError_t err = node_params(node, dptr_out, true, &r);

    if (err)
        return tdm_ret(err);
    *(void **)dptr_out = (void *)(uintptr_t)r.addr;
    return cudaSuccess;
}

cudaError_t cudaDeviceGraphMemTrim(int device)
{
    cudaError_t err = tdm_check_device(device);

    return tdm_ret(err ? err : tdm_call_err(TDM_DEVICE_GRAPH_MEM_TRIM, NULL));
}

/* What both attribute calls check first: a value to read or write, on
 * the one device. */
static cudaError_t attr_args_valid(int device, const void *value)
{
    return value ? tdm_check_device(device) : cudaErrorInvalidValue;
}

cudaError_t cudaDeviceGetGraphMemAttribute(int device, enum cudaGraphMemAttributeType attr, void *value)
{
    tdm_graph_mem_attr_args a = { (int)attr, 0 };
    tdm_u64_res r;
    cudaError_t err = attr_args_valid(device, value);

    if (err)
        return tdm_ret(err);
    memset(&r, 0, sizeof(r));
    err = tdm_call(TDM_DEVICE_GET_GRAPH_MEM_ATTR, &a, &r);
    if (!err)
        err = (cudaError_t)r.err;
    if (!err)
        *(uint64_t *)value = r.value;
    return tdm_ret(err);
}

cudaError_t cudaDeviceSetGraphMemAttribute(int device, enum cudaGraphMemAttributeType attr, void *value)
{
    tdm_graph_mem_attr_args a = { (int)attr, 0 };
    cudaError_t err = attr_args_valid(device, value);

    if (err)
        return tdm_ret(err);
    a.value = *(const uint64_t *)value;
    return tdm_ret(tdm_call_err(TDM_DEVICE_SET_GRAPH_MEM_ATTR, &a));
}
