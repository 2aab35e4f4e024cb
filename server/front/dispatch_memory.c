/* Handlers of stream-ordered allocation and memory pools (calls.def,
 * "memory models"); the session core (session_memory.c) checks everything. */
#include "dispatch.h"

#include "session.h"
#include "tandem_rpc.h"

bool tdm_serve_MALLOC_ASYNC(void *ctx, void *args, void *res)
{
    tdm_malloc_async_args *a = args;
    tdm_malloc_res *r = res;
    uint64_t addr = 0;

    r->err = tdm_session_malloc_async(ctx, a->size, a->pool, a->stream, &addr);
    r->addr = addr;
    return true;
}

bool tdm_serve_FREE_ASYNC(void *ctx, void *args, void *res)
{
    tdm_free_async_args *a = args;

    *(int *)res = tdm_session_free_async(ctx, a->addr, a->stream);
    return true;
}

bool tdm_serve_MEM_POOL_CREATE(void *ctx, void *args, void *res)
{
    tdm_handle_res *r = res;
    uint64_t h = 0;

    r->err = tdm_session_mem_pool_create(ctx, *(tdm_u64 *)args, &h);
    r->handle = h;
    return true;
}

bool tdm_serve_MEM_POOL_DESTROY(void *ctx, void *args, void *res)
{
    *(int *)res = tdm_session_mem_pool_destroy(ctx, *(tdm_handle *)args);
    return true;
}

bool tdm_serve_MEM_POOL_SET_ATTR(void *ctx, void *args, void *res)
{
    tdm_pool_attr_args *a = args;

    *(int *)res = tdm_session_mem_pool_set_attr(ctx, a->pool, a->attr, a->value);
    return true;
}

bool tdm_serve_MEM_POOL_GET_ATTR(void *ctx, void *args, void *res)
{
    tdm_pool_attr_args *a = args;
    tdm_pool_attr_res *r = res;
    uint64_t v = 0;

    r->err = tdm_session_mem_pool_get_attr(ctx, a->pool, a->attr, &v);
    r->value = v;
    return true;
}

bool tdm_serve_MEM_POOL_TRIM(void *ctx, void *args, void *res)
{
    tdm_pool_trim_args *a = args;

    *(int *)res = tdm_session_mem_pool_trim(ctx, a->pool, a->keep);
    return true;
}

bool tdm_serve_DEVICE_SET_MEM_POOL(void *ctx, void *args, void *res)
{
    *(int *)res = tdm_session_set_mem_pool(ctx, *(tdm_handle *)args);
    return true;
}

bool tdm_serve_DEVICE_GET_MEM_POOL(void *ctx, void *args, void *res)
{
    tdm_handle_res *r = res;
    uint64_t h = 0;

    (void)args;
    r->err = tdm_session_get_mem_pool(ctx, &h);
    r->handle = h;
    return true;
}

bool tdm_serve_SHM_HOST_MAP(void *ctx, void *args, void *res)
{
    tdm_shm_span *a = args;
    tdm_malloc_res *r = res;
    uint64_t dev = 0;

    r->err = tdm_session_shm_host_map(ctx, a->offset, a->size, &dev);
    r->addr = dev;
    return true;
}
