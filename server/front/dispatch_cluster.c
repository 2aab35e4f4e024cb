/* Handlers of the cluster launch and the device odds and ends
 * (proto/calls.def, "cluster launch and device odds and ends (issue 14)";
 * docs/runtime-api.md). */
#include "dispatch.h"

#include "session.h"
#include "tandem_rpc.h"

_Static_assert(TDM_ATOMIC_OPERATIONS == TDM_BACKEND_ATOMIC_OPS, "one capability per cudaAtomicOperation");

static tdm_dim3 dim3_of(tdm_xdim3 d)
{
    return (tdm_dim3){ d.x, d.y, d.z };
}

bool tdm_serve_LAUNCH_CLUSTER(void *ctx, void *args, void *res)
{
    tdm_cluster_launch_args *a = args;
    tdm_cluster_config c = {
        .grid = dim3_of(a->grid),
        .block = dim3_of(a->block),
        .shared_mem = a->shared_mem,
        .cluster = dim3_of(a->cluster),
        .preferred = dim3_of(a->preferred),
        .policy = a->policy,
        .cooperative = a->cooperative != 0,
    };

    (void)res;
    tdm_session_defer(ctx, tdm_session_launch_cluster(ctx, a->func, &c, a->stream, a->params.params_val,
                                                      a->params.params_len));
    return true;
}

bool tdm_serve_CLUSTER_OCCUPANCY(void *ctx, void *args, void *res)
{
    tdm_cluster_occupancy_args *a = args;
    tdm_u64_res *r = res;
    tdm_cluster_config c = {
        .grid = dim3_of(a->grid),
        .block = dim3_of(a->block),
        .shared_mem = a->shared_mem,
        .cluster = dim3_of(a->cluster),
        .policy = a->policy,
    };
    int value = 0;

    r->err = tdm_session_cluster_occupancy(ctx, a->what, a->func, &c, &value);
    r->value = value < 0 ? 0 : (uint64_t)value;
    return true;
}

bool tdm_serve_FUNC_GET_CLUSTER_ATTRS(void *ctx, void *args, void *res)
{
    tdm_func_cluster_res *r = res;
    tdm_func_cluster_attrs fa = { 0 };

    r->err = tdm_session_func_cluster_attrs(ctx, *(tdm_handle *)args, &fa);
    r->dim_must_be_set = fa.dim_must_be_set;
    r->width = fa.width;
    r->height = fa.height;
    r->depth = fa.depth;
    r->non_portable = fa.non_portable;
    r->policy = fa.policy;
    return true;
}

bool tdm_serve_DEVICE_TEX1D_LINEAR_MAX_WIDTH(void *ctx, void *args, void *res)
{
    tdm_tex1d_width_args *a = args;
    tdm_u64_res *r = res;
    uint64_t width = 0;

    r->err = tdm_session_tex1d_linear_max_width(ctx, a->kind, a->bits, &width);
    r->value = width;
    return true;
}

bool tdm_serve_DEVICE_HOST_ATOMIC_CAPS(void *ctx, void *args, void *res)
{
    tdm_atomic_caps_res *r = res;

    (void)args;
    r->err = tdm_session_host_atomic_caps(ctx, r->caps);
    return true;
}
