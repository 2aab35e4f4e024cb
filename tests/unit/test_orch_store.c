/* The orchestrator's store (orchestrator/store): what is written, closed and reopened comes back
 * the same, and only the newest decisions are kept. */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "orch_fixture.h"
#include "orch_store.h"

static void open_store(const char *dir, orch_store **s)
{
    char why[256] = "";
    cr_assert_eq(orch_store_open(dir, s, why, sizeof(why)), 0, "%s", why);
}

Test(orch_store, write_close_reopen_compare)
{
    char dir[] = "/tmp/orch-store-XXXXXX";
    orch_cluster *c = fx_cluster(), *back = fx_cluster();
    orch_decision d[4] = { 0 }, dback[4];
    orch_store *s;
    int nd = 0;

    cr_assert(mkdtemp(dir));
    orch_node *n1 = fx_node(c, "n1", "h1", ORCH_NODE_UP);
    orch_node *n2 = fx_node(c, "n2", "h2", ORCH_NODE_DRAINED);
    fx_gpu(n1, 132, 81920);
    fx_gpu(n1, 66, 40960);
    fx_gpu(n2, 132, 81920);
    n1->gpus[1].servers[0].takeovers = 3;
    n1->gpus[1].sm_budget_per_vm = 16;   /* node.conf: kept over a restart */
    snprintf(n1->agent, sizeof(n1->agent), "http://127.0.0.1:7071");
    snprintf(n1->gpus[0].name, sizeof(n1->gpus[0].name), "NVIDIA H100");
    orch_placement *p = fx_hold(c, "alice", "n1", 1, 12, 2048);
    p->transport = ORCH_TRANSPORT_SHM;
    p->rule = ORCH_RULE_NODE_AFFINITY;
    snprintf(p->server, sizeof(p->server), "n1-g1-a");
    snprintf(p->standby, sizeof(p->standby), "n1-g1-s");
    p->params = (orch_params){ .sm_cores = 8, .memory_mib = 2048, .scale_up = 4, .scale_down = 2,
                               .latency_upper_ms = 12.5, .latency_lower_ms = 2.25, .sample_count = 7,
                               .mode = ORCH_MODE_APP_SCOPED, .naffinity = 2, .affinity = { "n2", "n1" },
                               .affinity_transport = ORCH_TRANSPORT_TCP, .metric_interval_s = 0.25 };
    fx_hold(c, "bob", "n2", 0, 4, 100);

    open_store(dir, &s);
    for (int i = 0; i < c->nnodes; i++)
        cr_assert_eq(orch_store_put_node(s, &c->nodes[i], i), 0, "%s", orch_store_error(s));
    /* A re-registration replaces the node's rows: n1 written twice keeps one copy. */
    cr_assert_eq(orch_store_put_node(s, n1, 0), 0, "%s", orch_store_error(s));
    for (int i = 0; i < c->nplacements; i++)
        cr_assert_eq(orch_store_put_placement(s, &c->placements[i]), 0, "%s", orch_store_error(s));
    for (int i = 0; i < 4; i++) {
        d[i] = (orch_decision){ .time = 1000 + i, .action = ORCH_ACT_SCALE_UP, .from = "8", .to = "12" };
        snprintf(d[i].placement, sizeof(d[i].placement), "p%d", i);
        snprintf(d[i].why, sizeof(d[i].why), "reason %d", i);
        cr_assert_eq(orch_store_add_decision(s, &d[i], 3), 0, "%s", orch_store_error(s));
    }
    orch_store_close(s);

    open_store(dir, &s);
    cr_assert_eq(orch_store_load(s, back, 0, dback, 4, &nd), 0, "%s", orch_store_error(s));
    orch_store_close(s);
    cr_assert_eq(back->nnodes, 2);
    for (int i = 0; i < c->nnodes; i++)
        cr_assert(memcmp(&back->nodes[i], &c->nodes[i], sizeof(orch_node)) == 0, "node %s differs", c->nodes[i].name);
    cr_assert_eq(back->nplacements, 2);
    for (int i = 0; i < c->nplacements; i++)
        cr_assert(memcmp(&back->placements[i], &c->placements[i], sizeof(orch_placement)) == 0,
                  "placement %s differs", c->placements[i].key);
    cr_assert_eq(nd, 3, "keep 3 of 4 decisions, got %d", nd);
    for (int i = 0; i < 3; i++) {
        cr_assert_str_eq(dback[i].placement, d[i + 1].placement);
        cr_assert_str_eq(dback[i].why, d[i + 1].why);
        cr_assert_eq(dback[i].action, ORCH_ACT_SCALE_UP);
        cr_assert_float_eq(dback[i].time, d[i + 1].time, 1e-9);
    }
    free(c);
    free(back);
}
