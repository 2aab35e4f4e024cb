/* Libraries (issue 14): the kernels of a library's module, as the driver
 * enumerates them (cuModuleEnumerateFunctions), by name. */
#include <stdlib.h>
#include <string.h>

#include "cuda_backend_internal.h"

int tdm_cuda_module_kernel_names(tdm_backend *b, tdm_bmodule *m, const void *image, size_t len, char ***names,
                                 uint32_t *n)
{
    CUmodule mod = tdm_cuda_module_handle(m);
    CUfunction *fns = NULL;
    char **v = NULL;
    unsigned count = 0, i = 0;
    int err = tdm_cuda_enter(b);

    *names = NULL;
    *n = 0;
    if (err)
        return err;
    err = tdm_cuda_err(tdm_cu.cuModuleGetFunctionCount(&count, mod), "cuModuleGetFunctionCount");
    if (err)
        return err;
    fns = calloc(count + 1, sizeof(*fns));
    v = calloc(count + 1, sizeof(*v));
    if (!fns || !v) {
        err = cudaErrorMemoryAllocation;
        goto out;
    }
    /* A module without kernels has nothing to enumerate (and the driver
     * may refuse a buffer of none). */
    if (count)
        err = tdm_cuda_err(tdm_cu.cuModuleEnumerateFunctions(fns, count, mod), "cuModuleEnumerateFunctions");
    for (i = 0; !err && i < count; i++) {
        const char *name = NULL;
        err = tdm_cuda_err(tdm_cu.cuFuncGetName(&name, fns[i]), "cuFuncGetName");
        if (!err && !(v[i] = strdup(name ? name : "")))
            err = cudaErrorMemoryAllocation;
    }
out:
    free(fns);
    if (err) {
        for (unsigned j = 0; v && j < count; j++)
            free(v[j]);
        free(v);
        return err;
    }
    *names = v;
    *n = count;
    return 0;
}
