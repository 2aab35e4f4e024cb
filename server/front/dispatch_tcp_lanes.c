/* TCP lanes (docs/protocol.md, "Striping over several connections"): the
 * calls the guest's transport makes on its main connection to copy over
 * its lanes. */
#include "dispatch.h"

#include <driver_types.h>

#include "lanes.h"
#include "session.h"
#include "tandem_rpc.h"

bool tdm_serve_LANE_TICKET(void *ctx, void *args, void *res)
{
    tdm_session *s = ctx;
    tdm_lane_ticket_res *r = res;

    r->session_id = s->id;
    /* An shm session has no lanes: its copies go through its region. */
    r->err = s->lanes ? tdm_lanes_ticket(s->lanes, s->id, (unsigned char *)r->secret, &r->max_lanes)
                      : cudaErrorNotSupported;
    return true;
}

bool tdm_serve_MEMCPY_HTOD_LANES(void *ctx, void *args, void *res)
{
    tdm_session *s = ctx;
    tdm_htod_lanes_args *a = args;

    *(int *)res = s->lanes ? tdm_session_htod_lanes(s, a->dst, a->size, a->stream, a->xfer, a->nlanes)
                           : TDM_ERR_LANE_FAILED;
    return true;
}

bool tdm_serve_MEMCPY_DTOH_LANES(void *ctx, void *args, void *res)
{
    tdm_session *s = ctx;
    tdm_dtoh_lanes_args *a = args;
    tdm_dtoh_lanes_res *r = res;

    if (!s->lanes) {
        r->err = TDM_ERR_LANE_FAILED;
        return true;
    }
    tdm_session_dtoh_lanes(s, a->src, a->size, a->stream, a->xfer, a->nlanes, &r->err, &r->copy_err);
    return true;
}
