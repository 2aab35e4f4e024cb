/* Twins of the MMU-fault triggers' kernels (tests/faults/, docs/faults.md).
 *
 * The sim has neither managed memory nor access permissions, so it models a
 * trigger's *outcome*, not its setup: each twin raises the error the GPU
 * raises when the kernel runs with its trigger's setup in place (a write to
 * a read-only managed or VMM page, an access to a zombie or non-migratable
 * range: all fatal MMU faults, reported as cudaErrorIllegalAddress).  The
 * address is still checked first, so a pointer outside mapped memory faults
 * as any bad pointer does.  SM OOB needs no model: its write lands in
 * reserved but unmapped arena space and the checked access faults. */
#include "kernels.h"

#include <driver_types.h>

/* fault_sm_oob_write(unsigned *p, unsigned long long word):
 *   block 0, thread 0: p[word] = 0xdeadbeef */
static void sm_oob_run(const sim_launch *l)
{
    uint64_t word;
    uint32_t *q;

    memcpy(&word, l->params + l->param_offset[1], sizeof(word));
    q = sim_u32(l, sim_param_ptr(l, 0) + word * 4u);
    if (q)
        *q = 0xdeadbeefu;
}

/* The first thread with i < n touches p[i]; the setup the GPU had makes that
 * access fatal. */
static void modelled_mmu_fault(const sim_launch *l, const char *why)
{
    if (sim_param_i32(l, 1) <= 0 || !sim_u32(l, sim_param_ptr(l, 0)))
        return;
    sim_launch_fault(l, cudaErrorIllegalAddress, why);
}

static void am_write_run(const sim_launch *l)
{
    modelled_mmu_fault(l, "write to a page its trigger made read-only (modelled access mismatch)");
}

static void zombie_run(const sim_launch *l)
{
    modelled_mmu_fault(l, "access to a zombie managed range (modelled)");
}

static void nonmigratable_run(const sim_launch *l)
{
    modelled_mmu_fault(l, "access to a non-migratable range pinned to the CPU (modelled)");
}

/* fault_am_gpu_read(const unsigned *p, unsigned *sum, int n):
 *   atomicAdd(sum, p[i]) for i < n.  The read that migrates the pages to the
 *   GPU: no fault, computed as the GPU does. */
struct read_ctx {
    uint64_t p;
    uint32_t *sum;
};

static bool read_one(const sim_launch *l, int32_t i, void *arg)
{
    struct read_ctx *c = arg;
    uint32_t *v = sim_u32(l, c->p + (uint64_t)((int64_t)i * 4));

    if (v)
        *c->sum += *v;
    return v != NULL;
}

static void am_gpu_read_run(const sim_launch *l)
{
    struct read_ctx c = { .p = sim_param_ptr(l, 0), .sum = sim_u32(l, sim_param_ptr(l, 1)) };

    if (c.sum)
        sim_for_each_index_x(l, sim_param_i32(l, 2), read_one, &c);
}

static const sim_param_desc ptr_int[] = { SIM_PARAM_PTR, SIM_PARAM_I32 };
static const sim_param_desc ptr_u64[] = { SIM_PARAM_PTR, { 8, 8 } };
static const sim_param_desc ptr_ptr_int[] = { SIM_PARAM_PTR, SIM_PARAM_PTR, SIM_PARAM_I32 };

const sim_kernel sim_kernel_fault_sm_oob = {
    .name = "_Z18fault_sm_oob_writePjy", .nparams = 2, .params = ptr_u64, .run = sm_oob_run,
};
const sim_kernel sim_kernel_fault_am_cpu = {
    .name = "_Z18fault_am_cpu_writePji", .nparams = 2, .params = ptr_int, .run = am_write_run,
};
const sim_kernel sim_kernel_fault_am_gpu_read = {
    .name = "_Z17fault_am_gpu_readPKjPji", .nparams = 3, .params = ptr_ptr_int, .run = am_gpu_read_run,
};
const sim_kernel sim_kernel_fault_am_gpu = {
    .name = "_Z18fault_am_gpu_writePji", .nparams = 2, .params = ptr_int, .run = am_write_run,
};
const sim_kernel sim_kernel_fault_am_vmm = {
    .name = "_Z18fault_am_vmm_writePji", .nparams = 2, .params = ptr_int, .run = am_write_run,
};
const sim_kernel sim_kernel_fault_zombie = {
    .name = "_Z18fault_zombie_touchPji", .nparams = 2, .params = ptr_int, .run = zombie_run,
};
const sim_kernel sim_kernel_fault_nonmigratable = {
    .name = "_Z25fault_nonmigratable_touchPji", .nparams = 2, .params = ptr_int, .run = nonmigratable_run,
};
