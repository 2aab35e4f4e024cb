/* Copies, memsets and launches: queued by the caller, run by the stream's
 * worker with every device address checked against the memory table. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_internal.h"

static sim_op *op_new(sim_op_kind kind)
{
    sim_op *op = calloc(1, sizeof(*op));

    if (op)
        op->kind = kind;
    return op;
}

void sim_op_free_locked(tdm_backend *b, sim_op *op)
{
    if (op->event)
        sim_event_unref_locked(b, op->event);
    if (op->func)
        sim_module_unref_locked(b, op->func->m);
    if (op->kind == SIM_OP_HTOD)
        free(op->host);
    if (op->cond)
        sim_cond_unref_locked(b, op->cond);
    free(op->params);
    if (op->hold)   /* ---- host callbacks (issue 14) ---- */
        sim_host_unref_locked(op->hold);
    free(op);
}

int sim_memcpy_htod(tdm_backend *b, uint64_t dst, const void *src, size_t n, tdm_bstream *s)
{
    sim_op *op = op_new(SIM_OP_HTOD);

    if (!op)
        return cudaErrorMemoryAllocation;
    /* The caller's buffer is only valid during the call. */
    op->host = malloc(n ? n : 1);
    if (!op->host) {
        free(op);
        return cudaErrorMemoryAllocation;
    }
    memcpy(op->host, src, n);
    op->dst = dst;
    op->n = n;
    /* graph memcpy nodes (issue 14): a captured copy's source outlives the
     * graph (staging or pinned memory, session_graph_copy.c): the graph
     * reads it at each launch, as the GPU does. */
    pthread_mutex_lock(&b->lock);
    if (sim_stream_or_legacy(b, s)->capture)
        op->live_src = src;
    pthread_mutex_unlock(&b->lock);
    sim_enqueue(b, s, op);
    return 0;
}

int sim_memcpy_dtoh_sync(tdm_backend *b, void *dst, uint64_t src, size_t n, tdm_bstream *s)
{
    sim_op *op = op_new(SIM_OP_DTOH);
    int result = 0;
    uint64_t seq;

    if (!op)
        return cudaErrorMemoryAllocation;
    op->host = dst;
    op->src = src;
    op->n = n;
    op->result = &result;
    seq = sim_enqueue(b, s, op);
    pthread_mutex_lock(&b->lock);
    sim_wait_seq_locked(b, s, seq);
    pthread_mutex_unlock(&b->lock);
    /* A blocking copy synchronizes with its stream: the GPU's printf
     * buffer is written out here too. */
    sim_output_flush(&sim_stream_or_legacy(b, s)->output);
    return result;
}

/* The stream's worker writes dst later; a fault becomes the stream's
 * sticky error, as for any queued op. */
int sim_memcpy_dtoh_async(tdm_backend *b, void *dst, uint64_t src, size_t n, tdm_bstream *s)
{
    sim_op *op = op_new(SIM_OP_DTOH);

    if (!op)
        return cudaErrorMemoryAllocation;
    op->host = dst;
    op->src = src;
    op->n = n;
    sim_enqueue(b, s, op);
    return 0;
}

int sim_memcpy_dtod(tdm_backend *b, uint64_t dst, uint64_t src, size_t n, tdm_bstream *s)
{
    sim_op *op = op_new(SIM_OP_DTOD);

    if (!op)
        return cudaErrorMemoryAllocation;
    op->dst = dst;
    op->src = src;
    op->n = n;
    sim_enqueue(b, s, op);
    return 0;
}

int sim_memset_d8(tdm_backend *b, uint64_t dst, uint8_t value, size_t n, tdm_bstream *s)
{
    sim_op *op = op_new(SIM_OP_MEMSET);

    if (!op)
        return cudaErrorMemoryAllocation;
    op->dst = dst;
    op->value = value;
    op->n = n;
    sim_enqueue(b, s, op);
    return 0;
}

/* The device's launch limits (sim_device.c reports the same). */
static bool bad_config(tdm_dim3 grid, tdm_dim3 block)
{
    uint64_t threads = (uint64_t)block.x * block.y * block.z;

    return !grid.x || !grid.y || !grid.z || !block.x || !block.y || !block.z || threads > 1024 ||
           block.x > 1024 || block.y > 1024 || block.z > 64 || grid.x > 0x7fffffffu || grid.y > 65535 ||
           grid.z > 65535;
}

int sim_launch_kernel(tdm_backend *b, tdm_bfunc *f, tdm_dim3 grid, tdm_dim3 block, uint32_t shared_mem,
                      tdm_bstream *s, const void *params, size_t params_len)
{
    sim_op *op;

    if (!f)
        return cudaErrorInvalidDeviceFunction;
    if (bad_config(grid, block))
        return cudaErrorInvalidConfiguration;
    if (shared_mem > SIM_MAX_DYN_SHARED - f->k->static_shared)
        return cudaErrorInvalidValue;
    if (params_len != f->params_len || (params_len && !params))
        return cudaErrorInvalidValue;
    op = op_new(SIM_OP_LAUNCH);
    if (!op)
        return cudaErrorMemoryAllocation;
    /* The parameter buffer is only valid during the call. */
    op->params = malloc(params_len ? params_len : 1);
    if (!op->params) {
        free(op);
        return cudaErrorMemoryAllocation;
    }
    if (params_len)   /* a kernel without parameters may come with params == NULL */
        memcpy(op->params, params, params_len);
    op->func = f;
    op->grid = grid;
    op->block = block;
    op->shared_mem = shared_mem;
    pthread_mutex_lock(&b->lock);
    f->m->refs++;
    pthread_mutex_unlock(&b->lock);
    sim_enqueue(b, s, op);
    return 0;
}

static int run_kernel(tdm_backend *b, sim_op *op)
{
    tdm_bfunc *f = op->func;
    sim_exec x = {
        .mapped = &b->mapped,
        .stopping = &b->stopping,
        .space = op->stream->space,
        .own_at = f->m->globals_at,
        .own_size = f->m->globals_size,
        .output = &op->stream->output,
        .b = b,
        .sms = op->stream->sms ? op->stream->sms : sim_device_sms(b),
    };
    sim_launch l = {
        .kernel = f->k->name,
        .grid = op->grid,
        .block = op->block,
        .shared_mem = op->shared_mem,
        .params = op->params,
        .param_offset = f->layout.offset,
        .globals = f->globals,
        .exec = &x,
    };

    if (op->shared_mem) {
        l.dyn_shared = calloc(1, op->shared_mem);
        if (!l.dyn_shared)
            return cudaErrorLaunchOutOfResources;
    }
    f->k->run(&l);
    sim_exec_release(&x);
    free(l.dyn_shared);
    return x.err;
}

static int copy_fault(const char *what, uint64_t addr, size_t n)
{
    sim_log("%s of %zu bytes at %#llx touches unmapped device memory: illegal address", what, n,
            (unsigned long long)addr);
    return cudaErrorIllegalAddress;
}

/* Pins the range holding [addr, addr + n) for a copy: the server checked
 * the session's rights itself, so any mapped memory will do.  0, or the
 * fault. */
static int pin_for_copy(tdm_backend *b, const char *what, uint64_t addr, size_t n, sim_range **out)
{
    bool denied;

    *out = sim_mapped_pin(&b->mapped, addr, n, NULL, &denied);
    return *out ? 0 : copy_fault(what, addr, n);
}

int sim_op_execute(tdm_backend *b, sim_op *op)
{
    int err = 0;

    if (op->kind == SIM_OP_COND)      /* runs ops of its own, each pinning what it touches */
        return sim_cond_execute(b, op);
    /* What the op touches is pinned for its whole run: nothing can be
     * unmapped under it, and maps of other ranges go on meanwhile. */
    sim_range *a = NULL, *c = NULL;
    switch (op->kind) {
    case SIM_OP_HTOD:
        if (!(err = pin_for_copy(b, "host-to-device copy", op->dst, op->n, &a)))
            memcpy((void *)(uintptr_t)op->dst, op->host, op->n);
        break;
    case SIM_OP_DTOH:
        if (!(err = pin_for_copy(b, "device-to-host copy", op->src, op->n, &a)))
            memcpy(op->host, (const void *)(uintptr_t)op->src, op->n);
        break;
    case SIM_OP_DTOD:
        if (!(err = pin_for_copy(b, "device-to-device copy source", op->src, op->n, &a)) &&
            !(err = pin_for_copy(b, "device-to-device copy destination", op->dst, op->n, &c)))
            memmove((void *)(uintptr_t)op->dst, (const void *)(uintptr_t)op->src, op->n);
        break;
    case SIM_OP_MEMSET:
        if (!(err = pin_for_copy(b, "memset", op->dst, op->n, &a)))
            memset((void *)(uintptr_t)op->dst, op->value, op->n);
        break;
    case SIM_OP_LAUNCH:
        err = run_kernel(b, op);
        break;
    default:
        break;
    }
    if (a)
        sim_mapped_unpin(&b->mapped, a);
    if (c)
        sim_mapped_unpin(&b->mapped, c);
    return err;
}
