/* The Driver API's memory calls (issue 15), in plain C against cuda.h: allocations, copies
 * sync and async with their data checked, memsets of 8, 16 and 32 bits, address ranges and
 * pointer attributes, and bad inputs.  Each line printed is compared with what the real
 * driver answers (tests/integration/test_driver_memory.c). */
#include <cuda.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drv_check.h"

#define N 4096

static void fill(unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)(i * 7 + seed);
}

static int same(const unsigned char *a, const unsigned char *b, size_t n)
{
    return memcmp(a, b, n) == 0;
}

static void copies(CUdeviceptr d1, CUdeviceptr d2)
{
    unsigned char src[N], dst[N], *hs, *hd;
    CUstream s;

    fill(src, N, 1);
    MUST(cuMemcpyHtoD(d1, src, N));
    MUST(cuMemcpyDtoD(d2, d1, N));
    memset(dst, 0, N);
    MUST(cuMemcpyDtoH(dst, d2, N));
    printf("sync copies: %s\n", same(src, dst, N) ? "correct" : "WRONG");

    MUST(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    MUST(cuMemAllocHost((void **)&hs, N));
    MUST(cuMemAllocHost((void **)&hd, N));
    fill(hs, N, 2);
    memset(hd, 0, N);
    MUST(cuMemcpyHtoDAsync(d1, hs, N, s));
    MUST(cuMemcpyDtoDAsync(d2, d1, N, s));
    MUST(cuMemcpyDtoHAsync(hd, d2, N, s));
    MUST(cuStreamSynchronize(s));
    printf("async copies: %s\n", same(hs, hd, N) ? "correct" : "WRONG");

    fill(src, N, 3);   /* unified addressing: cuMemcpy tells the direction from the addresses */
    MUST(cuMemcpy(d1, (CUdeviceptr)(uintptr_t)src, N));
    /* A copy from pageable memory may return before its DMA ends (cuda.h, "API
     * synchronization behavior"), and s does not wait for the null stream. */
    MUST(cuCtxSynchronize());
    MUST(cuMemcpyAsync((CUdeviceptr)(uintptr_t)hd, d1, N, s));
    MUST(cuStreamSynchronize(s));
    printf("cuMemcpy and cuMemcpyAsync: %s\n", same(src, hd, N) ? "correct" : "WRONG");
    MUST(cuMemFreeHost(hs));
    MUST(cuMemFreeHost(hd));
    MUST(cuStreamDestroy(s));
}

static int all16(const unsigned char *p, size_t n, uint16_t v)
{
    for (size_t i = 0; i + 2 <= n; i += 2) {
        uint16_t x;
        memcpy(&x, p + i, 2);
        if (x != v)
            return 0;
    }
    return 1;
}

static int all32(const unsigned char *p, size_t n, uint32_t v)
{
    for (size_t i = 0; i + 4 <= n; i += 4) {
        uint32_t x;
        memcpy(&x, p + i, 4);
        if (x != v)
            return 0;
    }
    return 1;
}

static void memsets(CUdeviceptr d)
{
    unsigned char h[N];
    CUstream s;

    MUST(cuMemsetD8(d, 0xab, N));
    MUST(cuMemcpyDtoH(h, d, N));
    printf("D8 0xab: %s\n", all16(h, N, 0xabab) ? "correct" : "WRONG");
    MUST(cuMemsetD16(d, 0x0707, N / 2));
    MUST(cuMemcpyDtoH(h, d, N));
    printf("D16 0x0707: %s\n", all16(h, N, 0x0707) ? "correct" : "WRONG");
    MUST(cuMemsetD16(d, 0x1234, N / 2));
    MUST(cuMemcpyDtoH(h, d, N));
    printf("D16 0x1234: %s\n", all16(h, N, 0x1234) ? "correct" : "WRONG");
    MUST(cuMemsetD32(d, 0xdeadbeef, N / 4));
    MUST(cuMemcpyDtoH(h, d, N));
    printf("D32 0xdeadbeef: %s\n", all32(h, N, 0xdeadbeef) ? "correct" : "WRONG");
    MUST(cuStreamCreate(&s, 0));
    MUST(cuMemsetD8Async(d, 0, N, s));
    MUST(cuMemsetD32Async(d + 8, 0x01020304, 4, s));
    MUST(cuMemsetD16Async(d + 40, 0x5555, 4, s));
    MUST(cuMemcpyDtoHAsync(h, d, 64, s));
    MUST(cuStreamSynchronize(s));
    printf("async memsets in stream order: %s\n",
           all32(h, 8, 0) && all32(h + 8, 16, 0x01020304) && all32(h + 24, 16, 0) && all16(h + 40, 8, 0x5555) &&
                   all32(h + 48, 16, 0)
               ? "correct"
               : "WRONG");
    MUST(cuStreamDestroy(s));
    /* cuda.h: the destination of D16/D32 must be 2-/4-byte aligned. */
    say("D32 at an odd address", cuMemsetD32(d + 1, 0x01020304, 4));
    say("D16 at an odd address", cuMemsetD16(d + 1, 0x0102, 4));
}

static void ranges(CUdeviceptr d, CUcontext primary)
{
    CUdeviceptr base = 0, dp = 0;
    size_t size = 0;
    unsigned int type = 0;
    int managed = -1, ordinal = -1, mapped = -1;
    void *start = NULL, *hp = NULL;
    size_t rsize = 0;
    unsigned long long id = 0;
    CUcontext ctx = NULL;
    int local = 0;

    MUST(cuMemGetAddressRange(&base, &size, d + 100));
    printf("range of d+100: base is d %s, size %zu\n", yes(base == d), size);
    say("range of a stack address", cuMemGetAddressRange(&base, &size, (CUdeviceptr)(uintptr_t)&local));

    MUST(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, d + 16));
    printf("device memory: type %u\n", type);
    MUST(cuPointerGetAttribute(&ctx, CU_POINTER_ATTRIBUTE_CONTEXT, d + 16));
    printf("  context is the primary: %s\n", yes(ctx == primary));
    MUST(cuPointerGetAttribute(&dp, CU_POINTER_ATTRIBUTE_DEVICE_POINTER, d + 16));
    printf("  device pointer is itself: %s\n", yes(dp == d + 16));
    say("  host pointer", cuPointerGetAttribute(&hp, CU_POINTER_ATTRIBUTE_HOST_POINTER, d + 16));
    MUST(cuPointerGetAttribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, d + 16));
    MUST(cuPointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, d + 16));
    MUST(cuPointerGetAttribute(&mapped, CU_POINTER_ATTRIBUTE_MAPPED, d + 16));
    printf("  managed %d, ordinal %d, mapped %d\n", managed, ordinal, mapped);
    MUST(cuPointerGetAttribute(&start, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, d + 16));
    MUST(cuPointerGetAttribute(&rsize, CU_POINTER_ATTRIBUTE_RANGE_SIZE, d + 16));
    printf("  range starts at d %s, size %zu\n", yes((CUdeviceptr)(uintptr_t)start == d), rsize);
    MUST(cuPointerGetAttribute(&id, CU_POINTER_ATTRIBUTE_BUFFER_ID, d + 16));
    printf("  buffer id nonzero: %s\n", yes(id != 0));

    say("stack address, memory type", cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                                            (CUdeviceptr)(uintptr_t)&local));
    say("NULL data", cuPointerGetAttribute(NULL, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, d));
    {
        /* cuda.h: cuPointerGetAttributes answers an unknown pointer with NULL values, no error. */
        CUpointer_attribute at[] = { CU_POINTER_ATTRIBUTE_CONTEXT, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                     CU_POINTER_ATTRIBUTE_IS_MANAGED };
        CUcontext c2 = primary;
        unsigned int t2 = 99;
        int m2 = 99;
        void *data[] = { &c2, &t2, &m2 };

        say("cuPointerGetAttributes of a stack address",
            cuPointerGetAttributes(3, at, data, (CUdeviceptr)(uintptr_t)&local));
        printf("  context NULL %s, type %u, managed %d\n", yes(c2 == NULL), t2, m2);
        c2 = NULL;
        MUST(cuPointerGetAttributes(3, at, data, d));
        printf("  device memory: context is the primary %s, type %u, managed %d\n", yes(c2 == primary), t2, m2);
    }
}

static void host_memory(void)
{
    void *h = NULL, *hp = NULL;
    unsigned int flags = 0, type = 0;
    unsigned char *reg;

    MUST(cuMemHostAlloc(&h, N, CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP));
    MUST(cuMemHostGetFlags(&flags, h));
    printf("cuMemHostAlloc flags: %s\n", yes((flags & 3) == 3));
    MUST(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)(uintptr_t)h + 8));
    MUST(cuPointerGetAttribute(&hp, CU_POINTER_ATTRIBUTE_HOST_POINTER, (CUdeviceptr)(uintptr_t)h + 8));
    printf("pinned memory: type %u, host pointer is itself %s\n", type, yes(hp == (char *)h + 8));
    MUST(cuMemFreeHost(h));
    say("cuMemHostAlloc with unknown flags", cuMemHostAlloc(&h, N, 0x80));

    reg = aligned_alloc(4096, 2 * 4096);
    MUST(cuMemHostRegister(reg, 2 * 4096, CU_MEMHOSTREGISTER_PORTABLE));
    MUST(cuMemHostGetFlags(&flags, reg));
    printf("registered: flags has PORTABLE %s\n", yes(flags & CU_MEMHOSTREGISTER_PORTABLE));
    MUST(cuMemHostUnregister(reg));
    say("unregister again", cuMemHostUnregister(reg));
    free(reg);
}

static void managed_and_async(void)
{
    CUdeviceptr m = 0, a = 0;
    int managed = 0;
    CUstream s;
    unsigned char h[64];

    MUST(cuMemAllocManaged(&m, N, CU_MEM_ATTACH_GLOBAL));
    MUST(cuPointerGetAttribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, m));
    printf("managed memory: is managed %d\n", managed);
    MUST(cuMemFree(m));
    say("cuMemAllocManaged with both attach flags", cuMemAllocManaged(&m, N, 3));

    MUST(cuStreamCreate(&s, 0));
    MUST(cuMemAllocAsync(&a, 64, s));
    MUST(cuMemsetD8Async(a, 9, 64, s));
    MUST(cuMemcpyDtoHAsync(h, a, 64, s));
    MUST(cuMemFreeAsync(a, s));
    MUST(cuStreamSynchronize(s));
    printf("stream-ordered allocation: %s\n", h[0] == 9 && h[63] == 9 ? "correct" : "WRONG");
    MUST(cuStreamDestroy(s));
}

int main(void)
{
    CUdevice dev;
    CUcontext primary;
    CUdeviceptr d1 = 0, d2 = 0, freed = 0, p = 0;
    size_t free_b = 0, total = 0, pitch = 0;
    unsigned char h[16] = { 0 };

    say("cuMemAlloc before cuInit", cuMemAlloc(&d1, N));
    MUST(cuInit(0));
    MUST(cuDeviceGet(&dev, 0));
    MUST(cuDevicePrimaryCtxRetain(&primary, dev));
    say("cuMemAlloc without a current context", cuMemAlloc(&d1, N));
    MUST(cuCtxSetCurrent(primary));

    say("cuMemAlloc of 0 bytes", cuMemAlloc(&d1, 0));
    say("cuMemAlloc into NULL", cuMemAlloc(NULL, N));
    MUST(cuMemAlloc(&d1, N));
    MUST(cuMemAlloc(&d2, N));
    MUST(cuMemGetInfo(&free_b, &total));
    printf("cuMemGetInfo: total > 0 %s, free <= total %s\n", yes(total > 0), yes(free_b <= total));

    copies(d1, d2);
    memsets(d2);
    ranges(d1, primary);
    host_memory();
    managed_and_async();

    say("cuMemAllocPitch, element size 3", cuMemAllocPitch(&p, &pitch, 100, 10, 3));
    MUST(cuMemAllocPitch(&p, &pitch, 100, 10, 4));
    printf("cuMemAllocPitch: pitch >= width %s\n", yes(pitch >= 100));
    MUST(cuMemFree(p));

    /* bad inputs */
    MUST(cuMemAlloc(&freed, N));
    MUST(cuMemFree(freed));
    say("cuMemFree of a freed pointer", cuMemFree(freed));
    say("cuMemcpyHtoD to a freed pointer", cuMemcpyHtoD(freed, h, sizeof(h)));
    say("cuMemcpyHtoD from NULL", cuMemcpyHtoD(d1, NULL, sizeof(h)));
    say("cuMemcpyDtoH past the end", cuMemcpyDtoH(h, d1 + N - 8, sizeof(h)));
    say("cuMemFreeHost of pageable memory", cuMemFreeHost(h));

    MUST(cuMemFree(d1));
    MUST(cuMemFree(d2));
    MUST(cuDevicePrimaryCtxRelease(dev));
    printf("done\n");
    return 0;
}
