/* When tandem-node starts a dead server again (orchestrator/node/node_restart.c): rows of
 * starts and deaths at given times, each death with the verdict and the time it must give. */
#include <criterion/criterion.h>

#include "node_restart.h"

typedef struct ev {
    char what;                   /* 's' started, 'd' died */
    uint64_t at_ms;
    tdm_restart_verdict verdict; /* for 'd' */
    uint64_t start_at_ms;        /* for 'd' */
} ev;

static void run_events(const char *name, int per_minute, const ev *e, size_t n)
{
    tdm_node_restart r = { 0 };

    for (size_t i = 0; i < n; i++) {
        if (e[i].what == 's') {
            tdm_node_restart_started(&r, e[i].at_ms);
            continue;
        }
        uint64_t at = 0;
        tdm_restart_verdict v = tdm_node_restart_died(&r, e[i].at_ms, per_minute, &at);
        cr_expect_eq(v, e[i].verdict, "%s, event %zu: verdict %d", name, i, v);
        cr_expect_eq(at, e[i].start_at_ms, "%s, event %zu: start at %llu", name, i, (unsigned long long)at);
    }
}

#define RUN(name, per_minute, ...)                                                  \
    do {                                                                            \
        static const ev evs_[] = { __VA_ARGS__ };                                   \
        run_events(name, per_minute, evs_, sizeof(evs_) / sizeof(evs_[0]));         \
    } while (0)

Test(node_restart, a_server_that_ran_long_restarts_at_once)
{
    RUN("long run", 5, { 's', 1000, 0, 0 }, { 'd', 200000, TDM_RESTART_NOW, 200000 });
}

Test(node_restart, quick_deaths_back_off_doubling_up_to_the_cap)
{
    RUN("backoff", 100,
        { 's', 1000, 0, 0 }, { 'd', 2000, TDM_RESTART_BACKOFF, 3000 },
        { 's', 3000, 0, 0 }, { 'd', 3500, TDM_RESTART_BACKOFF, 5500 },
        { 's', 5500, 0, 0 }, { 'd', 6000, TDM_RESTART_BACKOFF, 10000 },
        { 's', 10000, 0, 0 }, { 'd', 10000, TDM_RESTART_BACKOFF, 18000 },
        { 's', 18000, 0, 0 }, { 'd', 18000, TDM_RESTART_BACKOFF, 34000 },
        { 's', 34000, 0, 0 }, { 'd', 34000, TDM_RESTART_BACKOFF, 64000 },   /* 30 s cap */
        { 's', 64000, 0, 0 }, { 'd', 64000, TDM_RESTART_BACKOFF, 94000 });
}

Test(node_restart, a_healthy_run_resets_the_backoff)
{
    RUN("reset", 100,
        { 's', 1000, 0, 0 }, { 'd', 1500, TDM_RESTART_BACKOFF, 2500 },
        { 's', 2500, 0, 0 }, { 'd', 3000, TDM_RESTART_BACKOFF, 5000 },
        { 's', 5000, 0, 0 }, { 'd', 65000, TDM_RESTART_NOW, 65000 },
        { 's', 65000, 0, 0 }, { 'd', 65100, TDM_RESTART_BACKOFF, 66100 });
}

Test(node_restart, starts_per_minute_are_bounded)
{
    /* two starts a minute: the third waits for the window that began at 1000 to end */
    RUN("window", 2,
        { 's', 1000, 0, 0 }, { 'd', 2000, TDM_RESTART_BACKOFF, 3000 },
        { 's', 3000, 0, 0 }, { 'd', 4000, TDM_RESTART_WINDOW_FULL, 61000 },
        { 's', 61000, 0, 0 }, { 'd', 62000, TDM_RESTART_BACKOFF, 66000 });
}

Test(node_restart, restarts_are_counted_but_not_the_first_start)
{
    tdm_node_restart r = { 0 };
    uint64_t at;

    tdm_node_restart_started(&r, 0);
    cr_expect_eq(r.restarts, 0);
    tdm_node_restart_died(&r, 100000, 5, &at);
    tdm_node_restart_started(&r, 100000);
    cr_expect_eq(r.restarts, 1);
}
