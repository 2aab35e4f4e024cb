/* Libraries (cudaLibraryLoadData and its kin, docs/runtime-api.md
 * "Libraries and kernel handles"): the procedures of calls.def's libraries
 * block, handed to session_library.c. */
#include "dispatch.h"

#include <stdlib.h>
#include <string.h>

#include <driver_types.h>

#include "session.h"
#include "tandem_rpc.h"

/* A kernel's parameter layout into its answer (the arrays XDR frees). */
static int fill_params(tdm_func_info *fi, const tdm_func_entry *f)
{
    uint32_t n = f->params.count;

    fi->param_offset.param_offset_val = malloc((n + 1) * sizeof(u_int));
    fi->param_size.param_size_val = malloc((n + 1) * sizeof(u_int));
    if (!fi->param_offset.param_offset_val || !fi->param_size.param_size_val)
        return cudaErrorMemoryAllocation;
    fi->param_offset.param_offset_len = fi->param_size.param_size_len = n;
    memcpy(fi->param_offset.param_offset_val, f->params.offset, n * sizeof(u_int));
    memcpy(fi->param_size.param_size_val, f->params.size, n * sizeof(u_int));
    return 0;
}

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
        tdm_library_kernel *k = &r->kernels.kernels_val[i];
        const tdm_func_entry *f = fe[i] ? NULL : tdm_session_func(ctx, fh[i]);
        k->name = names[i];      /* the answer's now: XDR frees it */
        k->info.err = fe[i];
        k->info.handle = fh[i];
        if (f && fill_params(&k->info, f) != 0)
            k->info.err = cudaErrorMemoryAllocation;
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
