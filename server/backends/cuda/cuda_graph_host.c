/* Graph host nodes on the GPU (issue 14, docs/graphs.md "Host nodes").
 *
 * A host node of ours is a CU host node whose function is run_host_node
 * and whose data a hnode: the guest's key and a queue of the holds that
 * launches bound to it.  Each launch (graph_launch_hosts) makes one hold per
 * host node of the exec, as host_func_enqueue does, has the session bind
 * it to a host callback instance and queues it on the node; when the
 * graph gets there, the driver's host-function thread takes the oldest
 * hold, tells the session (due) and waits until the guest's function has
 * run (the release writes its word).  Launches of one exec run in launch
 * order, so each run takes its own launch's hold; execs made from one
 * graph share its nodes' data, and a node's runs all run the same function.
 *
 * Unlike the stream form, the wait is on the driver's host-function
 * thread, not on the device: a graph cannot change the word a wait-value
 * node waits on per launch without updating the exec before each launch.
 * While a guest's host node runs, other host functions of the context
 * (other sessions' callbacks' announcements) wait (docs/graphs.md).
 *
 * Which of an exec's nodes are ours is learnt at instantiation (the driver
 * does not list an exec's nodes).  The hnodes live until the context goes:
 * execs may still run them after their graph and the session are gone. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_backend_internal.h"
#include "grow.h"
#include "log.h"

typedef struct hnode {
    struct hnode *next;      /* every hnode of the context */
    struct tdm_cuda_hostnodes *owner;   /* its lock guards q */
    uint64_t key;
    tdm_bhold **q;           /* bound holds, oldest first */
    size_t n, cap;
} hnode;

typedef struct hexec {
    CUgraphExec x;
    hnode **v;
    CUgraphNode *gn;         /* graph node params (issue 14): v[i]'s node in the graph x came from */
    size_t n;
} hexec;

struct tdm_cuda_hostnodes {
    pthread_mutex_t lock;
    hnode *all;
    hexec *execs;
    size_t nexecs, cap;
};

int tdm_cuda_hostnodes_init(tdm_backend *b)
{
    b->hostnodes = calloc(1, sizeof(*b->hostnodes));
    if (!b->hostnodes || pthread_mutex_init(&b->hostnodes->lock, NULL) != 0) {
        free(b->hostnodes);
        b->hostnodes = NULL;
        return cudaErrorMemoryAllocation;
    }
    return 0;
}

void tdm_cuda_hostnodes_free(tdm_backend *b, bool lost)
{
    struct tdm_cuda_hostnodes *p = b->hostnodes;

    /* A lost context's driver may still run its host nodes: they stay. */
    if (!p || lost)
        return;
    while (p->all) {
        hnode *h = p->all;
        p->all = h->next;
        free(h->q);
        free(h);
    }
    for (size_t i = 0; i < p->nexecs; i++)
        free(p->execs[i].v);
    free(p->execs);
    pthread_mutex_destroy(&p->lock);
    free(p);
    b->hostnodes = NULL;
}

/* The driver's host-function thread, when the graph reaches the node. */
static void CUDA_CB run_host_node(void *data)
{
    hnode *h = data;
    tdm_bhold *hold = NULL;

    pthread_mutex_lock(&h->owner->lock);
    if (h->n) {
        hold = h->q[0];
        memmove(h->q, h->q + 1, --h->n * sizeof(*h->q));
    }
    pthread_mutex_unlock(&h->owner->lock);
    if (!hold) {
        tdm_log("graph host node %llu ran with no launch bound to it: skipped", (unsigned long long)h->key);
        return;
    }
    tdm_cuda_hold_run(hold);
}

static hnode *hnode_new(tdm_backend *b, uint64_t key)
{
    struct tdm_cuda_hostnodes *p = b->hostnodes;
    hnode *h = calloc(1, sizeof(*h));

    if (!h)
        return NULL;
    h->key = key;
    h->owner = p;
    pthread_mutex_lock(&p->lock);
    h->next = p->all;
    p->all = h;
    pthread_mutex_unlock(&p->lock);
    return h;
}

int tdm_cuda_graph_add_host_node(tdm_backend *b, CUgraph g, const CUgraphNode *deps, size_t ndeps, uint64_t key,
                                 CUgraphNode *out)
{
    hnode *h = hnode_new(b, key);
    CUDA_HOST_NODE_PARAMS p = { .fn = run_host_node };

    if (!h)
        return cudaErrorMemoryAllocation;
    p.userData = h;
    return tdm_cuda_err(tdm_cu.cuGraphAddHostNode(out, g, deps, ndeps, &p), "cuGraphAddHostNode");
}

int tdm_cuda_stream_capture_host(tdm_backend *b, tdm_bstream *s, uint64_t host_key)
{
    int err = tdm_cuda_enter(b);
    hnode *h;

    if (err)
        return err;
    if (!(h = hnode_new(b, host_key)))
        return cudaErrorMemoryAllocation;
    /* Captured: it becomes a host node of the graph, nothing runs now. */
    return tdm_cuda_err(tdm_cu.cuLaunchHostFunc(tdm_cuda_stream(s), run_host_node, h), "cuLaunchHostFunc(capture)");
}

/* p->lock held. */
static hexec *exec_find(struct tdm_cuda_hostnodes *p, CUgraphExec x)
{
    for (size_t i = 0; i < p->nexecs; i++)
        if (p->execs[i].x == x)
            return &p->execs[i];
    return NULL;
}

void tdm_cuda_hostnodes_forget(tdm_backend *b, CUgraphExec x)
{
    struct tdm_cuda_hostnodes *p = b->hostnodes;
    hexec *e;

    pthread_mutex_lock(&p->lock);
    if ((e = exec_find(p, x))) {
        free(e->v);
        free(e->gn);
        *e = p->execs[--p->nexecs];
    }
    pthread_mutex_unlock(&p->lock);
}

int tdm_cuda_hostnodes_scan(tdm_backend *b, CUgraphExec x, CUgraph g)
{
    struct tdm_cuda_hostnodes *p = b->hostnodes;
    CUgraphNode *nodes = NULL, *gn = NULL;
    hnode **v = NULL;
    size_t n = 0, nv = 0;
    hexec *e;
    int err;

    tdm_cuda_hostnodes_forget(b, x);
    if ((err = tdm_cuda_err(tdm_cu.cuGraphGetNodes(g, NULL, &n), "cuGraphGetNodes")) != 0 || !n)
        return err;
    if (!(nodes = calloc(n, sizeof(*nodes))) || !(v = calloc(n, sizeof(*v))) || !(gn = calloc(n, sizeof(*gn)))) {
        err = cudaErrorMemoryAllocation;
        goto out;
    }
    if ((err = tdm_cuda_err(tdm_cu.cuGraphGetNodes(g, nodes, &n), "cuGraphGetNodes")) != 0)
        goto out;
    for (size_t i = 0; i < n; i++) {
        CUgraphNodeType t;
        CUDA_HOST_NODE_PARAMS hp;

        if (tdm_cu.cuGraphNodeGetType(nodes[i], &t) != CUDA_SUCCESS || t != CU_GRAPH_NODE_TYPE_HOST)
            continue;
        if (tdm_cu.cuGraphHostNodeGetParams(nodes[i], &hp) == CUDA_SUCCESS && hp.fn == run_host_node) {
            gn[nv] = nodes[i];
            v[nv++] = hp.userData;
        }
    }
    if (!nv)
        goto out;
    pthread_mutex_lock(&p->lock);
    if (tdm_grow(&p->execs, &p->cap, p->nexecs + 1, sizeof(*p->execs), 8) != 0) {
        err = cudaErrorMemoryAllocation;
    } else {
        e = &p->execs[p->nexecs++];
        *e = (hexec){ x, v, gn, nv };
        v = NULL;
        gn = NULL;
    }
    pthread_mutex_unlock(&p->lock);
out:
    free(nodes);
    free(v);
    free(gn);
    return err;
}

/* ---- graph node parameters (issue 14) ---- */
int tdm_cuda_graph_exec_host_node_set(tdm_backend *b, tdm_bgexec *bx, tdm_bgnode *n, uint64_t host_key)
{
    struct tdm_cuda_hostnodes *p = b->hostnodes;
    CUgraphExec x = (CUgraphExec)bx;
    CUDA_HOST_NODE_PARAMS hp = { .fn = run_host_node };
    hexec *e;
    hnode *h;
    int err = tdm_cuda_enter(b);

    if (err)
        return err;
    /* A node of its own: launches already queued keep the old one's holds. */
    if (!(h = hnode_new(b, host_key)))
        return cudaErrorMemoryAllocation;
    hp.userData = h;
    if ((err = tdm_cuda_err(tdm_cu.cuGraphExecHostNodeSetParams(x, (CUgraphNode)n, &hp),
                            "cuGraphExecHostNodeSetParams")) != 0)
        return err;   /* h stays listed until the context goes, as every hnode */
    pthread_mutex_lock(&p->lock);
    if ((e = exec_find(p, x)))
        for (size_t i = 0; i < e->n; i++)
            if (e->gn[i] == (CUgraphNode)n)
                e->v[i] = h;
    pthread_mutex_unlock(&p->lock);
    return 0;
}

int tdm_cuda_graph_launch_hosts(tdm_backend *b, tdm_bgexec *bx, tdm_bstream *s, const tdm_bhost_binder *hb)
{
    struct tdm_cuda_hostnodes *p = b->hostnodes;
    CUgraphExec x = (CUgraphExec)bx;
    tdm_bhold **made = NULL;
    hnode **nodes = NULL;
    size_t n = 0, nmade = 0;
    hexec *e;
    int err = tdm_cuda_enter(b);

    if (err)
        return err;
    pthread_mutex_lock(&p->lock);
    if ((e = exec_find(p, x)) && (nodes = calloc(e->n, sizeof(*nodes)))) {
        n = e->n;
        memcpy(nodes, e->v, n * sizeof(*nodes));
    }
    pthread_mutex_unlock(&p->lock);
    if (e && !nodes)
        return cudaErrorMemoryAllocation;
    if (n && !(made = calloc(n, sizeof(*made)))) {
        free(nodes);
        return cudaErrorMemoryAllocation;
    }
    for (size_t i = 0; i < n && !err; i++) {
        tdm_bhold *h = NULL;
        void *arg = NULL;

        if ((err = tdm_cuda_hold_new(b, &h)) != 0)
            break;
        if ((err = hb->bind(hb->ctx, nodes[i]->key, h, &arg)) != 0) {
            tdm_cuda_hold_drop(h, true);
            break;
        }
        tdm_cuda_hold_bind(h, hb->due, arg);
        made[nmade++] = h;
    }
    /* Queued before the launch: a run may start as soon as it is made. */
    pthread_mutex_lock(&p->lock);
    for (size_t i = 0; !err && i < nmade; i++) {
        hnode *h = nodes[i];

        if (tdm_grow(&h->q, &h->cap, h->n + 1, sizeof(*h->q), 4) != 0)
            err = cudaErrorMemoryAllocation;
        else
            h->q[h->n++] = made[i];
    }
    pthread_mutex_unlock(&p->lock);
    if (!err)
        err = tdm_cuda_err(tdm_cu.cuGraphLaunch(x, tdm_cuda_stream(s)), "cuGraphLaunch");
    if (err) {
        /* Nothing runs them: out of the queues (the newest entries), and
         * the session releases each one its bind accepted. */
        pthread_mutex_lock(&p->lock);
        for (size_t i = nmade; i-- > 0;) {
            hnode *h = nodes[i];

            if (h->n && h->q[h->n - 1] == made[i])
                h->n--;
        }
        pthread_mutex_unlock(&p->lock);
        for (size_t i = 0; i < nmade; i++)
            tdm_cuda_hold_drop(made[i], false);
    }
    free(made);
    free(nodes);
    return err;
}
