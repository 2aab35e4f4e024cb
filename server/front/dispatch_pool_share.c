/* Handlers of the pool sharing calls (proto/calls.def, "peer and batch
 * copies, pool selection and sharing (issue 14)"; docs/ipc.md "Sharing
 * memory pools"). */
#include "dispatch.h"

#include "session.h"
#include "tandem_rpc.h"

bool tdm_serve_MEM_POOL_SHAREABLE(void *ctx, void *args, void *res)
{
    tdm_pool_share_args *a = args;

    *(int *)res = tdm_session_pool_shareable(ctx, a->pool, a->types);
    return true;
}

bool tdm_serve_MEM_POOL_EXPORT(void *ctx, void *args, void *res)
{
    tdm_pool_share_args *a = args;
    tdm_ipc_handle_res *r = res;

    r->err = tdm_session_pool_export(ctx, a->pool, a->types, (uint8_t *)r->handle.bytes);
    return true;
}

bool tdm_serve_MEM_POOL_IMPORT(void *ctx, void *args, void *res)
{
    tdm_handle_res *r = res;
    uint64_t pool = 0;

    r->err = tdm_session_pool_import(ctx, (const uint8_t *)((tdm_ipc_handle *)args)->bytes, &pool);
    r->handle = pool;
    return true;
}

bool tdm_serve_MEM_POOL_SHARE_RELEASE(void *ctx, void *args, void *res)
{
    *(int *)res = tdm_session_pool_share_release(ctx, *(tdm_handle *)args);
    return true;
}

bool tdm_serve_MEM_POOL_EXPORT_PTR(void *ctx, void *args, void *res)
{
    tdm_ipc_handle_res *r = res;

    r->err = tdm_session_pool_export_ptr(ctx, *(tdm_addr *)args, (uint8_t *)r->handle.bytes);
    return true;
}

bool tdm_serve_MEM_POOL_IMPORT_PTR(void *ctx, void *args, void *res)
{
    tdm_pool_import_ptr_args *a = args;
    tdm_ipc_open_mem_res *r = res;
    uint64_t addr = 0, size = 0;

    r->err = tdm_session_pool_import_ptr(ctx, a->pool, (const uint8_t *)a->data.bytes, &addr, &size);
    r->addr = addr;
    r->size = size;
    return true;
}
