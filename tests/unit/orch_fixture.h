/* A cluster built from a short description, for the orchestrator's core tests: nodes with a
 * host and GPUs of given SMs and memory, one active server with an shm listener and a standby per
 * GPU, and placements already holding shares. */
#ifndef TANDEM_TEST_ORCH_FIXTURE_H
#define TANDEM_TEST_ORCH_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "orch_model.h"

static inline orch_node *fx_node(orch_cluster *c, const char *name, const char *host, orch_node_state st)
{
    orch_node *n = &c->nodes[c->nnodes++];
    memset(n, 0, sizeof(*n));
    snprintf(n->name, sizeof(n->name), "%s", name);
    snprintf(n->host, sizeof(n->host), "%s", host);
    n->state = st;
    return n;
}

static inline orch_gpu *fx_gpu(orch_node *n, int sms, int memory_mib)
{
    orch_gpu *g = &n->gpus[n->ngpus];
    char node[16];   /* a short copy: GCC cannot tell n->name from g's fields apart */
    snprintf(node, sizeof(node), "%.15s", n->name);
    g->index = n->ngpus++;
    g->sms = sms;
    g->memory_mib = memory_mib;
    g->nservers = 2;
    snprintf(g->servers[0].id, sizeof(g->servers[0].id), "%s-g%d-a", node, g->index);
    snprintf(g->servers[0].tcp, sizeof(g->servers[0].tcp), "127.0.0.1:%d", 9000 + g->index);
    snprintf(g->servers[0].shm, sizeof(g->servers[0].shm), "/run/tandem/%s-g%d", node, g->index);
    snprintf(g->servers[0].standby, sizeof(g->servers[0].standby), "%s-g%d-s", node, g->index);
    g->servers[0].alive = true;
    snprintf(g->servers[1].id, sizeof(g->servers[1].id), "%s-g%d-s", node, g->index);
    g->servers[1].standby_role = true;
    g->servers[1].alive = true;
    return g;
}

static inline orch_placement *fx_hold(orch_cluster *c, const char *tenant, const char *node, int gpu, int sm,
                                      int memory_mib)
{
    orch_placement *p = &c->placements[c->nplacements];
    memset(p, 0, sizeof(*p));
    snprintf(p->key, sizeof(p->key), "p%d", c->nplacements++);
    snprintf(p->tenant, sizeof(p->tenant), "%s", tenant);
    snprintf(p->node, sizeof(p->node), "%s", node);
    p->gpu = gpu;
    p->sm = sm;
    p->memory_mib = memory_mib;
    return p;
}

static inline orch_cluster *fx_cluster(void)
{
    return calloc(1, sizeof(orch_cluster));
}

#endif
