/* Loading the store on start (orch_store.h). */
#include "store_db.h"

#include <stdio.h>
#include <string.h>

static int load_servers(orch_store *s, orch_node *n, orch_gpu *g)
{
    sqlite3_stmt *st = orch_store_prepare(s, "SELECT id, standby_role, alive, tcp, shm, standby, takeovers "
                                             "FROM servers WHERE node=? AND gpu=? ORDER BY ord");
    if (!st)
        return -1;
    sqlite3_bind_text(st, 1, n->name, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 2, g->index);
    while (sqlite3_step(st) == SQLITE_ROW && g->nservers < ORCH_MAX_SERVERS) {
        orch_server *v = &g->servers[g->nservers++];
        orch_store_text(st, 0, v->id, sizeof(v->id));
        v->standby_role = sqlite3_column_int(st, 1);
        v->alive = sqlite3_column_int(st, 2);
        orch_store_text(st, 3, v->tcp, sizeof(v->tcp));
        orch_store_text(st, 4, v->shm, sizeof(v->shm));
        orch_store_text(st, 5, v->standby, sizeof(v->standby));
        v->takeovers = (uint64_t)sqlite3_column_int64(st, 6);
    }
    sqlite3_finalize(st);
    return 0;
}

static int load_gpus(orch_store *s, orch_node *n)
{
    sqlite3_stmt *st = orch_store_prepare(s, "SELECT idx, name, sms, memory_mib, sm_budget_per_vm FROM gpus "
                                                "WHERE node=? ORDER BY idx");
    int rc = 0;
    if (!st)
        return -1;
    sqlite3_bind_text(st, 1, n->name, -1, SQLITE_STATIC);
    while (rc == 0 && sqlite3_step(st) == SQLITE_ROW && n->ngpus < ORCH_MAX_GPUS) {
        orch_gpu *g = &n->gpus[n->ngpus++];
        g->index = sqlite3_column_int(st, 0);
        orch_store_text(st, 1, g->name, sizeof(g->name));
        g->sms = sqlite3_column_int(st, 2);
        g->memory_mib = sqlite3_column_int(st, 3);
        g->sm_budget_per_vm = sqlite3_column_int(st, 4);
        rc = load_servers(s, n, g);
    }
    sqlite3_finalize(st);
    return rc;
}

static int load_nodes(orch_store *s, orch_cluster *c, double now_ms)
{
    sqlite3_stmt *st = orch_store_prepare(s, "SELECT name, agent, host, state FROM nodes ORDER BY ord");
    char state[16];
    int rc = 0;
    if (!st)
        return -1;
    while (rc == 0 && sqlite3_step(st) == SQLITE_ROW && c->nnodes < ORCH_MAX_NODES) {
        orch_node *n = &c->nodes[c->nnodes++];
        memset(n, 0, sizeof(*n));
        orch_store_text(st, 0, n->name, sizeof(n->name));
        orch_store_text(st, 1, n->agent, sizeof(n->agent));
        orch_store_text(st, 2, n->host, sizeof(n->host));
        orch_store_text(st, 3, state, sizeof(state));
        if (orch_node_state_parse(state, &n->state) != 0)
            n->state = ORCH_NODE_LOST;
        n->last_seen_ms = now_ms;   /* it has node_lost_timeout_ms from our start to report */
        rc = load_gpus(s, n);
    }
    sqlite3_finalize(st);
    return rc;
}

static void split_affinity(const char *list, orch_params *p)
{
    char buf[ORCH_MAX_AFFINITY * ORCH_NAME_MAX];
    char *save = NULL;

    snprintf(buf, sizeof(buf), "%s", list);
    p->naffinity = 0;
    for (char *t = strtok_r(buf, ",", &save); t && p->naffinity < ORCH_MAX_AFFINITY; t = strtok_r(NULL, ",", &save))
        snprintf(p->affinity[p->naffinity++], sizeof(p->affinity[0]), "%s", t);
}

static int load_placements(orch_store *s, orch_cluster *c, double now_ms)
{
    sqlite3_stmt *st = orch_store_prepare(s, "SELECT * FROM placements ORDER BY rowid");
    char affinity[ORCH_MAX_AFFINITY * ORCH_NAME_MAX];
    if (!st)
        return -1;
    while (sqlite3_step(st) == SQLITE_ROW && c->nplacements < ORCH_MAX_PLACEMENTS) {
        orch_placement *p = &c->placements[c->nplacements++];
        memset(p, 0, sizeof(*p));
        orch_store_text(st, 0, p->key, sizeof(p->key));
        orch_store_text(st, 1, p->tenant, sizeof(p->tenant));
        orch_store_text(st, 2, p->node, sizeof(p->node));
        p->gpu = sqlite3_column_int(st, 3);
        orch_store_text(st, 4, p->server, sizeof(p->server));
        orch_store_text(st, 5, p->standby, sizeof(p->standby));
        p->transport = (orch_transport)sqlite3_column_int(st, 6);
        p->rule = (orch_rule)sqlite3_column_int(st, 7);
        p->sm = sqlite3_column_int(st, 8);
        p->memory_mib = sqlite3_column_int(st, 9);
        p->params.sm_cores = sqlite3_column_int(st, 10);
        p->params.memory_mib = sqlite3_column_int(st, 11);
        p->params.scale_up = sqlite3_column_int(st, 12);
        p->params.scale_down = sqlite3_column_int(st, 13);
        p->params.latency_upper_ms = sqlite3_column_double(st, 14);
        p->params.latency_lower_ms = sqlite3_column_double(st, 15);
        p->params.sample_count = sqlite3_column_int(st, 16);
        p->params.mode = (orch_mode)sqlite3_column_int(st, 17);
        orch_store_text(st, 18, affinity, sizeof(affinity));
        split_affinity(affinity, &p->params);
        p->params.affinity_transport = (orch_transport)sqlite3_column_int(st, 19);
        p->params.metric_interval_s = sqlite3_column_double(st, 20);
        /* Its state is not stored: reserved again, live at its node's next report that lists it,
         * and released after reserved_timeout_ms from this start if none does. */
        p->life = ORCH_LIFE_RESERVED;
        p->reserved_ms = now_ms;
    }
    sqlite3_finalize(st);
    return 0;
}

static int load_decisions(orch_store *s, orch_decision *d, int max, int *nd)
{
    sqlite3_stmt *st = orch_store_prepare(s, "SELECT time, placement, action, from_, to_, why FROM "
                                             "(SELECT * FROM decisions ORDER BY id DESC LIMIT ?) ORDER BY id");
    char action[32];
    *nd = 0;
    if (!st)
        return -1;
    sqlite3_bind_int(st, 1, max);
    while (sqlite3_step(st) == SQLITE_ROW && *nd < max) {
        orch_decision *x = &d[(*nd)++];
        memset(x, 0, sizeof(*x));
        x->time = sqlite3_column_double(st, 0);
        orch_store_text(st, 1, x->placement, sizeof(x->placement));
        orch_store_text(st, 2, action, sizeof(action));
        if (orch_action_parse(action, &x->action) != 0)
            x->action = ORCH_ACT_NONE;
        orch_store_text(st, 3, x->from, sizeof(x->from));
        orch_store_text(st, 4, x->to, sizeof(x->to));
        orch_store_text(st, 5, x->why, sizeof(x->why));
    }
    sqlite3_finalize(st);
    return 0;
}

int orch_store_load(orch_store *s, orch_cluster *c, double now_ms, orch_decision *d, int max, int *nd)
{
    c->nnodes = 0;
    c->nplacements = 0;
    if (load_nodes(s, c, now_ms) != 0 || load_placements(s, c, now_ms) != 0)
        return -1;
    return load_decisions(s, d, max, nd);
}
