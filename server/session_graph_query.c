/* A graph's structure (docs/graphs.md): its nodes, roots and edges, and
 * clones.  Nodes of captured and cloned graphs get handles when first
 * named here, so every node the guest sees has one, as in CUDA. */
#include "session.h"

#include <stdlib.h>
#include <string.h>

#include <driver_types.h>

#include "log.h"
#include "session_graph_internal.h"

static const tdm_backend_ops *ops(tdm_session *s)
{
    return s->srv->ops;
}

static tdm_backend *be(tdm_session *s)
{
    return s->srv->be;
}

/* The handles the session already has for one graph's nodes. */
typedef struct known_nodes {
    uint64_t graph;
    uint64_t *ids;
    tdm_bgnode **bns;
    size_t n;
} known_nodes;

static void collect(void *obj, uint64_t id, void *arg)
{
    known_nodes *k = arg;
    node_entry *e = obj;

    if (e->graph == k->graph) {
        k->ids[k->n] = id;
        k->bns[k->n++] = e->bn;
    }
}

/* bn's handle: the known one, else a new one (bounded as added nodes). */
static int handle_of(tdm_session *s, known_nodes *k, tdm_bgnode *bn, uint64_t *id)
{
    int type = 0, err;

    for (size_t i = 0; i < k->n; i++)
        if (k->bns[i] == bn) {
            *id = k->ids[i];
            return 0;
        }
    if (s->graph_nodes.live >= TDM_SESSION_MAX_GRAPH_NODES)
        return cudaErrorMemoryAllocation;
    if ((err = ops(s)->graph_node_type(be(s), bn, &type)) != 0)
        return err;
    if ((err = tdm_graph_node_name(s, k->graph, bn, type, id)) != 0)
        return err;
    /* Known from now on (k has room: one slot per live handle plus the graph's nodes). */
    k->ids[k->n] = *id;
    k->bns[k->n++] = bn;
    return 0;
}

/* The graph's backend nodes in *bns (*n of them) and the handles known. */
static int graph_nodes(tdm_session *s, uint64_t graph, tdm_bgnode ***bns, size_t *n, known_nodes *k)
{
    graph_entry *g = tdm_handles_get(&s->graphs, graph);
    size_t total = 0, room;
    int err;

    memset(k, 0, sizeof(*k));
    *bns = NULL;
    if (!g)
        return cudaErrorInvalidValue;
    if ((err = ops(s)->graph_nodes(be(s), g->bg, NULL, 0, &total)) != 0)
        return err;
    if (total > TDM_SESSION_MAX_GRAPH_NODES)
        return cudaErrorMemoryAllocation;
    room = s->graph_nodes.live + total + 1;
    k->graph = graph;
    *bns = malloc((total + 1) * sizeof(**bns));
    k->ids = malloc(room * sizeof(*k->ids));
    k->bns = malloc(room * sizeof(*k->bns));
    if (!*bns || !k->ids || !k->bns)
        return cudaErrorMemoryAllocation;
    if (total && (err = ops(s)->graph_nodes(be(s), g->bg, *bns, total, &total)) != 0)
        return err;
    *n = total;
    tdm_handles_each(&s->graph_nodes, collect, k);
    return 0;
}

static void known_free(known_nodes *k)
{
    free(k->ids);
    free(k->bns);
}

int tdm_session_graph_get_nodes(tdm_session *s, uint64_t graph, bool roots, uint64_t **out, uint32_t *n)
{
    tdm_bgnode **bns = NULL;
    known_nodes k;
    size_t total = 0, ndeps;
    int err = graph_nodes(s, graph, &bns, &total, &k);

    *out = NULL;
    *n = 0;
    if (!err && !(*out = malloc((total + 1) * sizeof(**out))))
        err = cudaErrorMemoryAllocation;
    for (size_t i = 0; !err && i < total; i++) {
        if (roots && ((err = ops(s)->graph_node_deps(be(s), bns[i], NULL, 0, &ndeps)) != 0 || ndeps))
            continue;
        err = handle_of(s, &k, bns[i], &(*out)[*n]);
        if (!err)
            (*n)++;
    }
    free(bns);
    known_free(&k);
    if (err) {
        free(*out);
        *out = NULL;
        *n = 0;
    }
    return err;
}

int tdm_session_graph_get_edges(tdm_session *s, uint64_t graph, uint64_t **from, uint64_t **to, uint32_t *n)
{
    tdm_bgnode **bns = NULL, **deps = NULL;
    known_nodes k;
    size_t total = 0, nd, cap = 0;
    int err = graph_nodes(s, graph, &bns, &total, &k);

    *from = *to = NULL;
    *n = 0;
    if (!err && (!(deps = malloc((total + 1) * sizeof(*deps)))))
        err = cudaErrorMemoryAllocation;
    for (size_t i = 0; !err && i < total; i++) {
        uint64_t id;
        if ((err = ops(s)->graph_node_deps(be(s), bns[i], deps, total, &nd)) != 0 ||
            (err = handle_of(s, &k, bns[i], &id)) != 0)
            break;
        if (*n + nd > cap) {
            uint64_t *f, *t;
            cap = (*n + nd) * 2 + 8;
            if (!(f = realloc(*from, cap * sizeof(*f))))
                err = cudaErrorMemoryAllocation;
            else
                *from = f;
            if (!err && !(t = realloc(*to, cap * sizeof(*t))))
                err = cudaErrorMemoryAllocation;
            else if (!err)
                *to = t;
        }
        for (size_t j = 0; !err && j < nd && j < total; j++) {
            err = handle_of(s, &k, deps[j], &(*from)[*n]);
            (*to)[*n] = id;
            if (!err)
                (*n)++;
        }
    }
    free(deps);
    free(bns);
    known_free(&k);
    if (err) {
        free(*from);
        free(*to);
        *from = *to = NULL;
        *n = 0;
    }
    return err;
}

int tdm_session_graph_clone(tdm_session *s, uint64_t graph, uint64_t *clone)
{
    graph_entry *g = tdm_handles_get(&s->graphs, graph), *c;
    tdm_bgraph *bg = NULL;
    int err;

    if (!g)
        return cudaErrorInvalidValue;
    if (s->graphs.live >= TDM_SESSION_MAX_GRAPHS)
        return cudaErrorMemoryAllocation;
    if ((err = ops(s)->graph_clone(be(s), g->bg, &bg)) != 0)
        return err;
    /* The clone's copy nodes name the same host memory and staging. */
    if ((c = calloc(1, sizeof(*c)))) {
        *c = (graph_entry){ .bg = bg, .kept = g->kept };
        if ((*clone = tdm_handles_add(&s->graphs, c))) {
            if (g->kept)
                g->kept->refs++;
            return 0;
        }
    }
    free(c);
    ops(s)->graph_destroy(be(s), bg);
    return cudaErrorMemoryAllocation;
}

int tdm_session_graph_node_neighbours(tdm_session *s, uint64_t node, bool dependents, uint64_t **out, uint32_t *n)
{
    node_entry *e = tdm_handles_get(&s->graph_nodes, node);
    uint64_t *from = NULL, *to = NULL;
    uint32_t ne = 0;
    int err;

    *out = NULL;
    *n = 0;
    if (!e)
        return cudaErrorInvalidValue;
    if ((err = tdm_session_graph_get_edges(s, e->graph, &from, &to, &ne)) != 0)
        return err;
    /* One answer per edge touching node, the other end of it. */
    if (!(*out = malloc((ne + 1) * sizeof(**out)))) {
        err = cudaErrorMemoryAllocation;
    } else {
        for (uint32_t i = 0; i < ne; i++)
            if ((dependents ? from[i] : to[i]) == node)
                (*out)[(*n)++] = dependents ? to[i] : from[i];
    }
    free(from);
    free(to);
    return err;
}

int tdm_session_graph_remove_dependencies(tdm_session *s, uint64_t graph, const uint64_t *from, const uint64_t *to,
                                          uint32_t n)
{
    return tdm_graph_edit_edges(s, graph, from, to, n, false);
}

int tdm_session_graph_destroy_node(tdm_session *s, uint64_t node)
{
    node_entry *e = tdm_handles_get(&s->graph_nodes, node);
    graph_entry *g = e ? tdm_handles_get(&s->graphs, e->graph) : NULL;
    int err;

    if (!g)
        return cudaErrorInvalidValue;
    /* Its staging, if it had any, stays with the graph: execs made before may read it. */
    tdm_graph_child_node_going(s, e);   /* ---- child graphs (issue 14) ---- */
    if ((err = ops(s)->graph_destroy_node(be(s), g->bg, e->bn)) != 0)
        return err;
    free(tdm_handles_remove(&s->graph_nodes, node));
    return 0;
}

int tdm_session_graph_node_find_in_clone(tdm_session *s, uint64_t node, uint64_t clone, uint64_t *out)
{
    node_entry *e = tdm_handles_get(&s->graph_nodes, node);
    graph_entry *c = tdm_handles_get(&s->graphs, clone);
    tdm_bgnode **bns = NULL, *bn = NULL;
    known_nodes k;
    size_t total = 0;
    int err;

    if (!e || !c)
        return cudaErrorInvalidValue;
    if ((err = ops(s)->graph_find_in_clone(be(s), c->bg, e->bn, &bn)) != 0)
        return err;
    if (!(err = graph_nodes(s, clone, &bns, &total, &k)))
        err = handle_of(s, &k, bn, out);
    free(bns);
    known_free(&k);
    return err;
}
