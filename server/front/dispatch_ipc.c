/* Handlers of the IPC calls (proto/calls.def, "ipc (issue 14)";
 * docs/ipc.md). */
#include "dispatch.h"

#include "session.h"
#include "tandem_rpc.h"

bool tdm_serve_IPC_GET_MEM_HANDLE(void *ctx, void *args, void *res)
{
    tdm_ipc_handle_res *r = res;

    r->err = tdm_session_ipc_get_mem_handle(ctx, *(tdm_addr *)args, (uint8_t *)r->handle.bytes);
    return true;
}

bool tdm_serve_IPC_OPEN_MEM_HANDLE(void *ctx, void *args, void *res)
{
    tdm_ipc_open_mem_args *a = args;
    tdm_ipc_open_mem_res *r = res;
    uint64_t addr = 0, size = 0;

    r->err = tdm_session_ipc_open_mem(ctx, (const uint8_t *)a->handle.bytes, a->flags, &addr, &size);
    r->addr = addr;
    r->size = size;
    return true;
}

bool tdm_serve_IPC_CLOSE_MEM_HANDLE(void *ctx, void *args, void *res)
{
    *(int *)res = tdm_session_ipc_close_mem(ctx, *(tdm_addr *)args);
    return true;
}

bool tdm_serve_IPC_GET_EVENT_HANDLE(void *ctx, void *args, void *res)
{
    tdm_ipc_handle_res *r = res;

    r->err = tdm_session_ipc_get_event_handle(ctx, *(tdm_handle *)args, (uint8_t *)r->handle.bytes);
    return true;
}

bool tdm_serve_IPC_OPEN_EVENT_HANDLE(void *ctx, void *args, void *res)
{
    tdm_handle_res *r = res;
    uint64_t h = 0;

    r->err = tdm_session_ipc_open_event(ctx, (const uint8_t *)((tdm_ipc_handle *)args)->bytes, &h);
    r->handle = h;
    return true;
}

bool tdm_serve_IPC_FENCE(void *ctx, void *args, void *res)
{
    (void)ctx;
    (void)args;
    *(int *)res = 0;  /* calls are served in order: those before it are */
    return true;
}
