/* Handlers of the runtime's everyday calls (proto/calls.def, "runtime
 * (issue 14)"; docs/runtime-api.md). */
#include "dispatch.h"

#include "session.h"
#include "tandem_rpc.h"

bool tdm_serve_OCCUPANCY_MAX_BLOCKS(void *ctx, void *args, void *res)
{
    tdm_occupancy_args *a = args;
    tdm_u64_res *r = res;
    int blocks = 0;

    r->err = tdm_session_occupancy_max_blocks(ctx, a->func, a->block_size, a->dyn_smem, a->flags, &blocks);
    r->value = (uint64_t)blocks;
    return true;
}

bool tdm_serve_OCCUPANCY_DYN_SMEM(void *ctx, void *args, void *res)
{
    tdm_occupancy_args *a = args;
    tdm_u64_res *r = res;
    uint64_t bytes = 0;

    r->err = tdm_session_occupancy_dyn_smem(ctx, a->func, a->num_blocks, a->block_size, &bytes);
    r->value = bytes;
    return true;
}

bool tdm_serve_STREAM_PRIORITY_RANGE(void *ctx, void *args, void *res)
{
    tdm_int_pair_res *r = res;

    (void)args;
    r->err = tdm_session_stream_priority_range(ctx, &r->first, &r->second);
    return true;
}

bool tdm_serve_STREAM_GET_PRIORITY(void *ctx, void *args, void *res)
{
    tdm_int_pair_res *r = res;

    r->err = tdm_session_stream_get_priority(ctx, *(tdm_handle *)args, &r->first);
    return true;
}

bool tdm_serve_DEVICE_SET_LIMIT(void *ctx, void *args, void *res)
{
    tdm_limit_args *a = args;

    *(int *)res = tdm_session_set_limit(ctx, a->limit, a->value);
    return true;
}

bool tdm_serve_DEVICE_GET_LIMIT(void *ctx, void *args, void *res)
{
    tdm_u64_res *r = res;
    uint64_t v = 0;

    r->err = tdm_session_get_limit(ctx, *(tdm_u32 *)args, &v);
    r->value = v;
    return true;
}

bool tdm_serve_FUNC_SET_ATTRIBUTE(void *ctx, void *args, void *res)
{
    tdm_func_set_args *a = args;

    *(int *)res = tdm_session_func_set_attribute(ctx, a->func, a->what, a->value);
    return true;
}

bool tdm_serve_FUNC_SET_CACHE_CONFIG(void *ctx, void *args, void *res)
{
    tdm_func_set_args *a = args;

    *(int *)res = tdm_session_func_set_cache_config(ctx, a->func, a->what);
    return true;
}

bool tdm_serve_LAUNCH_COOPERATIVE(void *ctx, void *args, void *res)
{
    tdm_launch_args *a = args;
    tdm_dim3 g = { a->grid.x, a->grid.y, a->grid.z }, b = { a->block.x, a->block.y, a->block.z };

    *(int *)res = tdm_session_launch_cooperative(ctx, a->func, g, b, a->shared_mem, a->stream,
                                                 a->params.params_val, a->params.params_len);
    return true;
}

bool tdm_serve_DEVICE_PCI_BUS_ID(void *ctx, void *args, void *res)
{
    tdm_pci_bus_id_res *r = res;

    (void)args;
    r->err = tdm_session_pci_bus_id(ctx, r->id, sizeof(r->id));
    r->id[sizeof(r->id) - 1] = '\0';
    return true;
}
