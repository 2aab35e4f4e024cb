/* stream-flags-check: cudaStreamGetFlags on every kind of stream a program
 * names (the legacy and per-thread default streams, streams created with
 * and without cudaStreamNonBlocking, the per-thread entry point), and its
 * refusal of a NULL result pointer.  One line per stream on stdout, the same
 * natively and through Tandem: test_examples runs it through a server,
 * tests/gpu/run-takeover-gpu.sh's caller compares it with a native run.
 * It is also the call docs/architecture.md's "Adding a remoted call" adds. */
#include <stdio.h>
#include <stdlib.h>

#include <cuda_runtime_api.h>

/* What a program built with --default-stream per-thread calls; the
 * toolkit's headers name it only in such a build. */
extern cudaError_t CUDARTAPI cudaStreamGetFlags_ptsz(cudaStream_t stream, unsigned int *flags);

static int failures;

static void show(const char *name, cudaStream_t s)
{
    unsigned flags = 0xffffffffu;
    cudaError_t e = cudaStreamGetFlags(s, &flags);

    if (e != cudaSuccess) {
        printf("%s: %s\n", name, cudaGetErrorName(e));
        failures++;
        return;
    }
    printf("%s: flags %u\n", name, flags);
}

int main(void)
{
    cudaStream_t blocking, nonblocking, prio;
    unsigned flags = 0;

    if (cudaStreamCreate(&blocking) != cudaSuccess ||
        cudaStreamCreateWithFlags(&nonblocking, cudaStreamNonBlocking) != cudaSuccess ||
        cudaStreamCreateWithPriority(&prio, cudaStreamNonBlocking, 0) != cudaSuccess) {
        fprintf(stderr, "stream-flags-check: cannot create streams\n");
        return 1;
    }
    show("null stream", 0);
    show("cudaStreamLegacy", cudaStreamLegacy);
    show("cudaStreamPerThread", cudaStreamPerThread);
    show("created", blocking);
    show("created non-blocking", nonblocking);
    show("created with priority, non-blocking", prio);
    if (cudaStreamGetFlags_ptsz(nonblocking, &flags) == cudaSuccess)
        printf("per-thread entry point: flags %u\n", flags);
    else
        failures++;
    printf("NULL result pointer: %s\n", cudaGetErrorName(cudaStreamGetFlags(blocking, NULL)));
    cudaGetLastError();
    cudaStreamDestroy(blocking);
    cudaStreamDestroy(nonblocking);
    cudaStreamDestroy(prio);
    return failures ? 1 : 0;
}
