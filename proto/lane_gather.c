/* The lane piece decision (lane_gather.h). */
#include "lane_gather.h"

tdm_gather_step tdm_lane_gather_step(tdm_gather_run acc, tdm_gather_run next, bool more, uint64_t piece_max,
                                     uint64_t chunk_max)
{
    tdm_gather_step step;
    uint64_t after;

    step.join = acc.len > 0 && next.stream == acc.stream && next.dst == acc.dst + acc.len &&
                next.src == acc.src + acc.len && acc.len + next.len <= piece_max;
    after = step.join ? acc.len + next.len : next.len;
    step.hold = more && after + chunk_max <= piece_max;
    return step;
}
