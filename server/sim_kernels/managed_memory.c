/* Twins of examples/managed_memory.cu:
 *   managed_scale(unsigned int *p, int n)               p[i] = 3 * p[i] + 1   for i < n
 *   managed_fill(unsigned int *p, int n, unsigned k)    p[i] = i * k + 7      for i < n */

#include "kernels.h"

typedef struct fill_ctx {
    uint64_t p;
    uint32_t k;
} fill_ctx;

static bool scale_one(const sim_launch *l, int32_t i, void *ctx)
{
    uint32_t *p = sim_u32(l, *(uint64_t *)ctx + (uint64_t)((int64_t)i * 4));

    if (p)
        *p = 3u * *p + 1u;
    return p != NULL;
}

static void run_scale(const sim_launch *l)
{
    uint64_t p = sim_param_ptr(l, 0);

    sim_for_each_index_x(l, sim_param_i32(l, 1), scale_one, &p);
}

static bool fill_one(const sim_launch *l, int32_t i, void *ctx)
{
    const fill_ctx *c = ctx;
    uint32_t *p = sim_u32(l, c->p + (uint64_t)((int64_t)i * 4));

    if (p)
        *p = (uint32_t)i * c->k + 7u;
    return p != NULL;
}

static void run_fill(const sim_launch *l)
{
    fill_ctx c = { sim_param_ptr(l, 0), sim_param_u32(l, 2) };

    sim_for_each_index_x(l, sim_param_i32(l, 1), fill_one, &c);
}

static const sim_param_desc scale_params[] = { SIM_PARAM_PTR, SIM_PARAM_I32 };
static const sim_param_desc fill_params[] = { SIM_PARAM_PTR, SIM_PARAM_I32, SIM_PARAM_U32 };

const sim_kernel sim_kernel_managed_scale = {
    .name = "_Z13managed_scalePji",
    .nparams = 2,
    .params = scale_params,
    .run = run_scale,
};

const sim_kernel sim_kernel_managed_fill = {
    .name = "_Z12managed_fillPjij",
    .nparams = 3,
    .params = fill_params,
    .run = run_fill,
};

/* Twins of examples/managed_memory_patterns.cu:
 *   mm_atomics(int *a, int n)                 for i < n: a[0] += 1, a[1] = max(a[1], i)
 *   mm_multiply(a, b, c, int n)               c[i] = a[i] * b[i] + 1            for i < n
 *   mm_check(const unsigned *c, int n, bool *bad)
 *                                             *bad = true if c[i] != (i+1)(2i+1)+1
 *   mm_vector_add(a, b, c, int n)             c[i] = a[i] + b[i]                for i < n
 *   mm_spin_until_set(volatile unsigned *latch, unsigned *seen)
 *                                             waits for *latch != 0, *seen = *latch
 * The launch runs its indices one after another, so the atomics are plain
 * updates here. */
typedef struct abc_ctx {
    uint64_t a, b, c;
} abc_ctx;

static bool atomics_one(const sim_launch *l, int32_t i, void *ctx)
{
    uint64_t a = *(uint64_t *)ctx;
    int32_t *count = sim_mem_ptr_aligned(l, a, 4, 4), *max = count ? sim_mem_ptr_aligned(l, a + 4, 4, 4) : NULL;

    if (!max)
        return false;
    *count += 1;
    if (*max < i)
        *max = i;
    return true;
}

static void run_atomics(const sim_launch *l)
{
    uint64_t a = sim_param_ptr(l, 0);

    sim_for_each_index_x(l, sim_param_i32(l, 1), atomics_one, &a);
}

static bool multiply_one(const sim_launch *l, int32_t i, void *ctx)
{
    const abc_ctx *v = ctx;
    uint64_t off = (uint64_t)((int64_t)i * 4);
    const uint32_t *pa = sim_u32(l, v->a + off), *pb = pa ? sim_u32(l, v->b + off) : NULL;
    uint32_t *pc = pb ? sim_u32(l, v->c + off) : NULL;

    if (pc)
        *pc = *pa * *pb + 1u;
    return pc != NULL;
}

static bool vector_add_one(const sim_launch *l, int32_t i, void *ctx)
{
    const abc_ctx *v = ctx;
    uint64_t off = (uint64_t)((int64_t)i * 4);
    const uint32_t *pa = sim_u32(l, v->a + off), *pb = pa ? sim_u32(l, v->b + off) : NULL;
    uint32_t *pc = pb ? sim_u32(l, v->c + off) : NULL;

    if (pc)
        *pc = *pa + *pb;
    return pc != NULL;
}

static void run_multiply(const sim_launch *l)
{
    abc_ctx v = { sim_param_ptr(l, 0), sim_param_ptr(l, 1), sim_param_ptr(l, 2) };

    sim_for_each_index_x(l, sim_param_i32(l, 3), multiply_one, &v);
}

static void run_vector_add(const sim_launch *l)
{
    abc_ctx v = { sim_param_ptr(l, 0), sim_param_ptr(l, 1), sim_param_ptr(l, 2) };

    sim_for_each_index_x(l, sim_param_i32(l, 3), vector_add_one, &v);
}

static bool check_one(const sim_launch *l, int32_t i, void *ctx)
{
    const abc_ctx *v = ctx;   /* a: c, b: bad */
    const uint32_t *pc = sim_u32(l, v->a + (uint64_t)((int64_t)i * 4));
    uint8_t *bad = pc ? sim_mem_ptr(l, v->b, 1) : NULL;

    if (bad && *pc != (uint32_t)(i + 1) * (uint32_t)(2 * i + 1) + 1u)
        *bad = 1;
    return bad != NULL;
}

static void run_check(const sim_launch *l)
{
    abc_ctx v = { sim_param_ptr(l, 0), sim_param_ptr(l, 2), 0 };

    sim_for_each_index_x(l, sim_param_i32(l, 1), check_one, &v);
}

static const sim_param_desc atomics_params[] = { SIM_PARAM_PTR, SIM_PARAM_I32 };
static const sim_param_desc abc_params[] = { SIM_PARAM_PTR, SIM_PARAM_PTR, SIM_PARAM_PTR, SIM_PARAM_I32 };
static const sim_param_desc check_params[] = { SIM_PARAM_PTR, SIM_PARAM_I32, SIM_PARAM_PTR };

const sim_kernel sim_kernel_mm_atomics = {
    .name = "_Z10mm_atomicsPii",
    .nparams = 2,
    .params = atomics_params,
    .run = run_atomics,
};

const sim_kernel sim_kernel_mm_multiply = {
    .name = "_Z11mm_multiplyPKjS0_Pji",
    .nparams = 4,
    .params = abc_params,
    .run = run_multiply,
};

const sim_kernel sim_kernel_mm_check = {
    .name = "_Z8mm_checkPKjiPb",
    .nparams = 3,
    .params = check_params,
    .run = run_check,
};

const sim_kernel sim_kernel_mm_vector_add = {
    .name = "_Z13mm_vector_addPKjS0_Pji",
    .nparams = 4,
    .params = abc_params,
    .run = run_vector_add,
};

/* The host sets the latch while the twin runs: read it as the GPU's
 * volatile loads do, until it is set or the launch is stopped. */
static void run_spin(const sim_launch *l)
{
    uint32_t *latch, *seen, v = 0;

    /* The latch is resolved again after each step: its memory may have
     * been freed meanwhile (then the launch faults, as on the GPU). */
    while ((latch = sim_mem_ptr_aligned(l, sim_param_ptr(l, 0), 4, 4)) &&
           (v = __atomic_load_n(latch, __ATOMIC_ACQUIRE)) == 0 && sim_launch_wait_step(l, 0))
        ;
    if (!latch || !v)
        return;
    seen = sim_u32(l, sim_param_ptr(l, 1));
    if (seen)
        *seen = v;
}

static const sim_param_desc spin_params[] = { SIM_PARAM_PTR, SIM_PARAM_PTR };

const sim_kernel sim_kernel_mm_spin_until_set = {
    .name = "_Z17mm_spin_until_setPVjPj",
    .nparams = 2,
    .params = spin_params,
    .run = run_spin,
};
