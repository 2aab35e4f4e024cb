/* The elasticity loop (orchestrator/core/elastic.c): rows of latency sequences, each with the
 * trace of shares it must produce.  Samples come every 100 ms; a model row computes each sample
 * from the share in force `lag` samples earlier, as a report measured over the last interval
 * does, which is what makes a loop without cool-down overshoot and come back. */
#include <criterion/criterion.h>

#include "orch_elastic.h"
#include "orch_fixture.h"

#define MAX_SAMPLES 64
#define MAX_TRACE 16

typedef struct row {
    const char *name;
    int gpu_sms;             /* n1/gpu0's SMs; "other" holds other_sm of them */
    int other_sm;
    int budget;
    int sm;                  /* the placement's share at start */
    int scale_up, scale_down;
    double upper, lower;
    int window;
    double cooldown_ms;
    /* samples: a fixed sequence (n > 0), or work / share(lag samples ago) for model_samples */
    int n;
    double seq[MAX_SAMPLES];
    double work;
    int lag, model_samples;
    /* expected */
    int trace[MAX_TRACE];    /* shares after each change, starting with the initial one; 0 ends */
    orch_action last_action; /* the last verdict other than none */
    double interval_s;       /* GPU_METRIC_INTERVAL (0: every sample counts) */
    int per_vm;              /* n1/gpu0's sm_budget_per_vm (node.conf; 0: none) */
} row;

static const row rows[] = {
    { "steady_violation_scales_up_to_the_vm_budget_then_holds", 132, 0, 20, 8, 4, 2, 10, 2, 3, 250,
      20, { 20, 20, 20, 20, 20, 20, 20, 20, 20, 20, 20, 20, 20, 20, 20, 20, 20, 20, 20, 20 }, 0, 0, 0, { 8, 12, 16, 20 }, ORCH_ACT_HOLD, 0, 0 },
    { "one_outlier_in_the_window_moves_nothing", 132, 0, 64, 8, 4, 2, 10, 2, 5, 250,
      10, { 5, 5, 80, 5, 5, 5, 5, 90, 5, 5 }, 0, 0, 0, { 8 }, ORCH_ACT_NONE, 0, 0 },
    { "violation_held_by_most_of_the_window_scales_up", 132, 0, 64, 8, 4, 2, 10, 2, 5, 250,
      5, { 30, 5, 30, 30, 5 }, 0, 0, 0, { 8, 12 }, ORCH_ACT_SCALE_UP, 0, 0 },
    { "idle_scales_down_and_never_under_one_sm", 132, 0, 64, 8, 4, 3, 10, 2, 2, 150,
      20, { 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1 }, 0, 0, 0, { 8, 5, 2, 1 },
      ORCH_ACT_SCALE_DOWN, 0, 0 },
    { "scale_up_stops_at_the_gpus_free_sms", 20, 6, 64, 8, 8, 2, 10, 2, 2, 150,
      2, { 50, 50 }, 0, 0, 0, { 8, 14 }, ORCH_ACT_SCALE_UP, 0, 0 },
    { "full_gpu_decides_migrate_without_changing_the_share", 10, 2, 64, 8, 4, 2, 10, 2, 3, 250,
      3, { 30, 30, 30 }, 0, 0, 0, { 8 }, ORCH_ACT_MIGRATE, 0, 0 },
    { "in_band_latency_moves_nothing", 132, 0, 64, 8, 4, 2, 10, 2, 3, 0,
      9, { 5, 6, 7, 5, 6, 7, 9, 3, 4 }, 0, 0, 0, { 8 }, ORCH_ACT_NONE, 0, 0 },
    /* work 100 ms*SM: 8 SMs 12.5 ms (over 10), 16 SMs 6.25 ms (in band), 24 SMs 4.17 ms (under 5). */
    { "lagging_reports_with_cool_down_settle_without_reversal", 132, 0, 64, 8, 8, 4, 10, 5, 3, 350,
      0, { 0 }, 100, 3, 40, { 8, 16 }, ORCH_ACT_SCALE_UP, 0, 0 },
    { "lagging_reports_without_cool_down_overshoot_and_reverse", 132, 0, 64, 8, 8, 4, 10, 5, 3, 0,
      0, { 0 }, 100, 3, 40, { 8, 16, 24, 20, 16 }, ORCH_ACT_SCALE_DOWN, 0, 0 },
    /* GPU_METRIC_INTERVAL 0.3 s with a report every 100 ms: samples 0, 3, 6 fill the window
     * once (counting every report would fill it at 2, then again at 7 after the cool-down). */
    { "metric_interval_counts_one_report_per_interval", 132, 0, 64, 8, 4, 2, 10, 2, 3, 250,
      9, { 30, 30, 30, 30, 30, 30, 30, 30, 30 }, 0, 0, 0, { 8, 12 }, ORCH_ACT_SCALE_UP, 0.3, 0 },
    /* A report 100 ms after the last with an interval of 105 ms is within the slack: counted. */
    { "metric_interval_jitter_within_the_slack_still_counts", 132, 0, 64, 8, 4, 2, 10, 2, 3, 0,
      3, { 30, 30, 30 }, 0, 0, 0, { 8, 12 }, ORCH_ACT_SCALE_UP, 0.105, 0 },
    /* node.conf's sm_budget_per_vm caps growth on its GPU like free SMs do ... */
    { "scale_up_stops_at_the_gpus_sm_budget_per_vm", 132, 0, 64, 8, 8, 2, 10, 2, 2, 150,
      4, { 50, 50, 50, 50 }, 0, 0, 0, { 8, 12 }, ORCH_ACT_SCALE_UP, 0, 12 },
    /* ... so a bound spent on n1/gpu0 decides a move to a GPU without it. */
    { "per_vm_bound_spent_decides_migrate", 132, 0, 64, 8, 4, 2, 10, 2, 3, 250,
      3, { 30, 30, 30 }, 0, 0, 0, { 8 }, ORCH_ACT_MIGRATE, 0, 8 },
};

static void run_row(const row *r)
{
    orch_cluster *c = fx_cluster();
    orch_node *n1 = fx_node(c, "n1", "h1", ORCH_NODE_UP);
    orch_node *n2 = fx_node(c, "n2", "h2", ORCH_NODE_UP);
    orch_vm vm = { .name = "vm", .sm_budget = r->budget, .memory_mib = 4096 };
    orch_placement *p;
    int history[MAX_SAMPLES];        /* the share in force at each sample */
    int trace[MAX_TRACE] = { r->sm }, ntrace = 1;
    orch_action last = ORCH_ACT_NONE;
    int total = r->n ? r->n : r->model_samples;

    fx_gpu(n1, r->gpu_sms, 81920)->sm_budget_per_vm = r->per_vm;
    fx_gpu(n2, 132, 81920);
    if (r->other_sm)
        fx_hold(c, "other", "n1", 0, r->other_sm, 10);
    p = fx_hold(c, "vm", "n1", 0, r->sm, 100);
    p->params = (orch_params){ .scale_up = r->scale_up, .scale_down = r->scale_down, .latency_upper_ms = r->upper,
                               .latency_lower_ms = r->lower, .sample_count = r->window,
                               .metric_interval_s = r->interval_s };
    for (int i = 0; i < total; i++) {
        double now = 1000.0 + 100.0 * i;
        double sample = r->n ? r->seq[i] : r->work / history[i - r->lag < 0 ? 0 : i - r->lag];
        if (!r->n && i < r->lag)
            sample = r->work / r->sm;
        history[i] = p->sm;
        orch_elastic_verdict v = orch_elastic_feed(c, &vm, p, sample, now);
        if (v.action == ORCH_ACT_NONE)
            continue;
        last = v.action;
        orch_elastic_applied(p, v.action == ORCH_ACT_MIGRATE || v.action == ORCH_ACT_HOLD ? p->sm : v.sm, now,
                             r->cooldown_ms);
        history[i] = p->sm;
        if (v.action == ORCH_ACT_MIGRATE) {
            cr_assert_eq(v.to_node, 1, "%s: migrate to node %d", r->name, v.to_node);
            orch_decision d;
            orch_elastic_describe(c, p, &v, &d);
            cr_assert_str_eq(d.to, "n2/gpu0", "%s", r->name);
        }
        if (trace[ntrace - 1] != p->sm) {
            cr_assert_lt(ntrace, MAX_TRACE, "%s: too many changes", r->name);
            trace[ntrace++] = p->sm;
        }
        cr_assert_geq(p->sm, 1, "%s: share under 1 SM", r->name);
        cr_assert_leq(p->sm, r->budget, "%s: share over the VM's budget", r->name);
    }
    for (int i = 0; i < MAX_TRACE; i++) {
        int want = r->trace[i];
        int got = i < ntrace ? trace[i] : 0;
        cr_assert_eq(got, want, "%s: change %d is %d SMs, want %d (%d changes)", r->name, i, got, want, ntrace - 1);
        if (!want)
            break;
    }
    cr_assert_eq(last, r->last_action, "%s: last verdict %s, want %s", r->name, orch_action_name(last),
                 orch_action_name(r->last_action));
    free(c);
}

Test(orch_elastic, table_of_latency_sequences_and_share_traces)
{
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
        run_row(&rows[i]);
}

/* The statistic is the median: with an even window it is the mean of the middle two. */
Test(orch_elastic, window_median_of_even_and_odd_windows)
{
    orch_placement p = { .nwindow = 4, .window = { 9, 1, 5, 3 } };
    cr_assert_float_eq(orch_window_median(&p), 4.0, 1e-9);
    p.nwindow = 3;
    cr_assert_float_eq(orch_window_median(&p), 5.0, 1e-9);
}
