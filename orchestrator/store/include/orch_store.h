/* The orchestrator's state in SQLite (state_dir/orchestrator.db): nodes, GPUs, servers,
 * placements and decisions.  The daemon writes each change through before it answers, and
 * loads the whole on start, so a restart loses no placement. */
#ifndef TANDEM_ORCH_STORE_H
#define TANDEM_ORCH_STORE_H

#include <stddef.h>

#include "orch_decision.h"
#include "orch_model.h"

typedef struct orch_store orch_store;

/* Opens (creating) dir/orchestrator.db.  0, or -1 with why. */
int orch_store_open(const char *dir, orch_store **out, char *why, size_t whylen);
void orch_store_close(orch_store *s);
/* The last error's text, for the caller's log line. */
const char *orch_store_error(const orch_store *s);

/* Writes node n (at position order in registration order) with its GPUs and servers. */
int orch_store_put_node(orch_store *s, const orch_node *n, int order);
int orch_store_put_placement(orch_store *s, const orch_placement *p);
int orch_store_delete_placement(orch_store *s, const char *key);
/* Appends d and keeps only the newest keep decisions. */
int orch_store_add_decision(orch_store *s, const orch_decision *d, int keep);

/* Loads everything into c (its nodes' last_seen_ms set to now_ms) and the newest decisions,
 * oldest first, into d[0..max).  0, or -1 (orch_store_error). */
int orch_store_load(orch_store *s, orch_cluster *c, double now_ms, orch_decision *d, int max, int *nd);

#endif
