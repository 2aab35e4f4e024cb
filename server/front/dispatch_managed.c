/* Handlers of managed memory's rows of proto/calls.def
 * (docs/memory-models.md); the work is in server/session_managed.c. */
#include "dispatch.h"
#include "session.h"
#include "tandem_rpc.h"

bool tdm_serve_SHM_MANAGED_MAP(void *ctx, void *args, void *res)
{
    tdm_managed_map_args *a = args;

    *(int *)res = tdm_session_shm_managed_map(ctx, a->offset, a->size, a->addr);
    return true;
}
