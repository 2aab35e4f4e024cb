/* The orchestrator's store (orchestrator/store): what is written, closed and reopened comes back
 * the same, only the newest decisions are kept, and a store written before a column was added
 * opens, gets the column and keeps its rows. */
#include <criterion/criterion.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* The schema before gpus.sm_budget_per_vm existed (the store of an older orchestrator), with a
 * node of two GPUs, a server, a placement and a decision. */
static const char old_store[] =
    "CREATE TABLE nodes(name TEXT PRIMARY KEY, ord INTEGER, agent TEXT, host TEXT, state TEXT);"
    "CREATE TABLE gpus(node TEXT, idx INTEGER, name TEXT, sms INTEGER, memory_mib INTEGER,"
    "  PRIMARY KEY(node, idx));"
    "CREATE TABLE servers(node TEXT, gpu INTEGER, ord INTEGER, id TEXT, standby_role INTEGER,"
    "  alive INTEGER, tcp TEXT, shm TEXT, standby TEXT, takeovers INTEGER, PRIMARY KEY(node, gpu, ord));"
    "CREATE TABLE placements(key TEXT PRIMARY KEY, tenant TEXT, node TEXT, gpu INTEGER,"
    "  server TEXT, standby TEXT, transport INTEGER, rule INTEGER, sm INTEGER, memory_mib INTEGER,"
    "  p_sm_cores INTEGER, p_memory_mib INTEGER, p_scale_up INTEGER, p_scale_down INTEGER,"
    "  p_upper REAL, p_lower REAL, p_samples INTEGER, p_mode INTEGER, p_affinity TEXT,"
    "  p_affinity_transport INTEGER, p_interval REAL);"
    "CREATE TABLE decisions(id INTEGER PRIMARY KEY AUTOINCREMENT, time REAL, placement TEXT,"
    "  action TEXT, from_ TEXT, to_ TEXT, why TEXT);"
    "INSERT INTO nodes VALUES('old1', 0, 'http://127.0.0.1:7081', 'h1', 'up');"
    "INSERT INTO gpus VALUES('old1', 0, 'NVIDIA H100', 132, 81920);"
    "INSERT INTO gpus VALUES('old1', 1, 'NVIDIA H100', 132, 81920);"
    "INSERT INTO servers VALUES('old1', 0, 0, 'old1-gpu0-s0', 0, 1, '127.0.0.1:7100', 'shm:old1-gpu0-s0',"
    "  'old1-gpu0-s0-sb', 2);"
    "INSERT INTO placements VALUES('pk-old', 'alice', 'old1', 0, 'old1-gpu0-s0', 'old1-gpu0-s0-sb', 1, 2, 12,"
    "  2048, 8, 2048, 4, 2, 12.5, 2.25, 7, 1, 'n2,n1', 2, 0.25);"
    "INSERT INTO decisions(time, placement, action, from_, to_, why) VALUES(1000, 'pk-old', 'place', '',"
    "  'old1/gpu0', 'default');";

Test(orch_store, a_store_older_than_sm_budget_per_vm_opens_and_keeps_its_rows)
{
    char dir[] = "/tmp/orch-store-old-XXXXXX", path[64], why[256] = "";
    orch_cluster *back = fx_cluster();
    orch_decision d[4];
    orch_store *s;
    sqlite3 *db;
    int nd = 0;

    cr_assert(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/orchestrator.db", dir);
    cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
    cr_assert_eq(sqlite3_exec(db, old_store, NULL, NULL, NULL), SQLITE_OK, "%s", sqlite3_errmsg(db));
    sqlite3_close(db);

    cr_assert_eq(orch_store_open(dir, &s, why, sizeof(why)), 0, "an old store does not open: %s", why);
    cr_assert_eq(orch_store_load(s, back, 0, d, 4, &nd), 0, "an old store does not load: %s", orch_store_error(s));
    cr_assert_eq(back->nnodes, 1);
    orch_node *n = &back->nodes[0];
    cr_expect_str_eq(n->name, "old1");
    cr_expect_str_eq(n->agent, "http://127.0.0.1:7081");
    cr_expect_eq(n->state, ORCH_NODE_UP);
    cr_assert_eq(n->ngpus, 2);
    for (int i = 0; i < 2; i++) {
        cr_expect_eq(n->gpus[i].sms, 132);
        cr_expect_eq(n->gpus[i].memory_mib, 81920);
        cr_expect_eq(n->gpus[i].sm_budget_per_vm, 0, "the new column's default is no bound");
    }
    cr_assert_eq(n->gpus[0].nservers, 1);
    cr_expect_str_eq(n->gpus[0].servers[0].id, "old1-gpu0-s0");
    cr_expect_eq(n->gpus[0].servers[0].takeovers, 2);
    cr_assert_eq(back->nplacements, 1);
    cr_expect_str_eq(back->placements[0].key, "pk-old");
    cr_expect_eq(back->placements[0].sm, 12);
    cr_expect_eq(back->placements[0].params.sample_count, 7);
    cr_expect_eq(back->placements[0].params.naffinity, 2);
    cr_expect_eq(nd, 1);
    cr_expect_str_eq(d[0].placement, "pk-old");

    /* the column is there to be written: a budget stored now comes back after a reopen */
    n->gpus[1].sm_budget_per_vm = 16;
    cr_assert_eq(orch_store_put_node(s, n, 0), 0, "%s", orch_store_error(s));
    orch_store_close(s);
    memset(back, 0, sizeof(*back));
    cr_assert_eq(orch_store_open(dir, &s, why, sizeof(why)), 0, "%s", why);
    cr_assert_eq(orch_store_load(s, back, 0, d, 4, &nd), 0, "%s", orch_store_error(s));
    orch_store_close(s);
    cr_assert_eq(back->nnodes, 1);
    cr_expect_eq(back->nodes[0].gpus[0].sm_budget_per_vm, 0);
    cr_expect_eq(back->nodes[0].gpus[1].sm_budget_per_vm, 16);
    cr_expect_eq(back->nplacements, 1);
    free(back);
}
