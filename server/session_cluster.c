/* Thread block clusters and the device odds and ends as a session asks
 * for them (docs/runtime-api.md, "Thread block clusters", "Device odds and
 * ends"): the guest's handles and values are checked here; the cluster
 * shapes are the driver's to judge (the backend gives its errors). */
#include "session.h"

#include <driver_types.h>

#include "tandem_rpc.h"

static const tdm_backend_ops *ops(tdm_session *s)
{
    return s->srv->ops;
}

/* A launch configuration a backend may see: every dimension positive. */
static int check_config(const tdm_cluster_config *c)
{
    if (!c->grid.x || !c->grid.y || !c->grid.z || !c->block.x || !c->block.y || !c->block.z)
        return cudaErrorInvalidConfiguration;
    if (c->policy < cudaClusterSchedulingPolicyDefault || c->policy > cudaClusterSchedulingPolicyLoadBalancing)
        return cudaErrorInvalidValue;
    return 0;
}

int tdm_session_launch_cluster(tdm_session *s, uint64_t func, const tdm_cluster_config *c, uint64_t stream,
                               const void *params, uint32_t params_len)
{
    const tdm_func_entry *f = tdm_session_func(s, func);
    tdm_stream_state *st;
    int err;

    if (!f)
        return cudaErrorInvalidDeviceFunction;
    if (params_len != f->params_len)
        return cudaErrorInvalidValue;
    if ((err = check_config(c)) != 0)
        return err;
    if (!(st = tdm_session_launch_stream(s, f, stream, params, &err)))
        return err;
    return ops(s)->launch_cluster(s->srv->be, f->bf, c, st->bs, params, params_len);
}

int tdm_session_cluster_occupancy(tdm_session *s, int what, uint64_t func, const tdm_cluster_config *c, int *value)
{
    const tdm_func_entry *f = tdm_session_func(s, func);
    int err;

    *value = 0;
    if (!f)
        return cudaErrorInvalidDeviceFunction;
    if ((err = check_config(c)) != 0)
        return err == cudaErrorInvalidConfiguration ? cudaErrorInvalidValue : err;
    if (what == TDM_CLUSTER_MAX_ACTIVE)
        return ops(s)->occupancy_max_active_clusters(s->srv->be, f->bf, c, value);
    if (what == TDM_CLUSTER_MAX_POTENTIAL_SIZE)
        return ops(s)->occupancy_max_cluster_size(s->srv->be, f->bf, c, value);
    return cudaErrorInvalidValue;
}

int tdm_session_func_cluster_attrs(tdm_session *s, uint64_t func, tdm_func_cluster_attrs *out)
{
    const tdm_func_entry *f = tdm_session_func(s, func);

    if (!f)
        return cudaErrorInvalidDeviceFunction;
    return ops(s)->func_cluster_attrs(s->srv->be, f->bf, out);
}

int tdm_session_tex1d_linear_max_width(tdm_session *s, int kind, const int bits[4], uint64_t *width)
{
    int channels = 0, err = tdm_session_channel_format(bits, kind, &channels);

    *width = 0;
    if (err)
        return err;
    return ops(s)->tex1d_linear_max_width(s->srv->be, kind, bits[0], channels, width);
}

int tdm_session_host_atomic_caps(tdm_session *s, unsigned caps[TDM_BACKEND_ATOMIC_OPS])
{
    return ops(s)->host_atomic_caps(s->srv->be, caps);
}
