/* The runtime's everyday calls as a session makes them
 * (docs/runtime-api.md): guest input checked here, as the runtime checks
 * it, before the backend sees it. */
#include "session.h"

#include <driver_types.h>

static const tdm_backend_ops *ops(tdm_session *s)
{
    return s->srv->ops;
}

int tdm_session_occupancy_max_blocks(tdm_session *s, uint64_t func, int block_size, uint64_t dyn_smem,
                                     unsigned flags, int *blocks)
{
    const tdm_func_entry *f = tdm_session_func(s, func);

    if (!f)
        return cudaErrorInvalidDeviceFunction;
    if (block_size <= 0 || (flags & ~(unsigned)cudaOccupancyDisableCachingOverride))
        return cudaErrorInvalidValue;
    return ops(s)->occupancy_max_blocks(s->srv->be, f->bf, block_size, (size_t)dyn_smem, flags, blocks);
}

int tdm_session_occupancy_dyn_smem(tdm_session *s, uint64_t func, int num_blocks, int block_size, uint64_t *bytes)
{
    const tdm_func_entry *f = tdm_session_func(s, func);
    size_t n = 0;
    int err;

    if (!f)
        return cudaErrorInvalidDeviceFunction;
    if (block_size <= 0 || num_blocks <= 0)
        return cudaErrorInvalidValue;
    err = ops(s)->occupancy_dyn_smem(s->srv->be, f->bf, num_blocks, block_size, &n);
    *bytes = n;
    return err;
}

int tdm_session_stream_priority_range(tdm_session *s, int *least, int *greatest)
{
    return ops(s)->stream_priority_range(s->srv->be, least, greatest);
}

int tdm_session_stream_get_priority(tdm_session *s, uint64_t stream, int *priority)
{
    const tdm_stream_state *st = NULL;
    int least = 0, greatest = 0, err;

    /* The default streams (null, legacy, per-thread) have the default priority. */
    if (stream > TDM_STREAM_PER_THREAD) {
        st = tdm_handles_get(&s->streams, stream);
        if (!st)
            return cudaErrorInvalidResourceHandle;
    }
    err = tdm_session_stream_priority_range(s, &least, &greatest);
    if (err)
        return err;
    *priority = st ? st->priority : 0;
    if (*priority > least)
        *priority = least;
    if (*priority < greatest)
        *priority = greatest;
    return 0;
}

int tdm_session_set_limit(tdm_session *s, unsigned limit, uint64_t value)
{
    int err;

    /* Not a cudaLimit at all: a bad value (native); a limit this device
     * lacks is the backend's cudaErrorUnsupportedLimit. */
    if (limit >= TDM_SESSION_LIMITS)
        return cudaErrorInvalidValue;
    err = ops(s)->limit_raise(s->srv->be, (int)limit, value);
    if (err)
        return err;
    s->limits[limit] = value;
    s->limits_set |= 1u << limit;
    return 0;
}

int tdm_session_get_limit(tdm_session *s, unsigned limit, uint64_t *value)
{
    if (limit >= TDM_SESSION_LIMITS)
        return cudaErrorInvalidValue;
    if (s->limits_set & (1u << limit)) {
        *value = s->limits[limit];
        return 0;
    }
    return ops(s)->limit_get(s->srv->be, (int)limit, value);
}

void tdm_session_runtime_reset(tdm_session *s)
{
    s->limits_set = 0;
}

int tdm_session_func_set_attribute(tdm_session *s, uint64_t func, int attr, int value)
{
    const tdm_func_entry *f = tdm_session_func(s, func);

    if (!f)
        return cudaErrorInvalidDeviceFunction;
    /* The settable ones; 0..7 are read-only properties of the code. */
    if (attr < cudaFuncAttributeMaxDynamicSharedMemorySize || attr >= cudaFuncAttributeMax)
        return cudaErrorInvalidValue;
    return ops(s)->func_set_attribute(s->srv->be, f->bf, attr, value);
}

int tdm_session_func_set_cache_config(tdm_session *s, uint64_t func, int config)
{
    const tdm_func_entry *f = tdm_session_func(s, func);

    if (!f)
        return cudaErrorInvalidDeviceFunction;
    if (config < cudaFuncCachePreferNone || config > cudaFuncCachePreferEqual)
        return cudaErrorInvalidValue;
    return ops(s)->func_set_cache_config(s->srv->be, f->bf, config);
}

int tdm_session_pci_bus_id(tdm_session *s, char *buf, size_t len)
{
    return ops(s)->pci_bus_id(s->srv->be, buf, len);
}
