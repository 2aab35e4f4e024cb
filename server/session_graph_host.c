/* Graph host nodes' view of host memory (docs/graphs.md "Host nodes").
 *
 * Where the server cannot reach a device-to-host node's host memory (TCP,
 * or pageable memory over shm) the node writes staging, which the guest
 * fetches after the launch (session_graph_copy.c).  A host node after such
 * a copy runs before the launch ends and reads that memory, so before it
 * runs the guest takes every launched graph's staged device-to-host bytes
 * as they are now (GRAPH_HOST_FETCH_NOW).  It does not disturb the fetch
 * after the launch, which delivers the final bytes again. */
#include "session.h"

#include <driver_types.h>

#include "session_graph_internal.h"
#include "tandem_rpc.h"

int tdm_session_graph_host_fetch_now(tdm_session *s, uint64_t cursor, int *got, uint64_t *dst, const void **data,
                                     uint64_t *n)
{
    *got = 0;
    /* cursor counts bytes already delivered, over every staged
     * device-to-host copy of the launched graphs, in order. */
    for (size_t i = 0; i < s->ngraph_pending; i++) {
        const tdm_kept_bytes *k = s->graph_pending[i];

        for (size_t j = 0; j < k->nio; j++) {
            const tdm_host_io *io = &k->io[j];
            uint64_t len;

            if (!io->dtoh || io->off)
                continue;
            if (cursor >= io->n) {
                cursor -= io->n;
                continue;
            }
            len = io->n - cursor < TDM_MAX_CHUNK ? io->n - cursor : TDM_MAX_CHUNK;
            *dst = io->guest + cursor;
            *data = (const char *)io->buf + cursor;
            *n = len;
            *got = 1;
            return 0;
        }
    }
    return 0;
}
