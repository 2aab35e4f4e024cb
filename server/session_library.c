/* Libraries of a session (cudaLibraryLoadData, docs/runtime-api.md
 * "Libraries and kernel handles").  A library is a module of the session:
 * the backend loads the image (fat binary, cubin or PTX), says which
 * kernels it has, and every one of them becomes a function handle as a
 * registered kernel does, so launches, attributes and the standby's mirror
 * (it loads the image by the kernels' names, like any module) are the
 * modules' own.  What is the library's own: the bound on how many a
 * session holds, and its globals, asked for by name after the load. */
#include "session.h"

#include <stdlib.h>
#include <string.h>

#include <driver_types.h>

#include "log.h"
#include "session_hooks.h"
#include "tandem_rpc.h"

void tdm_library_names_free(char **names, uint32_t n)
{
    for (uint32_t i = 0; names && i < n; i++)
        free(names[i]);
    free(names);
}

static void count_library(void *obj, uint64_t id, void *arg)
{
    *(uint32_t *)arg += ((tdm_module_entry *)obj)->library;
}

static uint32_t libraries_held(tdm_session *s)
{
    uint32_t n = 0;

    tdm_handles_each(&s->modules, count_library, &n);
    return n;
}

int tdm_session_library_load(tdm_session *s, const void *image, uint64_t len, uint64_t *library, char ***names,
                             uint64_t **funcs, int **errs, uint32_t *nkernels)
{
    const tdm_backend_ops *ops = s->srv->ops;
    tdm_bmodule *bm = NULL;
    tdm_module_entry *m;
    char **nv = NULL;
    uint32_t n = 0;
    uint64_t *fh = NULL;
    int *fe = NULL;
    int err;

    *library = 0;
    *names = NULL;
    *funcs = NULL;
    *errs = NULL;
    *nkernels = 0;
    if (!image || !len)
        return cudaErrorInvalidValue;
    if (libraries_held(s) >= TDM_SESSION_MAX_LIBRARIES) {
        tdm_log_session(s->id, "library refused: the session holds %u libraries already",
                        TDM_SESSION_MAX_LIBRARIES);
        return cudaErrorMemoryAllocation;
    }
    err = tdm_session_module_admit(s, len, "cudaLibraryLoadData");   /* ---- host resources (issue 16) ---- */
    if (err)
        return err;
    err = ops->module_load(s->srv->be, image, len, &bm);
    if (err) {
        tdm_session_host_give(s, len);
        return err;
    }
    err = ops->module_kernel_names(s->srv->be, bm, image, len, &nv, &n);
    if (!err && n > TDM_MAX_LIBRARY_KERNELS) {
        tdm_log_session(s->id, "library refused: %u kernels, Tandem carries %u", n, TDM_MAX_LIBRARY_KERNELS);
        err = cudaErrorMemoryAllocation;
    }
    /* A name the reply cannot carry would fail the whole reply, and with it the connection. */
    for (uint32_t i = 0; !err && i < n; i++)
        if (strlen(nv[i]) > TDM_MAX_NAME) {
            tdm_log_session(s->id, "library refused: kernel %u's name is %zu characters, Tandem carries %u", i,
                            strlen(nv[i]), TDM_MAX_NAME);
            err = cudaErrorNotSupported;
        }
    if (!err) {
        fh = calloc(n + 1, sizeof(*fh));
        fe = calloc(n + 1, sizeof(*fe));
        if (!fh || !fe)
            err = cudaErrorMemoryAllocation;
    }
    if (err) {
        ops->module_unload(s->srv->be, bm);
        tdm_session_host_give(s, len);
        goto fail;
    }
    /* From here the session owns bm and the image's charge, failure included. */
    err = tdm_session_module_adopt(s, bm, image, len, (const char *const *)nv, n, NULL, 0, NULL, library, fh, fe,
                                   NULL, NULL, NULL);
    if (err)
        goto fail;
    m = tdm_handles_get(&s->modules, *library);
    m->library = true;
    *names = nv;
    *funcs = fh;
    *errs = fe;
    *nkernels = n;
    return 0;
fail:
    tdm_library_names_free(nv, n);
    free(fh);
    free(fe);
    return err;
}

int tdm_session_library_unload(tdm_session *s, uint64_t library)
{
    return tdm_session_module_unload(s, library);
}

/* A library's globals join the session's ranges when asked for: the
 * module's vars array gets room for them while it holds none (a library's
 * has none from its load), so the ranges' records never move. */
static int room_for_global(tdm_module_entry *m)
{
    tdm_var_entry *v;

    if (m->nvars < m->vars_cap)
        return 0;
    if (m->nvars)
        return cudaErrorMemoryAllocation;  /* full, or a registered module's own */
    v = calloc(TDM_LIBRARY_MAX_GLOBALS, sizeof(*v));
    if (!v)
        return cudaErrorMemoryAllocation;
    free(m->vars);
    m->vars = v;
    m->vars_cap = TDM_LIBRARY_MAX_GLOBALS;
    return 0;
}

/* The variable `name` of `library`: found, or given a range at `at` (a standby) or at its own
 * device address (the active).  *made: whether this call gave it its range. */
static int library_global(tdm_session *s, uint64_t library, const char *name, uint64_t at, uint64_t *addr,
                          uint64_t *size, bool *made)
{
    tdm_module_entry *m = tdm_handles_get(&s->modules, library);
    tdm_range r = { 0 };
    int err;

    *made = false;
    if (!m)
        return cudaErrorInvalidResourceHandle;
    if (!name)
        return cudaErrorInvalidValue;
    err = s->srv->ops->module_get_global(s->srv->be, m->bm, name, &r.addr, &r.size);
    /* The library calls' word for a name the image lacks. */
    if (err == cudaErrorInvalidSymbol)
        return cudaErrorSymbolNotFound;
    if (err)
        return err;
    for (uint32_t i = 0; i < m->nvars; i++)
        if (m->vars[i].dev == r.addr) {
            *addr = m->vars[i].addr;
            *size = r.size;
            return 0;
        }
    err = room_for_global(m);
    if (err) {
        tdm_log_session(s->id, "global '%s' refused: a library gives at most %u", name, TDM_LIBRARY_MAX_GLOBALS);
        return err;
    }
    if (tdm_session_module_add_var(s, m, r.addr, r.size, at, addr) != 0)
        return at ? cudaErrorInvalidValue : cudaErrorMemoryAllocation;
    *size = r.size;
    *made = true;
    return 0;
}

int tdm_session_library_global(tdm_session *s, uint64_t library, const char *name, uint64_t *addr, uint64_t *size)
{
    const tdm_session_hooks *hk = s->srv->hooks;
    bool made;
    int err = library_global(s, library, name, 0, addr, size, &made);

    /* A standby must have it at the same address (resilience mirrors it). */
    if (!err && made && hk && hk->global_made)
        hk->global_made(s->srv->hooks_ctx, s, library, name, *addr);
    return err;
}

int tdm_session_library_global_at(tdm_session *s, uint64_t library, const char *name, uint64_t addr)
{
    uint64_t got = 0, size = 0;
    bool made;
    int err = library_global(s, library, name, addr, &got, &size, &made);

    return err ? err : got == addr ? 0 : cudaErrorInvalidValue;
}
