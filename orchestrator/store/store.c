/* Opening the store and writing through it (orch_store.h). */
#include "store_db.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char schema[] =
    "PRAGMA journal_mode=WAL;"
    "CREATE TABLE IF NOT EXISTS nodes(name TEXT PRIMARY KEY, ord INTEGER, agent TEXT, host TEXT, state TEXT);"
    "CREATE TABLE IF NOT EXISTS gpus(node TEXT, idx INTEGER, name TEXT, sms INTEGER, memory_mib INTEGER,"
    "  sm_budget_per_vm INTEGER NOT NULL DEFAULT 0, PRIMARY KEY(node, idx));"
    "CREATE TABLE IF NOT EXISTS servers(node TEXT, gpu INTEGER, ord INTEGER, id TEXT, standby_role INTEGER,"
    "  alive INTEGER, tcp TEXT, shm TEXT, standby TEXT, takeovers INTEGER, PRIMARY KEY(node, gpu, ord));"
    "CREATE TABLE IF NOT EXISTS placements(key TEXT PRIMARY KEY, tenant TEXT, node TEXT, gpu INTEGER,"
    "  server TEXT, standby TEXT, transport INTEGER, rule INTEGER, sm INTEGER, memory_mib INTEGER,"
    "  p_sm_cores INTEGER, p_memory_mib INTEGER, p_scale_up INTEGER, p_scale_down INTEGER,"
    "  p_upper REAL, p_lower REAL, p_samples INTEGER, p_mode INTEGER, p_affinity TEXT,"
    "  p_affinity_transport INTEGER, p_interval REAL);"
    "CREATE TABLE IF NOT EXISTS decisions(id INTEGER PRIMARY KEY AUTOINCREMENT, time REAL, placement TEXT,"
    "  action TEXT, from_ TEXT, to_ TEXT, why TEXT);";

sqlite3_stmt *orch_store_prepare(orch_store *s, const char *sql)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK) {
        snprintf(s->error, sizeof(s->error), "%s", sqlite3_errmsg(s->db));
        return NULL;
    }
    return st;
}

int orch_store_finish(orch_store *s, sqlite3_stmt *st)
{
    int rc = sqlite3_step(st);
    if (rc != SQLITE_DONE)
        snprintf(s->error, sizeof(s->error), "%s", sqlite3_errmsg(s->db));
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : -1;
}

void orch_store_text(sqlite3_stmt *st, int col, char *out, size_t outlen)
{
    const unsigned char *v = sqlite3_column_text(st, col);
    snprintf(out, outlen, "%s", v ? (const char *)v : "");
}

const char *orch_store_error(const orch_store *s)
{
    return s->error;
}

static int exec(orch_store *s, const char *sql)
{
    char *msg = NULL;
    if (sqlite3_exec(s->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        snprintf(s->error, sizeof(s->error), "%s", msg ? msg : sqlite3_errmsg(s->db));
        sqlite3_free(msg);
        return -1;
    }
    return 0;
}

/* Whether table has column (a store written before the column existed has not). */
static bool has_column(orch_store *s, const char *table, const char *column)
{
    char sql[128];
    bool found = false;
    snprintf(sql, sizeof(sql), "PRAGMA table_info(%s)", table);
    sqlite3_stmt *st = orch_store_prepare(s, sql);
    while (st && !found && sqlite3_step(st) == SQLITE_ROW) {
        const unsigned char *name = sqlite3_column_text(st, 1);
        found = name && strcmp((const char *)name, column) == 0;
    }
    sqlite3_finalize(st);
    return found;
}

/* Columns added since the first schema, to a store that lacks them. */
static int upgrade(orch_store *s)
{
    if (!has_column(s, "gpus", "sm_budget_per_vm") &&
        exec(s, "ALTER TABLE gpus ADD COLUMN sm_budget_per_vm INTEGER NOT NULL DEFAULT 0") != 0)
        return -1;
    return 0;
}

int orch_store_open(const char *dir, orch_store **out, char *why, size_t whylen)
{
    char path[4096];
    orch_store *s = calloc(1, sizeof(*s));

    *out = NULL;
    if (!s) {
        snprintf(why, whylen, "out of memory");
        return -1;
    }
    snprintf(path, sizeof(path), "%s/orchestrator.db", dir);
    if (sqlite3_open(path, &s->db) != SQLITE_OK || exec(s, schema) != 0 || upgrade(s) != 0) {
        snprintf(why, whylen, "%s: %s", path, s->db ? sqlite3_errmsg(s->db) : "cannot open");
        orch_store_close(s);
        return -1;
    }
    sqlite3_busy_timeout(s->db, 1000);
    *out = s;
    return 0;
}

void orch_store_close(orch_store *s)
{
    if (!s)
        return;
    sqlite3_close(s->db);
    free(s);
}

static int put_server(orch_store *s, const char *node, int gpu, int ord, const orch_server *v)
{
    sqlite3_stmt *st = orch_store_prepare(s, "INSERT INTO servers VALUES(?,?,?,?,?,?,?,?,?,?)");
    if (!st)
        return -1;
    sqlite3_bind_text(st, 1, node, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 2, gpu);
    sqlite3_bind_int(st, 3, ord);
    sqlite3_bind_text(st, 4, v->id, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 5, v->standby_role);
    sqlite3_bind_int(st, 6, v->alive);
    sqlite3_bind_text(st, 7, v->tcp, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 8, v->shm, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 9, v->standby, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 10, (sqlite3_int64)v->takeovers);
    return orch_store_finish(s, st);
}

static int put_gpu(orch_store *s, const char *node, const orch_gpu *g)
{
    sqlite3_stmt *st = orch_store_prepare(
        s, "INSERT INTO gpus(node, idx, name, sms, memory_mib, sm_budget_per_vm) VALUES(?,?,?,?,?,?)");
    if (!st)
        return -1;
    sqlite3_bind_text(st, 1, node, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 2, g->index);
    sqlite3_bind_text(st, 3, g->name, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 4, g->sms);
    sqlite3_bind_int(st, 5, g->memory_mib);
    sqlite3_bind_int(st, 6, g->sm_budget_per_vm);
    if (orch_store_finish(s, st) != 0)
        return -1;
    for (int i = 0; i < g->nservers; i++)
        if (put_server(s, node, g->index, i, &g->servers[i]) != 0)
            return -1;
    return 0;
}

/* One node replaces its rows whole, in one transaction: a re-registration may drop a GPU. */
int orch_store_put_node(orch_store *s, const orch_node *n, int order)
{
    sqlite3_stmt *st;
    int rc = -1;

    if (exec(s, "BEGIN") != 0)
        return -1;
    const char *const wipe[] = { "DELETE FROM gpus WHERE node=?", "DELETE FROM servers WHERE node=?" };
    for (int i = 0; i < 2; i++) {
        if (!(st = orch_store_prepare(s, wipe[i])))
            goto out;
        sqlite3_bind_text(st, 1, n->name, -1, SQLITE_STATIC);
        if (orch_store_finish(s, st) != 0)
            goto out;
    }
    if (!(st = orch_store_prepare(s, "INSERT OR REPLACE INTO nodes VALUES(?,?,?,?,?)")))
        goto out;
    sqlite3_bind_text(st, 1, n->name, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 2, order);
    sqlite3_bind_text(st, 3, n->agent, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 4, n->host, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 5, orch_node_state_name(n->state), -1, SQLITE_STATIC);
    if (orch_store_finish(s, st) != 0)
        goto out;
    for (int i = 0; i < n->ngpus; i++)
        if (put_gpu(s, n->name, &n->gpus[i]) != 0)
            goto out;
    rc = 0;
out:
    exec(s, rc == 0 ? "COMMIT" : "ROLLBACK");
    return rc;
}

int orch_store_put_placement(orch_store *s, const orch_placement *p)
{
    char affinity[ORCH_MAX_AFFINITY * ORCH_NAME_MAX] = "";
    sqlite3_stmt *st = orch_store_prepare(s, "INSERT OR REPLACE INTO placements VALUES"
                                             "(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
    if (!st)
        return -1;
    /* Node names hold no comma (the API refuses them), so a comma joins the list. */
    for (int i = 0; i < p->params.naffinity; i++) {
        size_t n = strlen(affinity);
        snprintf(affinity + n, sizeof(affinity) - n, "%s%s", i ? "," : "", p->params.affinity[i]);
    }
    sqlite3_bind_text(st, 1, p->key, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, p->tenant, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, p->node, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 4, p->gpu);
    sqlite3_bind_text(st, 5, p->server, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 6, p->standby, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 7, p->transport);
    sqlite3_bind_int(st, 8, p->rule);
    sqlite3_bind_int(st, 9, p->sm);
    sqlite3_bind_int(st, 10, p->memory_mib);
    sqlite3_bind_int(st, 11, p->params.sm_cores);
    sqlite3_bind_int(st, 12, p->params.memory_mib);
    sqlite3_bind_int(st, 13, p->params.scale_up);
    sqlite3_bind_int(st, 14, p->params.scale_down);
    sqlite3_bind_double(st, 15, p->params.latency_upper_ms);
    sqlite3_bind_double(st, 16, p->params.latency_lower_ms);
    sqlite3_bind_int(st, 17, p->params.sample_count);
    sqlite3_bind_int(st, 18, p->params.mode);
    sqlite3_bind_text(st, 19, affinity, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int(st, 20, p->params.affinity_transport);
    sqlite3_bind_double(st, 21, p->params.metric_interval_s);
    return orch_store_finish(s, st);
}

int orch_store_delete_placement(orch_store *s, const char *key)
{
    sqlite3_stmt *st = orch_store_prepare(s, "DELETE FROM placements WHERE key=?");
    if (!st)
        return -1;
    sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
    return orch_store_finish(s, st);
}

int orch_store_add_decision(orch_store *s, const orch_decision *d, int keep)
{
    sqlite3_stmt *st = orch_store_prepare(s, "INSERT INTO decisions(time, placement, action, from_, to_, why) "
                                             "VALUES(?,?,?,?,?,?)");
    if (!st)
        return -1;
    sqlite3_bind_double(st, 1, d->time);
    sqlite3_bind_text(st, 2, d->placement, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, orch_action_name(d->action), -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 4, d->from, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 5, d->to, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 6, d->why, -1, SQLITE_STATIC);
    if (orch_store_finish(s, st) != 0)
        return -1;
    if (!(st = orch_store_prepare(s, "DELETE FROM decisions WHERE id <= (SELECT MAX(id) FROM decisions) - ?")))
        return -1;
    sqlite3_bind_int(st, 1, keep);
    return orch_store_finish(s, st);
}
