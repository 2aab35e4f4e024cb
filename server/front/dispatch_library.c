/* Libraries (cudaLibraryLoadData and its kin, docs/runtime-api.md
 * "Libraries and kernel handles"): the procedures of calls.def's libraries
 * block, handed to session_library.c. */
#include "dispatch.h"

#include <stdlib.h>

#include <driver_types.h>

#include "session.h"
#include "tandem_rpc.h"

bool tdm_serve_LIBRARY_LOAD(void *ctx, void *args, void *res)
{
    tdm_library_load_args *a = args;
    tdm_library_load_res *r = res;
    char **names = NULL;
    uint64_t *fh = NULL, library = 0;
    int *fe = NULL;
    uint32_t n = 0;

    r->err = tdm_session_library_load(ctx, a->image.image_val, a->image.image_len, &library, &names, &fh, &fe, &n);
    if (r->err)
        return true;
    r->kernels.kernels_val = calloc(n + 1, sizeof(tdm_library_kernel));
    if (!r->kernels.kernels_val) {
        /* The guest never hears of it: the library goes again. */
        tdm_session_library_unload(ctx, library);
        tdm_library_names_free(names, n);
        r->err = cudaErrorMemoryAllocation;
        goto out;
    }
    r->library = library;
    r->kernels.kernels_len = n;
    for (uint32_t i = 0; i < n; i++) {
        r->kernels.kernels_val[i].name = names[i];      /* the answer's now: XDR frees it */
        tdm_dispatch_func_info(ctx, &r->kernels.kernels_val[i].info, fh[i], fe[i]);
    }
    free(names);
out:
    free(fh);
    free(fe);
    return true;
}

bool tdm_serve_LIBRARY_UNLOAD(void *ctx, void *args, void *res)
{
    *(int *)res = tdm_session_library_unload(ctx, *(tdm_handle *)args);
    return true;
}

bool tdm_serve_LIBRARY_GET_GLOBAL(void *ctx, void *args, void *res)
{
    tdm_library_global_args *a = args;
    tdm_library_global_res *r = res;
    uint64_t addr = 0, size = 0;

    r->err = tdm_session_library_global(ctx, a->library, a->name, &addr, &size);
    r->addr = addr;
    r->size = size;
    return true;
}
