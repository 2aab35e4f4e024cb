/* Checked device-memory access for simulated kernels (sim_kernel.h).  The
 * stream worker running the launch holds the memory table's lock shared, so
 * these search it without locking. */
#include <sched.h>
#include <stdio.h>
#include <time.h>

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

static void fault_at(const sim_launch *l, int err, uint64_t addr, size_t bytes)
{
    char why[128];

    snprintf(why, sizeof(why), "%zu-byte access at %#llx%s", bytes, (unsigned long long)addr,
             err == cudaErrorIllegalAddress ? " outside mapped device memory" : "");
    sim_launch_fault(l, err, why);
}

void *sim_mem_ptr(const sim_launch *l, uint64_t addr, size_t bytes)
{
    sim_exec *x = l->exec;
    const sim_range *r = x->last;

    if (x->err)
        return NULL;
    if (!(r && addr >= r->addr && bytes <= r->size && addr - r->addr <= r->size - bytes)) {
        r = sim_mapped_find_locked(x->mapped, addr);
        if (!r || bytes > r->size || addr - r->addr > r->size - bytes) {
            fault_at(l, cudaErrorIllegalAddress, addr, bytes);
            return NULL;
        }
        x->last = r;
    }
    /* The server maps device memory at its device address. */
    return (void *)(uintptr_t)addr;
}

void *sim_mem_ptr_aligned(const sim_launch *l, uint64_t addr, size_t bytes, size_t align)
{
    if (addr & (align - 1)) {
        if (!l->exec->err)
            fault_at(l, cudaErrorMisalignedAddress, addr, bytes);
        return NULL;
    }
    return sim_mem_ptr(l, addr, bytes);
}

bool sim_launch_stopped(const sim_launch *l)
{
    return l->exec->err || atomic_load_explicit(l->exec->stopping, memory_order_relaxed);
}

bool sim_launch_wait_step(const sim_launch *l, long ns)
{
    sim_exec *x = l->exec;
    struct timespec step = { 0, ns };

    /* The table may change while the lock is out: the cached range too. */
    x->last = NULL;
    sim_mapped_read_unlock(x->mapped);
    if (ns > 0)
        nanosleep(&step, NULL);
    else
        sched_yield();
    sim_mapped_read_lock(x->mapped);
    return !sim_launch_stopped(l);
}
