/* Run-time loading of libcuda.so.1; see cuda_driver.h for why. */
#include "cuda_driver.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

tdm_cuda_driver tdm_cu;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static char load_error[256] = "the NVIDIA driver loader did not run";
static int loaded;

typedef CUresult (*get_proc_fn)(const char *, void **, int, cuuint64_t,
                                CUdriverProcAddressQueryResult *);

static int resolve(get_proc_fn get_proc, const char *name, void **slot)
{
    CUdriverProcAddressQueryResult found = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    CUresult r = get_proc(name, slot, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, &found);

    if (r == CUDA_SUCCESS && found == CU_GET_PROC_ADDRESS_SUCCESS && *slot)
        return 0;
    snprintf(load_error, sizeof(load_error),
             "the NVIDIA driver has no %s for CUDA %d.%d (driver too old?)", name,
             CUDA_VERSION / 1000, CUDA_VERSION % 1000 / 10);
    return -1;
}

static void load(void)
{
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    get_proc_fn get_proc;

    if (!lib) {
        snprintf(load_error, sizeof(load_error), "cannot load the NVIDIA driver: %s", dlerror());
        return;
    }
    /* The library stays loaded for the life of the process, as libcudart does. */
    *(void **)&get_proc = dlsym(lib, "cuGetProcAddress_v2");
    if (!get_proc) {
        snprintf(load_error, sizeof(load_error),
                 "libcuda.so.1 has no cuGetProcAddress_v2 (driver older than CUDA 12)");
        return;
    }
#define TDM_RESOLVE(fn)                                                                  \
    if (resolve(get_proc, #fn, (void **)&tdm_cu.fn) != 0)                                 \
        return;
    TDM_CUDA_DRIVER_FUNCS(TDM_RESOLVE)
#undef TDM_RESOLVE
    loaded = 1;
}

int tdm_cuda_driver_load(char *err, size_t errlen)
{
    pthread_once(&load_once, load);
    if (loaded)
        return 0;
    snprintf(err, errlen, "%s", load_error);
    return cudaErrorInsufficientDriver;
}
