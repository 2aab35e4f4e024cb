// coherent_setup_check: memory the library hands out as coherent (managed
// memory; a mapped block's device memory over TCP) has its device copy set
// up before the call that hands it out returns, for the work of every
// stream.  A non-blocking stream does not wait for the legacy stream, so
// setup queued there (as it was) could run after the program's own upload
// on such a stream and overwrite it: examples::peer_and_batch_copies
// printed "prefetch batch: m2[1]=0 ..." in about 1 run of 10 under load.
//
// The interleaving is forced: a kernel holds the legacy stream, spinning
// on a pinned flag (examples/pinned_latch.cu's latch, whose sim twin
// serves it), while the program allocates, writes the host copy, uploads
// it on a non-blocking stream and waits for that; only then is the flag
// set.  Then the device copy is read back.  Last, the same for managed
// memory after a cudaDeviceReset, which destroys the library's own stream
// that the setup now goes on.  One line per case ("managed: ok", "mapped:
// ok", "managed after a reset: ok") or the first word that differs; the
// same natively and through Tandem over shm and TCP.  (A host callback
// cannot hold the stream: the library sends no synchronous call while one
// runs.)
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CHECK(call)                                                                             \
    do {                                                                                        \
        cudaError_t err_ = (call);                                                              \
        if (err_ != cudaSuccess) {                                                              \
            fprintf(stderr, "coherent_setup_check: %s failed at line %d: %s\n", #call, __LINE__, \
                    cudaGetErrorName(err_));                                                    \
            exit(1);                                                                            \
        }                                                                                       \
    } while (0)

// examples/pinned_latch.cu's kernel (name and body): its sim twin serves it.
__global__ void mm_spin_until_set(volatile unsigned *latch, unsigned *seen)
{
    unsigned v;
    while ((v = *latch) == 0)
        ;
    *seen = v;
}

// 64 KiB: one coherence block of managed memory.  2 MiB: over the bound of
// pinned blocks that lie at device memory of their own over TCP, so the
// mapped block gets device memory at cudaHostGetDevicePointer.
static const unsigned MANAGED_WORDS = 64u * 1024u / 4u, MAPPED_WORDS = 2u * 1024u * 1024u / 4u;

struct latch {
    unsigned *flag, *seen;
};

static void hold_legacy(latch *l)
{
    *(volatile unsigned *)l->flag = 0;
    mm_spin_until_set<<<1, 1>>>(l->flag, l->seen);
    CHECK(cudaGetLastError());
}

// The flag is set by a copy on s, not by a host write: over TCP the wait
// for s made the flag's host copy INVALID, and a host access to it would
// fetch it on the legacy stream, behind the spinning kernel.
static void release_legacy(latch *l, cudaStream_t s)
{
    static const unsigned one = 1;

    CHECK(cudaMemcpyAsync(l->flag, &one, sizeof(one), cudaMemcpyDefault, s));
    CHECK(cudaDeviceSynchronize());
}

// What the device holds of words [0, n) of dev, against base + i.
static void report(const char *what, const void *dev, unsigned n, unsigned base)
{
    unsigned *h = (unsigned *)malloc((size_t)n * 4);

    if (!h) {
        fprintf(stderr, "coherent_setup_check: out of memory\n");
        exit(1);
    }
    CHECK(cudaMemcpy(h, dev, (size_t)n * 4, cudaMemcpyDeviceToHost));
    for (unsigned i = 0; i < n; i++)
        if (h[i] != base + i) {
            printf("%s: device word %u is %u, not %u\n", what, i, h[i], base + i);
            free(h);
            return;
        }
    printf("%s: ok\n", what);
    free(h);
}

// cudaMallocManaged: the device copy is zeroed (the host copy starts
// CLEAN); the host's writes then go up on s with a prefetch.
static void managed(cudaStream_t s, latch *l)
{
    cudaMemLocation dev;
    unsigned *m;

    dev.type = cudaMemLocationTypeDevice;
    dev.id = 0;
    hold_legacy(l);
    CHECK(cudaMallocManaged(&m, MANAGED_WORDS * 4));
    for (unsigned i = 0; i < MANAGED_WORDS; i++)
        m[i] = 1 + i;
    CHECK(cudaMemPrefetchAsync(m, MANAGED_WORDS * 4, dev, 0, s));
    CHECK(cudaStreamSynchronize(s));
    release_legacy(l, s);
    report("managed", m, MANAGED_WORDS, 1);
    CHECK(cudaFree(m));
}

// cudaHostGetDevicePointer: over TCP the block gets device memory holding
// what the host wrote before; a copy on s reads it.
static void mapped(cudaStream_t s, latch *l)
{
    unsigned *p, *d, *out;

    CHECK(cudaHostAlloc(&p, MAPPED_WORDS * 4, cudaHostAllocMapped));
    CHECK(cudaMalloc(&out, MAPPED_WORDS * 4));
    for (unsigned i = 0; i < MAPPED_WORDS; i++)
        p[i] = 7 + i;
    hold_legacy(l);
    CHECK(cudaHostGetDevicePointer(&d, p, 0));
    CHECK(cudaMemcpyAsync(out, d, MAPPED_WORDS * 4, cudaMemcpyDefault, s));
    CHECK(cudaStreamSynchronize(s));
    release_legacy(l, s);
    report("mapped", out, MAPPED_WORDS, 7);
    CHECK(cudaFree(out));
    CHECK(cudaFreeHost(p));
}

int main()
{
    latch l;
    cudaStream_t s;

    CHECK(cudaSetDevice(0));
    CHECK(cudaMallocHost(&l.flag, sizeof(unsigned)));
    CHECK(cudaMalloc(&l.seen, sizeof(unsigned)));
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    managed(s, &l);
    mapped(s, &l);
    CHECK(cudaStreamDestroy(s));
    CHECK(cudaFree(l.seen));
    CHECK(cudaFreeHost(l.flag));

    // A reset destroys every stream (the library's own too): managed
    // memory is set up as before afterwards.
    unsigned *m;
    CHECK(cudaDeviceReset());
    CHECK(cudaMallocManaged(&m, MANAGED_WORDS * 4));
    for (unsigned i = 0; i < MANAGED_WORDS; i++)
        m[i] = 3 + i;
    report("managed after a reset", m, MANAGED_WORDS, 3);
    CHECK(cudaFree(m));
    return 0;
}
