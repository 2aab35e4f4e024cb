#include "takeover_state.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "mirror_wire.h"
#include "tandem_rpc.h"
#include "grow.h"

tdm_takeover_state *tdm_takeover_state_new(struct tdm_resilience *res)
{
    tdm_takeover_state *t = calloc(1, sizeof(*t));

    if (!t)
        return NULL;
    t->res = res;
    tdm_range_map_init(&t->shadows);
    return t;
}

void tdm_takeover_state_free(tdm_takeover_state *t)
{
    if (!t)
        return;
    tdm_takeover_forget_modules(t);
    for (size_t i = 0; i < t->shadows.n; i++)
        free(t->shadows.v[i].backing);
    tdm_range_map_release(&t->shadows);
    free(t);
}

void tdm_takeover_mirror(tdm_session *s, uint32_t type, uint64_t a, uint64_t b, uint64_t c, uint64_t d,
                         const void *payload, uint32_t len, int fd)
{
    tdm_takeover_state *t = tdm_takeover(s);
    tdm_mirror_hdr h = { .type = type, .len = len, .session = s->id, .a = a, .b = b, .c = c, .d = d };

    if (t->resume_token && t->res->mirror)
        tdm_mirror_post(t->res->mirror, t->mirror_gen, &h, payload, fd);
}

bool tdm_takeover_protected(tdm_session *s)
{
    tdm_takeover_state *t = tdm_takeover(s);

    return t->resume_token && t->res->mirror && tdm_mirror_gen(t->res->mirror) == t->mirror_gen;
}

void tdm_takeover_mirror_mem(tdm_session *s, uint32_t type, tdm_bmem *mem, uint64_t a, uint64_t b, uint64_t c,
                             uint64_t d)
{
    tdm_takeover_state *t = tdm_takeover(s);
    int fd = -1;

    if (!t->resume_token || !t->res->mirror)
        return;
    int err = s->srv->ops->mem_export(s->srv->be, mem, &fd);
    if (err) {
        /* Without its memory the standby cannot resume this session. */
        char why[96];
        snprintf(why, sizeof(why), "cannot export %#llx for the standby (cudaError %d)", (unsigned long long)a, err);
        tdm_takeover_unprotect(s, why);
        return;
    }
    tdm_takeover_mirror(s, type, a, b, c, d, NULL, 0, fd);
    close(fd);
}

void tdm_takeover_unprotect(tdm_session *s, const char *why)
{
    tdm_takeover_state *t = tdm_takeover(s);

    if (!t->resume_token)
        return;
    tdm_log_session(s->id, "%s: the session is no longer protected", why);
    tdm_takeover_mirror(s, TDM_M_SESSION_CLOSE, 0, 0, 0, 0, NULL, 0, -1);
    t->resume_token = 0;
}

/* The TDM_M_MODULE_LOAD payload (mirror_wire.h has the layout): the
 * guest's load arguments as XDR, then the handles and addresses the active
 * gave.  NULL for want of memory or past the mirror's limit. */
static void *module_msg(const tdm_module_made *m, uint32_t *msg_len)
{
    tdm_module_load_args a = { { (u_int)m->len, (char *)m->image }, { m->nfuncs, (tdm_name *)m->func_names },
                               { m->nvars, (tdm_name *)m->var_names } };
    unsigned long xlen = xdr_sizeof((xdrproc_t)xdr_tdm_module_load_args, &a);
    size_t total = xlen + 8 + (size_t)(m->nfuncs + m->nvars) * 8;
    char *buf = xlen && total <= TDM_MIRROR_MAX_PAYLOAD ? malloc(total) : NULL;
    XDR x;

    if (!buf)
        return NULL;
    xdrmem_create(&x, buf, (u_int)xlen, XDR_ENCODE);
    if (!xdr_tdm_module_load_args(&x, &a)) {
        xdr_destroy(&x);
        free(buf);
        return NULL;
    }
    xdr_destroy(&x);
    char *p = buf + xlen;
    /* A module with no kernels or no variables may come without arrays. */
    memcpy(p, &m->nfuncs, 4);
    if (m->nfuncs)
        memcpy(p + 4, m->func_handles, (size_t)m->nfuncs * 8);
    p += 4 + (size_t)m->nfuncs * 8;
    memcpy(p, &m->nvars, 4);
    if (m->nvars)
        memcpy(p + 4, m->var_addr, (size_t)m->nvars * 8);
    *msg_len = (uint32_t)total;
    return buf;
}

bool tdm_takeover_keep_module(tdm_takeover_state *t, const tdm_module_made *m)
{
    tdm_kept_module k = { .handle = m->handle };

    if (tdm_grow(&t->modules, &t->cap_modules, t->nmodules + 1, sizeof(*t->modules), 8) != 0)
        return false;
    k.msg = module_msg(m, &k.len);
    /* Kept even without its payload: a later sync must know the module
     * exists and cannot be mirrored. */
    t->modules[t->nmodules++] = k;
    return k.msg != NULL;
}

const tdm_kept_module *tdm_takeover_kept_module(const tdm_takeover_state *t, uint64_t handle)
{
    for (size_t i = 0; i < t->nmodules; i++)
        if (t->modules[i].handle == handle)
            return &t->modules[i];
    return NULL;
}

bool tdm_takeover_keep_global(tdm_takeover_state *t, uint64_t handle, const char *name, uint64_t addr)
{
    tdm_kept_module *k = (tdm_kept_module *)tdm_takeover_kept_module(t, handle);
    char *copy;

    if (!k)
        return false;
    /* Once each: a standby hears of a global once, but the library hands it out again (the
     * bound of the list is the library's, TDM_LIBRARY_MAX_GLOBALS). */
    for (size_t i = 0; i < k->nglobals; i++)
        if (strcmp(k->globals[i].name, name) == 0)
            return k->globals[i].addr == addr;
    if (tdm_grow(&k->globals, &k->cap_globals, k->nglobals + 1, sizeof(*k->globals), 4) != 0)
        return false;
    if (!(copy = strdup(name)))
        return false;
    k->globals[k->nglobals++] = (tdm_kept_global){ .name = copy, .addr = addr };
    return true;
}

static void kept_module_free(tdm_kept_module *k)
{
    free(k->msg);
    for (size_t i = 0; i < k->nglobals; i++)
        free(k->globals[i].name);
    free(k->globals);
}

void tdm_takeover_forget_module(tdm_takeover_state *t, uint64_t handle)
{
    for (size_t i = 0; i < t->nmodules; i++)
        if (t->modules[i].handle == handle) {
            kept_module_free(&t->modules[i]);
            t->modules[i] = t->modules[--t->nmodules];
            return;
        }
}

void tdm_takeover_forget_modules(tdm_takeover_state *t)
{
    for (size_t i = 0; i < t->nmodules; i++)
        kept_module_free(&t->modules[i]);
    free(t->modules);
    t->modules = NULL;
    t->nmodules = t->cap_modules = 0;
}
