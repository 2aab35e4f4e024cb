// Peer copies, batch copies (1D and 3D), prefetch and discard batches of
// managed memory, and pools chosen by memory location (docs/memory-models.md,
// "Batch copies").  Every line it prints is the same natively on one GPU and
// through Tandem.  Diagnostics go to stderr.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>

#include "pool_kernels.cuh"

#define CHECK(call)                                                                    \
    do {                                                                               \
        cudaError_t err_ = (call);                                                     \
        if (err_ != cudaSuccess) {                                                     \
            fprintf(stderr, "mem_batch: %s failed at %s:%d: %s (%s)\n", #call,         \
                    __FILE__, __LINE__, cudaGetErrorString(err_), cudaGetErrorName(err_)); \
            exit(1);                                                                   \
        }                                                                              \
    } while (0)

// Prints what a call answered and clears the error it left behind.
static void answer(const char *what, cudaError_t err)
{
    printf("%s: %s\n", what, cudaGetErrorName(err));
    cudaGetLastError();
}

static uint64_t sum(const unsigned int *p, int n)
{
    uint64_t s = 0;
    for (int i = 0; i < n; i++)
        s += p[i];
    return s;
}

static const int N = 1 << 14, THREADS = 256, BLOCKS = (N + THREADS - 1) / THREADS;
static const size_t BYTES = (size_t)N * sizeof(unsigned int);

static void peer_copies(cudaStream_t s)
{
    unsigned int *a, *b, *c, *h = (unsigned int *)malloc(BYTES);

    CHECK(cudaMalloc(&a, BYTES));
    CHECK(cudaMalloc(&b, BYTES));
    CHECK(cudaMalloc(&c, BYTES));
    pool_fill<<<BLOCKS, THREADS>>>(a, N, 5u);
    CHECK(cudaMemcpyPeer(b, 0, a, 0, BYTES));
    CHECK(cudaDeviceSynchronize());   // s does not wait for the legacy stream
    CHECK(cudaMemcpyPeerAsync(c, 0, b, 0, BYTES / 2, s));
    CHECK(cudaMemcpyAsync(h, c, BYTES / 2, cudaMemcpyDeviceToHost, s));
    CHECK(cudaStreamSynchronize(s));
    printf("peer copy: c[0]=%u c[%d]=%u sum=%llu\n", h[0], N / 2 - 1, h[N / 2 - 1],
           (unsigned long long)sum(h, N / 2));
    answer("peer copy to device 1", cudaMemcpyPeer(b, 1, a, 0, BYTES));
    answer("peer copy from device -1", cudaMemcpyPeerAsync(b, 0, a, -1, BYTES, s));
    answer("peer copy of 0 bytes", cudaMemcpyPeer(b, 0, a, 0, 0));
    CHECK(cudaFree(a));
    CHECK(cudaFree(b));
    CHECK(cudaFree(c));
    free(h);
}

// One batch in every direction: pageable and pinned host to device, device
// to device, device to host (pinned and pageable); no copy depends on
// another of its batch.
static void batch_copies(cudaStream_t s)
{
    unsigned int *pageable = (unsigned int *)malloc(BYTES), *out = (unsigned int *)malloc(BYTES);
    unsigned int *pinned, *pinned_out, *d1, *d2, *d3, *d4;

    CHECK(cudaMallocHost(&pinned, BYTES));
    CHECK(cudaMallocHost(&pinned_out, BYTES));
    CHECK(cudaMalloc(&d1, BYTES));
    CHECK(cudaMalloc(&d2, BYTES));
    CHECK(cudaMalloc(&d3, BYTES));
    CHECK(cudaMalloc(&d4, BYTES));
    for (int i = 0; i < N; i++) {
        pageable[i] = 3u * (unsigned)i;
        pinned[i] = 1000u + (unsigned)i;
    }
    memset(out, 0, BYTES);
    memset(pinned_out, 0, BYTES);
    pool_fill<<<BLOCKS, THREADS, 0, s>>>(d3, N, 7u);
    pool_fill<<<BLOCKS, THREADS, 0, s>>>(d4, N, 9u);

    void *dsts[5] = { d1, d2, d4, out, pinned_out };
    const void *srcs[5] = { pageable, pinned, d3, d3, d4 };
    size_t sizes[5] = { BYTES, BYTES, BYTES / 2, BYTES, BYTES };
    // d4's first half is overwritten by the batch's third copy while its
    // fifth reads it: dependent, so the fifth reads only d4's second half.
    dsts[4] = pinned_out + N / 2;
    srcs[4] = d4 + N / 2;
    sizes[4] = BYTES / 2;
    cudaMemcpyAttributes attrs[2];
    memset(attrs, 0, sizeof(attrs));
    attrs[0].srcAccessOrder = cudaMemcpySrcAccessOrderDuringApiCall;
    attrs[1].srcAccessOrder = cudaMemcpySrcAccessOrderStream;
    attrs[1].flags = cudaMemcpyFlagPreferOverlapWithCompute;
    size_t idxs[2] = { 0, 2 };
    CHECK(cudaMemcpyBatchAsync(dsts, srcs, sizes, 5, attrs, idxs, 2, s));
    // Reading back what the first two copies wrote, in stream order.
    unsigned int *back = (unsigned int *)malloc(2 * BYTES);
    CHECK(cudaMemcpyAsync(back, d1, BYTES, cudaMemcpyDeviceToHost, s));
    CHECK(cudaMemcpyAsync(back + N, d2, BYTES, cudaMemcpyDeviceToHost, s));
    CHECK(cudaStreamSynchronize(s));
    printf("batch: pageable->device sum=%llu pinned->device sum=%llu\n", (unsigned long long)sum(back, N),
           (unsigned long long)sum(back + N, N));
    CHECK(cudaMemcpy(back, d4, BYTES, cudaMemcpyDeviceToHost));
    printf("batch: device->device d4[0]=%u d4[%d]=%u d4[%d]=%u\n", back[0], N / 2 - 1, back[N / 2 - 1], N / 2,
           back[N / 2]);
    printf("batch: device->pageable sum=%llu device->pinned sum=%llu\n", (unsigned long long)sum(out, N),
           (unsigned long long)sum(pinned_out + N / 2, N / 2));

    size_t bad_idxs[2] = { 1, 2 };
    answer("batch of 0 copies", cudaMemcpyBatchAsync(dsts, srcs, sizes, 0, attrs, idxs, 1, s));
    answer("batch with no attributes", cudaMemcpyBatchAsync(dsts, srcs, sizes, 2, attrs, idxs, 0, s));
    answer("batch whose attributes start at 1", cudaMemcpyBatchAsync(dsts, srcs, sizes, 3, attrs, bad_idxs, 2, s));
    answer("batch with more attributes than copies", cudaMemcpyBatchAsync(dsts, srcs, sizes, 1, attrs, idxs, 2, s));
    cudaMemcpyAttributes bad = attrs[0];
    bad.srcAccessOrder = cudaMemcpySrcAccessOrderInvalid;
    answer("batch with an invalid access order", cudaMemcpyBatchAsync(dsts, srcs, sizes, 1, &bad, idxs, 1, s));
    CHECK(cudaStreamSynchronize(s));

    CHECK(cudaFree(d1));
    CHECK(cudaFree(d2));
    CHECK(cudaFree(d3));
    CHECK(cudaFree(d4));
    CHECK(cudaFreeHost(pinned));
    CHECK(cudaFreeHost(pinned_out));
    free(pageable);
    free(out);
    free(back);
}

static cudaMemcpy3DOperand ptr_operand(void *p, size_t row, size_t layer)
{
    cudaMemcpy3DOperand o;
    memset(&o, 0, sizeof(o));
    o.type = cudaMemcpyOperandTypePointer;
    o.op.ptr.ptr = p;
    o.op.ptr.rowLength = row;
    o.op.ptr.layerHeight = layer;
    return o;
}

static cudaMemcpy3DOperand array_operand(cudaArray_t a, size_t x, size_t y)
{
    cudaMemcpy3DOperand o;
    memset(&o, 0, sizeof(o));
    o.type = cudaMemcpyOperandTypeArray;
    o.op.array.array = a;
    o.op.array.offset.x = x;
    o.op.array.offset.y = y;
    return o;
}

static cudaMemcpy3DBatchOp op3d(cudaMemcpy3DOperand src, cudaMemcpy3DOperand dst, size_t w, size_t h)
{
    cudaMemcpy3DBatchOp op;
    memset(&op, 0, sizeof(op));
    op.src = src;
    op.dst = dst;
    op.extent = make_cudaExtent(w, h, 1);
    op.srcAccessOrder = cudaMemcpySrcAccessOrderStream;
    return op;
}

// A 64x32 grid of floats: host rows into an array and into pitched device
// memory (a 48x20 window of rows 64 long), then back into host rows 80 long.
static void batch_3d(cudaStream_t s)
{
    const int W = 64, H = 32;
    float *grid = (float *)malloc(W * H * sizeof(float));
    float *fromArray = (float *)calloc(W * H, sizeof(float)), *fromPtr = (float *)calloc(80 * 20, sizeof(float));
    cudaChannelFormatDesc desc = cudaCreateChannelDesc<float>();
    cudaArray_t arr;
    float *dev;

    for (int i = 0; i < W * H; i++)
        grid[i] = (float)(i % 997) * 0.5f;
    CHECK(cudaMallocArray(&arr, &desc, W, H));
    CHECK(cudaMalloc(&dev, W * H * sizeof(float)));
    CHECK(cudaMemsetAsync(dev, 0, W * H * sizeof(float), s));   // s does not wait for the legacy stream

    cudaMemcpy3DBatchOp in[2] = {
        op3d(ptr_operand(grid, 0, 0), array_operand(arr, 0, 0), W, H),
        // a pointer-to-pointer copy counts in bytes
        op3d(ptr_operand(grid, W * sizeof(float), 0), ptr_operand(dev, W * sizeof(float), 0), 48 * sizeof(float), 20),
    };
    CHECK(cudaMemcpy3DBatchAsync(2, in, 0, s));
    cudaMemcpy3DBatchOp out[2] = {
        op3d(array_operand(arr, 0, 0), ptr_operand(fromArray, 0, 0), W, H),
        op3d(ptr_operand(dev, W * sizeof(float), 0), ptr_operand(fromPtr, 80 * sizeof(float), 0), 48 * sizeof(float), 20),
    };
    CHECK(cudaMemcpy3DBatchAsync(2, out, 0, s));
    CHECK(cudaStreamSynchronize(s));
    double sa = 0, sp = 0;
    for (int i = 0; i < W * H; i++)
        sa += fromArray[i];
    for (int i = 0; i < 80 * 20; i++)
        sp += fromPtr[i];
    printf("3D batch: array round trip %s sum=%.1f; window sum=%.1f row 19 col 47=%.1f\n",
           memcmp(grid, fromArray, W * H * sizeof(float)) ? "differs" : "equal", sa, sp, fromPtr[19 * 80 + 47]);

    cudaMemcpy3DBatchOp bad = in[0];
    answer("3D batch with flags", cudaMemcpy3DBatchAsync(1, &bad, 1, s));
    bad.extent.depth = 0;
    answer("3D batch of depth 0", cudaMemcpy3DBatchAsync(1, &bad, 0, s));
    bad = in[1];
    bad.dst.op.ptr.rowLength = 4;
    answer("3D batch with rows shorter than the width", cudaMemcpy3DBatchAsync(1, &bad, 0, s));
    bad = in[1];
    bad.src.type = (cudaMemcpy3DOperandType)7;
    answer("3D batch with an unknown operand type", cudaMemcpy3DBatchAsync(1, &bad, 0, s));
    CHECK(cudaStreamSynchronize(s));
    CHECK(cudaFreeArray(arr));
    CHECK(cudaFree(dev));
    free(grid);
    free(fromArray);
    free(fromPtr);
}

static cudaMemLocation location(cudaMemLocationType type, int id)
{
    cudaMemLocation l;
    l.type = type;
    l.id = id;
    return l;
}

static void prefetch_batches(cudaStream_t s)
{
    unsigned int *m1, *m2, *plain;

    CHECK(cudaMallocManaged(&m1, BYTES));
    CHECK(cudaMallocManaged(&m2, BYTES));
    CHECK(cudaMalloc(&plain, BYTES));
    for (int i = 0; i < N; i++)
        m1[i] = (unsigned)i;

    void *both[2] = { m1, m2 };
    size_t sizes[2] = { BYTES, BYTES };
    cudaMemLocation dev = location(cudaMemLocationTypeDevice, 0), host = location(cudaMemLocationTypeHost, 0);
    size_t idx0[1] = { 0 };
    CHECK(cudaMemPrefetchBatchAsync(both, sizes, 2, &dev, idx0, 1, 0, s));
    pool_twice<<<BLOCKS, THREADS, 0, s>>>(m1, m2, N);
    void *second[1] = { m2 };
    CHECK(cudaMemPrefetchBatchAsync(second, sizes, 1, &host, idx0, 1, 0, s));
    CHECK(cudaStreamSynchronize(s));
    printf("prefetch batch: m2[1]=%u m2[%d]=%u sum=%llu\n", m2[1], N - 1, m2[N - 1], (unsigned long long)sum(m2, N));

    // Discarded memory is written again before anything reads it.
    void *first[1] = { m1 };
    CHECK(cudaMemDiscardBatchAsync(first, sizes, 1, 0, s));
    cudaMemLocation locs[2] = { dev, host };
    size_t idxs[2] = { 0, 1 };
    CHECK(cudaMemDiscardAndPrefetchBatchAsync(both, sizes, 2, locs, idxs, 2, 0, s));
    pool_fill<<<BLOCKS, THREADS, 0, s>>>(m1, N, 11u);
    pool_fill<<<BLOCKS, THREADS, 0, s>>>(m2, N, 13u);
    CHECK(cudaStreamSynchronize(s));
    printf("discard batches: m1[2]=%u m2[2]=%u sum=%llu\n", m1[2], m2[2],
           (unsigned long long)(sum(m1, N) + sum(m2, N)));

    void *notManaged[1] = { plain };
    answer("prefetch batch of cudaMalloc memory", cudaMemPrefetchBatchAsync(notManaged, sizes, 1, &dev, idx0, 1, 0, s));
    answer("prefetch batch with flags", cudaMemPrefetchBatchAsync(first, sizes, 1, &dev, idx0, 1, 1, s));
    answer("prefetch batch with no locations", cudaMemPrefetchBatchAsync(first, sizes, 1, &dev, idx0, 0, 0, s));
    answer("discard batch with flags", cudaMemDiscardBatchAsync(first, sizes, 1, 1, s));
    answer("discard batch of 0 ranges", cudaMemDiscardBatchAsync(first, sizes, 0, 0, s));
    CHECK(cudaStreamSynchronize(s));
    CHECK(cudaFree(m1));
    CHECK(cudaFree(m2));
    CHECK(cudaFree(plain));
}

static void pools_by_location(void)
{
    cudaMemLocation dev = location(cudaMemLocationTypeDevice, 0);
    cudaMemPool_t def, byDevice, cur, made;

    CHECK(cudaMemGetDefaultMemPool(&def, &dev, cudaMemAllocationTypePinned));
    CHECK(cudaDeviceGetDefaultMemPool(&byDevice, 0));
    printf("default pool of device 0 is the device's: %s\n", def == byDevice ? "yes" : "no");
    CHECK(cudaMemGetMemPool(&cur, &dev, cudaMemAllocationTypePinned));
    printf("current pool is the default: %s\n", cur == def ? "yes" : "no");

    cudaMemPoolProps props;
    memset(&props, 0, sizeof(props));
    props.allocType = cudaMemAllocationTypePinned;
    props.location = dev;
    CHECK(cudaMemPoolCreate(&made, &props));
    CHECK(cudaMemSetMemPool(&dev, cudaMemAllocationTypePinned, made));
    CHECK(cudaMemGetMemPool(&cur, &dev, cudaMemAllocationTypePinned));
    CHECK(cudaDeviceGetMemPool(&byDevice, 0));
    printf("set pool is current: %s, for the device too: %s\n", cur == made ? "yes" : "no",
           byDevice == made ? "yes" : "no");
    CHECK(cudaMemSetMemPool(&dev, cudaMemAllocationTypePinned, def));
    CHECK(cudaMemPoolDestroy(made));

    cudaMemLocation dev1 = location(cudaMemLocationTypeDevice, 1), bogus = location((cudaMemLocationType)99, 0);
    answer("default pool of device 1", cudaMemGetDefaultMemPool(&cur, &dev1, cudaMemAllocationTypePinned));
    answer("current pool of device 1", cudaMemGetMemPool(&cur, &dev1, cudaMemAllocationTypePinned));
    answer("current pool of an unknown location type", cudaMemGetMemPool(&cur, &bogus, cudaMemAllocationTypePinned));
    answer("pool of an invalid allocation type",
           cudaMemGetMemPool(&cur, &dev, (cudaMemAllocationType)0));
    answer("set the pool of device 1", cudaMemSetMemPool(&dev1, cudaMemAllocationTypePinned, def));
}

int main()
{
    cudaStream_t s;

    CHECK(cudaSetDevice(0));
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    peer_copies(s);
    batch_copies(s);
    batch_3d(s);
    prefetch_batches(s);
    pools_by_location();
    CHECK(cudaStreamDestroy(s));
    printf("done\n");
    return 0;
}
