// Graphs with host memory in their copies, as cuda-samples' simpleCudaGraphs
// and jacobiCudaGraphs use them: an explicit graph (cudaGraphAddMemcpyNode
// from and to host memory, a memset, two kernels, a cudaGraphAddMemcpyNode1D
// into a pageable scalar), its node count, roots and edges, a clone, three
// launches with the host input changed between them, and cudaGraphExecUpdate
// to a graph copying into another buffer; done with pinned (cudaMallocHost)
// and with pageable (malloc) host buffers.  Then a graph captured from a
// stream with cudaMemcpyAsync device-to-host into pinned memory and into a
// pageable scalar, re-captured with new kernel parameters and applied with
// cudaGraphExecUpdate, as jacobiCudaGraphs does.  Every result is checked
// against a host reference; the output is deterministic.
// Usage: graph_nodes
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>

#define CHECK(call)                                                                    \
    do {                                                                               \
        cudaError_t err_ = (call);                                                     \
        if (err_ != cudaSuccess) {                                                     \
            fprintf(stderr, "graph_nodes: %s failed at %s:%d: %s (%s)\n", #call,       \
                    __FILE__, __LINE__, cudaGetErrorString(err_), cudaGetErrorName(err_)); \
            exit(1);                                                                   \
        }                                                                              \
    } while (0)

#include "graph_common.cuh"

__device__ unsigned int gn_table[4];

static const int N = 4096, THREADS = 256, BLOCKS = N / THREADS;
static const size_t BYTES = N * sizeof(unsigned int);
static int failures;

static void fill(unsigned int *in, unsigned int launch)
{
    for (int i = 0; i < N; i++)
        in[i] = (unsigned int)i * 2654435761u + launch;
}

// What the graphs compute: se_transform(k, base) in place, then
// se_combine of the result with itself.
static void reference(const unsigned int *in, unsigned int k, unsigned int base, unsigned int *out)
{
    for (int i = 0; i < N; i++) {
        unsigned int a = in[i] * k + ((unsigned int)i + base);
        out[i] = (a ^ (a >> 3)) + 7u * (unsigned int)i;
    }
}

static void report(const char *what, const unsigned int *got, unsigned int scalar, const unsigned int *in,
                   unsigned int k, unsigned int base)
{
    static unsigned int want[N];
    bool ok;

    reference(in, k, base, want);
    ok = memcmp(got, want, BYTES) == 0 && scalar == want[5];
    printf("%s: checksum %016llx scalar %u %s\n", what, (unsigned long long)checksum(got, N), scalar,
           ok ? "ok" : "MISMATCH");
    failures += !ok;
}

static cudaMemcpy3DParms copy_params(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind)
{
    cudaMemcpy3DParms p;

    memset(&p, 0, sizeof(p));
    p.srcPos = make_cudaPos(0, 0, 0);
    p.srcPtr = make_cudaPitchedPtr((void *)src, bytes, bytes, 1);
    p.dstPos = make_cudaPos(0, 0, 0);
    p.dstPtr = make_cudaPitchedPtr(dst, bytes, bytes, 1);
    p.extent = make_cudaExtent(bytes, 1, 1);
    p.kind = kind;
    return p;
}

struct transform_args {
    unsigned int *x;
    int n;
    unsigned int k, base;
    void *args[4];
    cudaKernelNodeParams p;
};

static void transform_params(transform_args *t, unsigned int *x, unsigned int k, unsigned int base)
{
    *t = transform_args();
    t->x = x;
    t->n = N;
    t->k = k;
    t->base = base;
    t->args[0] = &t->x;
    t->args[1] = &t->n;
    t->args[2] = &t->k;
    t->args[3] = &t->base;
    t->p.func = (void *)se_transform;
    t->p.gridDim = dim3(BLOCKS);
    t->p.blockDim = dim3(THREADS);
    t->p.kernelParams = t->args;
}

// The explicit graph: upload in -> d_a, zero d_out, transform d_a, combine
// into d_out, copy d_out to out and d_out[5] to *scalar.
static cudaGraph_t build(unsigned int *in, unsigned int *d_a, unsigned int *d_out, unsigned int *out,
                         unsigned int *scalar, unsigned int k, cudaGraphNode_t nodes[6])
{
    cudaGraph_t g;
    cudaMemcpy3DParms up = copy_params(d_a, in, BYTES, cudaMemcpyHostToDevice);
    cudaMemcpy3DParms down = copy_params(out, d_out, BYTES, cudaMemcpyDeviceToHost);
    cudaMemsetParams ms;
    transform_args t;
    cudaKernelNodeParams c;
    int n = N;
    void *cargs[4] = { &d_a, &d_a, &d_out, &n };

    memset(&ms, 0, sizeof(ms));
    ms.dst = d_out;
    ms.elementSize = sizeof(unsigned int);
    ms.width = N;
    ms.height = 1;
    transform_params(&t, d_a, k, 1);
    c = cudaKernelNodeParams();
    c.func = (void *)se_combine;
    c.gridDim = dim3(BLOCKS);
    c.blockDim = dim3(THREADS);
    c.kernelParams = cargs;
    CHECK(cudaGraphCreate(&g, 0));
    CHECK(cudaGraphAddMemcpyNode(&nodes[0], g, NULL, 0, &up));
    CHECK(cudaGraphAddMemsetNode(&nodes[1], g, NULL, 0, &ms));
    CHECK(cudaGraphAddKernelNode(&nodes[2], g, &nodes[0], 1, &t.p));
    cudaGraphNode_t before_combine[2] = { nodes[1], nodes[2] };
    CHECK(cudaGraphAddKernelNode(&nodes[3], g, before_combine, 2, &c));
    CHECK(cudaGraphAddMemcpyNode(&nodes[4], g, &nodes[3], 1, &down));
    CHECK(cudaGraphAddMemcpyNode1D(&nodes[5], g, &nodes[3], 1, scalar, d_out + 5, sizeof(unsigned int),
                                   cudaMemcpyDefault));
    return g;
}

static void explicit_graph(const char *variant, unsigned int *in, unsigned int *out, unsigned int *out2,
                           unsigned int *d_a, unsigned int *d_out, cudaStream_t s)
{
    unsigned int scalar = 0, scalar2 = 0;
    cudaGraphNode_t nodes[6], nodes2[6];
    cudaGraph_t g = build(in, d_a, d_out, out, &scalar, 3, nodes), clone, g2;
    cudaGraphExec_t exec, cexec;
    cudaGraphExecUpdateResultInfo info;
    size_t count = 0, roots = 0, edges = 0;
    enum cudaGraphNodeType type;
    char what[128];

    CHECK(cudaGraphGetNodes(g, NULL, &count));
    CHECK(cudaGraphGetRootNodes(g, NULL, &roots));
    CHECK(cudaGraphGetEdges(g, NULL, NULL, NULL, &edges));
    printf("%s: explicit graph: %zu nodes, %zu roots, %zu edges\n", variant, count, roots, edges);
    CHECK(cudaGraphNodeGetType(nodes[4], &type));
    printf("%s: device-to-host node: type %d\n", variant, (int)type);
    CHECK(cudaGraphInstantiate(&exec, g, 0));
    CHECK(cudaGraphClone(&clone, g));
    CHECK(cudaGraphGetNodes(clone, NULL, &count));
    printf("%s: clone: %zu nodes\n", variant, count);
    cudaGraphNode_t copy;
    CHECK(cudaGraphNodeFindInClone(&copy, nodes[2], clone));
    CHECK(cudaGraphNodeGetType(copy, &type));
    printf("%s: the transform's copy in the clone: type %d, %s\n", variant, (int)type,
           copy != nodes[2] ? "another node" : "the same node");
    CHECK(cudaGraphInstantiate(&cexec, clone, 0));
    for (unsigned int l = 0; l < 3; l++) {
        fill(in, l);   // the graph reads the host input at each launch
        CHECK(cudaGraphLaunch(exec, s));
        CHECK(cudaStreamSynchronize(s));
        snprintf(what, sizeof(what), "%s: launch %u", variant, l);
        report(what, out, scalar, in, 3, 1);
    }
    fill(in, 10);
    CHECK(cudaGraphLaunch(cexec, s));
    // A synchronous copy on the legacy stream waits for s (a blocking stream).
    unsigned int probe = 0;
    CHECK(cudaMemcpy(&probe, d_out, sizeof(probe), cudaMemcpyDeviceToHost));
    snprintf(what, sizeof(what), "%s: clone launch", variant);
    report(what, out, scalar, in, 3, 1);

    // Same shape, another destination and factor: the exec takes them.
    g2 = build(in, d_a, d_out, out2, &scalar2, 7, nodes2);
    CHECK(cudaGraphExecUpdate(exec, g2, &info));
    printf("%s: exec update: result %d\n", variant, (int)info.result);
    fill(in, 20);
    CHECK(cudaGraphLaunch(exec, s));
    CHECK(cudaDeviceSynchronize());
    snprintf(what, sizeof(what), "%s: updated launch", variant);
    report(what, out2, scalar2, in, 7, 1);

    CHECK(cudaGraphExecDestroy(exec));
    CHECK(cudaGraphExecDestroy(cexec));
    CHECK(cudaGraphDestroy(g));
    CHECK(cudaGraphDestroy(g2));
    CHECK(cudaGraphDestroy(clone));
}

// Captured as jacobiCudaGraphs does: an upload, a memset, kernels, copies
// to the host; the host input changes after each capture.
static void captured_graph(unsigned int *in, unsigned int *out, unsigned int *d_a, unsigned int *d_out,
                           cudaStream_t s)
{
    cudaGraphExec_t exec = NULL;
    unsigned int scalar = 0;
    char what[128];

    for (unsigned int it = 0; it < 3; it++) {
        cudaGraph_t g;
        size_t count = 0;

        CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
        CHECK(cudaMemcpyAsync(d_a, in, BYTES, cudaMemcpyHostToDevice, s));
        CHECK(cudaMemsetAsync(d_out, 0, BYTES, s));
        se_transform<<<BLOCKS, THREADS, 0, s>>>(d_a, N, 3 + it, it);
        se_combine<<<BLOCKS, THREADS, 0, s>>>(d_a, d_a, d_out, N);
        CHECK(cudaMemcpyAsync(out, d_out, BYTES, cudaMemcpyDeviceToHost, s));
        CHECK(cudaMemcpyAsync(&scalar, d_out + 5, sizeof(scalar), cudaMemcpyDefault, s));
        CHECK(cudaStreamEndCapture(s, &g));
        CHECK(cudaGraphGetNodes(g, NULL, &count));
        if (!exec) {
            printf("captured graph: %zu nodes\n", count);
            CHECK(cudaGraphInstantiate(&exec, g, 0));
        } else {
            cudaGraphExecUpdateResultInfo info;
            CHECK(cudaGraphExecUpdate(exec, g, &info));
            printf("captured graph %u: %zu nodes, exec update result %d\n", it, count, (int)info.result);
        }
        CHECK(cudaGraphDestroy(g));
        fill(in, 30 + it);   // after the capture: the launch reads these bytes
        memset(out, 0, BYTES);
        scalar = 0;
        CHECK(cudaGraphLaunch(exec, s));
        CHECK(cudaStreamSynchronize(s));
        snprintf(what, sizeof(what), "captured launch %u", it);
        report(what, out, scalar, in, 3 + it, it);
    }
    CHECK(cudaGraphExecDestroy(exec));
}

// A graph's structure: dependencies, dependents, edges removed, a node destroyed.
static void structure()
{
    cudaGraph_t g;
    cudaGraphNode_t e[4], listed[8], deps[4];
    size_t n = 0, roots = 0, edges = 0;
    int found = 0;

    CHECK(cudaGraphCreate(&g, 0));
    CHECK(cudaGraphAddEmptyNode(&e[0], g, NULL, 0));
    CHECK(cudaGraphAddEmptyNode(&e[1], g, NULL, 0));
    CHECK(cudaGraphAddEmptyNode(&e[2], g, e, 2));
    CHECK(cudaGraphAddEmptyNode(&e[3], g, &e[2], 1));
    n = 8;
    CHECK(cudaGraphGetNodes(g, listed, &n));
    for (size_t i = 0; i < n; i++)
        for (int k = 0; k < 4; k++)
            found += listed[i] == e[k];
    printf("structure: %zu nodes, %d of them ours, slot %zu %s\n", n, found, n, listed[n] ? "set" : "NULL");
    n = 4;
    CHECK(cudaGraphNodeGetDependencies(e[2], deps, NULL, &n));
    printf("structure: node 2 depends on %zu nodes (%s)\n", n,
           (deps[0] == e[0] && deps[1] == e[1]) || (deps[0] == e[1] && deps[1] == e[0]) ? "0 and 1" : "others");
    CHECK(cudaGraphNodeGetDependentNodes(e[2], NULL, NULL, &n));
    printf("structure: %zu node depends on node 2\n", n);
    CHECK(cudaGraphRemoveDependencies(g, &e[0], &e[2], NULL, 1));
    CHECK(cudaGraphGetEdges(g, NULL, NULL, NULL, &edges));
    CHECK(cudaGraphNodeGetDependencies(e[2], NULL, NULL, &n));
    printf("structure: after removing 0->2: %zu edges, node 2 depends on %zu\n", edges, n);
    printf("structure: removing 0->2 again: %s\n", cudaGetErrorName(cudaGraphRemoveDependencies(g, &e[0], &e[2], NULL, 1)));
    CHECK(cudaGraphDebugDotPrint(g, "/tmp/graph_nodes.dot", 0));
    FILE *dot = fopen("/tmp/graph_nodes.dot", "r");
    printf("structure: dot file %s\n", dot ? "written" : "MISSING");
    failures += !dot;
    if (dot)
        fclose(dot);
    printf("structure: dot file in a missing directory: %s\n",
           cudaGetErrorName(cudaGraphDebugDotPrint(g, "/nonexistent-tandem-dir/g.dot", 0)));
    CHECK(cudaGraphDestroyNode(e[2]));
    CHECK(cudaGraphGetNodes(g, NULL, &n));
    CHECK(cudaGraphGetRootNodes(g, NULL, &roots));
    CHECK(cudaGraphGetEdges(g, NULL, NULL, NULL, &edges));
    printf("structure: after destroying node 2: %zu nodes, %zu roots, %zu edges\n", n, roots, edges);
    CHECK(cudaGraphDestroy(g));
}

// Copy nodes to and from a __device__ variable.
static void symbols(cudaStream_t s)
{
    static const unsigned int in[4] = { 11, 22, 33, 44 };
    unsigned int out[2] = { 0, 0 };
    cudaGraph_t g;
    cudaGraphNode_t to, from;
    cudaGraphExec_t exec;

    CHECK(cudaGraphCreate(&g, 0));
    CHECK(cudaGraphAddMemcpyNodeToSymbol(&to, g, NULL, 0, gn_table, in, sizeof(in), 0, cudaMemcpyHostToDevice));
    CHECK(cudaGraphAddMemcpyNodeFromSymbol(&from, g, &to, 1, out, gn_table, sizeof(out), 2 * sizeof(unsigned int),
                                           cudaMemcpyDefault));
    CHECK(cudaGraphInstantiate(&exec, g, 0));
    CHECK(cudaGraphLaunch(exec, s));
    CHECK(cudaStreamSynchronize(s));
    printf("symbols: %u %u\n", out[0], out[1]);
    printf("symbols: past the end: %s\n",
           cudaGetErrorName(cudaGraphAddMemcpyNodeToSymbol(&to, g, NULL, 0, gn_table, in, sizeof(in), 4, cudaMemcpyHostToDevice)));
    CHECK(cudaGraphExecDestroy(exec));
    CHECK(cudaGraphDestroy(g));
}

int main()
{
    unsigned int *in, *out, *out2, *d_a, *d_out;
    cudaStream_t s;

    (void)launch_once;   // graph_common.cuh's, for the other graph examples
    CHECK(cudaStreamCreate(&s));
    CHECK(cudaMalloc(&d_a, BYTES));
    CHECK(cudaMalloc(&d_out, BYTES));

    CHECK(cudaMallocHost(&in, BYTES));
    CHECK(cudaMallocHost(&out, BYTES));
    CHECK(cudaMallocHost(&out2, BYTES));
    explicit_graph("pinned", in, out, out2, d_a, d_out, s);
    captured_graph(in, out, d_a, d_out, s);
    CHECK(cudaFreeHost(in));
    CHECK(cudaFreeHost(out));
    CHECK(cudaFreeHost(out2));

    in = (unsigned int *)malloc(BYTES);
    out = (unsigned int *)malloc(BYTES);
    out2 = (unsigned int *)malloc(BYTES);
    explicit_graph("pageable", in, out, out2, d_a, d_out, s);
    captured_graph(in, out, d_a, d_out, s);
    free(in);
    free(out);
    free(out2);

    CHECK(cudaFree(d_a));
    CHECK(cudaFree(d_out));
    structure();
    symbols(s);
    CHECK(cudaStreamDestroy(s));
    printf("graph_nodes: %s\n", failures ? "FAILED" : "done");
    return failures ? 1 : 0;
}
