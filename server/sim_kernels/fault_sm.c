/* Twins of the SM-exception triggers' kernels (tests/faults/,
 * docs/faults.md).  Each raises the error the GPU reports for its exception
 * where the GPU would raise it; what a twin computes when no exception
 * happens (e.g. a shallow recursion) is what the GPU computes. */
#include "kernels.h"

#include <driver_types.h>

/* The per-thread stack a kernel gets by default (cudaLimitStackSize), and
 * the frame of fault_recurse: its 32-word volatile array. */
#define STACK_BYTES 1024u
#define RECURSE_FRAME 128u

/* fault_recurse(d) = local[5] at d == 0, else fault_recurse(d - 1) +
 * local[d & 31] with local[k] = d + k; 32-bit wrap-around. */
static uint32_t recurse_value(uint32_t depth)
{
    uint32_t v = 5u;

    for (uint32_t d = 1; d <= depth; d++)
        v += d + (d & 31u);
    return v;
}

/* fault_stack_overflow(unsigned *out, unsigned depth):
 *   out[global index] = fault_recurse(depth) */
static void stack_overflow_run(const sim_launch *l)
{
    uint32_t depth = sim_param_u32(l, 1), v;
    uint64_t out = sim_param_ptr(l, 0);

    if ((uint64_t)depth + 1 > STACK_BYTES / RECURSE_FRAME) {
        /* The H100 (driver 580) reports a lane stack overflow as an illegal
         * address (docs/faults.md). */
        sim_launch_fault(l, cudaErrorIllegalAddress, "recursion deeper than the 1 KiB per-thread stack");
        return;
    }
    v = recurse_value(depth);
    for (uint32_t bx = 0; bx < l->grid.x && !sim_launch_stopped(l); bx++)
        for (uint32_t t = 0; t < l->block.x; t++) {
            uint32_t *q = sim_u32(l, out + 4ull * (uint32_t)sim_global_index_x(bx, l->block.x, t));
            if (!q)
                return;
            *q = v;
        }
}

/* fault_illegal_instruction(unsigned *out): out[threadIdx.x] = 1.  The
 * trigger launches it only where it cannot load its patched twin (no Driver
 * API, i.e. through Tandem); the sim stands in for the patched kernel. */
static void illegal_instruction_run(const sim_launch *l)
{
    sim_launch_fault(l, cudaErrorIllegalInstruction, "invalid opcode (models the trigger's patched cubin)");
}

/* fault_shared_oob(unsigned *out, unsigned addr): s[tid & 31] = tid;
 * barrier; v = ld.shared [addr]; out[tid] = v + s[0].  Shared memory is the
 * 128-byte static array plus the dynamic bytes. */
static void shared_oob_run(const sim_launch *l)
{
    uint32_t addr = sim_param_u32(l, 1), s[32] = { 0 }, threads = l->block.x;
    uint64_t out = sim_param_ptr(l, 0);

    if ((uint64_t)addr + 4 > sizeof(s) + l->shared_mem || (addr & 3u)) {
        /* The H100 (driver 580) reports this as an illegal instruction
         * (docs/faults.md). */
        sim_launch_fault(l, (addr & 3u) ? cudaErrorMisalignedAddress : cudaErrorIllegalInstruction,
                         "ld.shared outside the block's shared memory");
        return;
    }
    for (uint32_t t = 0; t < threads; t++)
        s[t & 31u] = t;
    for (uint32_t t = 0; t < threads; t++) {
        uint32_t v = addr < sizeof(s) ? s[addr / 4] : 0u, *q = sim_u32(l, out + 4ull * t);
        if (!q)
            return;
        *q = v + s[0];
    }
}

/* fault_misaligned_write(unsigned *p, unsigned byte_offset): block 0,
 * thread 0 stores a word at p + byte_offset; the checked access faults with
 * cudaErrorMisalignedAddress unless the offset is a multiple of 4. */
static void misaligned_run(const sim_launch *l)
{
    uint32_t *q = sim_u32(l, sim_param_ptr(l, 0) + sim_param_u32(l, 1));

    if (q)
        *q = 0x01020304u;
}

/* fault_invalid_address_space(unsigned *out): a global atomic on the
 * generic address of a __shared__ word. */
static void invalid_address_space_run(const sim_launch *l)
{
    sim_launch_fault(l, cudaErrorInvalidAddressSpace, "atom.global on a shared-window address");
}

static const sim_param_desc ptr_only[] = { SIM_PARAM_PTR };
static const sim_param_desc ptr_u32[] = { SIM_PARAM_PTR, SIM_PARAM_U32 };

const sim_kernel sim_kernel_fault_stack_overflow = {
    .name = "_Z20fault_stack_overflowPjj", .nparams = 2, .params = ptr_u32, .run = stack_overflow_run,
};
const sim_kernel sim_kernel_fault_illegal_instruction = {
    .name = "_Z25fault_illegal_instructionPj", .nparams = 1, .params = ptr_only, .run = illegal_instruction_run,
};
const sim_kernel sim_kernel_fault_shared_oob = {
    .name = "_Z16fault_shared_oobPjj", .nparams = 2, .params = ptr_u32, .static_shared = 128,
    .run = shared_oob_run,
};
const sim_kernel sim_kernel_fault_misaligned = {
    .name = "_Z22fault_misaligned_writePjj", .nparams = 2, .params = ptr_u32, .run = misaligned_run,
};
const sim_kernel sim_kernel_fault_invalid_address_space = {
    .name = "_Z27fault_invalid_address_spacePj", .nparams = 1, .params = ptr_only, .static_shared = 128,
    .run = invalid_address_space_run,
};
