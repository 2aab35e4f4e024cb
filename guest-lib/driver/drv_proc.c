/* cuGetProcAddress: how NVIDIA's runtime and libraries find every driver entry point.  The
 * answer comes from the generated table (gen_procs.sh): the exported symbol a name means at
 * the caller's CUDA version, then its per-thread-stream variant where the caller asks for one,
 * then Tandem's function for that symbol (a refusing stub for what Tandem does not carry, so
 * a call fails with a line naming it). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver.h"
#include "drv_procs.h"

static int by_name(const void *key, const void *elem)
{
    return strcmp(key, ((const struct tdm_proc_symbol *)elem)->name);
}

static void *symbol(const char *name)
{
    const struct tdm_proc_symbol *s =
        bsearch(name, tdm_proc_symbols, tdm_proc_nsymbols, sizeof(tdm_proc_symbols[0]), by_name);

    return s ? s->fn : NULL;
}

/* The symbol `name` means at `version`: the newest version of it not newer than the
 * caller's.  NULL with *too_new set when every version of it is newer; NULL alone when the
 * table has no versions of it. */
static const char *versioned(const char *name, int version, bool *too_new)
{
    const char *best = NULL;
    bool any = false;

    *too_new = false;
    for (unsigned i = 0; i < tdm_proc_nversions; i++) {
        const struct tdm_proc_version *v = &tdm_proc_versions[i];
        if (strcmp(v->name, name) != 0)
            continue;
        any = true;
        if (v->version <= version)
            best = v->symbol;
    }
    *too_new = any && !best;
    return best;
}

CUresult cuGetProcAddress_v2(const char *symbol_name, void **pfn, int cudaVersion, cuuint64_t flags,
                             CUdriverProcAddressQueryResult *symbolStatus)
{
    const char *sym;
    char variant[160];
    bool too_new;
    void *fn = NULL;

    if (symbolStatus)
        *symbolStatus = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    if (!symbol_name || !pfn)
        return CUDA_ERROR_INVALID_VALUE;
    *pfn = NULL;
    if (flags & ~(cuuint64_t)(CU_GET_PROC_ADDRESS_LEGACY_STREAM | CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM))
        return CUDA_ERROR_INVALID_VALUE;
    sym = versioned(symbol_name, cudaVersion, &too_new);
    if (too_new) {
        if (symbolStatus)
            *symbolStatus = CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT;
        return CUDA_ERROR_NOT_FOUND;
    }
    if (!sym)
        sym = symbol_name;
    if (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) {
        snprintf(variant, sizeof(variant), "%s_ptsz", sym);
        fn = symbol(variant);
        if (!fn) {
            snprintf(variant, sizeof(variant), "%s_ptds", sym);
            fn = symbol(variant);
        }
    }
    if (!fn)
        fn = symbol(sym);
    if (!fn)
        return CUDA_ERROR_NOT_FOUND;
    *pfn = fn;
    if (symbolStatus)
        *symbolStatus = CU_GET_PROC_ADDRESS_SUCCESS;
    return CUDA_SUCCESS;
}

CUresult cuGetProcAddress(const char *symbol_name, void **pfn, int cudaVersion, cuuint64_t flags)
{
    return cuGetProcAddress_v2(symbol_name, pfn, cudaVersion, flags, NULL);
}
