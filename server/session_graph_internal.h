/* What session_graph.c and session_graph_copy.c/session_graph_query.c
 * share: the session's records of graphs, their nodes and executable
 * graphs, and the host memory their copies read and write. */
#ifndef TANDEM_SESSION_GRAPH_INTERNAL_H
#define TANDEM_SESSION_GRAPH_INTERNAL_H

#include "session.h"

enum { TAG_GRAPH = 0x47, TAG_GRAPH_EXEC = 0x58, TAG_GRAPH_NODE = 0x4e };

/* The staging of one host side of a memcpy node the server cannot reach
 * in the guest (docs/graphs.md, "Host memory in graphs"). */
typedef struct tdm_host_io {
    uint64_t key;            /* host-to-device: the node handle uploads name */
    uint64_t guest;          /* device-to-host: the guest's address it fetches to */
    void *buf;
    uint64_t n;
    bool dtoh;
    bool off;                /* graph node parameters (issue 14): device-to-host node disabled in an exec: not fetched */
} tdm_host_io;

/* Host bytes that captured copies read at each launch: shared by the graph
 * and every executable graph made from it, freed with the last of them. */
typedef struct tdm_kept_bytes {
    int refs;
    void **v;
    size_t n, cap;
    uint64_t bytes;
    /* ---- graph memcpy nodes (issue 14) ---- */
    tdm_host_io *io;
    size_t nio, iocap;
    tdm_bevent *last_use;    /* recorded after each launch that used io */
    bool pending;            /* in s->graph_pending: fetch after the launch */
    size_t fetch_i;          /* the next io entry (and offset) to fetch */
    uint64_t fetch_off;
} tdm_kept_bytes;

/* A capture begun on one of the session's streams. */
typedef struct tdm_capture_entry {
    uint64_t id;             /* the backend's capture id */
    uint64_t origin;         /* the stream handle it began on */
    tdm_kept_bytes *kept;    /* NULL until a copy needs it */
    uint64_t into;           /* the graph it fills (cudaStreamBeginCaptureToGraph's, or its own once
                              * cudaStreamGetCaptureInfo named it), 0: a new graph */
    bool owns;               /* into is the capture's own graph: gone if the capture fails */
} tdm_capture_entry;

typedef struct graph_entry {
    tdm_bgraph *bg;
    tdm_kept_bytes *kept;
    uint64_t parent;         /* a conditional node's body: the graph of the node (the node owns bg) */
    /* ---- event nodes, child graphs, user objects (issue 14) ---- */
    bool embedded;           /* a child graph node's graph (parent: the node's graph, which owns bg) */
} graph_entry;

/* A node added node by node (captured graphs' nodes have no handles). */
typedef struct node_entry {
    uint64_t graph;
    tdm_bgnode *bn;
    int type;                /* cudaGraphNodeType */
} node_entry;

/* A handle naming backend node bn of graph `graph` (type: a
 * cudaGraphNodeType), in *node; cudaErrorMemoryAllocation when none can be
 * made (the backend's node stays in its graph, unnamed). */
int tdm_graph_node_name(tdm_session *s, uint64_t graph, tdm_bgnode *bn, int type, uint64_t *node);

typedef struct exec_entry {
    tdm_bgexec *bx;
    tdm_kept_bytes *kept;
    uint64_t graph;          /* the graph it was made from: its nodes name the exec's */
    uint64_t flags;          /* graph node parameters (issue 14): as instantiated (cudaGraphExecGetFlags) */
} exec_entry;

void tdm_kept_unref(tdm_session *s, tdm_kept_bytes *k);
/* The backend nodes behind n node handles, all of `graph`; false if one is
 * not (out has room for n). */
bool tdm_graph_nodes_of(tdm_session *s, uint64_t graph, const uint64_t *ids, uint32_t n, tdm_bgnode **out);
/* Adds (add) or removes the n edges from[i] -> to[i] between nodes of graph:
 * cudaGraphAddDependencies and cudaGraphRemoveDependencies. */
int tdm_graph_edit_edges(tdm_session *s, uint64_t graph, const uint64_t *from, const uint64_t *to, uint32_t n,
                         bool add);
/* ---- graph memcpy nodes (issue 14): session_graph_copy.c ---- */
/* Frees k's host io staging and event (k is going away). */
void tdm_kept_host_io_free(tdm_session *s, tdm_kept_bytes *k);
/* After a launch of an exec holding k on st: marks when k's host memory
 * is free again, and that its device-to-host bytes await the guest. */
int tdm_kept_launched(tdm_session *s, tdm_kept_bytes *k, tdm_stream_state *st);
/* The host memory of the capture st's work goes to (made on first use), or
 * NULL with *err when st does not capture. */
tdm_kept_bytes *tdm_session_capture_kept(tdm_session *s, tdm_stream_state *st, int *err);
/* A memcpy node's description from q, its device sides checked against
 * the session's memory (host: the caller's to fill). */
int tdm_graph_copy_desc(tdm_session *s, const tdm_memcpy_node_request *q, tdm_gnode_desc *d);
/* k, made on first use. */
tdm_kept_bytes *tdm_kept_get(tdm_kept_bytes **kp);

/* ---- event nodes, child graphs, user objects (issue 14): session_graph_events.c ---- */
/* d for an event record or wait node request (q->src: the event). */
int tdm_graph_event_describe(tdm_session *s, const tdm_node_request *q, tdm_gnode_desc *d);

/* A child graph node's embedded graph may not get what a child graph may
 * not have (docs/graphs.md): refused with a log line naming what. */
int tdm_graph_child_refuse(tdm_session *s, const char *what);
/* ---- external semaphore nodes (issue 14): session_graph_events.c ---- */
#define TDM_SESSION_MAX_EXTSEMS 4096   /* semaphores of one node (each names none) */
int tdm_graph_extsem_describe(tdm_session *s, const tdm_node_request *q, tdm_gnode_desc *d);
/* cudaErrorInvalidValue (logged) if bg, or a child graph in it (depth: of
 * bg's nesting), holds an external semaphore node: none names a semaphore,
 * so no exec may run one. */
int tdm_graph_extsem_check(tdm_session *s, tdm_bgraph *bg, int depth);
/* Forgets graph's entry, its nodes, bodies and handles, without destroying
 * the backend's graph (its node's graph owns it): session_graph.c. */
void tdm_graph_forget(tdm_session *s, uint64_t graph);
/* Before child graph node e goes: its embedded graph's entry goes. */
void tdm_graph_child_node_going(tdm_session *s, node_entry *e);

#endif
