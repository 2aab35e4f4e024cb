/* Modules, their functions and globals. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "code_image.h"
#include "cuda_backend_internal.h"

/* The header nvcc puts at the front of every fat binary (fatbinary.h is not
 * shipped with the toolkit headers, so its layout is restated here). */
#define FATBIN_MAGIC 0xBA55ED50u

struct fatbin_header {
    uint32_t magic;
    uint16_t version;
    uint16_t header_size;
    uint64_t fat_size;
};

struct tdm_bfunc {
    CUfunction fn;
    tdm_param_info params;
    tdm_bfunc *next;
    /* ---- SM shares (issue 17) ---- */
    char *name;              /* its name in the module, for tdm_cuda_func_kernel */
    struct tdm_bmodule *m;
    CUfunction kernel;       /* its CUkernel, cast as cuLaunchKernel takes it; NULL until needed */
};

struct tdm_bmodule {
    CUmodule mod;
    /* Our own copy of the image, kept until unload: the guest's copy dies
     * with the RPC, and with lazy loading the driver may go back to the
     * image when a function is first used. */
    void *image;
    pthread_mutex_t lock; /* guards funcs */
    tdm_bfunc *funcs;     /* every function handed out, freed at unload */
    CUlibrary lib;        /* ---- SM shares (issue 17): the image as a library, once a kernel is needed ---- */
};

/* A fat binary's own header says how long it is; the image must hold all of
 * it, or the driver would read past the guest's bytes. */
static int check_fatbin(const void *image, size_t len)
{
    struct fatbin_header h;

    /* ---- libraries (issue 14): a cubin or PTX loads as a fat binary does ---- */
    tdm_image_kind kind = tdm_code_image_kind(image, len);
    if (kind == TDM_IMAGE_CUBIN || kind == TDM_IMAGE_PTX)
        return cudaSuccess;
    if (len < sizeof(h))
        return cudaErrorInvalidKernelImage;
    memcpy(&h, image, sizeof(h));
    if (h.magic != FATBIN_MAGIC || h.header_size < sizeof(h) ||
        h.fat_size > len || h.header_size > len - h.fat_size) {
        tdm_cuda_log("module image is not a fat binary, cubin or PTX (magic 0x%08x, %zu bytes)", h.magic, len);
        return cudaErrorInvalidKernelImage;
    }
    return cudaSuccess;
}

int tdm_cuda_module_load(tdm_backend *b, const void *image, size_t len, tdm_bmodule **out)
{
    tdm_bmodule *m;
    int err = tdm_cuda_enter(b);

    *out = NULL;
    if (err)
        return err;
    err = check_fatbin(image, len);
    if (err)
        return err;
    m = calloc(1, sizeof(*m));
    if (!m)
        return cudaErrorMemoryAllocation;
    m->image = malloc(len); /* malloc's alignment covers the fatbin's 8 */
    if (!m->image) {
        err = cudaErrorMemoryAllocation;
        goto out_free;
    }
    memcpy(m->image, image, len);
    err = tdm_cuda_err(tdm_cu.cuModuleLoadData(&m->mod, m->image), "cuModuleLoadData");
    if (err)
        goto out_free;
    pthread_mutex_init(&m->lock, NULL);
    *out = m;
    return cudaSuccess;

out_free:
    free(m->image);
    free(m);
    return err;
}

int tdm_cuda_module_unload(tdm_backend *b, tdm_bmodule *m)
{
    int err = tdm_cuda_enter(b);
    tdm_bfunc *f, *next;

    if (err)
        return err;
    err = tdm_cuda_err(tdm_cu.cuModuleUnload(m->mod), "cuModuleUnload");
    if (m->lib)   /* ---- SM shares (issue 17) ---- */
        tdm_cuda_err(tdm_cu.cuLibraryUnload(m->lib), "cuLibraryUnload");
    for (f = m->funcs; f; f = next) {
        next = f->next;
        free(f->name);
        free(f);
    }
    pthread_mutex_destroy(&m->lock);
    free(m->image);
    free(m);
    return err;
}

/* The kernel's parameter layout, straight from the driver, so the guest
 * packs its arguments exactly as the compiled kernel reads them. */
static int read_params(CUfunction fn, const char *name, tdm_param_info *p)
{
    size_t off = 0, size = 0;
    uint32_t i;
    CUresult r = CUDA_SUCCESS;

    memset(p, 0, sizeof(*p));
    for (i = 0; i <= TDM_MAX_KERNEL_PARAMS; i++) {
        r = tdm_cu.cuFuncGetParamInfo(fn, i, &off, &size);
        if (r != CUDA_SUCCESS)
            break;
        if (i == TDM_MAX_KERNEL_PARAMS || off + size > TDM_MAX_PARAM_BYTES) {
            tdm_cuda_log("kernel %s: more parameters than Tandem carries", name);
            return cudaErrorNotSupported;
        }
        p->offset[i] = (uint32_t)off;
        p->size[i] = (uint32_t)size;
    }
    /* The driver answers "invalid value" for the first index past the end. */
    if (r != CUDA_ERROR_INVALID_VALUE)
        return tdm_cuda_err(r, "cuFuncGetParamInfo");
    p->count = i;
    return cudaSuccess;
}

int tdm_cuda_module_get_function(tdm_backend *b, tdm_bmodule *m, const char *name,
                                 tdm_bfunc **out, tdm_param_info *params)
{
    CUfunction fn = NULL;
    tdm_bfunc *f;
    CUresult r;
    int err = tdm_cuda_enter(b);

    *out = NULL;
    if (err)
        return err;
    r = tdm_cu.cuModuleGetFunction(&fn, m->mod, name);
    if (r == CUDA_ERROR_NOT_FOUND) {
        tdm_cuda_log("no kernel named %s in the module", name);
        return cudaErrorInvalidDeviceFunction;
    }
    err = tdm_cuda_err(r, "cuModuleGetFunction");
    if (err)
        return err;

    pthread_mutex_lock(&m->lock);
    /* Asking twice for one kernel gives the same object, so the list stays
     * bounded by the module's kernels. */
    for (f = m->funcs; f && f->fn != fn; f = f->next)
        ;
    if (!f) {
        f = calloc(1, sizeof(*f));
        if (!f) {
            err = cudaErrorMemoryAllocation;
            goto out;
        }
        f->fn = fn;
        f->m = m;
        f->name = strdup(name);
        err = f->name ? read_params(fn, name, &f->params) : cudaErrorMemoryAllocation;
        if (err) {
            free(f->name);
            free(f);
            goto out;
        }
        f->next = m->funcs;
        m->funcs = f;
    }
    *params = f->params;
    *out = f;
out:
    pthread_mutex_unlock(&m->lock);
    return err;
}

int tdm_cuda_module_get_global(tdm_backend *b, tdm_bmodule *m, const char *name,
                               uint64_t *addr, uint64_t *size)
{
    CUdeviceptr p = 0;
    size_t n = 0;
    CUresult r;
    int err = tdm_cuda_enter(b);

    if (err)
        return err;
    r = tdm_cu.cuModuleGetGlobal(&p, &n, m->mod, name);
    /* What cudaGetSymbolAddress says for an unknown symbol. */
    if (r == CUDA_ERROR_NOT_FOUND)
        return cudaErrorInvalidSymbol;
    err = tdm_cuda_err(r, "cuModuleGetGlobal");
    if (err)
        return err;
    *addr = p;
    *size = n;
    return cudaSuccess;
}

int tdm_cuda_func_get_attributes(tdm_backend *b, tdm_bfunc *f, tdm_func_attrs *out)
{
    static const CUfunction_attribute which[] = {
        CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES,
        CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
        CU_FUNC_ATTRIBUTE_NUM_REGS, CU_FUNC_ATTRIBUTE_PTX_VERSION,
        CU_FUNC_ATTRIBUTE_BINARY_VERSION, CU_FUNC_ATTRIBUTE_CACHE_MODE_CA,
        CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
        CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT,
    };
    int v[sizeof(which) / sizeof(which[0])];
    int err = tdm_cuda_enter(b);

    if (err)
        return err;
    for (size_t i = 0; i < sizeof(which) / sizeof(which[0]); i++) {
        err = tdm_cuda_err(tdm_cu.cuFuncGetAttribute(&v[i], which[i], f->fn), "cuFuncGetAttribute");
        if (err)
            return err;
    }
    out->shared_size_bytes = v[0];
    out->const_size_bytes = v[1];
    out->local_size_bytes = v[2];
    out->max_threads_per_block = v[3];
    out->num_regs = v[4];
    out->ptx_version = v[5];
    out->binary_version = v[6];
    out->cache_mode_ca = v[7];
    out->max_dynamic_shared_size_bytes = v[8];
    out->preferred_shmem_carveout = v[9];
    return cudaSuccess;
}

CUfunction tdm_cuda_func_handle(const tdm_bfunc *f)
{
    return f->fn;
}

const tdm_param_info *tdm_cuda_func_params(const tdm_bfunc *f)
{
    return &f->params;
}

/* ---- libraries (issue 14) ---- */
CUmodule tdm_cuda_module_handle(const tdm_bmodule *m)
{
    return m->mod;
}

/* ---- SM shares (issue 17) ---- */
int tdm_cuda_func_kernel(tdm_backend *b, tdm_bfunc *f, CUfunction *out)
{
    tdm_bmodule *m = f->m;
    CUkernel k = NULL;
    int v = 0, err = cudaSuccess;

    pthread_mutex_lock(&m->lock);
    if (!f->kernel) {
        if (!m->lib)
            err = tdm_cuda_err(tdm_cu.cuLibraryLoadData(&m->lib, m->image, NULL, NULL, 0, NULL, NULL, 0),
                               "cuLibraryLoadData");
        if (!err)
            err = tdm_cuda_err(tdm_cu.cuLibraryGetKernel(&k, m->lib, f->name), "cuLibraryGetKernel");
        /* What the guest raised on the function (cudaFuncSetAttribute) holds for the kernel too. */
        if (!err && tdm_cu.cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, f->fn) ==
                        CUDA_SUCCESS && v > 0)
            tdm_cuda_err(tdm_cu.cuKernelSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, v, k, b->dev),
                         "cuKernelSetAttribute");
        if (!err)
            f->kernel = (CUfunction)k;
    }
    *out = f->kernel;
    pthread_mutex_unlock(&m->lock);
    return err;
}
