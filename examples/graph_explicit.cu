// A graph built node by node: upload (from pinned memory), a memset, two
// transforms that depend only on the upload (they may run concurrently), an
// empty node joined in with cudaGraphAddDependencies, a combine after both
// transforms and the memset, and a device-to-device copy of the result.
// The same computation as graph_capture.cu, so the same checksum.  Output
// is deterministic.  Usage: graph_explicit [launches]
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CHECK(call)                                                                    \
    do {                                                                               \
        cudaError_t err_ = (call);                                                     \
        if (err_ != cudaSuccess) {                                                     \
            fprintf(stderr, "graph_explicit: %s failed at %s:%d: %s (%s)\n", #call,    \
                    __FILE__, __LINE__, cudaGetErrorString(err_), cudaGetErrorName(err_)); \
            exit(1);                                                                   \
        }                                                                              \
    } while (0)

#include "graph_common.cuh"

// se_transform's node parameters, with the argument values they point to.
struct transform {
    unsigned int *x;
    int n;
    unsigned int k, base;
    void *args[4];
    cudaKernelNodeParams p;

    transform(unsigned int *x_, int n_, unsigned int k_, unsigned int base_, int blocks, int threads)
        : x(x_), n(n_), k(k_), base(base_), args{ &x, &n, &k, &base }, p()
    {
        p.func = (void *)se_transform;
        p.gridDim = dim3(blocks);
        p.blockDim = dim3(threads);
        p.kernelParams = args;
    }
};

static cudaGraphNode_t add_transform(cudaGraph_t g, cudaGraphNode_t dep, unsigned int *x, int n, unsigned int k,
                                     unsigned int base, int blocks, int threads)
{
    transform t(x, n, k, base, blocks, threads);
    cudaGraphNode_t node;

    CHECK(cudaGraphAddKernelNode(&node, g, &dep, 1, &t.p));
    return node;
}

int main(int argc, char **argv)
{
    const int launches = argc > 1 ? atoi(argv[1]) : 3;
    const int n = 1 << 16, half = n / 2, threads = 256, blocks = (half + threads - 1) / threads;
    const size_t bytes = (size_t)n * sizeof(unsigned int), half_bytes = bytes / 2;
    unsigned int *h_in = NULL, *h_out = (unsigned int *)malloc(half_bytes), *d_buf, *d_out, *d_keep;
    cudaGraphNode_t upload, zero, t0, t1, empty, combine, keep;
    cudaGraph_t g;
    cudaGraphExec_t exec;
    cudaStream_t s;

    if (!h_out)
        return 1;
    CHECK(cudaSetDevice(0));
    CHECK(cudaMallocHost(&h_in, bytes));
    for (int i = 0; i < n; i++)
        h_in[i] = (unsigned int)i * 2654435761u;
    CHECK(cudaMalloc(&d_buf, bytes));
    CHECK(cudaMalloc(&d_out, half_bytes));
    CHECK(cudaMalloc(&d_keep, half_bytes));
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));

    CHECK(cudaGraphCreate(&g, 0));
    CHECK(cudaGraphAddMemcpyNode1D(&upload, g, NULL, 0, d_buf, h_in, bytes, cudaMemcpyHostToDevice));
    cudaMemsetParams mp = {};
    mp.dst = d_out;
    mp.value = 0;
    mp.elementSize = 4;
    mp.width = half;
    mp.height = 1;
    CHECK(cudaGraphAddMemsetNode(&zero, g, NULL, 0, &mp));
    t0 = add_transform(g, upload, d_buf, half, 3u, 1u, blocks, threads);
    t1 = add_transform(g, upload, d_buf + half, half, 5u, 2u, blocks, threads);
    CHECK(cudaGraphAddEmptyNode(&empty, g, &t0, 1));
    CHECK(cudaGraphAddDependencies(g, &t1, &empty, NULL, 1));
    {
        unsigned int *a = d_buf, *b = d_buf + half, *o = d_out;
        int nn = half;
        void *args[] = { &a, &b, &o, &nn };
        cudaGraphNode_t deps[] = { empty, zero };
        cudaKernelNodeParams p = {};
        p.func = (void *)se_combine;
        p.gridDim = dim3(blocks);
        p.blockDim = dim3(threads);
        p.kernelParams = args;
        CHECK(cudaGraphAddKernelNode(&combine, g, deps, 2, &p));
    }
    CHECK(cudaGraphAddMemcpyNode1D(&keep, g, &combine, 1, d_keep, d_out, half_bytes, cudaMemcpyDeviceToDevice));

    const cudaGraphNode_t nodes[] = { upload, zero, t0, empty, combine, keep };
    const char *names[] = { "upload", "memset", "transform", "empty", "combine", "keep" };
    for (int i = 0; i < 6; i++) {
        cudaGraphNodeType t;
        CHECK(cudaGraphNodeGetType(nodes[i], &t));
        printf("node %s: type %d\n", names[i], (int)t);
    }

    CHECK(cudaGraphInstantiate(&exec, g, 0));
    for (int r = 0; r < launches; r++)
        printf("launch %d: checksum %016llx\n", r,
               (unsigned long long)launch_once(exec, s, d_buf, d_keep, h_out, bytes));

    // New parameters for the graph's node: the exec made before is not changed...
    transform seven(d_buf, half, 7u, 1u, blocks, threads);
    CHECK(cudaGraphKernelNodeSetParams(t0, &seven.p));
    printf("exec after the graph's node changed: checksum %016llx\n",
           (unsigned long long)launch_once(exec, s, d_buf, d_keep, h_out, bytes));
    // ...an exec made now is,
    cudaGraphExec_t exec2;
    CHECK(cudaGraphInstantiate(&exec2, g, 0));
    printf("new exec: checksum %016llx\n", (unsigned long long)launch_once(exec2, s, d_buf, d_keep, h_out, bytes));
    CHECK(cudaGraphExecDestroy(exec2));
    // and the first exec changes when its own node is given them.
    CHECK(cudaGraphExecKernelNodeSetParams(exec, t0, &seven.p));
    printf("exec after its node changed: checksum %016llx\n",
           (unsigned long long)launch_once(exec, s, d_buf, d_keep, h_out, bytes));
    CHECK(cudaGraphExecDestroy(exec));
    CHECK(cudaGraphDestroy(g));
    CHECK(cudaStreamDestroy(s));
    CHECK(cudaFree(d_buf));
    CHECK(cudaFree(d_out));
    CHECK(cudaFree(d_keep));
    CHECK(cudaFreeHost(h_in));
    free(h_out);
    printf("graph_explicit: done\n");
    return 0;
}
