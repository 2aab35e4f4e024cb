#include "dispatch.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <driver_types.h>

#include "calls.h"
#include "dispatch_output.h"
#include "log.h"
#include "placement.h"
#include "resilience.h"
#include "session.h"
#include "tandem_rpc.h"
#include "tenants.h"
#include "xdr_extra.h"

/* Handlers fill `res` with memory the RPC layer frees with xdr_free, so
 * anything pointed to from a result is malloc'ed here. */

bool tdm_serve_NULL(void *ctx, void *args, void *res)
{
    return true;
}

/* The start of a TDM_HELLO or TDM_RESUME reply: its strings (the RPC layer
 * frees them), and the protocol check.  False: answer with r->err. */
static bool hello_begin(tdm_session *s, unsigned proto_version, tdm_hello_res *r)
{
    r->backend = strdup(s->srv->ops->name);
    r->standby = strdup("");
    r->moved_to = strdup("");
    if (!r->backend || !r->standby || !r->moved_to) {
        r->err = cudaErrorMemoryAllocation;
        return false;
    }
    if (proto_version != TDM_PROTO_VERSION) {
        tdm_log_session(s->id, "guest speaks protocol %u, server %u", proto_version, TDM_PROTO_VERSION);
        r->err = cudaErrorInsufficientDriver;
        return false;
    }
    return true;
}

/* What every reply to a guest starting (or resuming) a session says. */
static void hello_describe(tdm_session *s, tdm_hello_res *r)
{
    r->err = 0;
    r->session_id = s->id;
    r->simulated = s->srv->ops->simulated;
    r->device_count = 1;
    r->driver_version = s->srv->driver_version;
    r->arena_base = s->srv->cfg.arena_base;
    r->arena_size = s->srv->cfg.arena_size;
}

/* The reply's standby, token and policy: where the session resumes if
 * this server dies ("" when nowhere). */
static bool describe_protection(tdm_session *s, tdm_hello_res *r)
{
    tdm_protection p;

    tdm_resilience_describe(s, &p);
    free(r->standby);
    r->standby = strdup(p.standby);
    r->resume_token = p.token;
    r->resume_policy = p.policy;
    if (!r->standby) {
        r->err = cudaErrorMemoryAllocation;
        return false;
    }
    return true;
}

bool tdm_serve_HELLO(void *ctx, void *args, void *res)
{
    tdm_session *s = ctx;
    tdm_hello_args *a = args;
    tdm_hello_res *r = res;

    if (!hello_begin(s, a->proto_version, r))
        return false;
    r->err = tdm_tenants_admit(s->srv->cfg.tenants, s, &a->token);
    if (r->err)
        return false;
    r->err = tdm_placement_take(s, &a->placement);   /* ---- on-boarding (issue 17) ---- */
    if (r->err)
        return false;
    s->pid = a->pid;
    snprintf(s->client, sizeof(s->client), "%s", a->client ? a->client : "");
    hello_describe(s, r);
    tdm_resilience_hello(s, a->resume_policy);
    return describe_protection(s, r);
}

bool tdm_serve_RESUME(void *ctx, void *args, void *res)
{
    tdm_session *s = ctx;
    tdm_resume_args *a = args;
    tdm_hello_res *r = res;

    if (!hello_begin(s, a->proto_version, r))
        return false;
    /* The resume token proves the guest owns the session; the tenant's token says whose it is,
     * which the mirror does not carry: this server applies that tenant's bounds (issue 16). */
    r->err = tdm_tenants_admit(s->srv->cfg.tenants, s, &a->token);
    if (r->err)
        return false;
    r->err = tdm_placement_take(s, &a->placement);   /* ---- on-boarding (issue 17) ---- */
    if (r->err)
        return false;
    r->err = tdm_resilience_resume(s, a->session_id, a->resume_token, a->epoch, a->epoch_sent, &r->resumed_epoch);
    if (r->err)
        return false;
    s->pid = a->pid;
    hello_describe(s, r);
    return describe_protection(s, r);
}

/* The guest asks, now and then, whether its session is protected. */
bool tdm_serve_PROTECT(void *ctx, void *args, void *res)
{
    tdm_session *s = ctx;
    tdm_protect_args *a = args;
    tdm_hello_res *r = res;
    tdm_protection to;
    bool moved;

    if (!hello_begin(s, TDM_PROTO_VERSION, r))
        return false;
    hello_describe(s, r);
    r->err = tdm_resilience_check(s, a->seq, a->resume_policy, &moved, &to);
    if (moved) {
        free(r->moved_to);
        r->moved_to = strdup(to.standby);
        r->resume_token = to.token;
        r->resume_policy = to.policy;
        r->resumed_epoch = a->seq;
        /* The session is the other server's now: the connection ends after
         * this reply (an shm guest waits for that before it restarts its
         * rings for the other server). */
        return false;
    }
    if (r->err)
        return true;
    r->resumed_epoch = a->seq;
    return describe_protection(s, r);
}

bool tdm_serve_QUIESCE(void *ctx, void *args, void *res)
{
    tdm_session *s = ctx;

    *(int *)res = tdm_session_quiesce(s);
    /* A replay ends with a quiesce: its work is done, the next may go. */
    tdm_resilience_replay_end(s);
    return true;
}

bool tdm_serve_REPLAY_BEGIN(void *ctx, void *args, void *res)
{
    tdm_session *s = ctx;

    tdm_resilience_replay_begin(s);
    *(int *)res = 0;
    return true;
}

/* One-way: the guest saw all its work up to call number N complete. */
bool tdm_serve_EPOCH(void *ctx, void *args, void *res)
{
    tdm_session *s = ctx;

    tdm_session_defer(s, tdm_resilience_epoch(s, *(tdm_u64 *)args));
    return true;
}

bool tdm_serve_DEVICE_INFO(void *ctx, void *args, void *res)
{
    tdm_session *s = ctx;
    tdm_device_info_res *r = res;
    const tdm_device_info *di = &s->srv->info;

    r->name = strdup(di->name);
    memcpy(r->uuid, di->uuid, sizeof(r->uuid));
    r->total_mem = di->total_mem;
    r->attrs.attrs_val = malloc(sizeof(di->attrs));
    if (!r->name || !r->attrs.attrs_val) {
        r->err = cudaErrorMemoryAllocation;
        return true;
    }
    memcpy(r->attrs.attrs_val, di->attrs, sizeof(di->attrs));
    r->attrs.attrs_len = TDM_DEVICE_ATTR_COUNT;
    r->simulated = di->simulated;
    if (s->bounds.mem_quota && s->bounds.mem_quota < r->total_mem)
        r->total_mem = s->bounds.mem_quota;
    return true;
}

bool tdm_serve_MEM_GET_INFO(void *ctx, void *args, void *res)
{
    tdm_mem_info_res *r = res;
    uint64_t f = 0, t = 0;

    r->err = tdm_session_mem_get_info(ctx, &f, &t);
    r->free_bytes = f;
    r->total_bytes = t;
    return true;
}

bool tdm_serve_MALLOC(void *ctx, void *args, void *res)
{
    tdm_malloc_res *r = res;
    uint64_t addr = 0;

    r->err = tdm_session_malloc(ctx, *(tdm_u64 *)args, &addr);
    r->addr = addr;
    return true;
}

bool tdm_serve_FREE(void *ctx, void *args, void *res)
{
    *(int *)res = tdm_session_free(ctx, *(tdm_addr *)args);
    return true;
}

static void free_module_res(tdm_module_load_res *r)
{
    free(r->funcs.funcs_val);
    free(r->vars.vars_val);
    memset(r, 0, sizeof(*r));
}

void tdm_dispatch_func_info(void *ctx, struct tdm_func_info *fi, uint64_t handle, int err)
{
    const tdm_func_entry *f = err ? NULL : tdm_session_func(ctx, handle);

    fi->err = err;
    fi->handle = handle;
    if (!f)
        return;
    fi->param_offset.param_offset_val = malloc((f->params.count + 1) * sizeof(u_int));
    fi->param_size.param_size_val = malloc((f->params.count + 1) * sizeof(u_int));
    if (!fi->param_offset.param_offset_val || !fi->param_size.param_size_val) {
        fi->err = cudaErrorMemoryAllocation;
        return;
    }
    fi->param_offset.param_offset_len = fi->param_size.param_size_len = f->params.count;
    memcpy(fi->param_offset.param_offset_val, f->params.offset, f->params.count * sizeof(u_int));
    memcpy(fi->param_size.param_size_val, f->params.size, f->params.count * sizeof(u_int));
}

bool tdm_serve_MODULE_LOAD(void *ctx, void *args, void *res)
{
    tdm_module_load_args *a = args;
    tdm_module_load_res *r = res;
    uint32_t nf = a->funcs.funcs_len, nv = a->vars.vars_len;
    uint64_t *fh = calloc(nf + 1, sizeof(*fh)), *va = calloc(nv + 1, sizeof(*va)), *vs = calloc(nv + 1, sizeof(*vs));
    int *fe = calloc(nf + 1, sizeof(*fe)), *ve = calloc(nv + 1, sizeof(*ve));
    uint64_t module = 0;

    r->funcs.funcs_val = calloc(nf + 1, sizeof(tdm_func_info));
    r->vars.vars_val = calloc(nv + 1, sizeof(tdm_var_info));
    if (!fh || !va || !vs || !fe || !ve || !r->funcs.funcs_val || !r->vars.vars_val) {
        free_module_res(r);
        r->err = cudaErrorMemoryAllocation;
        goto out;
    }
    r->err = tdm_session_module_load(ctx, a->image.image_val, a->image.image_len,
                                     (const char *const *)a->funcs.funcs_val, nf,
                                     (const char *const *)a->vars.vars_val, nv, NULL,
                                     &module, fh, fe, va, vs, ve);
    if (r->err) {
        free_module_res(r);
        r->err = r->err ? r->err : cudaErrorUnknown;
        goto out;
    }
    r->module = module;
    r->funcs.funcs_len = nf;
    r->vars.vars_len = nv;
    for (uint32_t i = 0; i < nf; i++)
        tdm_dispatch_func_info(ctx, &r->funcs.funcs_val[i], fh[i], fe[i]);
    for (uint32_t i = 0; i < nv; i++) {
        r->vars.vars_val[i].err = ve[i];
        r->vars.vars_val[i].addr = va[i];
        r->vars.vars_val[i].size = vs[i];
    }
out:
    free(fh);
    free(va);
    free(vs);
    free(fe);
    free(ve);
    return true;
}

bool tdm_serve_MODULE_UNLOAD(void *ctx, void *args, void *res)
{
    *(int *)res = tdm_session_module_unload(ctx, *(tdm_handle *)args);
    return true;
}

bool tdm_serve_FUNC_GET_ATTRIBUTES(void *ctx, void *args, void *res)
{
    tdm_func_attrs_res *r = res;
    tdm_func_attrs fa = { 0 };

    r->err = tdm_session_func_attrs(ctx, *(tdm_handle *)args, &fa);
    r->shared_size_bytes = fa.shared_size_bytes;
    r->const_size_bytes = fa.const_size_bytes;
    r->local_size_bytes = fa.local_size_bytes;
    r->max_threads_per_block = fa.max_threads_per_block;
    r->num_regs = fa.num_regs;
    r->ptx_version = fa.ptx_version;
    r->binary_version = fa.binary_version;
    r->cache_mode_ca = fa.cache_mode_ca;
    r->max_dynamic_shared_size_bytes = fa.max_dynamic_shared_size_bytes;
    r->preferred_shmem_carveout = fa.preferred_shmem_carveout;
    return true;
}

bool tdm_serve_STREAM_CREATE(void *ctx, void *args, void *res)
{
    tdm_stream_create_args *a = args;
    tdm_handle_res *r = res;
    uint64_t h = 0;

    r->err = tdm_session_stream_create(ctx, a->flags, a->priority, &h);
    r->handle = h;
    return true;
}

bool tdm_serve_STREAM_DESTROY(void *ctx, void *args, void *res)
{
    *(int *)res = tdm_session_stream_destroy(ctx, *(tdm_handle *)args);
    return true;
}

bool tdm_serve_STREAM_SYNCHRONIZE(void *ctx, void *args, void *res)
{
    *(int *)res = tdm_session_stream_synchronize(ctx, *(tdm_handle *)args);
    return true;
}

bool tdm_serve_STREAM_QUERY(void *ctx, void *args, void *res)
{
    *(int *)res = tdm_session_stream_query(ctx, *(tdm_handle *)args);
    return true;
}

bool tdm_serve_STREAM_GET_FLAGS(void *ctx, void *args, void *res)
{
    tdm_flags_res *r = res;
    unsigned flags = 0;

    r->err = tdm_session_stream_get_flags(ctx, *(tdm_handle *)args, &flags);
    r->flags = flags;
    return true;
}

bool tdm_serve_EVENT_CREATE(void *ctx, void *args, void *res)
{
    tdm_handle_res *r = res;
    uint64_t h = 0;

    r->err = tdm_session_event_create(ctx, *(tdm_u32 *)args, &h);
    r->handle = h;
    return true;
}

bool tdm_serve_EVENT_DESTROY(void *ctx, void *args, void *res)
{
    *(int *)res = tdm_session_event_destroy(ctx, *(tdm_handle *)args);
    return true;
}

bool tdm_serve_EVENT_SYNCHRONIZE(void *ctx, void *args, void *res)
{
    *(int *)res = tdm_session_event_synchronize(ctx, *(tdm_handle *)args);
    return true;
}

bool tdm_serve_EVENT_QUERY(void *ctx, void *args, void *res)
{
    *(int *)res = tdm_session_event_query(ctx, *(tdm_handle *)args);
    return true;
}

bool tdm_serve_EVENT_ELAPSED_TIME(void *ctx, void *args, void *res)
{
    tdm_elapsed_args *a = args;
    tdm_elapsed_res *r = res;

    r->err = tdm_session_event_elapsed(ctx, a->start, a->end, &r->ms);
    return true;
}

bool tdm_serve_DEVICE_SYNCHRONIZE(void *ctx, void *args, void *res)
{
    *(int *)res = tdm_session_device_synchronize(ctx);
    return true;
}

bool tdm_serve_DEVICE_RESET(void *ctx, void *args, void *res)
{
    *(int *)res = tdm_session_reset(ctx);
    return true;
}

bool tdm_serve_MEMCPY_DTOH(void *ctx, void *args, void *res)
{
    tdm_memcpy_dtoh_args *a = args;
    tdm_memcpy_dtoh_res *r = res;

    if (a->size > TDM_MAX_CHUNK) {
        r->err = cudaErrorInvalidValue;
        return true;
    }
    r->data.data_val = malloc(a->size ? a->size : 1);
    if (!r->data.data_val) {
        r->err = cudaErrorMemoryAllocation;
        return true;
    }
    r->err = tdm_session_memcpy_dtoh(ctx, r->data.data_val, a->src, a->size, a->stream);
    r->data.data_len = r->err ? 0 : (u_int)a->size;
    return true;
}

/* ---- one-way ---- */

bool tdm_serve_MEMCPY_HTOD(void *ctx, void *args, void *res)
{
    tdm_memcpy_htod_args *a = args;

    /* The bytes may lie in the session's staging (prepare_args below). */
    tdm_session_defer(ctx, tdm_session_memcpy_htod_bulk(ctx, a->dst, a->data.data_val, a->data.data_len, a->stream));
    return true;
}

bool tdm_serve_MEMCPY_DTOD(void *ctx, void *args, void *res)
{
    tdm_memcpy_dtod_args *a = args;

    tdm_session_defer(ctx, tdm_session_memcpy_dtod(ctx, a->dst, a->src, a->size, a->stream));
    return true;
}

bool tdm_serve_MEMSET(void *ctx, void *args, void *res)
{
    tdm_memset_args *a = args;

    tdm_session_defer(ctx, tdm_session_memset(ctx, a->dst, (uint8_t)a->value, a->size, a->stream));
    return true;
}

bool tdm_serve_LAUNCH(void *ctx, void *args, void *res)
{
    tdm_launch_args *a = args;
    tdm_dim3 g = { a->grid.x, a->grid.y, a->grid.z }, b = { a->block.x, a->block.y, a->block.z };

    tdm_session_defer(ctx, tdm_session_launch(ctx, a->func, g, b, a->shared_mem, a->stream,
                                              a->params.params_val, a->params.params_len));
    return true;
}

bool tdm_serve_EVENT_RECORD(void *ctx, void *args, void *res)
{
    tdm_event_record_args *a = args;

    tdm_session_defer(ctx, tdm_session_event_record(ctx, a->event, a->stream));
    return true;
}

/* The call itself is the point: it carried the guest's batched calls here. */
bool tdm_serve_FLUSH(void *ctx, void *args, void *res)
{
    return true;
}

bool tdm_serve_STREAM_WAIT_EVENT(void *ctx, void *args, void *res)
{
    tdm_stream_wait_args *a = args;

    tdm_session_defer(ctx, tdm_session_stream_wait_event(ctx, a->stream, a->event));
    return true;
}

static void garbage_oneway(void *ctx, uint32_t proc)
{
    tdm_session *s = ctx;

    tdm_log_session(s->id, "undecodable arguments for one-way procedure %u", proc);
    tdm_session_defer(s, cudaErrorInvalidValue);
}

/* --crash-after-calls N: the server dies by SIGKILL as it is about to
 * serve its Nth call, so tests can stop it at every point of a program;
 * with --crash-before-reply, once it served the call but before the guest
 * hears so (the call took effect, and the standby mirrored it). */
static void crash_point(tdm_session *s, uint32_t proc, bool served)
{
    long n = s->srv->cfg.crash_after_calls;

    if (!n || served != s->srv->cfg.crash_before_reply)
        return;
    if (atomic_fetch_add(&s->srv->calls, 1) + 1 == n) {
        tdm_log("crashing at call %ld (procedure %u) %s, as --crash-after-calls asked", n, proc,
                served ? "before its reply" : "before serving it");
        raise(SIGKILL);
    }
}

/* ---- tenants (issue 16): nothing but HELLO and RESUME before the credential ---- */
static bool admits(void *ctx, uint32_t proc)
{
    return tdm_tenants_allow_call(ctx, proc);
}

static void before_call(void *ctx, uint32_t proc)
{
    tdm_output_call_begins(ctx);
    tdm_resilience_heard(ctx);
    crash_point(ctx, proc, false);
    tdm_session_stats_call_begins(ctx);   /* ---- control plane (issue 17) ---- */
}

static void after_call(void *ctx, uint32_t proc, void *res)
{
    const tdm_call_info *call = tdm_call_find(proc);

    tdm_session_stats_call_ends(ctx);   /* ---- control plane (issue 17) ---- */
    tdm_output_call_ends(ctx, call, res);
    if (call && call->mirror == TDM_MIRROR_UNPROTECT)
        tdm_resilience_unmirrorable(ctx, call->name);
    crash_point(ctx, proc, true);
}

/* The table is expanded from the procedure table, one entry per row of
 * proto/calls.def, so types and sizes are written once; each row's handler
 * is tdm_serve_<NAME>, and a row without one fails the build here. */
#define TDM_CALL(NAME, NUM, MODE, ARG, RES, STREAM, IDLE, PROGRESS, EFFECT, RESOURCE, MIRROR) \
    [TDM_##NAME] = { TDM_CALL_C_XARGS(ARG), sizeof(ARG), TDM_CALL_C_XRES(MODE, RES),         \
                     TDM_CALL_C_RES_SIZE(MODE, RES), tdm_serve_##NAME },
static const tdm_rpc_proc procs[] = {
#include "calls.def"
};
#undef TDM_CALL

const tdm_rpc_program tdm_dispatch_program = {
    .prog = TANDEM_PROG,
    .vers = TANDEM_V1,
    .procs = procs,
    .nprocs = sizeof(procs) / sizeof(procs[0]),
    .on_garbage_oneway = garbage_oneway,
    .admits = admits,
    .before_call = before_call,
    .after_call = after_call,
    .prepare_args = tdm_dispatch_prepare_args,
    .reclaim_args = tdm_dispatch_reclaim_args,
};
