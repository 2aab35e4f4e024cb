/* Checked device-memory access for simulated kernels (sim_kernel.h): each
 * range a launch touches is looked up once, checked against the launching
 * session's space and pinned until the launch ends, so no lock is held while
 * it runs (issue 16). */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "grow.h"
#include "sim_internal.h"

void sim_launch_fault(const sim_launch *l, int err, const char *why)
{
    if (l->exec->err)
        return;
    l->exec->err = err;
    sim_log("kernel '%s' faulted (%s): %s", l->kernel,
            err == cudaErrorIllegalAddress ? "illegal address" : err == cudaErrorMisalignedAddress ? "misaligned address" : "error",
            why);
}

static void fault_at(const sim_launch *l, int err, uint64_t addr, size_t bytes, bool denied)
{
    char why[160];

    snprintf(why, sizeof(why), "%zu-byte access at %#llx%s", bytes, (unsigned long long)addr,
             err != cudaErrorIllegalAddress ? ""
             : denied ? " to another session's memory"
                      : " outside mapped device memory");
    sim_launch_fault(l, err, why);
}

static bool holds(const sim_range *r, uint64_t addr, size_t bytes)
{
    return r && sim_span_holds(r->addr, r->size, addr, bytes);
}

/* A range the launch pinned already, or pins now. */
static sim_range *reach(sim_exec *x, uint64_t addr, size_t bytes, bool *denied)
{
    sim_range *r;

    *denied = false;
    for (size_t i = 0; i < x->npinned; i++)
        if (holds(x->pinned[i], addr, bytes))
            return x->pinned[i];
    /* The launching module's own globals need no grant: a kernel reaches
     * them by name, whoever registered them. */
    bool own = sim_span_holds(x->own_at, x->own_size, addr, bytes);
    if (tdm_grow(&x->pinned, &x->cap_pinned, x->npinned + 1, sizeof(*x->pinned), 8) != 0)
        return NULL;
    r = sim_mapped_pin(x->mapped, addr, bytes, own ? NULL : x->space, denied);
    if (r)
        x->pinned[x->npinned++] = r;
    return r;
}

void *sim_mem_ptr(const sim_launch *l, uint64_t addr, size_t bytes)
{
    sim_exec *x = l->exec;
    bool denied;

    if (x->err)
        return NULL;
    if (!holds(x->last, addr, bytes)) {
        sim_range *r = reach(x, addr, bytes, &denied);
        if (!r) {
            fault_at(l, cudaErrorIllegalAddress, addr, bytes, denied);
            return NULL;
        }
        x->last = r;
    }
    /* The server maps device memory at its device address. */
    return (void *)(uintptr_t)addr;
}

void sim_exec_release(sim_exec *x)
{
    for (size_t i = 0; i < x->npinned; i++)
        sim_mapped_unpin(x->mapped, x->pinned[i]);
    free(x->pinned);
    x->pinned = NULL;
    x->npinned = x->cap_pinned = 0;
    x->last = NULL;
}

void *sim_mem_ptr_aligned(const sim_launch *l, uint64_t addr, size_t bytes, size_t align)
{
    if (addr & (align - 1)) {
        if (!l->exec->err)
            fault_at(l, cudaErrorMisalignedAddress, addr, bytes, false);
        return NULL;
    }
    return sim_mem_ptr(l, addr, bytes);
}

bool sim_launch_stopped(const sim_launch *l)
{
    return l->exec->err || atomic_load_explicit(l->exec->stopping, memory_order_relaxed);
}

unsigned sim_launch_sms(const sim_launch *l)
{
    return l->exec->sms;
}

bool sim_launch_wait_step(const sim_launch *l, long ns)
{
    struct timespec step = { 0, ns };

    if (ns > 0)
        nanosleep(&step, NULL);
    else
        sched_yield();
    return !sim_launch_stopped(l);
}
