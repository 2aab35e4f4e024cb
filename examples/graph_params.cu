// Graph node parameters after the nodes were made (docs/graphs.md "Node
// parameters and updates"): the get and set calls of kernel, memset and
// memcpy nodes, an executable graph's own memset parameters, nodes disabled
// and enabled again in an executable graph, its instantiation flags, and
// what the runtime refuses.  The graph: memset x; x = x*k + i + base
// (se_transform); copy x to y (device to device); copy y to host.  Every
// result is checked against a host reference and the output is
// deterministic.  Usage: graph_params [launches]
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>

#define CHECK(call)                                                                    \
    do {                                                                               \
        cudaError_t err_ = (call);                                                     \
        if (err_ != cudaSuccess) {                                                     \
            fprintf(stderr, "graph_params: %s failed at %s:%d: %s (%s)\n", #call,      \
                    __FILE__, __LINE__, cudaGetErrorString(err_), cudaGetErrorName(err_)); \
            exit(1);                                                                   \
        }                                                                              \
    } while (0)

#include "graph_common.cuh"

static const int n = 1 << 14, threads = 256, blocks = n / threads;

// graph_nodes.cu's variable (the sim backend's twin knows it by name).
__device__ unsigned int gn_table[4];

static void fill(unsigned int *v, unsigned int seed)
{
    for (int i = 0; i < n; i++)
        v[i] = (unsigned int)i * 2654435761u + seed;
}

static const char *same(const unsigned int *a, const unsigned int *b, size_t count)
{
    return memcmp(a, b, count * sizeof(unsigned int)) ? "MISMATCH" : "ok";
}

// Host nodes: which function each launch ran.
static int runs_a, runs_b;

static void CUDART_CB host_a(void *data)
{
    runs_a += *(int *)data;
}

static void CUDART_CB host_b(void *data)
{
    runs_b += *(int *)data;
}

// An exec's host node gets functions of its own; the graph's node and
// another exec keep theirs.
static void host_nodes(cudaStream_t s)
{
    static int one = 1, ten = 10;
    cudaGraphNode_t host, empty;
    cudaGraph_t g;
    cudaGraphExec_t x1, x2;
    cudaHostNodeParams hp = {};

    hp.fn = host_a;
    hp.userData = &one;
    CHECK(cudaGraphCreate(&g, 0));
    CHECK(cudaGraphAddHostNode(&host, g, NULL, 0, &hp));
    CHECK(cudaGraphAddEmptyNode(&empty, g, &host, 1));
    CHECK(cudaGraphInstantiate(&x1, g, 0));
    CHECK(cudaGraphInstantiate(&x2, g, 0));
    CHECK(cudaGraphLaunch(x1, s));
    CHECK(cudaStreamSynchronize(s));
    hp.fn = host_b;
    CHECK(cudaGraphExecHostNodeSetParams(x1, host, &hp));
    CHECK(cudaGraphLaunch(x1, s));
    CHECK(cudaGraphLaunch(x2, s));
    CHECK(cudaStreamSynchronize(s));
    hp.userData = &ten;
    for (int i = 0; i < 3; i++) {   // set again and again: each launch runs the latest
        CHECK(cudaGraphExecHostNodeSetParams(x1, host, &hp));
        CHECK(cudaGraphLaunch(x1, s));
        CHECK(cudaStreamSynchronize(s));
    }
    printf("host nodes: a ran %d, b ran %d\n", runs_a, runs_b);
    CHECK(cudaGraphHostNodeGetParams(host, &hp));
    printf("the graph's host node: %s\n", hp.fn == host_a && hp.userData == &one ? "its own function" : "OTHER");
    printf("exec host params of an empty node: %s\n",
           cudaGetErrorName(cudaGraphExecHostNodeSetParams(x1, empty, &hp)));
    hp.fn = NULL;
    printf("exec host params without a function: %s\n",
           cudaGetErrorName(cudaGraphExecHostNodeSetParams(x1, host, &hp)));
    cudaGetLastError();
    CHECK(cudaGraphExecDestroy(x1));
    CHECK(cudaGraphExecDestroy(x2));
    CHECK(cudaGraphDestroy(g));
}

// New memcpy parameters: a graph uploads host memory, copies it on the
// device and downloads it (pageable memory: staged over TCP and shm).
static void memcpy_nodes(cudaStream_t s, unsigned int *d_x, unsigned int *d_y, unsigned int *d_z)
{
    const size_t bytes = n * sizeof(unsigned int);
    unsigned int *in1 = (unsigned int *)malloc(bytes), *in2 = (unsigned int *)malloc(bytes),
                 *in3 = (unsigned int *)malloc(bytes), *out1 = (unsigned int *)malloc(bytes),
                 *out2 = (unsigned int *)malloc(bytes), *check = (unsigned int *)malloc(bytes);
    cudaGraphNode_t up, cp, down, to_sym, from_sym, kern;
    cudaGraph_t g, gs;
    cudaGraphExec_t exec, later, xs;
    cudaMemcpy3DParms gc = {};
    unsigned int table[4];

    if (!in1 || !in2 || !in3 || !out1 || !out2 || !check)
        exit(1);
    fill(in1, 1);
    fill(in2, 2);
    fill(in3, 3);
    CHECK(cudaGraphCreate(&g, 0));
    CHECK(cudaGraphAddMemcpyNode1D(&up, g, NULL, 0, d_x, in1, bytes, cudaMemcpyHostToDevice));
    cudaMemcpy3DParms p = {};
    p.srcPtr = make_cudaPitchedPtr(d_x, bytes, bytes, 1);
    p.dstPtr = make_cudaPitchedPtr(d_y, bytes, bytes, 1);
    p.extent = make_cudaExtent(bytes, 1, 1);
    p.kind = cudaMemcpyDeviceToDevice;
    CHECK(cudaGraphAddMemcpyNode(&cp, g, &up, 1, &p));
    CHECK(cudaGraphAddMemcpyNode1D(&down, g, &cp, 1, out1, d_y, bytes, cudaMemcpyDeviceToHost));
    CHECK(cudaGraphInstantiate(&exec, g, 0));
    CHECK(cudaGraphLaunch(exec, s));
    CHECK(cudaStreamSynchronize(s));
    printf("memcpy graph: %s\n", same(out1, in1, n));

    // An exec's nodes: a new host source, a new device copy, a new host destination.
    CHECK(cudaGraphExecMemcpyNodeSetParams1D(exec, up, d_x, in2, bytes, cudaMemcpyHostToDevice));
    CHECK(cudaGraphLaunch(exec, s));
    CHECK(cudaStreamSynchronize(s));
    printf("exec upload from new host memory: %s\n", same(out1, in2, n));
    p.dstPtr = make_cudaPitchedPtr(d_z, bytes, bytes, 1);
    CHECK(cudaGraphExecMemcpyNodeSetParams(exec, cp, &p));
    CHECK(cudaGraphExecMemcpyNodeSetParams1D(exec, down, out2, d_z, bytes, cudaMemcpyDeviceToHost));
    CHECK(cudaMemset(d_y, 0, bytes));
    CHECK(cudaDeviceSynchronize());   // s does not wait for the legacy stream
    memset(out1, 0, bytes);
    CHECK(cudaGraphLaunch(exec, s));
    CHECK(cudaStreamSynchronize(s));
    CHECK(cudaMemcpy(check, d_y, 4 * sizeof(unsigned int), cudaMemcpyDeviceToHost));
    printf("exec copy to another buffer and host memory: %s, old buffer %s, old host memory %s\n",
           same(out2, in2, n), check[0] == 0 && check[3] == 0 ? "untouched" : "WRITTEN",
           out1[0] == 0 && out1[n - 1] == 0 ? "untouched" : "WRITTEN");

    // The graph's node: execs made before keep their source, one made after reads the new one.
    CHECK(cudaGraphMemcpyNodeSetParams1D(up, d_x, in3, bytes, cudaMemcpyHostToDevice));
    CHECK(cudaGraphMemcpyNodeGetParams(up, &gc));
    printf("memcpy node after set: src %s\n", gc.srcPtr.ptr == in3 ? "the new host memory" : "OTHER");
    memset(out2, 0, bytes);
    CHECK(cudaGraphLaunch(exec, s));
    CHECK(cudaStreamSynchronize(s));
    printf("exec made before keeps its source: %s\n", same(out2, in2, n));
    CHECK(cudaGraphInstantiate(&later, g, 0));
    CHECK(cudaGraphLaunch(later, s));
    CHECK(cudaStreamSynchronize(s));
    CHECK(cudaMemcpy(check, d_y, bytes, cudaMemcpyDeviceToHost));
    printf("exec made after reads the new source: %s\n", same(check, in3, n));

    // Symbol copies: into gn_table from d_x, then out of it into d_z.
    CHECK(cudaGraphCreate(&gs, 0));
    CHECK(cudaGraphAddMemcpyNodeToSymbol(&to_sym, gs, NULL, 0, gn_table, d_x, sizeof(table), 0,
                                         cudaMemcpyDeviceToDevice));
    CHECK(cudaGraphAddMemcpyNodeFromSymbol(&from_sym, gs, &to_sym, 1, d_z, gn_table, sizeof(table), 0,
                                           cudaMemcpyDeviceToDevice));
    CHECK(cudaGraphInstantiate(&xs, gs, 0));
    CHECK(cudaMemcpy(d_x, in1, bytes, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(d_y, in2, bytes, cudaMemcpyHostToDevice));
    CHECK(cudaGraphExecMemcpyNodeSetParamsToSymbol(xs, to_sym, gn_table, d_y + 4, 2 * sizeof(unsigned int),
                                                   2 * sizeof(unsigned int), cudaMemcpyDeviceToDevice));
    CHECK(cudaGraphExecMemcpyNodeSetParamsFromSymbol(xs, from_sym, d_z + 8, gn_table, sizeof(table), 0,
                                                     cudaMemcpyDeviceToDevice));
    CHECK(cudaMemcpyToSymbol(gn_table, in3, sizeof(table)));
    CHECK(cudaDeviceSynchronize());   // s does not wait for the legacy stream
    CHECK(cudaGraphLaunch(xs, s));
    CHECK(cudaStreamSynchronize(s));
    CHECK(cudaMemcpy(table, d_z + 8, sizeof(table), cudaMemcpyDeviceToHost));
    printf("exec symbol copies: %s\n", table[0] == in3[0] && table[1] == in3[1] && table[2] == in2[4] &&
                                               table[3] == in2[5] ? "ok" : "MISMATCH");
    CHECK(cudaGraphMemcpyNodeSetParamsToSymbol(to_sym, gn_table, d_x + 16, sizeof(table), 0,
                                               cudaMemcpyDeviceToDevice));
    CHECK(cudaGraphMemcpyNodeSetParamsFromSymbol(from_sym, d_z + 12, gn_table, sizeof(table), 0,
                                                 cudaMemcpyDeviceToDevice));
    CHECK(cudaGraphExecDestroy(xs));
    CHECK(cudaGraphInstantiate(&xs, gs, 0));
    CHECK(cudaGraphLaunch(xs, s));
    CHECK(cudaStreamSynchronize(s));
    CHECK(cudaMemcpy(table, d_z + 12, sizeof(table), cudaMemcpyDeviceToHost));
    printf("graph symbol copies: %s\n", same(table, in1 + 16, 4));

    // Refused: an exec's copy changing direction, memcpy parameters for a kernel node.
    printf("exec copy changing direction: %s\n",
           cudaGetErrorName(cudaGraphExecMemcpyNodeSetParams1D(exec, cp, out1, d_x, bytes, cudaMemcpyDeviceToHost)));
    cudaKernelNodeParams kp = {};
    unsigned int *x = d_x, k = 1, base = 0;
    int count = n;
    void *args[] = { &x, &count, &k, &base };
    kp.func = (void *)se_transform;
    kp.gridDim = dim3(blocks);
    kp.blockDim = dim3(threads);
    kp.kernelParams = args;
    CHECK(cudaGraphAddKernelNode(&kern, gs, NULL, 0, &kp));
    printf("memcpy set on a kernel node: %s\n",
           cudaGetErrorName(cudaGraphMemcpyNodeSetParams1D(kern, d_y, d_x, bytes, cudaMemcpyDeviceToDevice)));
    cudaGetLastError();

    CHECK(cudaGraphExecDestroy(exec));
    CHECK(cudaGraphExecDestroy(later));
    CHECK(cudaGraphExecDestroy(xs));
    CHECK(cudaGraphDestroy(g));
    CHECK(cudaGraphDestroy(gs));
    free(in1);
    free(in2);
    free(in3);
    free(out1);
    free(out2);
    free(check);
}

// What a launch leaves in y: the memset's bytes (or what x held when the
// memset is off), then the transform (unless it is off).
static void reference(unsigned int *y, unsigned int fill, bool transform, unsigned int k, unsigned int base)
{
    for (int i = 0; i < n; i++)
        y[i] = transform ? fill * k + ((unsigned int)i + base) : fill;
}

static void expect(const char *what, const unsigned int *got, unsigned int fill, bool transform, unsigned int k,
                   unsigned int base)
{
    static unsigned int want[n];

    reference(want, fill, transform, k, base);
    printf("%s: %s\n", what, memcmp(got, want, sizeof(want)) ? "MISMATCH" : "ok");
}

// One launch of exec, x prefilled with `prefill` bytes first (what a
// disabled memset leaves), y and the host result spoiled.
static void launch(cudaGraphExec_t exec, cudaStream_t s, unsigned int *d_x, unsigned int *d_y, unsigned int *h_y,
                   int prefill)
{
    CHECK(cudaMemsetAsync(d_x, prefill, n * sizeof(unsigned int), s));
    CHECK(cudaMemsetAsync(d_y, 0xee, n * sizeof(unsigned int), s));
    memset(h_y, 0xdd, n * sizeof(unsigned int));
    CHECK(cudaGraphLaunch(exec, s));
    CHECK(cudaStreamSynchronize(s));
}

int main(int argc, char **argv)
{
    const int launches = argc > 1 ? atoi(argv[1]) : 2;
    const size_t bytes = n * sizeof(unsigned int);
    unsigned int *h_y = (unsigned int *)malloc(bytes), *d_x, *d_y, *d_z;
    cudaGraphNode_t set, kern, dtod, dtoh, empty, other_node;
    cudaGraph_t g, other;
    cudaGraphExec_t exec, later, flagged;
    cudaStream_t s;
    unsigned int enabled = 7;
    unsigned long long flags = 99;

    (void)&launch_once;   // graph_common.cuh's, for its other includers
    if (!h_y)
        return 1;
    CHECK(cudaSetDevice(0));
    CHECK(cudaMalloc(&d_x, bytes));
    CHECK(cudaMalloc(&d_y, bytes));
    CHECK(cudaMalloc(&d_z, bytes));
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));

    // ---- the graph and what its nodes answer ----
    CHECK(cudaGraphCreate(&g, 0));
    cudaMemsetParams mp = {};
    mp.dst = d_x;
    mp.value = 0x01010101u;
    mp.elementSize = 4;
    mp.width = n;
    mp.height = 1;
    CHECK(cudaGraphAddMemsetNode(&set, g, NULL, 0, &mp));
    unsigned int *x = d_x, k = 3, base = 11;
    int count = n;
    void *args[] = { &x, &count, &k, &base };
    cudaKernelNodeParams kp = {};
    kp.func = (void *)se_transform;
    kp.gridDim = dim3(blocks);
    kp.blockDim = dim3(threads);
    kp.kernelParams = args;
    CHECK(cudaGraphAddKernelNode(&kern, g, &set, 1, &kp));
    k = 0;   // the node has its own copy of the values
    base = 0;
    cudaMemcpy3DParms cp = {};
    cp.srcPtr = make_cudaPitchedPtr(d_x, bytes, bytes, 1);
    cp.dstPtr = make_cudaPitchedPtr(d_y, bytes, bytes, 1);
    cp.extent = make_cudaExtent(bytes, 1, 1);
    cp.kind = cudaMemcpyDeviceToDevice;
    CHECK(cudaGraphAddMemcpyNode(&dtod, g, &kern, 1, &cp));
    CHECK(cudaGraphAddMemcpyNode1D(&dtoh, g, &dtod, 1, h_y, d_y, bytes, cudaMemcpyDeviceToHost));
    CHECK(cudaGraphAddEmptyNode(&empty, g, &dtoh, 1));

    cudaKernelNodeParams got = {};
    CHECK(cudaGraphKernelNodeGetParams(kern, &got));
    printf("kernel node: func %s, grid %u,%u,%u block %u,%u,%u shared %u, args x %s n %d k %u base %u\n",
           got.func == (void *)se_transform ? "ours" : "OTHER", got.gridDim.x, got.gridDim.y, got.gridDim.z,
           got.blockDim.x, got.blockDim.y, got.blockDim.z, got.sharedMemBytes,
           *(unsigned int **)got.kernelParams[0] == d_x ? "ours" : "OTHER", *(int *)got.kernelParams[1],
           *(unsigned int *)got.kernelParams[2], *(unsigned int *)got.kernelParams[3]);
    cudaMemsetParams gm = {};
    CHECK(cudaGraphMemsetNodeGetParams(set, &gm));
    printf("memset node: dst %s value 0x%08x element %u width %zu height %zu\n", gm.dst == d_x ? "ours" : "OTHER",
           gm.value, gm.elementSize, gm.width, gm.height);
    cudaMemcpy3DParms gc = {};
    CHECK(cudaGraphMemcpyNodeGetParams(dtod, &gc));
    printf("memcpy node: src %s dst %s extent %zu,%zu,%zu kind %d\n", gc.srcPtr.ptr == d_x ? "ours" : "OTHER",
           gc.dstPtr.ptr == d_y ? "ours" : "OTHER", gc.extent.width, gc.extent.height, gc.extent.depth, (int)gc.kind);
    memset(&gc, 0, sizeof(gc));
    CHECK(cudaGraphMemcpyNodeGetParams(dtoh, &gc));
    printf("1D memcpy node: src %s dst %s width %zu kind %d\n", gc.srcPtr.ptr == d_y ? "ours" : "OTHER",
           gc.dstPtr.ptr == h_y ? "ours" : "OTHER", gc.extent.width, (int)gc.kind);

    // ---- launches, and flags ----
    CHECK(cudaGraphInstantiate(&exec, g, 0));
    CHECK(cudaGraphExecGetFlags(exec, &flags));
    printf("exec flags: %llu\n", flags);
    CHECK(cudaGraphInstantiateWithFlags(&flagged, g, cudaGraphInstantiateFlagUseNodePriority));
    CHECK(cudaGraphExecGetFlags(flagged, &flags));
    printf("exec flags with node priority: %llu\n", flags);
    for (int i = 0; i < launches; i++) {
        launch(exec, s, d_x, d_y, h_y, 0);
        expect("launch", h_y, 0x01010101u, true, 3, 11);
    }

    // ---- disabled nodes: empty nodes that keep their edges ----
    CHECK(cudaGraphNodeGetEnabled(exec, kern, &enabled));
    printf("kernel node enabled: %u\n", enabled);
    CHECK(cudaGraphNodeSetEnabled(exec, kern, 0));
    CHECK(cudaGraphNodeGetEnabled(exec, kern, &enabled));
    printf("kernel node enabled after disabling: %u\n", enabled);
    launch(exec, s, d_x, d_y, h_y, 0);
    expect("kernel disabled", h_y, 0x01010101u, false, 0, 0);
    CHECK(cudaGraphNodeSetEnabled(exec, kern, 1));
    CHECK(cudaGraphNodeSetEnabled(exec, set, 0));
    launch(exec, s, d_x, d_y, h_y, 0x02);
    expect("memset disabled", h_y, 0x02020202u, true, 3, 11);
    CHECK(cudaGraphNodeSetEnabled(exec, set, 1));
    launch(exec, s, d_x, d_y, h_y, 0x02);
    expect("enabled again", h_y, 0x01010101u, true, 3, 11);
    // A disabled device-to-host copy leaves the program's memory alone.
    CHECK(cudaGraphNodeSetEnabled(exec, dtoh, 0));
    launch(exec, s, d_x, d_y, h_y, 0);
    printf("device-to-host copy disabled: host memory %s\n", h_y[0] == 0xddddddddu && h_y[n - 1] == 0xddddddddu
                                                                   ? "untouched" : "WRITTEN");
    CHECK(cudaGraphNodeSetEnabled(exec, dtoh, 1));
    CHECK(cudaGraphNodeGetEnabled(flagged, kern, &enabled));
    printf("the other exec's kernel node enabled: %u\n", enabled);

    // ---- new parameters: the graph's node, then one exec's ----
    k = 5;
    base = 7;
    CHECK(cudaGraphKernelNodeSetParams(kern, &kp));
    CHECK(cudaGraphKernelNodeGetParams(kern, &got));
    printf("kernel node after set: k %u base %u\n", *(unsigned int *)got.kernelParams[2],
           *(unsigned int *)got.kernelParams[3]);
    mp.value = 0x03030303u;
    CHECK(cudaGraphMemsetNodeSetParams(set, &mp));
    CHECK(cudaGraphMemsetNodeGetParams(set, &gm));
    printf("memset node after set: value 0x%08x\n", gm.value);
    launch(exec, s, d_x, d_y, h_y, 0);
    expect("exec made before keeps its parameters", h_y, 0x01010101u, true, 3, 11);
    CHECK(cudaGraphInstantiate(&later, g, 0));
    launch(later, s, d_x, d_y, h_y, 0);
    expect("exec made after has the new ones", h_y, 0x03030303u, true, 5, 7);
    mp.value = 0x04040404u;
    CHECK(cudaGraphExecMemsetNodeSetParams(exec, set, &mp));
    launch(exec, s, d_x, d_y, h_y, 0);
    expect("exec memset set", h_y, 0x04040404u, true, 3, 11);
    CHECK(cudaGraphMemsetNodeGetParams(set, &gm));
    printf("the graph's memset node still: value 0x%08x\n", gm.value);
    mp.dst = d_z;   // another allocation of the same kind: allowed
    CHECK(cudaGraphExecMemsetNodeSetParams(later, set, &mp));
    launch(later, s, d_x, d_y, h_y, 0x06);
    expect("exec memset to another buffer", h_y, 0x06060606u, true, 5, 7);
    CHECK(cudaMemcpy(h_y, d_z, bytes, cudaMemcpyDeviceToHost));
    printf("other buffer: %s\n", h_y[0] == 0x04040404u && h_y[n - 1] == 0x04040404u ? "ok" : "MISMATCH");

    // ---- kernel node attributes ----
    cudaKernelNodeAttrValue av = {}, got_av = {};
    cudaGraphNode_t kern2;
    CHECK(cudaGraphKernelNodeGetAttribute(kern, cudaLaunchAttributePriority, &got_av));
    printf("kernel node priority before: %d\n", got_av.priority);
    av.priority = 1;
    CHECK(cudaGraphKernelNodeSetAttribute(kern, cudaLaunchAttributePriority, &av));
    memset(&av, 0, sizeof(av));
    av.cooperative = 1;
    CHECK(cudaGraphKernelNodeSetAttribute(kern, cudaLaunchAttributeCooperative, &av));
    memset(&av, 0, sizeof(av));
    av.accessPolicyWindow.base_ptr = d_x;
    av.accessPolicyWindow.num_bytes = 4096;
    av.accessPolicyWindow.hitRatio = 0.5f;
    av.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
    av.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
    CHECK(cudaGraphKernelNodeSetAttribute(kern, cudaLaunchAttributeAccessPolicyWindow, &av));
    CHECK(cudaGraphKernelNodeGetAttribute(kern, cudaLaunchAttributePriority, &got_av));
    printf("kernel node priority: %d\n", got_av.priority);
    CHECK(cudaGraphKernelNodeGetAttribute(kern, cudaLaunchAttributeCooperative, &got_av));
    printf("kernel node cooperative: %d\n", got_av.cooperative);
    CHECK(cudaGraphKernelNodeGetAttribute(kern, cudaLaunchAttributeAccessPolicyWindow, &got_av));
    printf("kernel node access policy window: base %s bytes %zu hit ratio %.2f\n",
           got_av.accessPolicyWindow.base_ptr == d_x ? "ours" : "OTHER", got_av.accessPolicyWindow.num_bytes,
           got_av.accessPolicyWindow.hitRatio);
    kp.func = (void *)se_transform;   // a second kernel node, after the first, with the first's attributes
    CHECK(cudaGraphAddKernelNode(&kern2, g, &kern, 1, &kp));
    CHECK(cudaGraphKernelNodeCopyAttributes(kern2, kern));
    CHECK(cudaGraphKernelNodeGetAttribute(kern2, cudaLaunchAttributePriority, &got_av));
    printf("copied attributes: priority %d", got_av.priority);
    CHECK(cudaGraphKernelNodeGetAttribute(kern2, cudaLaunchAttributeCooperative, &got_av));
    printf(" cooperative %d\n", got_av.cooperative);
    CHECK(cudaGraphDestroyNode(kern2));
    cudaGraphExec_t coop;
    CHECK(cudaGraphInstantiate(&coop, g, 0));
    launch(coop, s, d_x, d_y, h_y, 0);
    expect("cooperative kernel node", h_y, 0x03030303u, true, 5, 7);
    CHECK(cudaGraphExecDestroy(coop));
    memset(&av, 0, sizeof(av));
    av.accessPolicyWindow.hitRatio = 2.0f;
    printf("access policy window hit ratio 2: %s\n",
           cudaGetErrorName(cudaGraphKernelNodeSetAttribute(kern, cudaLaunchAttributeAccessPolicyWindow, &av)));
    printf("attribute of a memset node: %s\n",
           cudaGetErrorName(cudaGraphKernelNodeGetAttribute(set, cudaLaunchAttributePriority, &got_av)));
    cudaGetLastError();

    // ---- what is refused ----
    printf("kernel params of a memset node: %s\n",
           cudaGetErrorName(cudaGraphKernelNodeGetParams(set, &got)));
    printf("memset params of a kernel node: %s\n", cudaGetErrorName(cudaGraphMemsetNodeGetParams(kern, &gm)));
    printf("memcpy params of an empty node: %s\n", cudaGetErrorName(cudaGraphMemcpyNodeGetParams(empty, &gc)));
    printf("memset set on a kernel node: %s\n", cudaGetErrorName(cudaGraphMemsetNodeSetParams(kern, &mp)));
    printf("disabling an empty node: %s\n", cudaGetErrorName(cudaGraphNodeSetEnabled(exec, empty, 0)));
    CHECK(cudaGraphCreate(&other, 0));
    CHECK(cudaGraphAddMemsetNode(&other_node, other, NULL, 0, &mp));
    printf("disabling a node of another graph: %s\n",
           cudaGetErrorName(cudaGraphNodeSetEnabled(exec, other_node, 0)));
    printf("exec memset set of a node of another graph: %s\n",
           cudaGetErrorName(cudaGraphExecMemsetNodeSetParams(exec, other_node, &mp)));
    cudaGetLastError();
    launch(exec, s, d_x, d_y, h_y, 0);
    expect("after the refusals", h_y, 0x04040404u, true, 3, 11);

    memcpy_nodes(s, d_x, d_y, d_z);
    host_nodes(s);

    CHECK(cudaGraphExecDestroy(exec));
    CHECK(cudaGraphExecDestroy(later));
    CHECK(cudaGraphExecDestroy(flagged));
    CHECK(cudaGraphDestroy(g));
    CHECK(cudaGraphDestroy(other));
    CHECK(cudaStreamDestroy(s));
    CHECK(cudaFree(d_x));
    CHECK(cudaFree(d_y));
    CHECK(cudaFree(d_z));
    free(h_y);
    printf("graph_params: done\n");
    return 0;
}
