/* tests/integration/hostile.h */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness.h"
#include "hostile.h"
#include "raw_calls.h"

#define HV_N 16384   /* the victim's vectors: 64 KiB each */

int hv_call_int(tdm_transport *t, uint32_t proc, xdrproc_t xa, void *a)
{
    int res = -1;

    if (t->ops->call(t, proc, xa, a, (xdrproc_t)xdr_int, &res) != 0)
        return -1;
    return res;
}

int hv_load(tdm_transport *t, const char *const *names, size_t n, hv_kernel *out, const char *var,
            uint64_t *var_addr)
{
    /* A fat binary header and nothing the sim needs: it knows its kernels by name. */
    unsigned char img[64] = { 0x50, 0xed, 0x55, 0xba, 1, 0, 16, 0, 48 };
    tdm_module_load_args a;
    tdm_module_load_res r;
    int err;

    memset(img + 16, 0x5a, sizeof(img) - 16);
    memset(&a, 0, sizeof(a));
    memset(&r, 0, sizeof(r));
    a.image.image_val = (char *)img;
    a.image.image_len = sizeof(img);
    a.funcs.funcs_val = (tdm_name *)names;
    a.funcs.funcs_len = (u_int)n;
    a.vars.vars_val = (tdm_name *)&var;
    a.vars.vars_len = var != NULL;
    if (t->ops->call(t, TDM_MODULE_LOAD, (xdrproc_t)xdr_tdm_module_load_args, &a,
                     (xdrproc_t)xdr_tdm_module_load_res, &r) != 0)
        return -1;
    err = r.err;
    if (!err && (r.funcs.funcs_len != n || r.vars.vars_len != (var != NULL)))
        err = -1;
    if (!err && var) {
        err = r.vars.vars_val[0].err;
        *var_addr = r.vars.vars_val[0].addr;
    }
    for (size_t i = 0; !err && i < n; i++) {
        const tdm_func_info *f = &r.funcs.funcs_val[i];
        if ((err = f->err) != 0 || f->param_offset.param_offset_len > 8)
            break;
        out[i].func = f->handle;
        out[i].nparams = f->param_offset.param_offset_len;
        for (unsigned p = 0; p < out[i].nparams; p++) {
            out[i].offset[p] = f->param_offset.param_offset_val[p];
            out[i].size[p] = f->param_size.param_size_val[p];
        }
    }
    xdr_free((xdrproc_t)xdr_tdm_module_load_res, (char *)&r);
    return err;
}

int hv_launch(tdm_transport *t, const hv_kernel *k, tdm_xdim3 grid, tdm_xdim3 block, tdm_handle stream,
              const uint64_t *values)
{
    unsigned char params[64] = { 0 };
    unsigned len = 0;
    tdm_launch_args a;

    for (unsigned i = 0; i < k->nparams; i++) {
        if (k->offset[i] + k->size[i] > sizeof(params) || k->size[i] > 8)
            return -1;
        memcpy(params + k->offset[i], &values[i], k->size[i]);
        if (k->offset[i] + k->size[i] > len)
            len = k->offset[i] + k->size[i];
    }
    memset(&a, 0, sizeof(a));
    a.func = k->func;
    a.grid = grid;
    a.block = block;
    a.stream = stream;
    a.params.params_val = (char *)params;
    a.params.params_len = len;
    return t->ops->post(t, TDM_LAUNCH, (xdrproc_t)xdr_tdm_launch_args, &a) == 0 ? 0 : -1;
}

/* ---- the victim ---- */

static double now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

void hv_victim_open(hv_victim *v, const char *endpoint, const char *token)
{
    const char *names[] = { HV_VECTOR_ADD };

    memset(v, 0, sizeof(*v));
    v->host = malloc(3 * HV_N * sizeof(float));
    cr_assert_not_null(v->host);
    cr_assert_eq(th_guest_hello(endpoint, "hostile-victim", token, &v->t), 0, "the victim was refused");
    const float scale = 2.0f;
    uint64_t scale_at = 0;

    cr_assert_eq(hv_load(v->t, names, 1, &v->add, "vadd_scale", &scale_at), 0, "the victim cannot load vector_add");
    th_raw_write(v->t, scale_at, (const unsigned char *)&scale, sizeof(scale));
    v->a = th_raw_malloc(v->t, HV_N * sizeof(float));
    v->b = th_raw_malloc(v->t, HV_N * sizeof(float));
}

void hv_victim_close(hv_victim *v)
{
    if (v->t)
        v->t->ops->close(v->t);
    v->t = NULL;
    free(v->host);
    v->host = NULL;
}

/* Small integers: every 2a + b is exact in float, so any difference is harm. */
static void inputs(unsigned iter, float *a, float *b)
{
    for (unsigned i = 0; i < HV_N; i++) {
        a[i] = (float)((i * 7u + iter) % 1021u);
        b[i] = (float)((i * 13u + iter * 3u) % 977u);
    }
}

double hv_victim_step(hv_victim *v)
{
    float *a = v->host, *b = a + HV_N, *c = b + HV_N;
    const size_t bytes = HV_N * sizeof(float);
    uint64_t vals[4];
    int wrong = 0;

    inputs(v->iter, a, b);
    memset(c, 0xff, bytes);
    double t0 = now_ms();
    uint64_t out = th_raw_malloc(v->t, bytes);
    th_raw_write(v->t, v->a, (const unsigned char *)a, bytes);
    th_raw_write(v->t, v->b, (const unsigned char *)b, bytes);
    vals[0] = v->a;
    vals[1] = v->b;
    vals[2] = out;
    vals[3] = HV_N;
    cr_assert_eq(hv_launch(v->t, &v->add, (tdm_xdim3){ HV_N / 256, 1, 1 }, (tdm_xdim3){ 256, 1, 1 }, 0, vals), 0);
    int err = th_raw_read(v->t, out, c, bytes, 0);
    tdm_addr o = out;
    int ferr = hv_call_int(v->t, TDM_FREE, (xdrproc_t)xdr_tdm_addr, &o);
    double ms = now_ms() - t0;
    cr_assert_eq(err, 0, "the victim's read failed at iteration %u (cudaError %d)", v->iter, err);
    cr_assert_eq(ferr, 0, "the victim's cudaFree failed at iteration %u (cudaError %d)", v->iter, ferr);
    for (unsigned i = 0; i < HV_N; i++)
        wrong += c[i] != 2.0f * a[i] + b[i];
    cr_expect_eq(wrong, 0, "iteration %u: %d of %d elements differ from the host reference", v->iter, wrong, HV_N);
    v->wrong += wrong != 0;
    v->iter++;
    return ms;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

hv_latency hv_victim_run(hv_victim *v, int iters, double min_ms)
{
    size_t cap = (size_t)iters, n = 0;
    double *ms = calloc(cap, sizeof(*ms));
    double t0 = now_ms();
    hv_latency l = { 0 };

    cr_assert(ms && iters > 0);
    while ((int)n < iters || now_ms() - t0 < min_ms) {
        if (n == cap) {
            double *more = realloc(ms, 2 * cap * sizeof(*ms));
            cr_assert_not_null(more);
            ms = more;
            cap *= 2;
        }
        ms[n++] = hv_victim_step(v);
    }
    qsort(ms, n, sizeof(*ms), cmp_double);
    l.n = (int)n;
    l.p50 = ms[n / 2];
    l.p99 = ms[(n * 99 + 99) / 100 - 1];
    l.max = ms[n - 1];
    free(ms);
    return l;
}

double hv_bound_ms(hv_latency alone)
{
    double b = 10.0 * alone.p99;
    return b > HV_FLOOR_MS ? b : HV_FLOOR_MS;
}
