#include <stddef.h>
#include <stdio.h>
#include <time.h>

#include "wire_timeouts.h"

tdm_wire_timeout tdm_wire_timed_out(const tdm_wire_timeouts *t, int mid_frame, uint64_t waited_ns)
{
    uint32_t limit_s = !t ? 0 : mid_frame ? t->frame_s : t->idle_s;

    if (!limit_s || waited_ns < (uint64_t)limit_s * 1000000000u)
        return TDM_WIRE_IN_TIME;
    return mid_frame ? TDM_WIRE_STALLED : TDM_WIRE_IDLE;
}

void tdm_wire_timeout_why(const tdm_wire_timeouts *t, tdm_wire_timeout why, char *out, size_t len)
{
    if (why == TDM_WIRE_STALLED)
        snprintf(out, len, "it stalled in the middle of a frame for %u s (--frame-timeout)", t ? t->frame_s : 0);
    else if (why == TDM_WIRE_IDLE)
        snprintf(out, len, "it sent nothing for %u s (--idle-timeout, or the tenant's idle_timeout)",
                 t ? t->idle_s : 0);
    else
        snprintf(out, len, "in time");
}

uint64_t tdm_wire_now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
