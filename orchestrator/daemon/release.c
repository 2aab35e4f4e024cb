/* Releasing placements (docs/orchestrator.md, "Lifecycle"): a placement whose session ended or
 * whose guest never connected gives back its SMs, memory and its VM's budget.  The core's table
 * (orch_lifecycle.h) decides; this removes it from the cluster and the store and records why. */
#include "orch_daemon.h"

#include <stdio.h>
#include <string.h>

#include "log.h"
#include "orch_lifecycle.h"

/* Removes placements[index] from the store and the cluster, and records one "release" decision
 * (which is also its log line).  The store first: a release it did not write would come back at
 * the next start, so that is said. */
static void release(orch_daemon *d, int index, orch_life was, const char *cause)
{
    orch_placement *p = &d->cluster->placements[index];
    orch_decision dec = { .action = ORCH_ACT_RELEASE };

    snprintf(dec.placement, sizeof(dec.placement), "%s", p->key);
    snprintf(dec.from, sizeof(dec.from), "%s", orch_life_name(was));
    snprintf(dec.to, sizeof(dec.to), "released");
    snprintf(dec.why, sizeof(dec.why), "%s: frees %d SMs and %d MiB on %s/gpu%d for VM %s", cause, p->sm,
             p->memory_mib, p->node, p->gpu, p->tenant);
    if (orch_store_delete_placement(d->store, p->key) != 0)
        tdm_log("cannot delete placement %s from the store (%s): it comes back at the next start", p->key,
                orch_store_error(d->store));
    orch_remove_placement(d->cluster, index);
    orch_decide(d, &dec);
}

/* A full report: every server registered on the node answered.  A server that did not answer
 * may hold sessions (one may be resuming on its standby), so their absence proves nothing. */
static bool full_report(const orch_node *n, const orch_report_seen *seen)
{
    for (int g = 0; g < n->ngpus; g++)
        for (int s = 0; s < n->gpus[g].nservers; s++)
            if (!seen->answered[g][s])
                return false;
    return true;
}

void orch_lifecycle_report(orch_daemon *d, const orch_node *n, const orch_report_seen *seen)
{
    bool full = full_report(n, seen);
    char cause[160];

    /* Backwards: a release moves the placements after it down one. */
    for (int i = d->cluster->nplacements - 1; i >= 0; i--) {
        orch_placement *p = &d->cluster->placements[i];
        if (strcmp(p->node, n->name) != 0)
            continue;
        orch_life was = p->life;
        orch_life_event e = seen->ended[i] && !seen->listed[i] ? ORCH_LIFE_ENDED
                                                                : orch_life_report_event(seen->listed[i], full);
        if (!orch_life_apply(p, e)) {
            if (was != p->life)
                tdm_log("placement %s: %s -> %s (node %s lists its session)", p->key, orch_life_name(was),
                        orch_life_name(p->life), n->name);
            continue;
        }
        if (e == ORCH_LIFE_ENDED)
            snprintf(cause, sizeof(cause), "its session ended: a server of node %s says so", n->name);
        else
            snprintf(cause, sizeof(cause), "its session ended: node %s's full report no longer lists it", n->name);
        release(d, i, was, cause);
    }
}

void orch_check_reserved(orch_daemon *d, double now_ms)
{
    char cause[160];

    for (int i = d->cluster->nplacements - 1; i >= 0; i--) {
        orch_placement *p = &d->cluster->placements[i];
        orch_node *n = orch_find_node(d->cluster, p->node);
        orch_life_event e;
        if (p->life != ORCH_LIFE_RESERVED)
            continue;
        /* A placement's node is registered (the store keeps both); were it not, nobody could ever
         * report the guest, so it counts as a reporting node and the bound releases it. */
        if (!orch_life_timer_event(n ? n->state : ORCH_NODE_UP, p->reserved_ms, now_ms, d->cfg.reserved_timeout_ms,
                                   &e))
            continue;
        orch_life was = p->life;
        if (!orch_life_apply(p, e))
            continue;
        snprintf(cause, sizeof(cause), "its guest never connected within %g s (reserved_timeout_ms %d)",
                 d->cfg.reserved_timeout_ms / 1000.0, d->cfg.reserved_timeout_ms);
        release(d, i, was, cause);
    }
}
