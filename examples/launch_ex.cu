// launch-ex: kernels launched through cudaLaunchKernelExC (the C API) and
// the cudaLaunchKernelEx templates of cuda_runtime.h, as thrust/CUB in
// CUDA 13 launch them: without attributes, with attributes at values that
// ask for a plain launch, cooperative, with a launch completion event, by
// cudaKernel_t, on the per-thread stream; and bad input.  Prints the same
// lines natively and through Tandem (docs/runtime-api.md, "Extensible
// launch").  With --tandem-limits it also prints a cluster launch (which
// examples/clusters.cu checks fully) and refused configurations, for the CI
// test only.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>

#define CHECK(call)                                                                    \
    do {                                                                               \
        cudaError_t err_ = (call);                                                     \
        if (err_ != cudaSuccess) {                                                     \
            fprintf(stderr, "launch-ex: %s failed at %s:%d: %s\n", #call,              \
                    __FILE__, __LINE__, cudaGetErrorName(err_));                       \
            exit(1);                                                                   \
        }                                                                              \
    } while (0)

// The same kernel as runtime-check's (its sim twin is _Z9incrementPji).
__global__ void increment(unsigned int *x, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] += 1u + (unsigned int)(i % 7);
}

static void not_a_kernel(void) {}

static const int n = 1 << 16;
static unsigned int *d, *h;

static void reset(void)
{
    // The launches go to a non-blocking stream too, which the null
    // stream's memset does not order: wait for it.
    CHECK(cudaMemset(d, 0, n * sizeof(unsigned int)));
    CHECK(cudaDeviceSynchronize());
}

// Each launch adds 1 + i % 7 to element i; `times` launches since reset.
static const char *verdict(int times)
{
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(h, d, n * sizeof(unsigned int), cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; i++)
        if (h[i] != (unsigned int)times * (1u + (unsigned int)(i % 7)))
            return "WRONG";
    return "correct";
}

static cudaLaunchConfig_t config(cudaStream_t s, cudaLaunchAttribute *attrs, unsigned int nattrs)
{
    cudaLaunchConfig_t c = {};
    c.gridDim = dim3((n + 255) / 256);
    c.blockDim = dim3(256);
    c.dynamicSmemBytes = 0;
    c.stream = s;
    c.attrs = attrs;
    c.numAttrs = nattrs;
    return c;
}

int main(int argc, char **argv)
{
    int tandem_limits = argc > 1 && !strcmp(argv[1], "--tandem-limits");
    int nn = n;
    void *args[] = { &d, &nn };
    cudaStream_t s;
    cudaLaunchAttribute a[8];
    cudaLaunchConfig_t c;

    h = (unsigned int *)malloc(n * sizeof(unsigned int));
    CHECK(cudaMalloc(&d, n * sizeof(unsigned int)));
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));

    reset();
    c = config(0, NULL, 0);
    CHECK(cudaLaunchKernelExC(&c, (const void *)increment, args));
    printf("no attributes, null stream: %s\n", verdict(1));

    reset();
    c = config(s, NULL, 0);
    CHECK(cudaLaunchKernelEx(&c, increment, d, nn));
    CHECK(cudaLaunchKernelEx(&c, increment, d, nn));
    printf("template, two launches on a stream: %s\n", verdict(2));

    // The attributes thrust/CUB and ordinary programs set, at values that
    // ask nothing a plain launch does not give.
    memset(a, 0, sizeof(a));
    a[0].id = cudaLaunchAttributeCooperative;
    a[0].val.cooperative = 0;
    a[1].id = cudaLaunchAttributePriority;
    a[1].val.priority = -1;
    a[2].id = cudaLaunchAttributeClusterDimension;
    a[2].val.clusterDim.x = a[2].val.clusterDim.y = a[2].val.clusterDim.z = 1;
    a[3].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    a[3].val.programmaticStreamSerializationAllowed = 1;
    a[4].id = cudaLaunchAttributeIgnore;
    a[5].id = cudaLaunchAttributeMemSyncDomain;
    a[5].val.memSyncDomain = cudaLaunchMemSyncDomainDefault;
    reset();
    c = config(s, a, 6);
    CHECK(cudaLaunchKernelExC(&c, (const void *)increment, args));
    CHECK(cudaLaunchKernelEx(&c, increment, d, nn));
    printf("default-valued attributes, two launches: %s\n", verdict(2));

    // Cooperative: as cudaLaunchCooperativeKernel, a grid that cannot be
    // resident at once is refused by the launch itself.
    int sms = 0, per_sm = 0;
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, increment, 256, 0));
    memset(a, 0, sizeof(a));
    a[0].id = cudaLaunchAttributeCooperative;
    a[0].val.cooperative = 1;
    reset();
    c = config(s, a, 1);
    CHECK(cudaLaunchKernelExC(&c, (const void *)increment, args));
    printf("cooperative: %s\n", verdict(1));
    c.gridDim = dim3(per_sm * sms + 1);
    printf("cooperative, one block more than resident: %s\n",
           cudaGetErrorName(cudaLaunchKernelExC(&c, (const void *)increment, args)));
    printf("usable after the refusal: %s\n", cudaGetErrorName(cudaDeviceSynchronize()));

    // A launch completion event, waited for by another stream.
    cudaEvent_t done;
    CHECK(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
    memset(a, 0, sizeof(a));
    a[0].id = cudaLaunchAttributeLaunchCompletionEvent;
    a[0].val.launchCompletionEvent.event = done;
    a[0].val.launchCompletionEvent.flags = 0;
    reset();
    c = config(s, a, 1);
    CHECK(cudaLaunchKernelExC(&c, (const void *)increment, args));
    CHECK(cudaEventSynchronize(done));
    printf("launch completion event: %s, then %s\n", cudaGetErrorName(cudaEventQuery(done)), verdict(1));

    // By cudaKernel_t, and on the per-thread default stream.
    cudaKernel_t k;
    CHECK(cudaGetKernel(&k, increment));
    reset();
    c = config(s, NULL, 0);
    CHECK(cudaLaunchKernelExC(&c, (const void *)k, args));
    CHECK(cudaStreamSynchronize(s));
    c = config(cudaStreamPerThread, NULL, 0);
    CHECK(cudaLaunchKernelEx(&c, k, d, nn));
    printf("by cudaKernel_t, then on the per-thread stream: %s\n", verdict(2));

    // Bad input.
    c = config(s, NULL, 0);
    printf("not a kernel: %s\n", cudaGetErrorName(cudaLaunchKernelExC(&c, (const void *)not_a_kernel, args)));
    c.blockDim = dim3(0);
    printf("empty block: %s\n", cudaGetErrorName(cudaLaunchKernelExC(&c, (const void *)increment, args)));
    memset(a, 0, sizeof(a));
    a[0].id = (cudaLaunchAttributeID)999;
    c = config(s, a, 1);
    printf("unknown attribute: %s\n", cudaGetErrorName(cudaLaunchKernelExC(&c, (const void *)increment, args)));
    printf("still usable: %s\n", cudaGetErrorName(cudaDeviceSynchronize()));

    if (tandem_limits) {
        // A cluster launch goes the driver's cluster launch (one-way
        // through Tandem: a bad shape would show at the next sync).
        memset(a, 0, sizeof(a));
        a[0].id = cudaLaunchAttributeClusterDimension;
        a[0].val.clusterDim.x = 2;
        a[0].val.clusterDim.y = a[0].val.clusterDim.z = 1;
        c = config(s, a, 1);
        printf("cluster 2x1x1: %s\n", cudaGetErrorName(cudaLaunchKernelExC(&c, (const void *)increment, args)));
        c = config(s, NULL, 1);
        printf("attributes NULL: %s\n", cudaGetErrorName(cudaLaunchKernelExC(&c, (const void *)increment, args)));
        printf("NULL config: %s\n", cudaGetErrorName(cudaLaunchKernelExC(NULL, (const void *)increment, args)));
        printf("usable after the refusals: %s\n", cudaGetErrorName(cudaDeviceSynchronize()));
    }

    CHECK(cudaEventDestroy(done));
    CHECK(cudaStreamDestroy(s));
    CHECK(cudaFree(d));
    free(h);
    return 0;
}
