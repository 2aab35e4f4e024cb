/* Modules, libraries, kernels and launches (issue 15).  A module is a library of the runtime
 * layer (api_library.c): loading ships the image to the server, which answers every kernel's
 * handle and parameter layout, so CUmodule and CUlibrary are one cudaLibrary_t, and CUkernel
 * and CUfunction one tdm_function record.  What the driver distinguishes between the two is
 * kept here: which handles were loaded as libraries (cuModuleUnload refuses those), and the
 * kernels' attributes, which PyTorch asks for thousands of times and which are fixed once a
 * kernel is loaded, so they are asked of the server once per kernel. */
#include <assert.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver.h"
#include "grow.h"
#include "log.h"

/* ---- kernel and function handles ---- */

tdm_function *tdm_cu_function(const void *p, CUresult *err)
{
    cudaError_t e = cudaErrorInvalidResourceHandle;
    tdm_function *f = p ? tdm_function_for_func(p, &e) : NULL;

    /* The runtime layer's lookup also takes a host stub for its kernel; a driver handle is
     * the record itself, never a stub. */
    if (f && (const void *)f != p) {
        f = NULL;
        e = cudaErrorInvalidResourceHandle;
    }
    *err = f ? CUDA_SUCCESS : tdm_cu(e);
    return f;
}

/* A function handle of a call that needs the current context. */
static tdm_function *ctx_function(const void *p, CUresult *err)
{
    if (!tdm_cu_ctx_of(NULL, err))
        return NULL;
    return tdm_cu_function(p, err);
}

/* ---- which handles are libraries (cuLibraryLoad*) rather than modules (cuModuleLoad*) ---- */

typedef struct library_set {
    pthread_mutex_t lock;
    cudaLibrary_t *items;
    size_t n, cap;
} library_set;

/* Once per process, as the driver's own table of loaded libraries is. */
static library_set libraries = { .lock = PTHREAD_MUTEX_INITIALIZER };

static CUresult library_note(cudaLibrary_t l)
{
    CUresult r = CUDA_SUCCESS;

    pthread_mutex_lock(&libraries.lock);
    if (tdm_grow(&libraries.items, &libraries.cap, libraries.n + 1, sizeof(*libraries.items), 16) == 0)
        libraries.items[libraries.n++] = l;
    else
        r = CUDA_ERROR_OUT_OF_MEMORY;
    pthread_mutex_unlock(&libraries.lock);
    return r;
}

/* Whether l was loaded as a library (and not unloaded); forget: it is unloaded now. */
static bool library_is(cudaLibrary_t l, bool forget)
{
    bool yes = false;

    pthread_mutex_lock(&libraries.lock);
    for (size_t i = 0; i < libraries.n && !yes; i++)
        if (libraries.items[i] == l) {
            yes = true;
            if (forget)
                libraries.items[i] = libraries.items[--libraries.n];
        }
    pthread_mutex_unlock(&libraries.lock);
    return yes;
}

/* ---- loading ---- */

/* JIT options only steer how PTX is compiled, which the server's driver does with its
 * defaults; a program's log buffers come back empty (an empty string, sizes 0), as after a
 * load that logged nothing.  Options binding symbols to host addresses cannot be honoured by
 * a device in another process, and are refused as the driver refuses a bad option. */
static CUresult jit_options(unsigned n, CUjit_option *opts, void **values, const char *entry_point)
{
    uintptr_t info_size = 0, error_size = 0;
    char what[96];

    if (n && (!opts || !values))
        return tdm_cu_bad_argument(CUDA_ERROR_INVALID_VALUE, entry_point, "JIT options counted but not given");
    for (unsigned i = 0; i < n; i++) {
        if ((unsigned)opts[i] >= (unsigned)CU_JIT_NUM_OPTIONS || opts[i] == CU_JIT_GLOBAL_SYMBOL_NAMES ||
            opts[i] == CU_JIT_GLOBAL_SYMBOL_ADDRESSES || opts[i] == CU_JIT_GLOBAL_SYMBOL_COUNT) {
            snprintf(what, sizeof(what), "JIT option %u (of %u) is refused", (unsigned)opts[i], n);
            return tdm_cu_bad_argument(CUDA_ERROR_INVALID_VALUE, entry_point, what);
        }
        if (opts[i] == CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES)
            info_size = (uintptr_t)values[i];
        if (opts[i] == CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES)
            error_size = (uintptr_t)values[i];
    }
    for (unsigned i = 0; i < n; i++) {
        if (opts[i] == CU_JIT_INFO_LOG_BUFFER && values[i] && info_size)
            *(char *)values[i] = '\0';
        else if (opts[i] == CU_JIT_ERROR_LOG_BUFFER && values[i] && error_size)
            *(char *)values[i] = '\0';
        else if (opts[i] == CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES || opts[i] == CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES)
            values[i] = NULL;
        else if (opts[i] == CU_JIT_WALL_TIME)
            memset(&values[i], 0, sizeof(float));   /* a float in the pointer's place (cuda.h) */
    }
    return CUDA_SUCCESS;
}

/* Library options change nothing a remote load does: the image is copied to the server at
 * the load whether or not the program keeps it (CU_LIBRARY_BINARY_IS_PRESERVED), and the host
 * table of CU_LIBRARY_HOST_UNIVERSAL_FUNCTION_AND_DATA_TABLE serves host-side lookups the
 * guest does through the kernel names.  They are taken as given, as NVIDIA's driver takes
 * what cuBLASLt passes (the runtime layer's stricter check refused its loads on the H100). */
static void library_options(unsigned n, const CUlibraryOption *opts, void *const *values)
{
    if (!tdm_cu_log_errors())
        return;
    for (unsigned i = 0; i < n && opts; i++)
        tdm_log("a library load's option %u (value %p) is taken and changes nothing through Tandem", (unsigned)opts[i],
                values ? values[i] : NULL);
}

static CUresult library_load(CUlibrary *library, const void *code, const char *path, CUjit_option *jitOptions,
                             void **jitOptionsValues, unsigned numJitOptions, CUlibraryOption *libraryOptions,
                             void **libraryOptionValues, unsigned numLibraryOptions)
{
    cudaLibrary_t l = NULL;
    CUresult r = tdm_cu_ready();

    if (r)
        return r;
    if (!library || (!code && !path))
        return tdm_cu_bad_argument(CUDA_ERROR_INVALID_VALUE, "a library load", "no handle or no image");
    if ((r = jit_options(numJitOptions, jitOptions, jitOptionsValues, "a library load")))
        return r;
    library_options(numLibraryOptions, libraryOptions, libraryOptionValues);
    if (path)
        r = tdm_cu(cudaLibraryLoadFromFile(&l, path, NULL, NULL, 0, NULL, NULL, 0));
    else
        r = tdm_cu(cudaLibraryLoadData(&l, code, NULL, NULL, 0, NULL, NULL, 0));
    if (!r && (r = library_note(l)))
        (void)cudaLibraryUnload(l);
    if (!r)
        *library = (CUlibrary)l;
    return r;
}

CUresult cuLibraryLoadData(CUlibrary *library, const void *code, CUjit_option *jitOptions, void **jitOptionsValues,
                           unsigned int numJitOptions, CUlibraryOption *libraryOptions, void **libraryOptionValues,
                           unsigned int numLibraryOptions)
{
    return library_load(library, code, NULL, jitOptions, jitOptionsValues, numJitOptions, libraryOptions,
                        libraryOptionValues, numLibraryOptions);
}

CUresult cuLibraryLoadFromFile(CUlibrary *library, const char *fileName, CUjit_option *jitOptions,
                               void **jitOptionsValues, unsigned int numJitOptions, CUlibraryOption *libraryOptions,
                               void **libraryOptionValues, unsigned int numLibraryOptions)
{
    return library_load(library, NULL, fileName, jitOptions, jitOptionsValues, numJitOptions, libraryOptions,
                        libraryOptionValues, numLibraryOptions);
}

/* A handle loaded with cuModuleLoad* is not a library of the driver's. */
CUresult cuLibraryUnload(CUlibrary library)
{
    CUresult r = tdm_cu_ready();

    if (r)
        return r;
    if (!library_is((cudaLibrary_t)library, false))
        return CUDA_ERROR_INVALID_HANDLE;
    r = tdm_cu(cudaLibraryUnload((cudaLibrary_t)library));
    if (!r)
        (void)library_is((cudaLibrary_t)library, true);
    return r;
}

static CUresult module_load(CUmodule *module, const void *image, const char *path, unsigned n, CUjit_option *opts,
                            void **values)
{
    cudaLibrary_t l = NULL;
    CUresult r;

    if (!tdm_cu_ctx_of(NULL, &r))
        return r;
    if (!module || (!image && !path))
        return CUDA_ERROR_INVALID_VALUE;
    if ((r = jit_options(n, opts, values, "a module load")))
        return r;
    if (path)
        r = tdm_cu(cudaLibraryLoadFromFile(&l, path, NULL, NULL, 0, NULL, NULL, 0));
    else
        r = tdm_cu(cudaLibraryLoadData(&l, image, NULL, NULL, 0, NULL, NULL, 0));
    if (!r)
        *module = (CUmodule)l;
    return r;
}

CUresult cuModuleLoad(CUmodule *module, const char *fname)
{
    return module_load(module, NULL, fname, 0, NULL, NULL);
}

CUresult cuModuleLoadData(CUmodule *module, const void *image)
{
    return module_load(module, image, NULL, 0, NULL, NULL);
}

CUresult cuModuleLoadDataEx(CUmodule *module, const void *image, unsigned int numOptions, CUjit_option *options,
                            void **optionValues)
{
    return module_load(module, image, NULL, numOptions, options, optionValues);
}

CUresult cuModuleLoadFatBinary(CUmodule *module, const void *fatCubin)
{
    return module_load(module, fatCubin, NULL, 0, NULL, NULL);
}

/* cuda.h: a module obtained from a library (cuLibraryGetModule) is CUDA_ERROR_NOT_PERMITTED. */
CUresult cuModuleUnload(CUmodule hmod)
{
    CUresult r;

    if (!tdm_cu_ctx_of(NULL, &r))
        return r;
    if (!hmod)
        return CUDA_ERROR_INVALID_VALUE;
    if (library_is((cudaLibrary_t)hmod, false))
        return CUDA_ERROR_NOT_PERMITTED;
    return tdm_cu(cudaLibraryUnload((cudaLibrary_t)hmod));
}

/* ---- what a library or module holds ---- */

CUresult cuLibraryGetKernel(CUkernel *pKernel, CUlibrary library, const char *name)
{
    cudaKernel_t k = NULL;
    CUresult r = tdm_cu_ready();

    if (r)
        return r;
    if (!pKernel || !name)
        return CUDA_ERROR_INVALID_VALUE;
    r = tdm_cu(cudaLibraryGetKernel(&k, (cudaLibrary_t)library, name));
    if (!r)
        *pKernel = (CUkernel)k;
    return r;
}

CUresult cuLibraryGetKernelCount(unsigned int *count, CUlibrary lib)
{
    CUresult r = tdm_cu_ready();

    if (r)
        return r;
    return tdm_cu(cudaLibraryGetKernelCount(count, (cudaLibrary_t)lib));
}

CUresult cuLibraryEnumerateKernels(CUkernel *kernels, unsigned int numKernels, CUlibrary lib)
{
    CUresult r = tdm_cu_ready();

    if (r)
        return r;
    return tdm_cu(cudaLibraryEnumerateKernels((cudaKernel_t *)kernels, numKernels, (cudaLibrary_t)lib));
}

/* The library is its own module in the one context of a session. */
CUresult cuLibraryGetModule(CUmodule *pMod, CUlibrary library)
{
    unsigned n;
    CUresult r;

    if (!tdm_cu_ctx_of(NULL, &r))
        return r;
    if (!pMod)
        return CUDA_ERROR_INVALID_VALUE;
    if ((r = tdm_cu(cudaLibraryGetKernelCount(&n, (cudaLibrary_t)library))))
        return r;
    *pMod = (CUmodule)library;
    return CUDA_SUCCESS;
}

CUresult cuLibraryGetGlobal(CUdeviceptr *dptr, size_t *bytes, CUlibrary library, const char *name)
{
    void *p = NULL;
    size_t size = 0;
    CUresult r;

    if (!tdm_cu_ctx_of(NULL, &r))
        return r;
    if ((!dptr && !bytes) || !name)
        return CUDA_ERROR_INVALID_VALUE;
    r = tdm_cu(cudaLibraryGetGlobal(&p, &size, (cudaLibrary_t)library, name));
    if (r)
        return r;
    if (dptr)
        *dptr = (CUdeviceptr)(uintptr_t)p;
    if (bytes)
        *bytes = size;
    return CUDA_SUCCESS;
}

/* The runtime layer carries no managed variables of loaded libraries: a module's
 * __managed__ variable needs its host copy kept coherent (coherent.c), which only the
 * registration path sets up.  The arguments are judged first, as the driver does. */
CUresult cuLibraryGetManaged(CUdeviceptr *dptr, size_t *bytes, CUlibrary library, const char *name)
{
    unsigned n;
    CUresult r = tdm_cu_ready();

    if (r)
        return r;
    if ((!dptr && !bytes) || !name)
        return CUDA_ERROR_INVALID_VALUE;
    if ((r = tdm_cu(cudaLibraryGetKernelCount(&n, (cudaLibrary_t)library))))
        return r;
    return tdm_cu_refuse("cuLibraryGetManaged",
                         "managed variables of a loaded library are not carried (only registered ones are)");
}

CUresult cuLibraryGetUnifiedFunction(void **fptr, CUlibrary library, const char *symbol)
{
    CUresult r = tdm_cu_ready();

    if (r)
        return r;
    return tdm_cu(cudaLibraryGetUnifiedFunction(fptr, (cudaLibrary_t)library, symbol));
}

CUresult cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name)
{
    cudaKernel_t k = NULL;
    CUresult r;

    if (!tdm_cu_ctx_of(NULL, &r))
        return r;
    if (!hfunc || !name)
        return CUDA_ERROR_INVALID_VALUE;
    r = tdm_cu(cudaLibraryGetKernel(&k, (cudaLibrary_t)hmod, name));
    if (!r)
        *hfunc = (CUfunction)k;
    return r;
}

CUresult cuModuleGetFunctionCount(unsigned int *count, CUmodule mod)
{
    CUresult r;

    if (!tdm_cu_ctx_of(NULL, &r))
        return r;
    return tdm_cu(cudaLibraryGetKernelCount(count, (cudaLibrary_t)mod));
}

CUresult cuModuleEnumerateFunctions(CUfunction *functions, unsigned int numFunctions, CUmodule mod)
{
    CUresult r;

    if (!tdm_cu_ctx_of(NULL, &r))
        return r;
    return tdm_cu(cudaLibraryEnumerateKernels((cudaKernel_t *)functions, numFunctions, (cudaLibrary_t)mod));
}

CUresult cuModuleGetGlobal_v2(CUdeviceptr *dptr, size_t *bytes, CUmodule hmod, const char *name)
{
    return cuLibraryGetGlobal(dptr, bytes, (CUlibrary)hmod, name);
}

/* The 32-bit legacy form: an address or size it cannot hold is refused rather than cut.
 * (What NVIDIA's legacy entry does there is not documented; the GPU run will say.) */
CUresult cuModuleGetGlobal(CUdeviceptr_v1 *dptr, unsigned int *bytes, CUmodule hmod, const char *name)
{
    CUdeviceptr p = 0;
    size_t size = 0;
    CUresult r = cuModuleGetGlobal_v2(dptr ? &p : NULL, bytes ? &size : NULL, hmod, name);

    if (r)
        return r;
    if (p > UINT32_MAX || size > UINT32_MAX)
        return CUDA_ERROR_INVALID_VALUE;
    if (dptr)
        *dptr = (CUdeviceptr_v1)p;
    if (bytes)
        *bytes = (unsigned)size;
    return CUDA_SUCCESS;
}

/* ---- the kernels' attributes, cached ---- */

/* One kernel's attributes as the server answered them, by CUfunction_attribute. */
typedef struct attr_entry {
    const tdm_function *f;   /* NULL: an empty slot */
    uint64_t handle;         /* the server kernel they describe: a reload or reused record differs */
    int values[CU_FUNC_ATTRIBUTE_MAX];
} attr_entry;

typedef struct attr_cache {
    pthread_mutex_t lock;
    attr_entry *slots;       /* open addressing by the record's address; cap a power of two */
    size_t cap, used;
} attr_cache;

/* Once per process, as the kernel records it describes are. */
static attr_cache attrs = { .lock = PTHREAD_MUTEX_INITIALIZER };

static size_t attr_slot_of(const attr_entry *slots, size_t cap, const tdm_function *f)
{
    size_t i = (size_t)(((uintptr_t)f >> 4) * 0x9e3779b97f4a7c15ull) & (cap - 1);

    while (slots[i].f && slots[i].f != f)
        i = (i + 1) & (cap - 1);
    return i;
}

/* Room for one more entry (the table at most half full).  Caller holds the lock. */
static bool attr_room_locked(void)
{
    size_t cap = attrs.cap ? attrs.cap * 2 : 64;
    attr_entry *slots;

    if (attrs.cap && (attrs.used + 1) * 2 <= attrs.cap)
        return true;
    if (!(slots = calloc(cap, sizeof(*slots))))
        return false;
    for (size_t i = 0; i < attrs.cap; i++)
        if (attrs.slots[i].f)
            slots[attr_slot_of(slots, cap, attrs.slots[i].f)] = attrs.slots[i];
    free(attrs.slots);
    attrs.slots = slots;
    attrs.cap = cap;
    return true;
}

/* The cached value of attribute a of f; false when there is none yet. */
static bool attr_cached(const tdm_function *f, int a, int *value)
{
    bool hit = false;

    pthread_mutex_lock(&attrs.lock);
    if (attrs.cap) {
        const attr_entry *e = &attrs.slots[attr_slot_of(attrs.slots, attrs.cap, f)];
        hit = e->f == f && e->handle == f->handle;
        if (hit)
            *value = e->values[a];
    }
    pthread_mutex_unlock(&attrs.lock);
    return hit;
}

/* The runtime layer's answer by CUfunction_attribute. */
static void attr_values(const struct cudaFuncAttributes *x, int v[CU_FUNC_ATTRIBUTE_MAX])
{
    const int from[CU_FUNC_ATTRIBUTE_MAX] = {
        [CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK] = x->maxThreadsPerBlock,
        [CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES] = (int)x->sharedSizeBytes,
        [CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES] = (int)x->constSizeBytes,
        [CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES] = (int)x->localSizeBytes,
        [CU_FUNC_ATTRIBUTE_NUM_REGS] = x->numRegs,
        [CU_FUNC_ATTRIBUTE_PTX_VERSION] = x->ptxVersion,
        [CU_FUNC_ATTRIBUTE_BINARY_VERSION] = x->binaryVersion,
        [CU_FUNC_ATTRIBUTE_CACHE_MODE_CA] = x->cacheModeCA,
        [CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES] = x->maxDynamicSharedSizeBytes,
        [CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT] = x->preferredShmemCarveout,
        [CU_FUNC_ATTRIBUTE_CLUSTER_SIZE_MUST_BE_SET] = x->clusterDimMustBeSet,
        [CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH] = x->requiredClusterWidth,
        [CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT] = x->requiredClusterHeight,
        [CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH] = x->requiredClusterDepth,
        [CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED] = x->nonPortableClusterSizeAllowed,
        [CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE] = x->clusterSchedulingPolicyPreference,
    };

    memcpy(v, from, sizeof(from));
}

static void attr_store(const tdm_function *f, uint64_t handle, const int v[CU_FUNC_ATTRIBUTE_MAX])
{
    attr_entry *e;

    pthread_mutex_lock(&attrs.lock);
    /* No room: the answer is given uncached, and asked again next time. */
    if (attr_room_locked()) {
        e = &attrs.slots[attr_slot_of(attrs.slots, attrs.cap, f)];
        if (!e->f)
            attrs.used++;
        e->f = f;
        e->handle = handle;
        memcpy(e->values, v, sizeof(e->values));
    }
    pthread_mutex_unlock(&attrs.lock);
}

/* The program set attribute a of f to value: the cache answers it from now on (the driver
 * reads back what was set; a server that keeps no such setting, the sim, does not change
 * that).  *stored false when f has no entry. */
static bool attr_set_cached(const tdm_function *f, int a, int value)
{
    bool stored = false;

    pthread_mutex_lock(&attrs.lock);
    if (attrs.cap) {
        attr_entry *e = &attrs.slots[attr_slot_of(attrs.slots, attrs.cap, f)];
        stored = e->f == f && e->handle == f->handle;
        if (stored)
            e->values[a] = value;
    }
    pthread_mutex_unlock(&attrs.lock);
    return stored;
}

static CUresult attribute(int *pi, CUfunction_attribute attrib, tdm_function *f)
{
    struct cudaFuncAttributes x;
    int v[CU_FUNC_ATTRIBUTE_MAX];
    uint64_t handle = f->handle;   /* before the ask: a reload meanwhile leaves the entry stale */
    CUresult r;

    if (!pi || (int)attrib < 0 || attrib >= CU_FUNC_ATTRIBUTE_MAX)
        return CUDA_ERROR_INVALID_VALUE;
    if (attr_cached(f, (int)attrib, pi))
        return CUDA_SUCCESS;
    memset(&x, 0, sizeof(x));
    if ((r = tdm_cu(cudaFuncGetAttributes(&x, (const void *)f))))
        return r;
    attr_values(&x, v);
    attr_store(f, handle, v);
    *pi = v[attrib];
    return CUDA_SUCCESS;
}

/* The attributes cuda.h lets a program set; the rest are read-only (CUDA_ERROR_INVALID_VALUE). */
static bool settable(CUfunction_attribute a)
{
    switch (a) {
    case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:
    case CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT:
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH:
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT:
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH:
    case CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED:
    case CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE:
        return true;
    default:
        return false;
    }
}

static_assert(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES == (int)cudaFuncAttributeMaxDynamicSharedMemorySize &&
                  CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT ==
                      (int)cudaFuncAttributePreferredSharedMemoryCarveout &&
                  CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH == (int)cudaFuncAttributeRequiredClusterWidth &&
                  CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT == (int)cudaFuncAttributeRequiredClusterHeight &&
                  CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH == (int)cudaFuncAttributeRequiredClusterDepth &&
                  CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED ==
                      (int)cudaFuncAttributeNonPortableClusterSizeAllowed &&
                  CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE ==
                      (int)cudaFuncAttributeClusterSchedulingPolicyPreference,
              "settable attributes have the runtime's numbers");
static_assert(CU_FUNC_CACHE_PREFER_NONE == (int)cudaFuncCachePreferNone &&
                  CU_FUNC_CACHE_PREFER_SHARED == (int)cudaFuncCachePreferShared &&
                  CU_FUNC_CACHE_PREFER_L1 == (int)cudaFuncCachePreferL1 &&
                  CU_FUNC_CACHE_PREFER_EQUAL == (int)cudaFuncCachePreferEqual,
              "cache preferences have the runtime's numbers");

static CUresult set_attribute(tdm_function *f, CUfunction_attribute attrib, int value)
{
    CUresult r;
    int old;

    if ((int)attrib < 0 || attrib >= CU_FUNC_ATTRIBUTE_MAX || !settable(attrib))
        return CUDA_ERROR_INVALID_VALUE;
    r = tdm_cu(cudaFuncSetAttribute((const void *)f, (enum cudaFuncAttribute)attrib, value));
    /* The entry is made first if there is none (one ask), so the set value has a home. */
    if (!r && !attr_set_cached(f, (int)attrib, value) && !attribute(&old, attrib, f))
        (void)attr_set_cached(f, (int)attrib, value);
    return r;
}

static CUresult set_cache_config(tdm_function *f, CUfunc_cache config)
{
    if ((unsigned)config > (unsigned)CU_FUNC_CACHE_PREFER_EQUAL)
        return CUDA_ERROR_INVALID_VALUE;
    return tdm_cu(cudaFuncSetCacheConfig((const void *)f, (enum cudaFuncCache)config));
}

/* A kernel call for device dev: the device first, then the handle. */
static tdm_function *kernel_on(CUkernel kernel, CUdevice dev, CUresult *err)
{
    if ((*err = tdm_cu_device(dev)))
        return NULL;
    return tdm_cu_function(kernel, err);
}

CUresult cuKernelGetAttribute(int *pi, CUfunction_attribute attrib, CUkernel kernel, CUdevice dev)
{
    CUresult r;
    tdm_function *f = kernel_on(kernel, dev, &r);

    return f ? attribute(pi, attrib, f) : r;
}

CUresult cuKernelSetAttribute(CUfunction_attribute attrib, int val, CUkernel kernel, CUdevice dev)
{
    CUresult r;
    tdm_function *f = kernel_on(kernel, dev, &r);

    return f ? set_attribute(f, attrib, val) : r;
}

CUresult cuKernelSetCacheConfig(CUkernel kernel, CUfunc_cache config, CUdevice dev)
{
    CUresult r;
    tdm_function *f = kernel_on(kernel, dev, &r);

    return f ? set_cache_config(f, config) : r;
}

CUresult cuFuncGetAttribute(int *pi, CUfunction_attribute attrib, CUfunction hfunc)
{
    CUresult r;
    tdm_function *f = ctx_function(hfunc, &r);

    return f ? attribute(pi, attrib, f) : r;
}

CUresult cuFuncSetAttribute(CUfunction hfunc, CUfunction_attribute attrib, int value)
{
    CUresult r;
    tdm_function *f = ctx_function(hfunc, &r);

    return f ? set_attribute(f, attrib, value) : r;
}

CUresult cuFuncSetCacheConfig(CUfunction hfunc, CUfunc_cache config)
{
    CUresult r;
    tdm_function *f = ctx_function(hfunc, &r);

    return f ? set_cache_config(f, config) : r;
}

/* Shared memory banks are four bytes wide on every GPU since Volta: any valid setting is
 * accepted and changes nothing, as on the driver there. */
CUresult cuFuncSetSharedMemConfig(CUfunction hfunc, CUsharedconfig config)
{
    CUresult r;

    if (!ctx_function(hfunc, &r))
        return r;
    return (unsigned)config <= (unsigned)CU_SHARED_MEM_CONFIG_EIGHT_BYTE_BANK_SIZE ? CUDA_SUCCESS
                                                                                    : CUDA_ERROR_INVALID_VALUE;
}

/* ---- names, parameters, owners, loading state ---- */

/* cuda.h: a NULL name or handle is CUDA_ERROR_INVALID_VALUE; a handle that names nothing
 * is answered CUDA_ERROR_INVALID_HANDLE (cuda.h does not say; the GPU run will check). */
static CUresult name_of(const char **name, const void *h)
{
    CUresult r = tdm_cu_ready();
    tdm_function *f;

    if (r)
        return r;
    if (!name || !h)
        return CUDA_ERROR_INVALID_VALUE;
    if (!(f = tdm_cu_function(h, &r)))
        return r;
    *name = f->name;
    return CUDA_SUCCESS;
}

CUresult cuKernelGetName(const char **name, CUkernel hfunc)
{
    return name_of(name, hfunc);
}

CUresult cuFuncGetName(const char **name, CUfunction hfunc)
{
    return name_of(name, hfunc);
}

/* The layout the server reported at load; paramSize may be NULL (cuda.h). */
static CUresult param_info(const void *h, size_t index, size_t *offset, size_t *size)
{
    CUresult r = tdm_cu_ready();
    tdm_function *f;

    if (r)
        return r;
    if (!(f = tdm_cu_function(h, &r)))
        return r;
    if (!offset || index >= f->nparams)
        return CUDA_ERROR_INVALID_VALUE;
    *offset = f->param_offset[index];
    if (size)
        *size = f->param_size[index];
    return CUDA_SUCCESS;
}

CUresult cuKernelGetParamInfo(CUkernel kernel, size_t paramIndex, size_t *paramOffset, size_t *paramSize)
{
    return param_info(kernel, paramIndex, paramOffset, paramSize);
}

CUresult cuFuncGetParamInfo(CUfunction func, size_t paramIndex, size_t *paramOffset, size_t *paramSize)
{
    return param_info(func, paramIndex, paramOffset, paramSize);
}

/* The one context's function of a kernel is the kernel's own record. */
CUresult cuKernelGetFunction(CUfunction *pFunc, CUkernel kernel)
{
    CUresult r;
    tdm_function *f;

    if (!tdm_cu_ctx_of(NULL, &r))
        return r;
    if (!pFunc)
        return CUDA_ERROR_INVALID_VALUE;
    if (!(f = tdm_cu_function(kernel, &r)))
        return r;
    *pFunc = (CUfunction)f;
    return CUDA_SUCCESS;
}

/* The library (or module: the same) a kernel was loaded with; CUDA_ERROR_NOT_FOUND for a
 * kernel of no library. */
static CUresult owner(const tdm_function *f, void **out)
{
    cudaLibrary_t l = tdm_library_of_kernel(f);

    if (!l)
        return CUDA_ERROR_NOT_FOUND;
    *out = (void *)l;
    return CUDA_SUCCESS;
}

CUresult cuKernelGetLibrary(CUlibrary *pLib, CUkernel kernel)
{
    CUresult r = tdm_cu_ready();
    tdm_function *f;

    if (r)
        return r;
    if (!pLib)
        return CUDA_ERROR_INVALID_VALUE;
    if (!(f = tdm_cu_function(kernel, &r)))
        return r;
    return owner(f, (void **)pLib);
}

CUresult cuFuncGetModule(CUmodule *hmod, CUfunction hfunc)
{
    CUresult r;
    tdm_function *f;

    if (!tdm_cu_ctx_of(NULL, &r))
        return r;
    if (!hmod)
        return CUDA_ERROR_INVALID_VALUE;
    if (!(f = tdm_cu_function(hfunc, &r)))
        return r;
    return owner(f, (void **)hmod);
}

/* A library's kernels are loaded with it (api_library.c), never lazily. */
CUresult cuFuncIsLoaded(CUfunctionLoadingState *state, CUfunction function)
{
    CUresult r = tdm_cu_ready();

    if (r)
        return r;
    if (!state)
        return CUDA_ERROR_INVALID_VALUE;
    if (!tdm_cu_function(function, &r))
        return r;
    *state = CU_FUNCTION_LOADING_STATE_LOADED;
    return CUDA_SUCCESS;
}

CUresult cuFuncLoad(CUfunction function)
{
    CUresult r = tdm_cu_ready();

    if (r)
        return r;
    return tdm_cu_function(function, &r) ? CUDA_SUCCESS : r;
}

/* ---- launches ---- */

/* cuLaunchKernel's `extra`: the packed parameter buffer, as kernelParams pointing into it
 * (the buffer is laid out as the kernel's parameters are, which is what the launch packs
 * from them).  *args is the caller's to free.  A buffer smaller than the kernel's
 * parameters, or an entry cuda.h does not define, is CUDA_ERROR_INVALID_VALUE. */
static CUresult extra_params(const tdm_function *f, void **extra, void ***args)
{
    char *buf = NULL;
    const size_t *size = NULL;
    void **a;

    for (size_t i = 0; extra[i] != CU_LAUNCH_PARAM_END; i += 2) {
        if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER)
            buf = extra[i + 1];
        else if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE)
            size = extra[i + 1];
        else
            return CUDA_ERROR_INVALID_VALUE;
    }
    if (f->nparams && (!buf || !size || *size < f->params_len))
        return CUDA_ERROR_INVALID_VALUE;
    if (!(a = calloc(f->nparams + 1, sizeof(*a))))
        return CUDA_ERROR_OUT_OF_MEMORY;
    for (uint32_t i = 0; i < f->nparams; i++)
        a[i] = buf + f->param_offset[i];
    *args = a;
    return CUDA_SUCCESS;
}

/* What a launch call gets: checked in the order the driver checks (context, handle,
 * arguments); the kernel's parameters as kernelParams in *args (*owned: built here). */
static tdm_function *launch_prepare(CUfunction fn, void **params, void **extra, void ***args, bool *owned,
                                    CUresult *r)
{
    tdm_function *f = ctx_function(fn, r);

    *owned = false;
    *args = params;
    if (!f)
        return NULL;
    if (params && extra) {
        *r = CUDA_ERROR_INVALID_VALUE;
        return NULL;
    }
    if (extra) {
        if ((*r = extra_params(f, extra, args)))
            return NULL;
        *owned = true;
    }
    return f;
}

static CUresult launch(uint32_t proc, CUfunction fn, dim3 grid, dim3 block, unsigned shmem, CUstream stream,
                       void **params, void **extra)
{
    void **args;
    bool owned;
    CUresult r;
    tdm_function *f = launch_prepare(fn, params, extra, &args, &owned, &r);

    if (!f)
        return r;
    /* An empty grid or block is the driver's CUDA_ERROR_INVALID_VALUE. */
    if (!grid.x || !grid.y || !grid.z || !block.x || !block.y || !block.z)
        r = CUDA_ERROR_INVALID_VALUE;
    else
        r = tdm_cu(tdm_launch_as(proc, f, grid, block, args, shmem, (cudaStream_t)stream));
    if (owned)
        free(args);
    return r;
}

CUresult cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,
                        unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ,
                        unsigned int sharedMemBytes, CUstream hStream, void **kernelParams, void **extra)
{
    return launch(TDM_LAUNCH, f, (dim3){ gridDimX, gridDimY, gridDimZ }, (dim3){ blockDimX, blockDimY, blockDimZ },
                  sharedMemBytes, hStream, kernelParams, extra);
}

CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,
                             unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ,
                             unsigned int sharedMemBytes, CUstream hStream, void **kernelParams, void **extra);
CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,
                             unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ,
                             unsigned int sharedMemBytes, CUstream hStream, void **kernelParams, void **extra)
{
    return cuLaunchKernel(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes,
                          hStream ? hStream : CU_STREAM_PER_THREAD, kernelParams, extra);
}

CUresult cuLaunchCooperativeKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,
                                   unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ,
                                   unsigned int sharedMemBytes, CUstream hStream, void **kernelParams)
{
    return launch(TDM_LAUNCH_COOPERATIVE, f, (dim3){ gridDimX, gridDimY, gridDimZ },
                  (dim3){ blockDimX, blockDimY, blockDimZ }, sharedMemBytes, hStream, kernelParams, NULL);
}

CUresult cuLaunchCooperativeKernel_ptsz(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                                        unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
                                        unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,
                                        void **kernelParams);
CUresult cuLaunchCooperativeKernel_ptsz(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                                        unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
                                        unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,
                                        void **kernelParams)
{
    return cuLaunchCooperativeKernel(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes,
                                     hStream ? hStream : CU_STREAM_PER_THREAD, kernelParams);
}

/* A CUlaunchAttribute is a cudaLaunchAttribute: the same ids, the same layout. */
static_assert(sizeof(CUlaunchAttribute) == sizeof(cudaLaunchAttribute) &&
                  offsetof(CUlaunchAttribute, value) == offsetof(cudaLaunchAttribute, val) &&
                  sizeof(CUlaunchAttributeValue) == sizeof(cudaLaunchAttributeValue),
              "launch attributes share their layout");
static_assert(CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW == (int)cudaLaunchAttributeAccessPolicyWindow &&
                  CU_LAUNCH_ATTRIBUTE_COOPERATIVE == (int)cudaLaunchAttributeCooperative &&
                  CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY == (int)cudaLaunchAttributeSynchronizationPolicy &&
                  CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION == (int)cudaLaunchAttributeClusterDimension &&
                  CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE ==
                      (int)cudaLaunchAttributeClusterSchedulingPolicyPreference &&
                  CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION ==
                      (int)cudaLaunchAttributeProgrammaticStreamSerialization &&
                  CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT == (int)cudaLaunchAttributeProgrammaticEvent &&
                  CU_LAUNCH_ATTRIBUTE_PRIORITY == (int)cudaLaunchAttributePriority &&
                  CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP == (int)cudaLaunchAttributeMemSyncDomainMap &&
                  CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN == (int)cudaLaunchAttributeMemSyncDomain &&
                  CU_LAUNCH_ATTRIBUTE_PREFERRED_CLUSTER_DIMENSION ==
                      (int)cudaLaunchAttributePreferredClusterDimension &&
                  CU_LAUNCH_ATTRIBUTE_LAUNCH_COMPLETION_EVENT == (int)cudaLaunchAttributeLaunchCompletionEvent &&
                  CU_LAUNCH_ATTRIBUTE_DEVICE_UPDATABLE_KERNEL_NODE ==
                      (int)cudaLaunchAttributeDeviceUpdatableKernelNode &&
                  CU_LAUNCH_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT ==
                      (int)cudaLaunchAttributePreferredSharedMemoryCarveout &&
                  CU_LAUNCH_ATTRIBUTE_NVLINK_UTIL_CENTRIC_SCHEDULING ==
                      (int)cudaLaunchAttributeNvlinkUtilCentricScheduling,
              "launch attribute ids have the runtime's numbers");

/* The runtime layer's configuration for the driver's; NULL attrs with a count is refused. */
static CUresult launch_config(const CUlaunchConfig *c, cudaLaunchConfig_t *out)
{
    if (!c || (c->numAttrs && !c->attrs))
        return CUDA_ERROR_INVALID_VALUE;
    memset(out, 0, sizeof(*out));
    out->gridDim = (dim3){ c->gridDimX, c->gridDimY, c->gridDimZ };
    out->blockDim = (dim3){ c->blockDimX, c->blockDimY, c->blockDimZ };
    out->dynamicSmemBytes = c->sharedMemBytes;
    out->stream = (cudaStream_t)c->hStream;
    out->attrs = (cudaLaunchAttribute *)c->attrs;
    out->numAttrs = c->numAttrs;
    return CUDA_SUCCESS;
}

static CUresult launch_ex(const CUlaunchConfig *config, CUfunction fn, void **params, void **extra, bool per_thread)
{
    cudaLaunchConfig_t c;
    void **args;
    bool owned;
    CUresult r;
    tdm_function *f = launch_prepare(fn, params, extra, &args, &owned, &r);

    if (!f)
        return r;
    r = launch_config(config, &c);
    if (!r && per_thread && !c.stream)
        c.stream = cudaStreamPerThread;
    if (!r)
        r = tdm_cu(cudaLaunchKernelExC(&c, (const void *)f, args));
    if (owned)
        free(args);
    return r;
}

CUresult cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f, void **kernelParams, void **extra)
{
    return launch_ex(config, f, kernelParams, extra, false);
}

CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig *config, CUfunction f, void **kernelParams, void **extra);
CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig *config, CUfunction f, void **kernelParams, void **extra)
{
    return launch_ex(config, f, kernelParams, extra, true);
}

/* ---- occupancy ---- */

CUresult cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int *numBlocks, CUfunction func, int blockSize,
                                                              size_t dynamicSMemSize, unsigned int flags)
{
    CUresult r;
    tdm_function *f = ctx_function(func, &r);

    if (!f)
        return r;
    return tdm_cu(cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(numBlocks, (const void *)f, blockSize,
                                                                         dynamicSMemSize, flags));
}

CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int *numBlocks, CUfunction func, int blockSize,
                                                     size_t dynamicSMemSize)
{
    return cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(numBlocks, func, blockSize, dynamicSMemSize,
                                                                CU_OCCUPANCY_DEFAULT);
}

CUresult cuOccupancyAvailableDynamicSMemPerBlock(size_t *dynamicSmemSize, CUfunction func, int numBlocks,
                                                 int blockSize)
{
    CUresult r;
    tdm_function *f = ctx_function(func, &r);

    if (!f)
        return r;
    return tdm_cu(cudaOccupancyAvailableDynamicSMemPerBlock(dynamicSmemSize, (const void *)f, numBlocks, blockSize));
}

/* The limits the block size search works within. */
typedef struct block_search {
    int sm_threads;   /* threads a multiprocessor holds */
    int warp;         /* block sizes are tried in warps */
    int limit;        /* the largest block: device, kernel and the caller's limit */
    int sms;
} block_search;

static CUresult search_limits(tdm_function *f, CUdevice dev, int caller_limit, block_search *s)
{
    int dev_max = 0, fn_max = 0;
    CUresult r;

    if ((r = tdm_cu(cudaDeviceGetAttribute(&s->sm_threads, cudaDevAttrMaxThreadsPerMultiProcessor, dev))) ||
        (r = tdm_cu(cudaDeviceGetAttribute(&s->warp, cudaDevAttrWarpSize, dev))) ||
        (r = tdm_cu(cudaDeviceGetAttribute(&dev_max, cudaDevAttrMaxThreadsPerBlock, dev))) ||
        (r = tdm_cu(cudaDeviceGetAttribute(&s->sms, cudaDevAttrMultiProcessorCount, dev))) ||
        (r = attribute(&fn_max, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, f)))
        return r;
    s->limit = caller_limit > 0 && caller_limit < dev_max ? caller_limit : dev_max;
    if (fn_max < s->limit)
        s->limit = fn_max;
    return s->warp > 0 ? CUDA_SUCCESS : CUDA_ERROR_UNKNOWN;
}

/* The block size with the most resident threads per multiprocessor (the largest such, as
 * sizes are tried from the largest down), each size's dynamic shared memory from the
 * program's function when it gives one. */
CUresult cuOccupancyMaxPotentialBlockSizeWithFlags(int *minGridSize, int *blockSize, CUfunction func,
                                                   CUoccupancyB2DSize blockSizeToDynamicSMemSize,
                                                   size_t dynamicSMemSize, int blockSizeLimit, unsigned int flags)
{
    int best_size = 0, best_blocks = 0, best_threads = 0;
    block_search s;
    tdm_cu_ctx *ctx;
    tdm_function *f;
    CUresult r;

    if (!(ctx = tdm_cu_ctx_of(NULL, &r)))
        return r;
    if (!minGridSize || !blockSize || blockSizeLimit < 0)
        return CUDA_ERROR_INVALID_VALUE;
    if (!(f = tdm_cu_function(func, &r)) || (r = search_limits(f, ctx->device, blockSizeLimit, &s)))
        return r;
    for (int size = s.limit; size > 0 && best_threads < s.sm_threads;
         size = (size % s.warp ? size - size % s.warp : size - s.warp)) {
        size_t smem = blockSizeToDynamicSMemSize ? blockSizeToDynamicSMemSize(size) : dynamicSMemSize;
        int blocks = 0;
        if ((r = tdm_cu(cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(&blocks, (const void *)f, size, smem,
                                                                               flags))))
            return r;
        if (blocks * size > best_threads) {
            best_threads = blocks * size;
            best_blocks = blocks;
            best_size = size;
        }
    }
    *minGridSize = best_blocks * s.sms;
    *blockSize = best_size;
    return CUDA_SUCCESS;
}

CUresult cuOccupancyMaxPotentialBlockSize(int *minGridSize, int *blockSize, CUfunction func,
                                          CUoccupancyB2DSize blockSizeToDynamicSMemSize, size_t dynamicSMemSize,
                                          int blockSizeLimit)
{
    return cuOccupancyMaxPotentialBlockSizeWithFlags(minGridSize, blockSize, func, blockSizeToDynamicSMemSize,
                                                     dynamicSMemSize, blockSizeLimit, CU_OCCUPANCY_DEFAULT);
}

static CUresult cluster_occupancy(bool active, int *out, CUfunction func, const CUlaunchConfig *config)
{
    cudaLaunchConfig_t c;
    CUresult r;
    tdm_function *f = ctx_function(func, &r);

    if (!f)
        return r;
    if (!out || (r = launch_config(config, &c)))
        return CUDA_ERROR_INVALID_VALUE;
    return tdm_cu(active ? cudaOccupancyMaxActiveClusters(out, (const void *)f, &c)
                         : cudaOccupancyMaxPotentialClusterSize(out, (const void *)f, &c));
}

CUresult cuOccupancyMaxPotentialClusterSize(int *clusterSize, CUfunction func, const CUlaunchConfig *config)
{
    return cluster_occupancy(false, clusterSize, func, config);
}

CUresult cuOccupancyMaxActiveClusters(int *numClusters, CUfunction func, const CUlaunchConfig *config)
{
    return cluster_occupancy(true, numClusters, func, config);
}
