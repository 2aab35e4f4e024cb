/* Fat binaries, kernels and variables registered by nvcc's host stubs, and
 * their lazy loading on the server: a module is sent on the first launch or
 * symbol access that needs it, as CUDA's lazy loading does. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "fatbin.h"
#include "guest.h"
#include "log.h"
#include "grow.h"
#include "ptr_set.h"


typedef struct tdm_fatbin {
    void *handle_slot;            /* what __cudaRegisterFatBinary returns points here */
    const void *image;
    size_t size;
    int image_err;                /* a registration we cannot use */
    bool loaded;
    int load_err;
    uint64_t module;
    struct tdm_fatbin *next;
} tdm_fatbin;

static const void *host_fun_of(const void *record)
{
    return ((const tdm_function *)record)->host_fun;
}

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static tdm_fatbin *fatbins;
/* Registered kernels, never freed: a launch finds its record by host stub (or the record
 * itself, a cudaKernel_t) in the lock-free sets, not by a scan under the lock.  sets_partial:
 * an add failed for want of memory, so a miss scans the array (under the lock) as well. */
static struct {
    tdm_function **v;
    size_t n, cap;
    tdm_ptr_set by_stub, records;
    int sets_partial;
} kernels = { .by_stub = { .key = host_fun_of } };
static tdm_variable **vars;
static size_t nvars, capvars;

static int push(void ***v, size_t *n, size_t *cap, void *item)
{
    if (tdm_grow(v, cap, *n + 1, sizeof(void *), 64) != 0)
        return -1;
    (*v)[(*n)++] = item;
    return 0;
}

void **__cudaRegisterFatBinary(void *fatCubin)
{
    const tdm_fatbin_wrapper *w = fatCubin;
    tdm_fatbin *fb = calloc(1, sizeof(*fb));

    if (!fb)
        return NULL;
    fb->handle_slot = fb;
    if (!w || (unsigned)w->magic != TDM_FATBIN_WRAPPER_MAGIC || !w->data) {
        tdm_log("registered fat binary has no valid wrapper; its kernels cannot run");
        fb->image_err = cudaErrorInvalidKernelImage;
    } else if (!(fb->size = tdm_fatbin_image_size(w->data, TDM_MAX_FATBIN))) {
        tdm_log("registered fat binary has a bad header; its kernels cannot run");
        fb->image_err = cudaErrorInvalidKernelImage;
    } else {
        fb->image = w->data;
    }
    pthread_mutex_lock(&lock);
    fb->next = fatbins;
    fatbins = fb;
    pthread_mutex_unlock(&lock);
    return &fb->handle_slot;
}

void __cudaRegisterFatBinaryEnd(void **fatCubinHandle)
{
}

static tdm_fatbin *fatbin_of(void **handle)
{
    return handle ? (tdm_fatbin *)*handle : NULL;
}

void __cudaUnregisterFatBinary(void **fatCubinHandle)
{
    /* Runs at exit; the session, and with it the module, ends with the
     * connection.  Registrations stay valid until the process is gone. */
}

void __cudaRegisterFunction(void **fatCubinHandle, const char *hostFun, char *deviceFun, const char *deviceName,
                            int thread_limit, uint3 *tid, uint3 *bid, dim3 *bDim, dim3 *gDim, int *wSize)
{
    tdm_function *f = calloc(1, sizeof(*f));

    if (!f || !deviceName || !(f->name = strdup(deviceName))) {
        free(f);
        return;
    }
    f->magic = TDM_FUNCTION_MAGIC;
    f->host_fun = hostFun;
    f->fatbin = fatbin_of(fatCubinHandle);
    pthread_mutex_lock(&lock);
    if (push((void ***)&kernels.v, &kernels.n, &kernels.cap, f) != 0) {
        free(f->name);
        free(f);
    } else if ((hostFun && tdm_ptr_set_add(&kernels.by_stub, f) != 0) || tdm_ptr_set_add(&kernels.records, f) != 0) {
        __atomic_store_n(&kernels.sets_partial, 1, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&lock);
}

/* The registered kernel whose host stub is func (or, with records, which is func), found
 * in the sets; scanned for only when an add to them failed. */
static tdm_function *registered(const void *func, bool records)
{
    tdm_function *f = (tdm_function *)tdm_ptr_set_find(&kernels.by_stub, func);

    if (!f && records)
        f = (tdm_function *)tdm_ptr_set_find(&kernels.records, func);
    if (f || !__atomic_load_n(&kernels.sets_partial, __ATOMIC_ACQUIRE))
        return f;
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < kernels.n; i++)
        if (kernels.v[i]->host_fun == func || (records && (const void *)kernels.v[i] == func)) {
            f = kernels.v[i];
            break;
        }
    pthread_mutex_unlock(&lock);
    return f;
}

static void register_var(void **handle, const void *hostVar, const char *deviceName, size_t size)
{
    tdm_variable *v = calloc(1, sizeof(*v));

    if (!v || !deviceName || !(v->name = strdup(deviceName))) {
        free(v);
        return;
    }
    v->host_var = hostVar;
    v->size = size;
    v->fatbin = fatbin_of(handle);
    pthread_mutex_lock(&lock);
    if (push((void ***)&vars, &nvars, &capvars, v) != 0) {
        free(v->name);
        free(v);
    }
    pthread_mutex_unlock(&lock);
}

void __cudaRegisterVar(void **fatCubinHandle, char *hostVar, char *deviceAddress, const char *deviceName, int ext,
                       size_t size, int constant, int global)
{
    register_var(fatCubinHandle, hostVar, deviceName, size);
}

void __cudaRegisterManagedVar(void **fatCubinHandle, void **hostVarPtrAddress, char *deviceAddress,
                              const char *deviceName, int ext, size_t size, int constant, int global)
{
    tdm_log("__managed__ variable '%s' is not supported by Tandem yet", deviceName ? deviceName : "?");
}

char __cudaInitModule(void **fatCubinHandle)
{
    return 1;
}

void __cudaRegisterHostVar(void **fatCubinHandle, const char *deviceName, void *hostVar, size_t size)
{
    register_var(fatCubinHandle, hostVar, deviceName, size);
}

/* ---- loading ---- */

static cudaError_t load_locked(tdm_fatbin *fb)
{
    tdm_module_load_args a;
    tdm_module_load_res r;
    size_t nf = 0, nv = 0;
    tdm_function **fl = NULL;
    tdm_variable **vl = NULL;
    cudaError_t err;

    if (fb->loaded)
        return (cudaError_t)fb->load_err;
    if (fb->image_err)
        return (cudaError_t)fb->image_err;
    memset(&a, 0, sizeof(a));
    memset(&r, 0, sizeof(r));
    fl = calloc(kernels.n + 1, sizeof(*fl));
    vl = calloc(nvars + 1, sizeof(*vl));
    a.funcs.funcs_val = calloc(kernels.n + 1, sizeof(char *));
    a.vars.vars_val = calloc(nvars + 1, sizeof(char *));
    if (!fl || !vl || !a.funcs.funcs_val || !a.vars.vars_val) {
        err = cudaErrorMemoryAllocation;
        goto out;
    }
    for (size_t i = 0; i < kernels.n; i++)
        if (kernels.v[i]->fatbin == fb) {
            fl[nf] = kernels.v[i];
            a.funcs.funcs_val[nf++] = kernels.v[i]->name;
        }
    for (size_t i = 0; i < nvars; i++)
        if (vars[i]->fatbin == fb) {
            vl[nv] = vars[i];
            a.vars.vars_val[nv++] = vars[i]->name;
        }
    a.funcs.funcs_len = (u_int)nf;
    a.vars.vars_len = (u_int)nv;
    a.image.image_val = (char *)fb->image;
    a.image.image_len = (u_int)fb->size;

    err = tdm_call(TDM_MODULE_LOAD, &a, &r);
    if (err)
        goto out;
    err = (cudaError_t)r.err;
    if (!err && (r.funcs.funcs_len != nf || r.vars.vars_len != nv))
        err = cudaErrorUnknown;
    if (!err) {
        fb->module = r.module;
        for (size_t i = 0; i < nf; i++) {
            tdm_func_info *fi = &r.funcs.funcs_val[i];
            tdm_function *f = fl[i];
            uint32_t n = fi->param_offset.param_offset_len;
            f->load_err = fi->err;
            f->handle = fi->handle;
            if (fi->err)
                continue;
            if (n != fi->param_size.param_size_len) {
                f->load_err = cudaErrorUnknown;
                continue;
            }
            f->param_offset = malloc((n + 1) * sizeof(uint32_t));
            f->param_size = malloc((n + 1) * sizeof(uint32_t));
            if (!f->param_offset || !f->param_size) {
                f->load_err = cudaErrorMemoryAllocation;
                continue;
            }
            /* A kernel without parameters decodes to NULL arrays, which
             * memcpy may not be given even for 0 bytes. */
            if (n) {
                memcpy(f->param_offset, fi->param_offset.param_offset_val, n * sizeof(uint32_t));
                memcpy(f->param_size, fi->param_size.param_size_val, n * sizeof(uint32_t));
            }
            f->nparams = n;
            f->params_len = n ? f->param_offset[n - 1] + f->param_size[n - 1] : 0;
            __atomic_store_n(&f->ready, 1, __ATOMIC_RELEASE);
        }
        for (size_t i = 0; i < nv; i++) {
            tdm_var_info *vi = &r.vars.vars_val[i];
            vl[i]->load_err = vi->err;
            vl[i]->addr = vi->addr;
            if (!vi->err) {
                vl[i]->size = vi->size;
                tdm_allocs_add(vi->addr, vi->size, true);
            }
        }
    }
    xdr_free((xdrproc_t)xdr_tdm_module_load_res, (char *)&r);
    fb->loaded = true;
    fb->load_err = err;
    if (err)
        tdm_log("loading a module on the server failed: %s", cudaGetErrorName(err));
out:
    free(fl);
    free(vl);
    free(a.funcs.funcs_val);
    free(a.vars.vars_val);
    return err;
}

/* Loads f's module if needed; the caller holds no lock. */
static tdm_function *ready_function(tdm_function *f, cudaError_t *err)
{
    *err = cudaSuccess;
    if (__atomic_load_n(&f->ready, __ATOMIC_ACQUIRE))
        return f;
    /* ---- libraries (issue 14): a library's kernel is loaded with its
     * library, never lazily; not ready, it failed to load or was unloaded ---- */
    if (!f->fatbin) {
        *err = f->load_err ? (cudaError_t)f->load_err : cudaErrorInvalidResourceHandle;
        return NULL;
    }
    pthread_mutex_lock(&lock);
    *err = load_locked(f->fatbin);
    if (!*err)
        *err = (cudaError_t)f->load_err;
    pthread_mutex_unlock(&lock);
    return *err ? NULL : f;
}

tdm_function *tdm_function_for_host(const void *host_fun, cudaError_t *err)
{
    tdm_function *f = registered(host_fun, false);

    /* ---- libraries (issue 14): a cudaKernel_t may stand where a host
     * stub is expected (cudaLaunchKernel((const void *)kernel, ...)) ---- */
    if (!f)
        return tdm_function_for_stub_or_kernel(host_fun, err);
    return ready_function(f, err);
}

tdm_function *tdm_function_for_kernel(const void *kernel, cudaError_t *err)
{
    tdm_function *f = (tdm_function *)kernel;

    if (!f || f->magic != TDM_FUNCTION_MAGIC) {
        *err = cudaErrorInvalidResourceHandle;
        return NULL;
    }
    return ready_function(f, err);
}

/* A host stub or a cudaKernel_t (the cuda_runtime.h overloads for kernels
 * cast one to const void *): both are looked up in the table, so an
 * unknown pointer is never dereferenced.  NULL if neither. */
static tdm_function *stub_or_kernel(const void *func)
{
    /* ---- libraries (issue 14) ---- */
    /* A library's kernel record first, without a lock: the Driver API's every handle is one
     * (and none is a registered function's stub or record, so the order changes no answer). */
    tdm_function *f = tdm_library_kernel_record(func);

    return f ? f : registered(func, true);
}

/* cudaLaunchKernelExC's func: an unknown one is no device function. */
tdm_function *tdm_function_for_stub_or_kernel(const void *func, cudaError_t *err)
{
    tdm_function *f = stub_or_kernel(func);

    if (!f) {
        *err = cudaErrorInvalidDeviceFunction;
        return NULL;
    }
    return ready_function(f, err);
}

/* The func of the calls that ask about or configure a kernel (occupancy,
 * cudaFuncSetAttribute, cudaFuncGetName, ...): CUDA 13's runtime takes an
 * unknown pointer there for a kernel handle and refuses it with
 * cudaErrorInvalidResourceHandle (measured on the H100, driver 580). */
tdm_function *tdm_function_for_func(const void *func, cudaError_t *err)
{
    tdm_function *f = stub_or_kernel(func);

    if (!f) {
        *err = cudaErrorInvalidResourceHandle;
        return NULL;
    }
    return ready_function(f, err);
}

tdm_variable *tdm_variable_for_host(const void *host_var, cudaError_t *err)
{
    tdm_variable *v = NULL;

    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < nvars; i++)
        if (vars[i]->host_var == host_var) {
            v = vars[i];
            break;
        }
    if (!v) {
        *err = cudaErrorInvalidSymbol;
    } else {
        *err = load_locked(v->fatbin);
        if (!*err)
            *err = (cudaError_t)v->load_err;
    }
    pthread_mutex_unlock(&lock);
    return *err ? NULL : v;
}

cudaError_t __cudaGetKernel(cudaKernel_t *kernel, const void *func)
{
    tdm_function *f = registered(func, false);

    if (!kernel)
        return tdm_ret(cudaErrorInvalidValue);
    *kernel = (cudaKernel_t)f;
    return f ? cudaSuccess : tdm_ret(cudaErrorInvalidDeviceFunction);
}

void tdm_registrations_reset(void)
{
    pthread_mutex_lock(&lock);
    for (tdm_fatbin *fb = fatbins; fb; fb = fb->next) {
        fb->loaded = false;
        fb->load_err = 0;
    }
    for (size_t i = 0; i < kernels.n; i++) {
        free(kernels.v[i]->param_offset);
        free(kernels.v[i]->param_size);
        kernels.v[i]->param_offset = kernels.v[i]->param_size = NULL;
        kernels.v[i]->handle = 0;
        kernels.v[i]->load_err = 0;
        __atomic_store_n(&kernels.v[i]->ready, 0, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&lock);
    tdm_libraries_reset();   /* ---- libraries (issue 14) ---- */
}
