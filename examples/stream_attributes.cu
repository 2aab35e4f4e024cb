// stream-attributes: cudaStreamSetAttribute/cudaStreamGetAttribute as
// cuda-samples' simpleAttributes uses them (an L2 access policy window on
// a stream, work launched on it, the window reset), the other stream
// attributes read back as set, and bad input.  Prints the same lines
// natively and through Tandem (docs/runtime-api.md, "Stream attributes").
// With --tandem-limits it also prints what Tandem refuses and the driver
// would take (a window outside the program's allocations, a stream that is
// not one), for the CI test only.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>

#define CHECK(call)                                                                    \
    do {                                                                               \
        cudaError_t err_ = (call);                                                     \
        if (err_ != cudaSuccess) {                                                     \
            fprintf(stderr, "stream-attributes: %s failed at %s:%d: %s\n", #call,      \
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

static void print_window(const char *what, const cudaStreamAttrValue *v, const void *base)
{
    const cudaAccessPolicyWindow *w = &v->accessPolicyWindow;
    printf("%s: base %s, %zu bytes, hit ratio %.2f, hit %d, miss %d\n", what,
           !w->base_ptr ? "NULL" : w->base_ptr == base ? "as set" : "OTHER", w->num_bytes, w->hitRatio,
           (int)w->hitProp, (int)w->missProp);
}

int main(int argc, char **argv)
{
    int tandem_limits = argc > 1 && !strcmp(argv[1], "--tandem-limits");
    const int n = 1 << 18;
    const size_t bytes = n * sizeof(unsigned int);
    unsigned int *d, *h = (unsigned int *)malloc(bytes);
    cudaStream_t s;
    cudaStreamAttrValue v, got;

    CHECK(cudaMalloc(&d, bytes));
    CHECK(cudaMemset(d, 0, bytes));
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));

    CHECK(cudaStreamGetAttribute(s, cudaStreamAttributeAccessPolicyWindow, &got));
    print_window("window before", &got, NULL);

    memset(&v, 0, sizeof(v));
    v.accessPolicyWindow.base_ptr = d;
    v.accessPolicyWindow.num_bytes = bytes;
    v.accessPolicyWindow.hitRatio = 0.6f;
    v.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
    v.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
    printf("set window: %s\n", cudaGetErrorName(cudaStreamSetAttribute(s, cudaStreamAttributeAccessPolicyWindow, &v)));
    CHECK(cudaStreamGetAttribute(s, cudaStreamAttributeAccessPolicyWindow, &got));
    print_window("window", &got, d);

    increment<<<(n + 255) / 256, 256, 0, s>>>(d, n);
    CHECK(cudaGetLastError());
    CHECK(cudaStreamSynchronize(s));
    CHECK(cudaMemcpy(h, d, bytes, cudaMemcpyDeviceToHost));
    int good = 1;
    for (int i = 0; i < n; i++)
        good &= h[i] == 1u + (unsigned int)(i % 7);
    printf("kernel under the window: %s\n", good ? "correct" : "WRONG");

    v.accessPolicyWindow.num_bytes = 0;
    printf("reset window: %s\n", cudaGetErrorName(cudaStreamSetAttribute(s, cudaStreamAttributeAccessPolicyWindow, &v)));
    CHECK(cudaStreamGetAttribute(s, cudaStreamAttributeAccessPolicyWindow, &got));
    printf("window after reset: %zu bytes\n", got.accessPolicyWindow.num_bytes);

    memset(&v, 0, sizeof(v));
    v.syncPolicy = cudaSyncPolicyYield;
    CHECK(cudaStreamSetAttribute(s, cudaStreamAttributeSynchronizationPolicy, &v));
    CHECK(cudaStreamGetAttribute(s, cudaStreamAttributeSynchronizationPolicy, &got));
    printf("sync policy: %d\n", (int)got.syncPolicy);
    memset(&v, 0, sizeof(v));
    v.memSyncDomain = cudaLaunchMemSyncDomainRemote;
    CHECK(cudaStreamSetAttribute(s, cudaStreamAttributeMemSyncDomain, &v));
    CHECK(cudaStreamGetAttribute(s, cudaStreamAttributeMemSyncDomain, &got));
    printf("memory sync domain: %d\n", (int)got.memSyncDomain);
    CHECK(cudaStreamGetAttribute(s, cudaStreamAttributePriority, &got));
    printf("priority: %d\n", got.priority);

    // Bad input.
    memset(&v, 0, sizeof(v));
    v.accessPolicyWindow.base_ptr = d;
    v.accessPolicyWindow.num_bytes = bytes;
    v.accessPolicyWindow.hitRatio = 2.0f;
    printf("hit ratio 2: %s\n", cudaGetErrorName(cudaStreamSetAttribute(s, cudaStreamAttributeAccessPolicyWindow, &v)));
    v.accessPolicyWindow.hitRatio = 0.5f;
    v.accessPolicyWindow.missProp = cudaAccessPropertyPersisting;
    printf("persisting misses: %s\n",
           cudaGetErrorName(cudaStreamSetAttribute(s, cudaStreamAttributeAccessPolicyWindow, &v)));
    printf("NULL value: %s\n", cudaGetErrorName(cudaStreamSetAttribute(s, cudaStreamAttributeAccessPolicyWindow, NULL)));
    printf("NULL result: %s\n", cudaGetErrorName(cudaStreamGetAttribute(s, cudaStreamAttributeAccessPolicyWindow, NULL)));
    printf("unknown attribute: %s\n",
           cudaGetErrorName(cudaStreamGetAttribute(s, (cudaStreamAttrID)999, &got)));

    if (tandem_limits) {
        memset(&v, 0, sizeof(v));
        v.accessPolicyWindow.base_ptr = d;
        v.accessPolicyWindow.num_bytes = bytes + 4096;
        v.accessPolicyWindow.hitRatio = 0.5f;
        printf("window past the allocation: %s\n",
               cudaGetErrorName(cudaStreamSetAttribute(s, cudaStreamAttributeAccessPolicyWindow, &v)));
        v.accessPolicyWindow.base_ptr = (void *)0x1000;
        v.accessPolicyWindow.num_bytes = 4096;
        printf("window on memory not allocated: %s\n",
               cudaGetErrorName(cudaStreamSetAttribute(s, cudaStreamAttributeAccessPolicyWindow, &v)));
        printf("not a stream: %s\n", cudaGetErrorName(cudaStreamGetAttribute((cudaStream_t)0x7777,
               cudaStreamAttributeAccessPolicyWindow, &got)));
        memset(&v, 0, sizeof(v));
        v.priority = -1;
        printf("setting the priority: %s\n",
               cudaGetErrorName(cudaStreamSetAttribute(s, cudaStreamAttributePriority, &v)));
    }
    printf("still usable: %s\n", cudaGetErrorName(cudaDeviceSynchronize()));

    CHECK(cudaStreamDestroy(s));
    CHECK(cudaFree(d));
    free(h);
    return 0;
}
