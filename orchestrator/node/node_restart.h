/* When a dead server may start again (docs/node-agent.md, "Supervision"): at once the first
 * time, then after a backoff that doubles with each start that did not last (1 s up to 30 s),
 * and never more than `per_minute` starts in a minute; a server that ran a minute is healthy
 * again and its backoff starts over.  No I/O: the agent feeds it the clock. */
#ifndef TANDEM_NODE_RESTART_H
#define TANDEM_NODE_RESTART_H

#include <stdbool.h>
#include <stdint.h>

#define TDM_NODE_BACKOFF_FIRST_MS 1000
#define TDM_NODE_BACKOFF_MAX_MS 30000
#define TDM_NODE_HEALTHY_MS 60000     /* a run this long resets the backoff */
#define TDM_NODE_WINDOW_MS 60000

typedef struct tdm_node_restart {
    uint64_t window_start_ms;    /* the window the starts are counted in */
    int starts_in_window;
    int quick_deaths;            /* deaths in a row within TDM_NODE_HEALTHY_MS of their start */
    uint64_t started_ms;         /* the last start */
    int restarts;                /* all restarts, for GET /v1/state */
    bool ever_started;
} tdm_node_restart;

typedef enum tdm_restart_verdict {
    TDM_RESTART_NOW,             /* start it */
    TDM_RESTART_BACKOFF,         /* wait until *at_ms: it died soon after its last start */
    TDM_RESTART_WINDOW_FULL,     /* wait until *at_ms: per_minute starts this minute already */
} tdm_restart_verdict;

/* The server died at now_ms: when may it start again?  Counts the death. */
tdm_restart_verdict tdm_node_restart_died(tdm_node_restart *r, uint64_t now_ms, int per_minute, uint64_t *at_ms);
/* It is started at now_ms (the first start too): counts it in its window. */
void tdm_node_restart_started(tdm_node_restart *r, uint64_t now_ms);

#endif
