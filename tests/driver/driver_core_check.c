/* A Driver API program of Tandem's own (issue 15): initialization, the device, contexts,
 * cuGetProcAddress and the private export tables, checked against what cuda.h documents.
 * Prints one line per check; test_driver_runtime.c compares them.  Linked against Tandem's
 * libcuda.so.1 (the `cuda` target). */
#include <cuda.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drv_check.h"

/* What cuGetProcAddress gives for `sym` at `version`, named by the exported symbol it is. */
static void lookup(void *self, const char *sym, int version, cuuint64_t flags)
{
    void *fn = NULL;
    CUdriverProcAddressQueryResult st = CU_GET_PROC_ADDRESS_SUCCESS;
    CUresult r = cuGetProcAddress(sym, &fn, version, flags, &st);
    const char *which = "(none)";
    static const char *const candidates[] = { "cuMemAlloc", "cuMemAlloc_v2", "cuCtxCreate", "cuCtxCreate_v2",
                                              "cuCtxCreate_v3", "cuCtxCreate_v4", "cuLaunchKernel",
                                              "cuLaunchKernel_ptsz", "cuStreamGetCaptureInfo",
                                              "cuStreamGetCaptureInfo_v2", "cuStreamGetCaptureInfo_v3" };

    for (size_t i = 0; fn && i < sizeof(candidates) / sizeof(candidates[0]); i++)
        if (dlsym(self, candidates[i]) == fn)
            which = candidates[i];
    printf("cuGetProcAddress(%s, %d%s): %s, status %d, %s\n", sym, version, flags ? ", per-thread" : "", name(r),
           (int)st, which);
}

/* Registered before the first call, so it runs after Tandem's own exit handler closed the
 * session, as a library's destructors do (cuBLAS unloads its modules there). */
static void after_exit(void)
{
    CUdeviceptr p = 0;
    CUcontext ctx = NULL;

    CUresult r = cuDevicePrimaryCtxRetain(&ctx, 0);

    cuCtxSetCurrent(ctx);
    printf("after the session closed at exit: cuDevicePrimaryCtxRetain %s, cuMemAlloc %s\n", name(r),
           name(cuMemAlloc(&p, 64 << 20)));
    fflush(stdout);
}

int main(void)
{
    CUdevice dev = -1;
    CUcontext ctx = NULL, cur = NULL, popped = NULL;
    unsigned flags = 99;
    int n = 0, active = -1, version = 0;
    CUresult r;
    void *self = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    const void *table = NULL;
    CUuuid unknown = { { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 } };
    CUuuid cls_id = { { (char)0xc6, (char)0x93, 0x33, 0x6e, 0x11, 0x21, (char)0xdf, 0x11, (char)0xa8,
                        (char)0xc3, 0x68, (char)0xf3, 0x55, (char)0xd8, (char)0x95, (char)0x93 } };

    atexit(after_exit);   /* before anything connects */
    /* Before cuInit: everything but the version queries is CUDA_ERROR_NOT_INITIALIZED. */
    printf("cuDeviceGetCount before cuInit: %s\n", name(cuDeviceGetCount(&n)));
    printf("cuDriverGetVersion before cuInit: %s\n", name(cuDriverGetVersion(&version)));
    printf("cuInit(1): %s\n", name(cuInit(1)));
    printf("cuInit(0): %s\n", name(cuInit(0)));
    /* (Each call before the printf that shows its outputs: argument order is unspecified.) */
    r = cuDeviceGetCount(&n);
    printf("cuDeviceGetCount: %s, %d\n", name(r), n);
    printf("cuDeviceGet(1): %s\n", name(cuDeviceGet(&dev, 1)));
    r = cuDeviceGet(&dev, 0);
    printf("cuDeviceGet(0): %s, %d\n", name(r), dev);
    /* No current context yet. */
    r = cuCtxGetCurrent(&cur);
    printf("cuCtxGetCurrent: %s, %s\n", name(r), cur ? "a context" : "NULL");
    printf("cuCtxGetDevice without a context: %s\n", name(cuCtxGetDevice(&dev)));
    r = cuDevicePrimaryCtxGetState(0, &flags, &active);
    printf("primary state before retain: %s, active %d\n", name(r), active);
    printf("cuDevicePrimaryCtxRetain: %s\n", name(cuDevicePrimaryCtxRetain(&ctx, 0)));
    r = cuDevicePrimaryCtxGetState(0, &flags, &active);
    printf("primary state after retain: %s, active %d\n", name(r), active);
    printf("cuCtxSetCurrent: %s\n", name(cuCtxSetCurrent(ctx)));
    printf("cuCtxGetCurrent is the primary: %s\n", cuCtxGetCurrent(&cur) == CUDA_SUCCESS && cur == ctx ? "yes" : "no");
    r = cuCtxGetDevice(&dev);
    printf("cuCtxGetDevice: %s, %d\n", name(r), dev);
    r = cuCtxPopCurrent(&popped);
    printf("cuCtxPopCurrent: %s, %s\n", name(r), popped == ctx ? "the primary" : "other");
    printf("cuCtxPopCurrent on an empty stack: %s\n", name(cuCtxPopCurrent(&popped)));
    printf("cuCtxPushCurrent: %s\n", name(cuCtxPushCurrent(ctx)));
    printf("cuCtxPushCurrent of a forged context: %s\n", name(cuCtxPushCurrent((CUcontext)&n)));
    printf("cuCtxSynchronize: %s\n", name(cuCtxSynchronize()));
    {   /* The CIG limits the runtime has no name for (drv_context.c), as a plain context answers. */
        size_t shmem = 0, cig = 99, fallback = 0;
        int optin = -1;
        cuDeviceGetAttribute(&optin, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, 0);
        r = cuCtxGetLimit(&shmem, CU_LIMIT_SHMEM_SIZE);
        printf("limit shared memory: %s, the opt-in maximum %s\n", name(r), optin > 0 && shmem == (size_t)optin ? "yes" : "no");
        r = cuCtxGetLimit(&cig, CU_LIMIT_CIG_ENABLED);
        printf("limit CIG enabled: %s, %zu\n", name(r), cig);
        printf("limit CIG fallback: %s\n", name(cuCtxGetLimit(&fallback, CU_LIMIT_CIG_SHMEM_FALLBACK_ENABLED)));
        printf("set limit CIG enabled: %s\n", name(cuCtxSetLimit(CU_LIMIT_CIG_ENABLED, 1)));
    }

    lookup(self, "cuMemAlloc", 3010, 0);
    lookup(self, "cuMemAlloc", 12000, 0);
    lookup(self, "cuCtxCreate", 11040, 0);
    lookup(self, "cuCtxCreate", 13000, 0);
    lookup(self, "cuLaunchKernel", 12000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM);
    lookup(self, "cuStreamGetCaptureInfo", 12030, 0);
    lookup(self, "cuStreamGetCaptureInfo", 10000, 0);
    lookup(self, "cuNoSuchEntryPoint", 13000, 0);

    printf("cuGetExportTable(unknown): %s\n", name(cuGetExportTable(&table, &unknown)));
    if (cuGetExportTable(&table, &cls_id) == CUDA_SUCCESS) {
        /* Context-local storage: put, get, delete, get again (the runtime's per-context state). */
        typedef CUresult (*put_fn)(CUcontext, void *, void *, void (*)(CUcontext, void *, void *));
        typedef CUresult (*del_fn)(CUcontext, void *);
        typedef CUresult (*get_fn)(void **, CUcontext, void *);
        void *const *slots = table;
        int key, value;
        void *got = NULL;
        printf("cls put: %s\n", name(((put_fn)slots[0])(NULL, &key, &value, NULL)));
        r = ((get_fn)slots[2])(&got, NULL, &key);
        printf("cls get: %s, %s\n", name(r), got == &value ? "the value" : "other");
        printf("cls delete: %s\n", name(((del_fn)slots[1])(ctx, &key)));
        printf("cls get after delete: %s\n", name(((get_fn)slots[2])(&got, NULL, &key)));
    }
    printf("cuDevicePrimaryCtxRelease: %s\n", name(cuDevicePrimaryCtxRelease(0)));
    printf("cuDevicePrimaryCtxRelease again: %s\n", name(cuDevicePrimaryCtxRelease(0)));
    return 0;
}
