/* Twins of examples/library_kernels.cu, the device code
 * examples/library_load.cu loads as a library (extern "C": plain names):
 *   __device__ int lib_bias;
 *   lib_axpb(float *y, const float *x, float a, int n)
 *     y[i] = a * x[i] + (float)lib_bias            for i < n
 *   lib_fill(int *out, int n, char step, double scale)
 *     out[i] = (int)((double)(i * step) * scale)   for i < n
 * nvcc contracts a * x + b to one fused multiply-add; fmaf rounds alike.
 * And the program's own kernel (examples/library_load.cu, for
 * cudaGetFuncBySymbol):
 *   registered_store(int *p, short s)     p[threadIdx.x] = s */
#include <math.h>

#include "kernels.h"

const sim_global_desc sim_global_lib_bias = { "lib_bias", sizeof(int32_t) };

struct axpb_args {
    uint64_t y, x;
    float a, bias;
};

static bool axpb_one(const sim_launch *l, int32_t i, void *ctx)
{
    const struct axpb_args *v = ctx;
    uint64_t off = (uint64_t)((int64_t)i * 4);
    const float *px = sim_f32(l, v->x + off);
    float *py = px ? sim_f32(l, v->y + off) : NULL;

    if (py)
        *py = fmaf(v->a, *px, v->bias);
    return py != NULL;
}

static void axpb_run(const sim_launch *l)
{
    const int32_t *bias = sim_mem_ptr_aligned(l, l->globals[0], 4, 4);
    struct axpb_args v = { sim_param_ptr(l, 0), sim_param_ptr(l, 1), 0.0f, 0.0f };

    if (!bias)
        return;
    memcpy(&v.a, l->params + l->param_offset[2], sizeof(v.a));
    v.bias = (float)*bias;
    sim_for_each_index_x(l, sim_param_i32(l, 3), axpb_one, &v);
}

static const sim_param_desc axpb_params[] = { SIM_PARAM_PTR, SIM_PARAM_PTR, SIM_PARAM_F32, SIM_PARAM_I32 };
static const char *const axpb_globals[] = { "lib_bias" };

const sim_kernel sim_kernel_lib_axpb = {
    .name = "lib_axpb",
    .nparams = 4,
    .params = axpb_params,
    .nglobals = 1,
    .globals = axpb_globals,
    .run = axpb_run,
};

struct fill_args {
    uint64_t out;
    int8_t step;
    double scale;
};

static bool fill_one(const sim_launch *l, int32_t i, void *ctx)
{
    const struct fill_args *v = ctx;
    int32_t *p = (int32_t *)sim_u32(l, v->out + (uint64_t)((int64_t)i * 4));

    if (p)
        *p = (int32_t)((double)(i * v->step) * v->scale);
    return p != NULL;
}

static void fill_run(const sim_launch *l)
{
    struct fill_args v = { sim_param_ptr(l, 0), 0, 0.0 };

    memcpy(&v.step, l->params + l->param_offset[2], sizeof(v.step));
    memcpy(&v.scale, l->params + l->param_offset[3], sizeof(v.scale));
    sim_for_each_index_x(l, sim_param_i32(l, 1), fill_one, &v);
}

static const sim_param_desc fill_params[] = { SIM_PARAM_PTR, SIM_PARAM_I32, { 1, 1 }, { 8, 8 } };

const sim_kernel sim_kernel_lib_fill = {
    .name = "lib_fill",
    .nparams = 4,
    .params = fill_params,
    .run = fill_run,
};

static void store_run(const sim_launch *l)
{
    int16_t v;

    memcpy(&v, l->params + l->param_offset[1], sizeof(v));
    for (uint32_t t = 0; t < l->block.x && !sim_launch_stopped(l); t++) {
        int32_t *p = (int32_t *)sim_u32(l, sim_param_ptr(l, 0) + (uint64_t)t * 4);
        if (!p)
            return;
        *p = v;
    }
}

static const sim_param_desc store_params[] = { SIM_PARAM_PTR, { 2, 2 } };

const sim_kernel sim_kernel_registered_store = {
    .name = "_Z16registered_storePis",
    .nparams = 2,
    .params = store_params,
    .run = store_run,
};
