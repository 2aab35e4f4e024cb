/* See node_restart.h. */
#include "node_restart.h"

tdm_restart_verdict tdm_node_restart_died(tdm_node_restart *r, uint64_t now_ms, int per_minute, uint64_t *at_ms)
{
    uint64_t backoff = 0;

    if (now_ms - r->started_ms >= TDM_NODE_HEALTHY_MS)
        r->quick_deaths = 0;
    else {
        r->quick_deaths++;
        backoff = TDM_NODE_BACKOFF_FIRST_MS;
        for (int i = 1; i < r->quick_deaths && backoff < TDM_NODE_BACKOFF_MAX_MS; i++)
            backoff *= 2;
        if (backoff > TDM_NODE_BACKOFF_MAX_MS)
            backoff = TDM_NODE_BACKOFF_MAX_MS;
    }
    /* The window: a passed one no longer counts; a full one holds the start to its end. */
    bool window_open = now_ms - r->window_start_ms < TDM_NODE_WINDOW_MS;
    if (window_open && r->starts_in_window >= per_minute) {
        uint64_t end = r->window_start_ms + TDM_NODE_WINDOW_MS;
        *at_ms = end > now_ms + backoff ? end : now_ms + backoff;
        return TDM_RESTART_WINDOW_FULL;
    }
    *at_ms = now_ms + backoff;
    return backoff ? TDM_RESTART_BACKOFF : TDM_RESTART_NOW;
}

void tdm_node_restart_started(tdm_node_restart *r, uint64_t now_ms)
{
    if (r->ever_started)
        r->restarts++;
    r->ever_started = true;
    if (now_ms - r->window_start_ms >= TDM_NODE_WINDOW_MS || r->starts_in_window == 0) {
        r->window_start_ms = now_ms;
        r->starts_in_window = 0;
    }
    r->starts_in_window++;
    r->started_ms = now_ms;
}
