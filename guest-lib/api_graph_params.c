/* Graph node parameters after the nodes were made (docs/graphs.md "Node
 * parameters and updates"): enabling an executable graph's nodes, its
 * instantiation flags, and the get/set calls of kernel, memset and memcpy
 * nodes.
 *
 * A node's parameters name the program's own things (its kernel's host
 * stub, its argument values, its host pointers), which the server never
 * sees as such, so the guest keeps what the program gave each node it
 * added (or last set) and answers the get calls from that.  A kernel
 * node's record owns the kernelParams array and the argument values it
 * answers, as the runtime does: valid until the node's parameters change or
 * its graph is destroyed. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "guest.h"

/* cudaLaunchAttributeID values a kernel node's attribute may have. */
#define ATTR_IDS 17

/* A kernel node's attribute as the program set it (never set: zero, the default). */
typedef struct attr_slot {
    bool set;
    cudaLaunchAttributeValue v;
} attr_slot;

typedef struct node_record {
    struct node_record *next;
    uint64_t node, graph;
    enum cudaGraphNodeType type;
    bool params_known;       /* false: attributes only (a captured kernel node) */
    attr_slot attrs[ATTR_IDS];
    union {
        struct cudaKernelNodeParams kernel;   /* kernelParams -> args below */
        struct cudaMemsetParams memset;
        struct cudaMemcpy3DParms memcpy;
    } p;
    void **argv;             /* kernel: the runtime-owned array of pointers into values */
    char *values;
} node_record;

#define RECORD_BUCKETS 1024u

/* The process's records, by node handle (the runtime's are per process too). */
static struct {
    pthread_mutex_t lock;
    node_record *bucket[RECORD_BUCKETS];
} records = { .lock = PTHREAD_MUTEX_INITIALIZER };

static node_record **slot_of(uint64_t node)
{
    node_record **pp = &records.bucket[(node ^ (node >> 20)) % RECORD_BUCKETS];

    while (*pp && (*pp)->node != node)
        pp = &(*pp)->next;
    return pp;
}

static void record_free(node_record *r)
{
    if (!r)
        return;
    free(r->argv);
    free(r->values);
    free(r);
}

/* Replaces node's record with r (NULL: forgets it). */
static void record_put(uint64_t node, node_record *r)
{
    node_record **pp, *old;

    pthread_mutex_lock(&records.lock);
    pp = slot_of(node);
    old = *pp;
    if (old)
        *pp = old->next;
    if (r && old && old->type == r->type)   /* new parameters keep the node's attributes */
        memcpy(r->attrs, old->attrs, sizeof(r->attrs));
    if (r) {
        r->next = records.bucket[(node ^ (node >> 20)) % RECORD_BUCKETS];
        records.bucket[(node ^ (node >> 20)) % RECORD_BUCKETS] = r;
    }
    pthread_mutex_unlock(&records.lock);
    record_free(old);
}

static node_record *record_new(uint64_t node, uint64_t graph, enum cudaGraphNodeType type)
{
    node_record *r = calloc(1, sizeof(*r));

    if (r) {
        r->node = node;
        r->graph = graph;
        r->type = type;
        r->params_known = true;
    }
    return r;
}

/* The graph node belongs to, from its record (0: none). */
static uint64_t record_graph(uint64_t node)
{
    node_record *r;
    uint64_t g;

    pthread_mutex_lock(&records.lock);
    r = *slot_of(node);
    g = r ? r->graph : 0;
    pthread_mutex_unlock(&records.lock);
    return g;
}

void tdm_graph_params_kernel(uint64_t node, uint64_t graph, const struct cudaKernelNodeParams *p)
{
    tdm_function *f;
    cudaError_t err;
    node_record *r;

    if (!graph)
        graph = record_graph(node);
    if (!(f = tdm_function_for_host(p->func, &err)) || !(r = record_new(node, graph, cudaGraphNodeTypeKernel)))
        return;
    r->p.kernel = *p;
    r->p.kernel.extra = NULL;
    /* The program's argument values as it passed them, before any host
     * pointer in them was mapped for the server. */
    r->values = calloc(1, f->params_len ? f->params_len : 1);
    r->argv = calloc(f->nparams ? f->nparams : 1, sizeof(*r->argv));
    if (!r->values || !r->argv) {
        record_free(r);
        record_put(node, NULL);
        return;
    }
    for (uint32_t i = 0; i < f->nparams; i++) {
        memcpy(r->values + f->param_offset[i], p->kernelParams[i], f->param_size[i]);
        r->argv[i] = r->values + f->param_offset[i];
    }
    r->p.kernel.kernelParams = f->nparams ? r->argv : NULL;
    record_put(node, r);
}

void tdm_graph_params_memset(uint64_t node, uint64_t graph, const struct cudaMemsetParams *p)
{
    node_record *r;

    if (!graph)
        graph = record_graph(node);
    if ((r = record_new(node, graph, cudaGraphNodeTypeMemset)))
        r->p.memset = *p;
    record_put(node, r);
}

void tdm_graph_params_memcpy(uint64_t node, uint64_t graph, const struct cudaMemcpy3DParms *p)
{
    node_record *r;

    if (!graph)
        graph = record_graph(node);
    if ((r = record_new(node, graph, cudaGraphNodeTypeMemcpy)))
        r->p.memcpy = *p;
    record_put(node, r);
}

void tdm_graph_params_forget_node(uint64_t node)
{
    record_put(node, NULL);
}

void tdm_graph_params_forget_graph(uint64_t graph)
{
    pthread_mutex_lock(&records.lock);
    for (unsigned b = 0; b < RECORD_BUCKETS; b++) {
        node_record **pp = &records.bucket[b];

        while (*pp) {
            node_record *r = *pp;

            if (r->graph != graph) {
                pp = &r->next;
                continue;
            }
            *pp = r->next;
            record_free(r);
        }
    }
    pthread_mutex_unlock(&records.lock);
}

/* Copies node's record into out (size bytes of the union) when it is of
 * `type`; *found: whether node has a record at all. */
static bool record_copy(uint64_t node, enum cudaGraphNodeType type, void *out, size_t size, bool *found)
{
    node_record *r;
    bool ok;

    pthread_mutex_lock(&records.lock);
    r = *slot_of(node);
    *found = r && r->params_known;
    if ((ok = *found && r->type == type))
        memcpy(out, &r->p, size);
    pthread_mutex_unlock(&records.lock);
    return ok;
}

/* A get call: node's record of `type`.  A node without a record:
 * cudaErrorInvalidValue when it is of another type (as the driver), else
 * refused as not remoted (captured and cloned nodes: docs/graphs.md). */
static cudaError_t record_get(cudaGraphNode_t node, enum cudaGraphNodeType type, void *out, size_t size,
                              const char *what)
{
    enum cudaGraphNodeType actual;
    cudaError_t err;
    bool found;

    if (!node || !out)
        return cudaErrorInvalidValue;
    if (record_copy((uint64_t)(uintptr_t)node, type, out, size, &found))
        return cudaSuccess;
    if (found)
        return cudaErrorInvalidValue;
    if ((err = cudaGraphNodeGetType(node, &actual)))
        return err;
    return actual != type ? cudaErrorInvalidValue : tdm_unsupported(what);
}

cudaError_t cudaGraphKernelNodeGetParams(cudaGraphNode_t node, struct cudaKernelNodeParams *pNodeParams)
{
    return tdm_ret(record_get(node, cudaGraphNodeTypeKernel, pNodeParams, sizeof(*pNodeParams),
                              "cudaGraphKernelNodeGetParams of a captured or cloned node"));
}

cudaError_t cudaGraphMemsetNodeGetParams(cudaGraphNode_t node, struct cudaMemsetParams *pNodeParams)
{
    return tdm_ret(record_get(node, cudaGraphNodeTypeMemset, pNodeParams, sizeof(*pNodeParams),
                              "cudaGraphMemsetNodeGetParams of a captured or cloned node"));
}

cudaError_t cudaGraphMemcpyNodeGetParams(cudaGraphNode_t node, struct cudaMemcpy3DParms *pNodeParams)
{
    return tdm_ret(record_get(node, cudaGraphNodeTypeMemcpy, pNodeParams, sizeof(*pNodeParams),
                              "cudaGraphMemcpyNodeGetParams of a captured or cloned node"));
}

/* ---- memset nodes ---- */

/* What a memset node's parameters ask, as cudaGraphAddMemsetNode checks
 * them: one row, one byte of pattern (api_graph.c). */
static cudaError_t memset_request(const struct cudaMemsetParams *p, tdm_memset_node_set_args *a)
{
    uint8_t b;

    if (!p || !p->dst || !p->width || !p->height ||
        (p->elementSize != 1 && p->elementSize != 2 && p->elementSize != 4))
        return cudaErrorInvalidValue;
    b = (uint8_t)p->value;
    for (unsigned i = 1; i < p->elementSize; i++)
        if ((uint8_t)(p->value >> (8 * i)) != b)
            return tdm_unsupported("a memset node with a multi-byte pattern");
    if (p->height != 1)
        return tdm_unsupported("a memset node with a 2D extent");
    a->dst = (uint64_t)(uintptr_t)p->dst;
    a->size = (uint64_t)p->width * p->elementSize;
    a->value = b;
    return cudaSuccess;
}

cudaError_t cudaGraphMemsetNodeSetParams(cudaGraphNode_t node, const struct cudaMemsetParams *pNodeParams)
{
    tdm_memset_node_set_args a = { 0, (uint64_t)(uintptr_t)node, 0, 0, 0 };
    cudaError_t err;

    if (!node)
        return tdm_ret(cudaErrorInvalidValue);
    if ((err = memset_request(pNodeParams, &a)) || (err = tdm_call_err(TDM_GRAPH_MEMSET_NODE_SET, &a)))
        return tdm_ret(err);
    tdm_graph_params_memset(a.node, 0, pNodeParams);
    return cudaSuccess;
}

cudaError_t cudaGraphExecMemsetNodeSetParams(cudaGraphExec_t hGraphExec, cudaGraphNode_t node,
                                             const struct cudaMemsetParams *pNodeParams)
{
    tdm_memset_node_set_args a = { (uint64_t)(uintptr_t)hGraphExec, (uint64_t)(uintptr_t)node, 0, 0, 0 };
    struct cudaMemsetParams was;
    cudaError_t err;
    bool found;

    if (!hGraphExec || !node)
        return tdm_ret(cudaErrorInvalidValue);
    if ((err = memset_request(pNodeParams, &a)))
        return tdm_ret(err);
    /* An executable graph's memset keeps its element size (the driver's
     * update rules); the graph's node says what it was made with. */
    if (record_copy(a.node, cudaGraphNodeTypeMemset, &was, sizeof(was), &found) &&
        was.elementSize != pNodeParams->elementSize)
        return tdm_ret(cudaErrorInvalidValue);
    return tdm_ret(tdm_call_err(TDM_GRAPH_MEMSET_NODE_SET, &a));
}

/* ---- enabled nodes, flags ---- */

cudaError_t cudaGraphNodeSetEnabled(cudaGraphExec_t hGraphExec, cudaGraphNode_t hNode, unsigned int isEnabled)
{
    tdm_graph_node_enabled_args a = { (uint64_t)(uintptr_t)hGraphExec, (uint64_t)(uintptr_t)hNode, isEnabled != 0 };

    if (!hGraphExec || !hNode)
        return tdm_ret(cudaErrorInvalidValue);
    return tdm_ret(tdm_call_err(TDM_GRAPH_NODE_SET_ENABLED, &a));
}

cudaError_t cudaGraphNodeGetEnabled(cudaGraphExec_t hGraphExec, cudaGraphNode_t hNode, unsigned int *isEnabled)
{
    tdm_graph_node_enabled_args a = { (uint64_t)(uintptr_t)hGraphExec, (uint64_t)(uintptr_t)hNode, 0 };
    tdm_flags_res r;
    cudaError_t err;

    if (!hGraphExec || !hNode || !isEnabled)
        return tdm_ret(cudaErrorInvalidValue);
    memset(&r, 0, sizeof(r));
    err = tdm_call(TDM_GRAPH_NODE_GET_ENABLED, &a, &r);
    if (!err)
        err = (cudaError_t)r.err;
    if (!err)
        *isEnabled = r.flags;
    return tdm_ret(err);
}

cudaError_t cudaGraphExecGetFlags(cudaGraphExec_t graphExec, unsigned long long *flags)
{
    tdm_handle h = (uint64_t)(uintptr_t)graphExec;
    tdm_u64_res r;
    cudaError_t err;

    if (!graphExec || !flags)
        return tdm_ret(cudaErrorInvalidValue);
    memset(&r, 0, sizeof(r));
    err = tdm_call(TDM_GRAPH_EXEC_GET_FLAGS, &h, &r);
    if (!err)
        err = (cudaError_t)r.err;
    if (!err)
        *flags = r.value;
    return tdm_ret(err);
}

/* ---- memcpy nodes ---- */

/* The direction node's record copies in (-1: no record). */
static int recorded_kind(uint64_t node)
{
    struct cudaMemcpy3DParms p;
    bool found;

    if (!record_copy(node, cudaGraphNodeTypeMemcpy, &p, sizeof(p), &found))
        return -1;
    return (int)tdm_graph_copy_kind(p.dstPtr.ptr, p.srcPtr.ptr, p.kind);
}

/* New parameters for memcpy node (exec 0: the graph's node) copying n
 * bytes src -> dst; rec: what the get call answers for it afterwards. */
static cudaError_t memcpy_set(cudaGraphExec_t exec, cudaGraphNode_t node, void *dst, const void *src, size_t n,
                              enum cudaMemcpyKind kind, const struct cudaMemcpy3DParms *rec)
{
    const struct tdm_shm_region *shm = tdm_shm();
    tdm_memcpy_node_set_args a;
    const void *host;
    cudaError_t err;

    if (!node || !dst || !src || !n)
        return cudaErrorInvalidValue;
    if ((unsigned)kind > cudaMemcpyDefault)
        return cudaErrorInvalidMemcpyDirection;
    kind = tdm_graph_copy_kind(dst, src, kind);
    if (kind == cudaMemcpyHostToHost)
        return tdm_unsupported("a graph memcpy node from host to host memory");
    /* An executable graph's copy keeps its memory types (the driver's update rules). */
    if (exec && recorded_kind((uint64_t)(uintptr_t)node) >= 0 && recorded_kind((uint64_t)(uintptr_t)node) != (int)kind)
        return cudaErrorInvalidValue;
    memset(&a, 0, sizeof(a));
    a.exec = (uint64_t)(uintptr_t)exec;
    a.node = (uint64_t)(uintptr_t)node;
    a.kind = kind;
    a.dst = (uint64_t)(uintptr_t)dst;
    a.src = (uint64_t)(uintptr_t)src;
    a.size = n;
    host = kind == cudaMemcpyHostToDevice ? src : kind == cudaMemcpyDeviceToHost ? dst : NULL;
    if (host && shm)
        a.shm = tdm_shm_host_offset(shm, host, n, &a.shm_offset);
    err = tdm_call_err(TDM_GRAPH_MEMCPY_NODE_SET, &a);
    if (err == cudaErrorNotSupported)
        return tdm_unsupported("new memcpy node parameters that change its staged host side (direction, size, "
                               "or staged memory where there was none)");
    if (err)
        return err;
    /* Uploads before this exec's (or the graph's execs' next) launches read the new source. */
    if (kind == cudaMemcpyHostToDevice && !a.shm)
        tdm_graph_host_retarget(a.node, exec != NULL, a.exec, src);
    if (!exec)
        tdm_graph_params_memcpy(a.node, 0, rec);
    return cudaSuccess;
}

/* The 3D parameters a 1D copy answers (as cudaGraphAddMemcpyNode1D's). */
static struct cudaMemcpy3DParms params_1d(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind)
{
    struct cudaMemcpy3DParms p = { .srcPtr = { (void *)src, n, n, 1 }, .dstPtr = { dst, n, n, 1 },
                                   .extent = { n, 1, 1 }, .kind = kind };

    return p;
}

static cudaError_t memcpy_set_3d(cudaGraphExec_t exec, cudaGraphNode_t node, const struct cudaMemcpy3DParms *p)
{
    void *dst;
    const void *src;
    size_t n;
    cudaError_t err = tdm_graph_copy_flat(p, &dst, &src, &n);

    return err ? err : memcpy_set(exec, node, dst, src, n, p->kind, p);
}

/* A symbol's side of a copy node: [offset, +count) of the variable. */
static cudaError_t memcpy_set_symbol(cudaGraphExec_t exec, cudaGraphNode_t node, void *dst, const void *src,
                                     const void *symbol, size_t count, size_t offset, enum cudaMemcpyKind kind,
                                     bool to_symbol)
{
    struct cudaMemcpy3DParms rec;
    const void *other = to_symbol ? src : dst;
    uint64_t addr = 0;
    cudaError_t err = tdm_symbol_range(symbol, count, offset, &addr);

    if (err)
        return err;
    if (kind == cudaMemcpyDefault)
        kind = tdm_allocs_is_device(other) ? cudaMemcpyDeviceToDevice
                                           : to_symbol ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost;
    if (kind != cudaMemcpyDeviceToDevice && kind != (to_symbol ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost))
        return cudaErrorInvalidMemcpyDirection;
    if (to_symbol)
        dst = (void *)(uintptr_t)addr;
    else
        src = (const void *)(uintptr_t)addr;
    rec = params_1d(dst, src, count, kind);
    return memcpy_set(exec, node, dst, src, count, kind, &rec);
}

cudaError_t cudaGraphMemcpyNodeSetParams(cudaGraphNode_t node, const struct cudaMemcpy3DParms *pNodeParams)
{
    return tdm_ret(memcpy_set_3d(NULL, node, pNodeParams));
}

cudaError_t cudaGraphMemcpyNodeSetParams1D(cudaGraphNode_t node, void *dst, const void *src, size_t count,
                                           enum cudaMemcpyKind kind)
{
    struct cudaMemcpy3DParms rec = params_1d(dst, src, count, kind);

    return tdm_ret(memcpy_set(NULL, node, dst, src, count, kind, &rec));
}

cudaError_t cudaGraphMemcpyNodeSetParamsToSymbol(cudaGraphNode_t node, const void *symbol, const void *src,
                                                 size_t count, size_t offset, enum cudaMemcpyKind kind)
{
    return tdm_ret(memcpy_set_symbol(NULL, node, NULL, src, symbol, count, offset, kind, true));
}

cudaError_t cudaGraphMemcpyNodeSetParamsFromSymbol(cudaGraphNode_t node, void *dst, const void *symbol, size_t count,
                                                   size_t offset, enum cudaMemcpyKind kind)
{
    return tdm_ret(memcpy_set_symbol(NULL, node, dst, NULL, symbol, count, offset, kind, false));
}

cudaError_t cudaGraphExecMemcpyNodeSetParams(cudaGraphExec_t hGraphExec, cudaGraphNode_t node,
                                             const struct cudaMemcpy3DParms *pNodeParams)
{
    if (!hGraphExec)
        return tdm_ret(cudaErrorInvalidValue);
    return tdm_ret(memcpy_set_3d(hGraphExec, node, pNodeParams));
}

cudaError_t cudaGraphExecMemcpyNodeSetParams1D(cudaGraphExec_t hGraphExec, cudaGraphNode_t node, void *dst,
                                               const void *src, size_t count, enum cudaMemcpyKind kind)
{
    struct cudaMemcpy3DParms rec = params_1d(dst, src, count, kind);

    if (!hGraphExec)
        return tdm_ret(cudaErrorInvalidValue);
    return tdm_ret(memcpy_set(hGraphExec, node, dst, src, count, kind, &rec));
}

cudaError_t cudaGraphExecMemcpyNodeSetParamsToSymbol(cudaGraphExec_t hGraphExec, cudaGraphNode_t node,
                                                     const void *symbol, const void *src, size_t count, size_t offset,
                                                     enum cudaMemcpyKind kind)
{
    if (!hGraphExec)
        return tdm_ret(cudaErrorInvalidValue);
    return tdm_ret(memcpy_set_symbol(hGraphExec, node, NULL, src, symbol, count, offset, kind, true));
}

cudaError_t cudaGraphExecMemcpyNodeSetParamsFromSymbol(cudaGraphExec_t hGraphExec, cudaGraphNode_t node, void *dst,
                                                       const void *symbol, size_t count, size_t offset,
                                                       enum cudaMemcpyKind kind)
{
    if (!hGraphExec)
        return tdm_ret(cudaErrorInvalidValue);
    return tdm_ret(memcpy_set_symbol(hGraphExec, node, dst, NULL, symbol, count, offset, kind, false));
}

/* ---- kernel node attributes ---- */

/* Whether attribute id may be set on a graph's kernel node (driver_types.h
 * says which are "valid for graph nodes"). */
static bool node_attribute(int id)
{
    switch (id) {
    case cudaLaunchAttributeAccessPolicyWindow:
    case cudaLaunchAttributeCooperative:
    case cudaLaunchAttributeClusterDimension:
    case cudaLaunchAttributeClusterSchedulingPolicyPreference:
    case cudaLaunchAttributePriority:
    case cudaLaunchAttributeMemSyncDomainMap:
    case cudaLaunchAttributeMemSyncDomain:
    case cudaLaunchAttributePreferredClusterDimension:
    case cudaLaunchAttributeDeviceUpdatableKernelNode:
    case cudaLaunchAttributeNvlinkUtilCentricScheduling:
        return id >= 0 && id < ATTR_IDS;
    default:
        return false;
    }
}

/* cudaSuccess if node is a kernel node (asked of the server when this
 * process keeps no record of it), else cudaErrorInvalidValue. */
static cudaError_t kernel_node(cudaGraphNode_t node)
{
    enum cudaGraphNodeType type;
    node_record *r;
    int known;
    cudaError_t err;

    pthread_mutex_lock(&records.lock);
    r = *slot_of((uint64_t)(uintptr_t)node);
    known = r ? r->type == cudaGraphNodeTypeKernel : -1;
    pthread_mutex_unlock(&records.lock);
    if (known >= 0)
        return known ? cudaSuccess : cudaErrorInvalidValue;
    if ((err = cudaGraphNodeGetType(node, &type)))
        return err;
    return type == cudaGraphNodeTypeKernel ? cudaSuccess : cudaErrorInvalidValue;
}

/* Keeps v as node's attribute id (a record of attributes only if the node
 * has none). */
static cudaError_t attr_keep(uint64_t node, int id, const cudaLaunchAttributeValue *v)
{
    node_record *r;

    pthread_mutex_lock(&records.lock);
    if (!(r = *slot_of(node)) && (r = record_new(node, 0, cudaGraphNodeTypeKernel))) {
        r->params_known = false;
        r->next = records.bucket[(node ^ (node >> 20)) % RECORD_BUCKETS];
        records.bucket[(node ^ (node >> 20)) % RECORD_BUCKETS] = r;
    }
    if (r) {
        r->attrs[id].set = true;
        r->attrs[id].v = *v;
    }
    pthread_mutex_unlock(&records.lock);
    return r ? cudaSuccess : cudaErrorMemoryAllocation;
}

/* Checks v for id and sends what changes how the node runs on the device:
 * cooperative and priority.  The others are hints Tandem keeps without
 * effect, as for cudaLaunchKernelExC (docs/runtime-api.md).  A priority is
 * clamped into the device's range, as kept and read back: natively a node
 * given 1 where the range is [-5, 0] reads back 0 (H100 run of 2026-11-24,
 * examples/graph_params.cu). */
static cudaError_t attr_apply(uint64_t node, int id, cudaLaunchAttributeValue *v)
{
    tdm_kernel_node_attr_args a = { node, id, 0 };
    int least, greatest;
    cudaError_t err;

    switch (id) {
    case cudaLaunchAttributeAccessPolicyWindow:
        if (!(v->accessPolicyWindow.hitRatio >= 0.0f && v->accessPolicyWindow.hitRatio <= 1.0f))
            return cudaErrorInvalidValue;
        return cudaSuccess;
    case cudaLaunchAttributeClusterDimension:
        if (v->clusterDim.x > 1 || v->clusterDim.y > 1 || v->clusterDim.z > 1)
            return tdm_unsupported("cluster dimensions on a graph kernel node");
        return cudaSuccess;
    case cudaLaunchAttributePreferredClusterDimension:
        if (v->preferredClusterDim.x > 1 || v->preferredClusterDim.y > 1 || v->preferredClusterDim.z > 1)
            return tdm_unsupported("preferred cluster dimensions on a graph kernel node");
        return cudaSuccess;
    case cudaLaunchAttributeDeviceUpdatableKernelNode:
        if (v->deviceUpdatableKernelNode.deviceUpdatable)
            return tdm_unsupported("device-updatable graph kernel nodes");
        return cudaSuccess;
    case cudaLaunchAttributeCooperative:
        a.value = v->cooperative;
        return tdm_call_err(TDM_GRAPH_KERNEL_NODE_ATTR, &a);
    case cudaLaunchAttributePriority:
        if ((err = cudaDeviceGetStreamPriorityRange(&least, &greatest)))
            return err;
        if (v->priority > least)
            v->priority = least;
        else if (v->priority < greatest)
            v->priority = greatest;
        a.value = v->priority;
        return tdm_call_err(TDM_GRAPH_KERNEL_NODE_ATTR, &a);
    default:
        return cudaSuccess;
    }
}

cudaError_t cudaGraphKernelNodeSetAttribute(cudaGraphNode_t hNode, cudaKernelNodeAttrID attr,
                                            const cudaKernelNodeAttrValue *value)
{
    uint64_t node = (uint64_t)(uintptr_t)hNode;
    cudaLaunchAttributeValue v;
    cudaError_t err;

    if (!hNode || !value || !node_attribute((int)attr))
        return tdm_ret(cudaErrorInvalidValue);
    v = *value;   /* as the node keeps it (attr_apply clamps a priority) */
    if ((err = kernel_node(hNode)) || (err = attr_apply(node, (int)attr, &v)))
        return tdm_ret(err);
    return tdm_ret(attr_keep(node, (int)attr, &v));
}

cudaError_t cudaGraphKernelNodeGetAttribute(cudaGraphNode_t hNode, cudaKernelNodeAttrID attr,
                                            cudaKernelNodeAttrValue *value_out)
{
    node_record *r;
    cudaError_t err;

    if (!hNode || !value_out || !node_attribute((int)attr))
        return tdm_ret(cudaErrorInvalidValue);
    if ((err = kernel_node(hNode)))
        return tdm_ret(err);
    memset(value_out, 0, sizeof(*value_out));
    pthread_mutex_lock(&records.lock);
    if ((r = *slot_of((uint64_t)(uintptr_t)hNode)) && r->attrs[attr].set)
        *value_out = r->attrs[attr].v;
    pthread_mutex_unlock(&records.lock);
    return cudaSuccess;
}

cudaError_t cudaGraphKernelNodeCopyAttributes(cudaGraphNode_t hDst, cudaGraphNode_t hSrc)
{
    attr_slot attrs[ATTR_IDS];
    node_record *r;
    cudaError_t err = cudaSuccess;

    if (!hDst || !hSrc)
        return tdm_ret(cudaErrorInvalidValue);
    if ((err = kernel_node(hDst)) || (err = kernel_node(hSrc)))
        return tdm_ret(err);
    memset(attrs, 0, sizeof(attrs));
    pthread_mutex_lock(&records.lock);
    if ((r = *slot_of((uint64_t)(uintptr_t)hSrc)))
        memcpy(attrs, r->attrs, sizeof(attrs));
    pthread_mutex_unlock(&records.lock);
    /* Every attribute, set or default: dst ends as src is. */
    for (int id = 0; id < ATTR_IDS && !err; id++)
        if (node_attribute(id) && !(err = attr_apply((uint64_t)(uintptr_t)hDst, id, &attrs[id].v)))
            err = attr_keep((uint64_t)(uintptr_t)hDst, id, &attrs[id].v);
    return tdm_ret(err);
}

/* ---- executable graphs' host nodes ---- */

/* The key an exec's instance of a host node runs (its own, once set):
 * reused while nothing is pending, so repeated updates do not use up the
 * process's host node keys (TDM_MAX_HOST_NODES). */
typedef struct exec_host_key {
    uint64_t exec, node, key;
} exec_host_key;

static struct {
    pthread_mutex_t lock;
    exec_host_key *v;
    size_t n, cap;
} exec_keys = { .lock = PTHREAD_MUTEX_INITIALIZER };

static uint64_t exec_key_find(uint64_t exec, uint64_t node)
{
    uint64_t key = 0;

    pthread_mutex_lock(&exec_keys.lock);
    for (size_t i = 0; i < exec_keys.n && !key; i++)
        if (exec_keys.v[i].exec == exec && exec_keys.v[i].node == node)
            key = exec_keys.v[i].key;
    pthread_mutex_unlock(&exec_keys.lock);
    return key;
}

static void exec_key_note(uint64_t exec, uint64_t node, uint64_t key)
{
    pthread_mutex_lock(&exec_keys.lock);
    for (size_t i = 0; i < exec_keys.n; i++)
        if (exec_keys.v[i].exec == exec && exec_keys.v[i].node == node) {
            exec_keys.v[i].key = key;
            pthread_mutex_unlock(&exec_keys.lock);
            return;
        }
    if (exec_keys.n == exec_keys.cap) {
        size_t cap = exec_keys.cap ? 2 * exec_keys.cap : 16;
        exec_host_key *v = realloc(exec_keys.v, cap * sizeof(*v));

        if (!v) {   /* only reuse is lost: the next update makes a new key */
            pthread_mutex_unlock(&exec_keys.lock);
            return;
        }
        exec_keys.v = v;
        exec_keys.cap = cap;
    }
    exec_keys.v[exec_keys.n++] = (exec_host_key){ exec, node, key };
    pthread_mutex_unlock(&exec_keys.lock);
}

cudaError_t cudaGraphExecHostNodeSetParams(cudaGraphExec_t hGraphExec, cudaGraphNode_t node,
                                           const struct cudaHostNodeParams *pNodeParams)
{
    tdm_exec_host_node_args a = { (uint64_t)(uintptr_t)hGraphExec, (uint64_t)(uintptr_t)node, 0 };
    cudaError_t err;

    if (!hGraphExec || !node || !pNodeParams || !pNodeParams->fn)
        return tdm_ret(cudaErrorInvalidValue);
    /* The exec's own key already runs on the server: change its function. */
    if ((a.key = exec_key_find(a.exec, a.node)) &&
        tdm_callback_host_key_update(a.key, pNodeParams->fn, pNodeParams->userData))
        return cudaSuccess;
    /* A new key for this exec alone: the graph's node and other execs keep theirs. */
    if ((err = tdm_callback_host_node(pNodeParams->fn, pNodeParams->userData, &a.key)))
        return tdm_ret(err);
    if ((err = tdm_call_err(TDM_GRAPH_EXEC_HOST_NODE_SET, &a))) {
        tdm_callback_host_node_drop(a.key);
        return tdm_ret(err);
    }
    exec_key_note(a.exec, a.node, a.key);
    return cudaSuccess;
}

void tdm_graph_params_forget_exec(uint64_t exec)
{
    pthread_mutex_lock(&exec_keys.lock);
    for (size_t i = 0; i < exec_keys.n;)
        if (exec_keys.v[i].exec == exec)
            exec_keys.v[i] = exec_keys.v[--exec_keys.n];
        else
            i++;
    pthread_mutex_unlock(&exec_keys.lock);
}
