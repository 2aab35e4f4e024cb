/* A Driver API program (cuda.h only): modules, libraries, kernels, launches and occupancy
 * (issue 15).  argv[1]: build/bin/library-load.fatbin, examples/library_kernels.cu built:
 *   __device__ int lib_bias;
 *   lib_axpb(float *y, const float *x, float a, int n)   y[i] = a * x[i] + lib_bias
 *   lib_fill(int *out, int n, char step, double scale)  out[i] = (int)(i * step * scale)
 * It prints what it sees; tests/integration/test_driver_module.c says why each line is what
 * the driver answers.  Numbers that differ between GPUs (registers, occupancy) are printed
 * as checks of their consistency, never as values. */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drv_check.h"

#define N 1000

/* NVIDIA's libcuda exports it; cuda.h names it only through its per-thread-stream macros. */
CUresult CUDAAPI cuLaunchKernel_ptsz(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                                     unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
                                     unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,
                                     void **kernelParams, void **extra);

static void *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *buf;
    long n;

    if (!f || fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) <= 0 || fseek(f, 0, SEEK_SET) != 0)
        exit(2);
    /* Zeros after the image: a fat binary's length is found by looking for a block after
     * the last (the load calls take no length), which must not read past the buffer. */
    buf = calloc(1, (size_t)n + 64);
    if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n)
        exit(2);
    fclose(f);
    *len = (size_t)n;
    return buf;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The names of a module's functions, sorted (the order is the image's). */
static void list_functions(CUmodule mod)
{
    CUfunction fs[8];
    const char *names[8];
    unsigned n = 0;

    MUST(cuModuleGetFunctionCount(&n, mod));
    MUST(cuModuleEnumerateFunctions(fs, n, mod));
    for (unsigned i = 0; i < n; i++)
        MUST(cuFuncGetName(&names[i], fs[i]));
    qsort(names, n, sizeof(*names), by_name);
    printf("  %u functions:", n);
    for (unsigned i = 0; i < n; i++)
        printf(" %s", names[i]);
    printf("\n");
}

static void params(const char *what, CUfunction f, unsigned n)
{
    size_t off = 0, size = 0;

    printf("  %s parameters:", what);
    for (unsigned i = 0; i < n; i++) {
        MUST(cuFuncGetParamInfo(f, i, &off, &size));
        printf(" %zu@%zu", size, off);
    }
    printf(" (index %u: %s)\n", n, name(cuFuncGetParamInfo(f, n, &off, &size)));
}

/* y = 2x + bias through lib_axpb, by kernelParams; whether y is right. */
static const char *axpb(CUfunction f, CUdeviceptr bias_at, int bias)
{
    static float x[N], y[N];
    CUdeviceptr dx, dy;
    float a = 2.0f;
    int n = N, bad = 0;
    void *args[] = { &dy, &dx, &a, &n };

    for (int i = 0; i < N; i++)
        x[i] = (float)i;
    MUST(cuMemAlloc(&dx, sizeof(x)));
    MUST(cuMemAlloc(&dy, sizeof(y)));
    MUST(cuMemcpyHtoD(dx, x, sizeof(x)));
    MUST(cuMemcpyHtoD(bias_at, &bias, sizeof(bias)));
    MUST(cuLaunchKernel(f, (N + 127) / 128, 1, 1, 128, 1, 1, 0, NULL, args, NULL));
    MUST(cuCtxSynchronize());
    MUST(cuMemcpyDtoH(y, dy, sizeof(y)));
    for (int i = 0; i < N; i++)
        bad += y[i] != 2.0f * (float)i + (float)bias;
    MUST(cuMemFree(dx));
    MUST(cuMemFree(dy));
    return bad ? "wrong" : "correct";
}

/* lib_fill's parameters packed at the offsets the kernel reports. */
typedef struct fill_buffer {
    char bytes[64];
    size_t size;
} fill_buffer;

static void pack_fill(CUfunction f, CUdeviceptr out, int n, char step, double scale, fill_buffer *b)
{
    const void *src[] = { &out, &n, &step, &scale };
    size_t off = 0, size = 0;

    memset(b, 0, sizeof(*b));
    for (unsigned i = 0; i < 4; i++) {
        MUST(cuFuncGetParamInfo(f, i, &off, &size));
        memcpy(b->bytes + off, src[i], size);
        b->size = off + size;
    }
}

enum fill_how { BY_EXTRA, BY_EX, BY_EX_EXTRA, BY_PTSZ, BY_COOPERATIVE };

/* out[i] = i * 3 * 0.5 through lib_fill, launched `how`; out[999] or -1 when out is wrong. */
static int fill(CUfunction f, enum fill_how how)
{
    static int out[N];
    CUdeviceptr d;
    int n = N, bad = 0;
    char step = 3;
    double scale = 0.5;
    void *args[] = { &d, &n, &step, &scale };
    fill_buffer b;
    void *extra[] = { CU_LAUNCH_PARAM_BUFFER_POINTER, b.bytes, CU_LAUNCH_PARAM_BUFFER_SIZE, &b.size,
                      CU_LAUNCH_PARAM_END };
    CUlaunchAttribute attr[2];
    CUlaunchConfig c = { (N + 255) / 256, 1, 1, 256, 1, 1, 0, NULL, attr, 2 };

    memset(attr, 0, sizeof(attr));
    attr[0].id = CU_LAUNCH_ATTRIBUTE_IGNORE;
    attr[1].id = CU_LAUNCH_ATTRIBUTE_PRIORITY;
    attr[1].value.priority = 0;
    MUST(cuMemAlloc(&d, sizeof(out)));
    pack_fill(f, d, n, step, scale, &b);
    switch (how) {
    case BY_EXTRA:
        MUST(cuLaunchKernel(f, c.gridDimX, 1, 1, c.blockDimX, 1, 1, 0, NULL, NULL, extra));
        break;
    case BY_EX:
        MUST(cuLaunchKernelEx(&c, f, args, NULL));
        break;
    case BY_EX_EXTRA:
        MUST(cuLaunchKernelEx(&c, f, NULL, extra));
        break;
    case BY_PTSZ:
        MUST(cuLaunchKernel_ptsz(f, c.gridDimX, 1, 1, c.blockDimX, 1, 1, 0, NULL, args, NULL));
        break;
    case BY_COOPERATIVE:
        MUST(cuLaunchCooperativeKernel(f, c.gridDimX, 1, 1, c.blockDimX, 1, 1, 0, NULL, args));
        break;
    }
    MUST(cuCtxSynchronize());
    MUST(cuMemcpyDtoH(out, d, sizeof(out)));
    for (int i = 0; i < N; i++)
        bad += out[i] != (int)((double)(i * step) * scale);
    MUST(cuMemFree(d));
    return bad ? -1 : out[N - 1];
}

/* Every attribute the same through the function and the kernel interfaces, and again. */
static const char *attributes_agree(CUfunction f, CUkernel k, CUdevice dev)
{
    for (int a = 0; a < CU_FUNC_ATTRIBUTE_MAX; a++) {
        int v1 = -1, v2 = -2, v3 = -3;
        MUST(cuFuncGetAttribute(&v1, (CUfunction_attribute)a, f));
        MUST(cuKernelGetAttribute(&v2, (CUfunction_attribute)a, k, dev));
        MUST(cuKernelGetAttribute(&v3, (CUfunction_attribute)a, k, dev));
        if (v1 != v2 || v2 != v3)
            return "no";
    }
    return "yes";
}

static size_t no_smem(int block_size)
{
    (void)block_size;
    return 0;
}

static void occupancy(CUfunction f, CUdevice dev)
{
    int sms = 0, blocks = 0, min_grid = 0, block = 0, min_grid2 = 0, block2 = 0, at_best = 0, clusters = 0;
    size_t smem = 0;
    CUlaunchConfig c = { 8, 1, 1, 128, 1, 1, 0, NULL, NULL, 0 };

    MUST(cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev));
    MUST(cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, f, 128, 0));
    printf("  active blocks of 128 threads > 0: %s\n", blocks > 0 ? "yes" : "no");
    MUST(cuOccupancyMaxPotentialBlockSize(&min_grid, &block, f, NULL, 0, 0));
    MUST(cuOccupancyMaxActiveBlocksPerMultiprocessor(&at_best, f, block, 0));
    printf("  potential block size: a multiple of 32 %s, min grid = its blocks x SMs %s\n",
           block > 0 && block % 32 == 0 ? "yes" : "no", min_grid == at_best * sms ? "yes" : "no");
    MUST(cuOccupancyMaxPotentialBlockSizeWithFlags(&min_grid2, &block2, f, no_smem, 0, 0, CU_OCCUPANCY_DEFAULT));
    printf("  with a function for shared memory: the same %s\n", min_grid2 == min_grid && block2 == block ? "yes" : "no");
    MUST(cuOccupancyMaxPotentialBlockSize(&min_grid2, &block2, f, NULL, 0, 64));
    printf("  limited to 64 threads: block %d\n", block2);
    MUST(cuOccupancyAvailableDynamicSMemPerBlock(&smem, f, 1, 128));
    printf("  dynamic shared memory for one block > 0: %s\n", smem > 0 ? "yes" : "no");
    MUST(cuOccupancyMaxPotentialClusterSize(&clusters, f, &c));
    printf("  potential cluster size > 0: %s\n", clusters > 0 ? "yes" : "no");
    printf("  NULL block size: %s\n", name(cuOccupancyMaxPotentialBlockSize(&min_grid, NULL, f, NULL, 0, 0)));
}

static void module_part(const void *image, CUdevice dev)
{
    CUmodule mod, owner = NULL;
    CUfunction axpb_f, fill_f, none;
    CUkernel none_k;
    CUdeviceptr bias = 0;
    size_t bytes = 0;
    int v = 0;
    CUfunctionLoadingState state = CU_FUNCTION_LOADING_STATE_UNLOADED;
    CUresult r;

    printf("module from memory:\n");
    MUST(cuModuleLoadData(&mod, image));
    list_functions(mod);
    MUST(cuModuleGetFunction(&axpb_f, mod, "lib_axpb"));
    MUST(cuModuleGetFunction(&fill_f, mod, "lib_fill"));
    printf("  unknown function: %s\n", name(cuModuleGetFunction(&none, mod, "no_such_kernel")));
    printf("  NULL name: %s\n", name(cuModuleGetFunction(&none, mod, NULL)));
    params("lib_fill", fill_f, 4);
    params("lib_axpb", axpb_f, 4);
    size_t off = 0;
    printf("  offset only: %s\n", name(cuFuncGetParamInfo(fill_f, 3, &off, NULL)));
    MUST(cuModuleGetGlobal(&bias, &bytes, mod, "lib_bias"));
    printf("  global lib_bias: %zu bytes\n", bytes);
    printf("  unknown global: %s\n", name(cuModuleGetGlobal(&bias, &bytes, mod, "no_such_global")));
    printf("  lib_axpb by cuLaunchKernel: %s\n", axpb(axpb_f, bias, 3));
    printf("  lib_fill by extra: %d\n", fill(fill_f, BY_EXTRA));
    printf("  lib_fill by cuLaunchKernelEx: %d\n", fill(fill_f, BY_EX));
    printf("  lib_fill by cuLaunchKernelEx with extra: %d\n", fill(fill_f, BY_EX_EXTRA));
    printf("  lib_fill by cuLaunchKernel_ptsz: %d\n", fill(fill_f, BY_PTSZ));
    printf("  lib_fill by cuLaunchCooperativeKernel: %d\n", fill(fill_f, BY_COOPERATIVE));
    {
        int n = 1;
        CUdeviceptr d = 0;
        char step = 1;
        double scale = 1.0;
        void *args[] = { &d, &n, &step, &scale };
        size_t small = 4;
        char buf[64] = { 0 };
        void *extra[] = { CU_LAUNCH_PARAM_BUFFER_POINTER, buf, CU_LAUNCH_PARAM_BUFFER_SIZE, &small,
                          CU_LAUNCH_PARAM_END };
        printf("  kernelParams and extra: %s\n", name(cuLaunchKernel(fill_f, 1, 1, 1, 1, 1, 1, 0, NULL, args, extra)));
        printf("  empty grid: %s\n", name(cuLaunchKernel(fill_f, 0, 1, 1, 1, 1, 1, 0, NULL, args, NULL)));
        printf("  NULL function: %s\n", name(cuLaunchKernel(NULL, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL)));
        printf("  NULL config: %s\n", name(cuLaunchKernelEx(NULL, fill_f, args, NULL)));
        (void)small;
    }
    printf("  attributes agree: %s\n", attributes_agree(fill_f, (CUkernel)fill_f, dev));
    MUST(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, fill_f));
    printf("  max threads per block > 0: %s\n", v > 0 ? "yes" : "no");
    printf("  attribute past the last: %s\n", name(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX, fill_f)));
    printf("  set read-only NUM_REGS: %s\n", name(cuFuncSetAttribute(fill_f, CU_FUNC_ATTRIBUTE_NUM_REGS, 1)));
    MUST(cuFuncSetAttribute(fill_f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 8192));
    MUST(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, fill_f));
    printf("  max dynamic shared after setting 8192: %d\n", v);
    printf("  cache config: %s\n", name(cuFuncSetCacheConfig(fill_f, CU_FUNC_CACHE_PREFER_SHARED)));
    MUST(cuFuncGetModule(&owner, fill_f));
    printf("  module of lib_fill: %s\n", owner == mod ? "the module" : "another");
    MUST(cuFuncIsLoaded(&state, fill_f));
    printf("  loaded: %s, cuFuncLoad: %s\n", state == CU_FUNCTION_LOADING_STATE_LOADED ? "yes" : "no",
           name(cuFuncLoad(fill_f)));
    occupancy(axpb_f, dev);
    printf("  not a kernel: %s\n", name(cuKernelGetParamInfo((CUkernel)&v, 0, &off, NULL)));
    r = cuLibraryGetKernel(&none_k, (CUlibrary)&v, "lib_fill");
    printf("  not a library: %s\n", name(r));
    MUST(cuModuleUnload(mod));
    printf("  unloaded\n");
}

static void library_part(const void *image, size_t len, CUdevice dev)
{
    CUlibrary lib, owner = NULL;
    CUkernel axpb_k, fill_k, none;
    CUfunction axpb_f;
    CUmodule mod;
    CUdeviceptr bias = 0;
    size_t bytes = 0, off = 0, size = 0;
    const char *kname = NULL;
    unsigned count = 0;
    int v = 0;

    printf("library from memory:\n");
    MUST(cuLibraryLoadData(&lib, image, NULL, NULL, 0, NULL, NULL, 0));
    MUST(cuLibraryGetKernelCount(&count, lib));
    printf("  %u kernels\n", count);
    MUST(cuLibraryGetKernel(&axpb_k, lib, "lib_axpb"));
    MUST(cuLibraryGetKernel(&fill_k, lib, "lib_fill"));
    printf("  unknown kernel: %s\n", name(cuLibraryGetKernel(&none, lib, "no_such_kernel")));
    {   /* Library options as cuBLASLt passes them to its loads (H100: refusing them broke its sgemm). */
        CUlibrary kept = NULL;
        CUresult r;
        CUlibraryOption opt = CU_LIBRARY_BINARY_IS_PRESERVED;
        void *val = (void *)(uintptr_t)1;
        r = cuLibraryLoadData(&kept, image, NULL, NULL, 0, &opt, &val, 1);
        printf("  with the binary preserved: %s, lib_axpb found %s\n", name(r),
               r == CUDA_SUCCESS && cuLibraryGetKernel(&none, kept, "lib_axpb") == CUDA_SUCCESS ? "yes" : "no");
        if (kept)
            cuLibraryUnload(kept);
    }
    {   /* A section where another block follows the one pointed at, as in cuBLAS's: the driver
         * reads the one block (api_library.c load_code); shipping the whole section made the
         * sim, which takes one block, refuse the load (and took cuBLAS's loads to 140 MB). */
        size_t at = (len + 7) & ~(size_t)7;
        char *section = calloc(1, 2 * at + 64);
        CUlibrary first = NULL;
        CUresult r;
        CUlibraryOption opt = CU_LIBRARY_BINARY_IS_PRESERVED;
        void *val = (void *)(uintptr_t)1;
        if (!section)
            exit(2);
        memcpy(section, image, len);
        memcpy(section + at, image, len);
        r = cuLibraryLoadData(&first, section, NULL, NULL, 0, &opt, &val, 1);
        printf("  the first block of a section: %s, lib_axpb found %s\n", name(r),
               r == CUDA_SUCCESS && cuLibraryGetKernel(&none, first, "lib_axpb") == CUDA_SUCCESS ? "yes" : "no");
        if (first)
            cuLibraryUnload(first);
        free(section);
    }
    MUST(cuKernelGetName(&kname, axpb_k));
    printf("  name: %s\n", kname);
    MUST(cuKernelGetParamInfo(axpb_k, 2, &off, &size));
    printf("  lib_axpb parameter 2: %zu@%zu\n", size, off);
    MUST(cuKernelGetLibrary(&owner, fill_k));
    printf("  library of lib_fill: %s\n", owner == lib ? "the library" : "another");
    MUST(cuKernelGetFunction(&axpb_f, axpb_k));
    MUST(cuLibraryGetGlobal(&bias, &bytes, lib, "lib_bias"));
    printf("  global lib_bias: %zu bytes\n", bytes);
    printf("  lib_axpb by its function: %s\n", axpb(axpb_f, bias, -4));
    printf("  lib_axpb by the kernel handle: %s\n", axpb((CUfunction)axpb_k, bias, 6));
    printf("  lib_fill by the kernel handle and extra: %d\n", fill((CUfunction)fill_k, BY_EXTRA));
    MUST(cuKernelSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 4096, fill_k, dev));
    MUST(cuKernelGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, fill_k, dev));
    printf("  max dynamic shared after setting 4096: %d\n", v);
    printf("  kernel cache config: %s\n", name(cuKernelSetCacheConfig(fill_k, CU_FUNC_CACHE_PREFER_L1, dev)));
    printf("  attribute on device 99: %s\n",
           name(cuKernelGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, fill_k, 99)));
    MUST(cuLibraryGetModule(&mod, lib));
    printf("  cuModuleUnload of its module: %s\n", name(cuModuleUnload(mod)));
    printf("  managed, no outputs: %s\n", name(cuLibraryGetManaged(NULL, NULL, lib, "lib_bias")));
    MUST(cuLibraryUnload(lib));
    printf("  unloaded\n");
    printf("  stale kernel, launch: %s\n", name(cuLaunchKernel((CUfunction)fill_k, 1, 1, 1, 1, 1, 1, 0, NULL,
                                                               (void *[]){ &bias, &v, &v, &v }, NULL)));
    printf("  stale kernel, attribute: %s\n",
           name(cuKernelSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 0, fill_k, dev)));
    printf("  stale library, count: %s\n", name(cuLibraryGetKernelCount(&count, lib)));
    printf("  stale library, unload: %s\n", name(cuLibraryUnload(lib)));
}

static void file_part(const char *path)
{
    CUlibrary lib;
    CUmodule mod;
    unsigned count = 0;
    char log[64] = "not cleared";
    void *opts_values[] = { log, (void *)(uintptr_t)sizeof(log) };
    CUjit_option opts[] = { CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES };
    CUjit_option bad_opt = CU_JIT_NUM_OPTIONS;
    void *bad_value = NULL;
    size_t len;
    void *image = read_file(path, &len);

    printf("from the file:\n");
    MUST(cuLibraryLoadFromFile(&lib, path, NULL, NULL, 0, NULL, NULL, 0));
    MUST(cuLibraryGetKernelCount(&count, lib));
    printf("  cuLibraryLoadFromFile: %u kernels\n", count);
    MUST(cuLibraryUnload(lib));
    MUST(cuModuleLoad(&mod, path));
    MUST(cuModuleGetFunctionCount(&count, mod));
    printf("  cuModuleLoad: %u functions\n", count);
    MUST(cuModuleUnload(mod));
    MUST(cuModuleLoadDataEx(&mod, image, 2, opts, opts_values));
    printf("  cuModuleLoadDataEx with an info log: log \"%s\"\n", log);
    MUST(cuModuleUnload(mod));
    MUST(cuModuleLoadFatBinary(&mod, image));
    MUST(cuModuleGetFunctionCount(&count, mod));
    printf("  cuModuleLoadFatBinary: %u functions\n", count);
    MUST(cuModuleUnload(mod));
    printf("  unknown JIT option: %s\n", name(cuModuleLoadDataEx(&mod, image, 1, &bad_opt, &bad_value)));
    printf("  JIT option count without options: %s\n", name(cuModuleLoadDataEx(&mod, image, 1, NULL, NULL)));
    printf("  missing file: %s\n", name(cuModuleLoad(&mod, "/nonexistent/library.fatbin")));
    printf("  missing library file: %s\n",
           name(cuLibraryLoadFromFile(&lib, "/nonexistent/library.fatbin", NULL, NULL, 0, NULL, NULL, 0)));
    printf("  NULL image: %s\n", name(cuModuleLoadData(&mod, NULL)));
    printf("  not an image: %s\n", name(cuLibraryLoadData(&lib, "not an image", NULL, NULL, 0, NULL, NULL, 0)));
    free(image);
}

int main(int argc, char **argv)
{
    CUmodule mod;
    CUdevice dev;
    CUcontext ctx;
    size_t len;
    void *image;

    if (argc < 2) {
        fprintf(stderr, "usage: %s library-load.fatbin\n", argv[0]);
        return 2;
    }
    image = read_file(argv[1], &len);
    printf("before cuInit: %s\n", name(cuModuleLoadData(&mod, image)));
    MUST(cuInit(0));
    printf("without a context: %s\n", name(cuModuleLoadData(&mod, image)));
    MUST(cuDeviceGet(&dev, 0));
    MUST(cuDevicePrimaryCtxRetain(&ctx, dev));
    MUST(cuCtxSetCurrent(ctx));
    module_part(image, dev);
    library_part(image, len, dev);
    file_part(argv[1]);
    MUST(cuDevicePrimaryCtxRelease(dev));
    free(image);
    printf("done\n");
    return 0;
}
