/* Libraries and kernel handles (docs/runtime-api.md "Libraries and kernel
 * handles"): cudaLibraryLoadData/FromFile ship the image to the server,
 * which loads it as a module of the session and answers every kernel's
 * handle and parameter layout.  Each kernel becomes a tdm_function record,
 * the same kind of thing __cudaGetKernel hands out, so a cudaKernel_t of a
 * library launches and configures as a registered kernel does.
 *
 * Records are never freed: an unloaded library's kernels stay records that
 * answer cudaErrorInvalidResourceHandle, and are reused by a later load
 * (so a program that loads and unloads in a loop does not grow). */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "code_image.h"
#include "fatbin.h"
#include "grow.h"
#include "guest.h"
#include "log.h"
#include "ptr_set.h"

typedef struct tdm_library {
    uint64_t module;             /* the server's handle */
    void *image;                 /* a copy, loaded again after cudaDeviceReset */
    size_t image_len;
    uint32_t nkernels;
    tdm_function **kernels;
    uint64_t *globals;           /* addresses put in the allocation table */
    size_t nglobals, globals_cap;
    struct tdm_library *next;
} tdm_library;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static tdm_library *libraries;             /* loaded, not unloaded */
static tdm_function **records;             /* every library kernel record made */
static size_t nrecords, records_cap;
static tdm_function **spare;               /* records of unloaded libraries, for reuse */
static size_t nspare, spare_cap;
/* The same records, found without the lock: every launch and kernel query checks its handle
 * here (PyTorch has thousands of kernels loaded; a scan of them cost microseconds a call). */
static tdm_ptr_set known_records;

/* The loaded library `h` names; NULL if it is none (never dereferenced
 * before it is found).  Caller holds the lock. */
static tdm_library *library_locked(cudaLibrary_t h)
{
    for (tdm_library *l = libraries; l; l = l->next)
        if ((void *)l == (void *)h)
            return l;
    return NULL;
}

tdm_function *tdm_library_kernel_record(const void *p)
{
    /* A record is never freed: one found is one for good. */
    return tdm_ptr_set_has(&known_records, p) ? (tdm_function *)p : NULL;
}

/* ---- the Driver API (issue 15): cuKernelGetLibrary, cuFuncGetModule ---- */
cudaLibrary_t tdm_library_of_kernel(const tdm_function *f)
{
    tdm_library *found = NULL;

    pthread_mutex_lock(&lock);
    for (tdm_library *l = libraries; l && !found; l = l->next)
        for (uint32_t i = 0; i < l->nkernels && !found; i++)
            if (l->kernels[i] == f)
                found = l;
    pthread_mutex_unlock(&lock);
    return (cudaLibrary_t)found;
}

/* The record's kernel is gone: it answers `why` from now on. */
static void retire_locked(tdm_function *f, int why)
{
    __atomic_store_n(&f->ready, 0, __ATOMIC_RELEASE);
    f->load_err = why;
    f->handle = 0;
    if (tdm_grow(&spare, &spare_cap, nspare + 1, sizeof(*spare), 16) == 0)
        spare[nspare++] = f;
}

static void library_free_locked(tdm_library *l, int why)
{
    for (uint32_t i = 0; i < l->nkernels; i++)
        retire_locked(l->kernels[i], why);
    for (size_t i = 0; i < l->nglobals; i++)
        tdm_allocs_remove(l->globals[i]);
    free(l->kernels);
    free(l->globals);
    free(l->image);
    free(l);
}

/* The server's kernel fi behind record f: its handle and parameter layout,
 * or fi's error, which f answers from then on. */
static void record_set(tdm_function *f, const tdm_func_info *fi)
{
    uint32_t n = fi->param_offset.param_offset_len;
    uint32_t *off = malloc((n + 1) * sizeof(uint32_t)), *size = malloc((n + 1) * sizeof(uint32_t));

    __atomic_store_n(&f->ready, 0, __ATOMIC_RELEASE);
    free(f->param_offset);
    free(f->param_size);
    f->param_offset = off;
    f->param_size = size;
    f->handle = fi->handle;
    f->load_err = fi->err;
    f->nparams = 0;
    f->params_len = 0;
    if (!off || !size)
        f->load_err = cudaErrorMemoryAllocation;
    else if (!fi->err && n != fi->param_size.param_size_len)
        f->load_err = cudaErrorUnknown;
    if (!f->load_err) {
        if (n) {
            memcpy(off, fi->param_offset.param_offset_val, n * sizeof(uint32_t));
            memcpy(size, fi->param_size.param_size_val, n * sizeof(uint32_t));
        }
        f->nparams = n;
        f->params_len = n ? off[n - 1] + size[n - 1] : 0;
    }
    __atomic_store_n(&f->ready, f->load_err == 0, __ATOMIC_RELEASE);
}

/* A record for one of the server's kernels: a spare one, else new. */
static tdm_function *record_locked(const tdm_library_kernel *k)
{
    tdm_function *f;
    char *name = strdup(k->name ? k->name : "");

    if (!name || (nspare == 0 && tdm_grow(&records, &records_cap, nrecords + 1, sizeof(*records), 64) != 0)) {
        free(name);
        return NULL;
    }
    if (nspare) {
        f = spare[--nspare];
        free(f->name);
    } else if ((f = calloc(1, sizeof(*f))) && tdm_ptr_set_add(&known_records, f) == 0) {
        records[nrecords++] = f;
    } else {
        free(f);
        free(name);
        return NULL;
    }
    f->magic = TDM_FUNCTION_MAGIC;
    f->host_fun = NULL;
    f->fatbin = NULL;
    f->name = name;
    record_set(f, &k->info);
    return f;
}

/* After cudaDeviceReset: the runtime keeps a library across a reset (it
 * loads it into the new context), so the guest loads each again from its
 * copy, and the same kernel handles name the new kernels.  Its globals went
 * with the reset (the program asks again, as natively: they are new
 * memory).  One that cannot be loaded again is gone, its kernels refused. */
static bool reload_locked(tdm_library *l)
{
    tdm_library_load_args a = { { (u_int)l->image_len, l->image } };
    tdm_library_load_res r;
    cudaError_t err;

    memset(&r, 0, sizeof(r));
    err = tdm_call(TDM_LIBRARY_LOAD, &a, &r);
    if (!err)
        err = (cudaError_t)r.err;
    if (err) {
        tdm_log("a library could not be loaded again after cudaDeviceReset: %s", cudaGetErrorName(err));
        return false;
    }
    l->module = r.library;
    l->nglobals = 0;               /* the reset emptied the allocation table */
    for (uint32_t i = 0; i < l->nkernels; i++) {
        static const tdm_func_info gone = { .err = cudaErrorInvalidResourceHandle };
        const tdm_func_info *fi = &gone;
        for (uint32_t j = 0; j < r.kernels.kernels_len; j++)
            if (strcmp(r.kernels.kernels_val[j].name, l->kernels[i]->name) == 0)
                fi = &r.kernels.kernels_val[j].info;
        record_set(l->kernels[i], fi);
    }
    xdr_free((xdrproc_t)xdr_tdm_library_load_res, (char *)&r);
    return true;
}

void tdm_libraries_reset(void)
{
    pthread_mutex_lock(&lock);
    for (tdm_library **pp = &libraries; *pp;) {
        tdm_library *l = *pp;
        if (reload_locked(l)) {
            pp = &l->next;
            continue;
        }
        *pp = l->next;
        l->nglobals = 0;
        library_free_locked(l, cudaErrorInvalidResourceHandle);
    }
    pthread_mutex_unlock(&lock);
}

/* The server's answer into a library; cudaErrorMemoryAllocation if the
 * guest cannot keep it (the caller unloads it then). */
static cudaError_t library_from(const tdm_library_load_res *r, const void *image, size_t len, tdm_library **out)
{
    tdm_library *l = calloc(1, sizeof(*l));
    uint32_t n = r->kernels.kernels_len;

    if (!l || !(l->kernels = calloc(n + 1, sizeof(*l->kernels))) || !(l->image = malloc(len))) {
        if (l)
            free(l->kernels);
        free(l);
        return cudaErrorMemoryAllocation;
    }
    memcpy(l->image, image, len);
    l->image_len = len;
    l->module = r->library;
    pthread_mutex_lock(&lock);
    for (uint32_t i = 0; i < n; i++) {
        if (!(l->kernels[i] = record_locked(&r->kernels.kernels_val[i]))) {
            l->nkernels = i;
            library_free_locked(l, cudaErrorInvalidResourceHandle);
            pthread_mutex_unlock(&lock);
            return cudaErrorMemoryAllocation;
        }
    }
    l->nkernels = n;
    l->next = libraries;
    libraries = l;
    pthread_mutex_unlock(&lock);
    *out = l;
    return cudaSuccess;
}

static cudaError_t load_image(cudaLibrary_t *library, const void *image, size_t len)
{
    tdm_library_load_args a;
    tdm_library_load_res r;
    tdm_library *l = NULL;
    cudaError_t err;
    int unloaded;

    if (tdm_code_image_kind(image, len) == TDM_IMAGE_INVALID)
        return cudaErrorInvalidKernelImage;
    memset(&a, 0, sizeof(a));
    memset(&r, 0, sizeof(r));
    a.image.image_val = (char *)image;
    a.image.image_len = (u_int)len;
    err = tdm_call(TDM_LIBRARY_LOAD, &a, &r);
    if (err)
        return err;
    err = (cudaError_t)r.err;
    if (!err) {
        err = library_from(&r, image, len, &l);
        if (err)
            tdm_call(TDM_LIBRARY_UNLOAD, &r.library, &unloaded);
    }
    xdr_free((xdrproc_t)xdr_tdm_library_load_res, (char *)&r);
    if (!err)
        *library = (cudaLibrary_t)l;
    return err;
}

/* As the driver checks the option arrays: a count with no array is
 * invalid, and so is an option it does not know.  JIT options are not
 * forwarded (docs: the server loads with its driver's defaults). */
static cudaError_t check_options(const enum cudaJitOption *jit, void **jit_values, unsigned njit,
                                 const enum cudaLibraryOption *lib, void **lib_values, unsigned nlib, bool from_file)
{
    if (njit && (!jit || !jit_values))
        return cudaErrorInvalidValue;
    if (nlib && (!lib || !lib_values))
        return cudaErrorInvalidValue;
    for (unsigned i = 0; i < njit; i++)
        if ((unsigned)jit[i] > (unsigned)cudaJitOverrideDirectiveValues)
            return cudaErrorInvalidValue;
    for (unsigned i = 0; i < nlib; i++) {
        if ((unsigned)lib[i] > (unsigned)cudaLibraryBinaryIsPreserved)
            return cudaErrorInvalidValue;
        /* The header: "Specifying this option with cudaLibraryLoadFromFile() is invalid". */
        if (from_file && lib[i] == cudaLibraryBinaryIsPreserved)
            return cudaErrorInvalidValue;
    }
    return cudaSuccess;
}

/* A fat binary handed over by address (NVIDIA's runtime at the driver level, cuBLAS's own
 * loads, a program's cudaLibraryLoadData) points into a section of its program where every
 * translation unit's block follows the last: the driver reads the one block it points at, and
 * shipping every block that follows would ship the whole section (140 MB for cuBLAS,
 * hundreds of MiB for PyTorch) at every load.  That block comes first; the blocks after it only
 * when that one has no code for the device (nvcc may put a kernel's PTX in the next block).  A
 * cubin or PTX is measured by its own headers or NUL. */
static cudaError_t load_code(cudaLibrary_t *library, const void *code)
{
    uint32_t magic;
    size_t len;
    cudaError_t err;

    memcpy(&magic, code, sizeof(magic));
    if (magic == TDM_FATBIN_WRAPPER_MAGIC && ((const tdm_fatbin_wrapper *)code)->data) {
        code = ((const tdm_fatbin_wrapper *)code)->data;
        memcpy(&magic, code, sizeof(magic));
    }
    if (magic != TDM_FATBIN_MAGIC) {
        len = tdm_code_image_length(code, TDM_MAX_FATBIN);
        return len ? load_image(library, code, len) : cudaErrorInvalidKernelImage;
    }
    len = tdm_fatbin_block_size(code, TDM_MAX_FATBIN);
    if (!len)
        return cudaErrorInvalidKernelImage;
    err = load_image(library, code, len);
    if (err == cudaErrorNoKernelImageForDevice && tdm_fatbin_image_size(code, TDM_MAX_FATBIN) > len)
        err = load_image(library, code, tdm_fatbin_image_size(code, TDM_MAX_FATBIN));
    return err;
}

cudaError_t cudaLibraryLoadData(cudaLibrary_t *library, const void *code, enum cudaJitOption *jitOptions,
                                void **jitOptionsValues, unsigned int numJitOptions,
                                enum cudaLibraryOption *libraryOptions, void **libraryOptionValues,
                                unsigned int numLibraryOptions)
{
    cudaError_t err;

    if (!library || !code)
        return tdm_ret(cudaErrorInvalidValue);
    err = check_options(jitOptions, jitOptionsValues, numJitOptions, libraryOptions, libraryOptionValues,
                        numLibraryOptions, false);
    if (err)
        return tdm_ret(err);
    return tdm_ret(load_code(library, code));
}

/* The file is read here: the server cannot see the program's files.  PTX
 * text gets the NUL a file does not end with. */
static cudaError_t read_image(const char *path, char **out, size_t *len)
{
    struct stat st;
    char *buf = NULL;
    FILE *f = fopen(path, "rb");
    cudaError_t err = cudaSuccess;

    if (!f)
        return errno == ENOENT || errno == ENOTDIR ? cudaErrorFileNotFound : cudaErrorInvalidValue;
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0) {
        err = cudaErrorInvalidKernelImage;
        goto out;
    }
    if ((uint64_t)st.st_size >= TDM_MAX_FATBIN) {
        tdm_log("library file %s is %lld bytes; Tandem carries images under %u", path, (long long)st.st_size,
                TDM_MAX_FATBIN);
        err = cudaErrorInvalidKernelImage;
        goto out;
    }
    buf = malloc((size_t)st.st_size + 1);
    if (!buf) {
        err = cudaErrorMemoryAllocation;
        goto out;
    }
    if (fread(buf, 1, (size_t)st.st_size, f) != (size_t)st.st_size) {
        err = cudaErrorInvalidKernelImage;
        goto out;
    }
    *len = (size_t)st.st_size;
    /* Text without its NUL: add it (one already there is kept as is). */
    if (buf[*len - 1] != '\0' && tdm_code_image_kind(buf, *len) == TDM_IMAGE_INVALID)
        buf[(*len)++] = '\0';
    *out = buf;
    buf = NULL;
out:
    free(buf);
    fclose(f);
    return err;
}

cudaError_t cudaLibraryLoadFromFile(cudaLibrary_t *library, const char *fileName, enum cudaJitOption *jitOptions,
                                    void **jitOptionsValues, unsigned int numJitOptions,
                                    enum cudaLibraryOption *libraryOptions, void **libraryOptionValues,
                                    unsigned int numLibraryOptions)
{
    char *image = NULL;
    size_t len = 0;
    cudaError_t err;

    if (!library || !fileName)
        return tdm_ret(cudaErrorInvalidValue);
    err = check_options(jitOptions, jitOptionsValues, numJitOptions, libraryOptions, libraryOptionValues,
                        numLibraryOptions, true);
    if (!err)
        err = read_image(fileName, &image, &len);
    if (!err)
        err = load_image(library, image, len);
    free(image);
    return tdm_ret(err);
}

cudaError_t cudaLibraryUnload(cudaLibrary_t library)
{
    tdm_library *l;
    tdm_library **pp;
    uint64_t module;
    int res = 0;
    cudaError_t err;

    pthread_mutex_lock(&lock);
    l = library_locked(library);
    module = l ? l->module : 0;
    pthread_mutex_unlock(&lock);
    if (!l)
        return tdm_ret(cudaErrorInvalidResourceHandle);
    err = tdm_call(TDM_LIBRARY_UNLOAD, &module, &res);
    if (!err)
        err = (cudaError_t)res;
    if (err)
        return tdm_ret(err);
    pthread_mutex_lock(&lock);
    /* Another thread may have unloaded it meanwhile: then it is gone already. */
    for (pp = &libraries; *pp && *pp != l; pp = &(*pp)->next)
        ;
    if (*pp) {
        *pp = l->next;
        library_free_locked(l, cudaErrorInvalidResourceHandle);
    }
    pthread_mutex_unlock(&lock);
    return cudaSuccess;
}

cudaError_t cudaLibraryGetKernel(cudaKernel_t *pKernel, cudaLibrary_t library, const char *name)
{
    cudaError_t err = cudaErrorSymbolNotFound;
    tdm_library *l;

    if (!pKernel || !name)
        return tdm_ret(cudaErrorInvalidValue);
    pthread_mutex_lock(&lock);
    l = library_locked(library);
    if (!l)
        err = cudaErrorInvalidResourceHandle;
    for (uint32_t i = 0; l && i < l->nkernels; i++)
        if (strcmp(l->kernels[i]->name, name) == 0) {
            *pKernel = (cudaKernel_t)l->kernels[i];
            err = cudaSuccess;
            break;
        }
    pthread_mutex_unlock(&lock);
    return tdm_ret(err);
}

cudaError_t cudaLibraryGetKernelCount(unsigned int *count, cudaLibrary_t lib)
{
    tdm_library *l;

    if (!count)
        return tdm_ret(cudaErrorInvalidValue);
    pthread_mutex_lock(&lock);
    l = library_locked(lib);
    if (l)
        *count = l->nkernels;
    pthread_mutex_unlock(&lock);
    return l ? cudaSuccess : tdm_ret(cudaErrorInvalidResourceHandle);
}

cudaError_t cudaLibraryEnumerateKernels(cudaKernel_t *kernels, unsigned int numKernels, cudaLibrary_t lib)
{
    tdm_library *l;

    if (!kernels)
        return tdm_ret(cudaErrorInvalidValue);
    pthread_mutex_lock(&lock);
    l = library_locked(lib);
    for (uint32_t i = 0; l && i < l->nkernels && i < numKernels; i++)
        kernels[i] = (cudaKernel_t)l->kernels[i];
    pthread_mutex_unlock(&lock);
    return l ? cudaSuccess : tdm_ret(cudaErrorInvalidResourceHandle);
}

cudaError_t cudaLibraryGetGlobal(void **dptr, size_t *bytes, cudaLibrary_t library, const char *name)
{
    tdm_library_global_args a;
    tdm_library_global_res r;
    tdm_library *l;
    cudaError_t err;

    if ((!dptr && !bytes) || !name)
        return tdm_ret(cudaErrorInvalidValue);
    pthread_mutex_lock(&lock);
    l = library_locked(library);
    a.library = l ? l->module : 0;
    pthread_mutex_unlock(&lock);
    if (!l)
        return tdm_ret(cudaErrorInvalidResourceHandle);
    a.name = (char *)name;
    memset(&r, 0, sizeof(r));
    err = tdm_call(TDM_LIBRARY_GET_GLOBAL, &a, &r);
    if (!err)
        err = (cudaError_t)r.err;
    if (err)
        return tdm_ret(err);
    pthread_mutex_lock(&lock);
    /* Copies to and from it are checked against the allocation table, as a
     * module variable's; unload takes it out again. */
    if (library_locked(library) == l && !tdm_allocs_covers(r.addr, r.size) &&
        tdm_grow(&l->globals, &l->globals_cap, l->nglobals + 1, sizeof(*l->globals), 8) == 0) {
        tdm_allocs_add(r.addr, r.size, true);
        l->globals[l->nglobals++] = r.addr;
    }
    pthread_mutex_unlock(&lock);
    if (dptr)
        *dptr = (void *)(uintptr_t)r.addr;
    if (bytes)
        *bytes = (size_t)r.size;
    return cudaSuccess;
}

/* A unified function is a host function pointer the device can call too:
 * only where the device reports unifiedFunctionPointers (attribute 129),
 * which a remoted device never is to the program's host (its functions live
 * in another process).  Without it the runtime answers
 * cudaErrorSymbolNotFound ("may return" in its header; the H100 on x86
 * reports 0), and so does Tandem for every name. */
cudaError_t cudaLibraryGetUnifiedFunction(void **fptr, cudaLibrary_t library, const char *symbol)
{
    tdm_library *l;

    if (!fptr || !symbol)
        return tdm_ret(cudaErrorInvalidValue);
    pthread_mutex_lock(&lock);
    l = library_locked(library);
    pthread_mutex_unlock(&lock);
    return tdm_ret(l ? cudaErrorSymbolNotFound : cudaErrorInvalidResourceHandle);
}

/* ---- kernel handles ---- */

/* A host stub or kernel handle's cudaFunction_t: the same record (Tandem
 * has one kind of kernel object), so it may go wherever either goes.
 * A NULL functionPtr is not refused: the native runtime answers cudaSuccess
 * for a known symbol and writes nothing (H100 run of 2026-11-24,
 * examples/library_load.cu "NULL function"). */
cudaError_t cudaGetFuncBySymbol(cudaFunction_t *functionPtr, const void *symbolPtr)
{
    cudaError_t err;
    tdm_function *f;

    f = tdm_function_for_stub_or_kernel(symbolPtr, &err);
    if (!f)
        return tdm_ret(err);
    if (functionPtr)
        *functionPtr = (cudaFunction_t)f;
    return cudaSuccess;
}

/* The layout the server reported at load (cuFuncGetParamInfo on the GPU),
 * the one launches pack arguments with. */
cudaError_t cudaFuncGetParamInfo(const void *func, size_t paramIndex, size_t *paramOffset, size_t *paramSize)
{
    cudaError_t err;
    tdm_function *f;

    f = tdm_function_for_func(func, &err);
    if (!f)
        return tdm_ret(err);
    if (!paramOffset || !paramSize || paramIndex >= f->nparams)
        return tdm_ret(cudaErrorInvalidValue);
    *paramOffset = f->param_offset[paramIndex];
    *paramSize = f->param_size[paramIndex];
    return cudaSuccess;
}

/* One device: the attribute set for it is cudaFuncSetAttribute's. */
cudaError_t cudaKernelSetAttributeForDevice(cudaKernel_t kernel, enum cudaFuncAttribute attr, int value, int device)
{
    cudaError_t err = tdm_check_device(device);
    tdm_function *f;

    if (err)
        return tdm_ret(err);
    f = tdm_function_for_stub_or_kernel((const void *)kernel, &err);
    if (!f)
        return tdm_ret(err);
    return cudaFuncSetAttribute((const void *)f, attr, value);
}
