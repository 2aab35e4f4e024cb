/* tandem-orchestrator's state and its parts (docs/orchestrator.md): one struct, passed to every
 * handler; the lock serialises the HTTP thread and the main loop's node-lost check. */
#ifndef TANDEM_ORCH_DAEMON_H
#define TANDEM_ORCH_DAEMON_H

#include <json-c/json.h>
#include <pthread.h>
#include <stdint.h>

#include "orch_config.h"
#include "orch_decision.h"
#include "orch_model.h"
#include "orch_store.h"
#include "orch_tenants.h"

#define ORCH_MAX_BODY (64 * 1024)    /* a request body over this is refused (413) */

/* One kept HTTP client per node agent (agent_client.c): its connection stays open between
 * requests, so a share change does not pay a TCP connect (and libcurl's set-up) each time. */
typedef struct orch_agent_conn {
    char agent[ORCH_ADDR_MAX];
    void *curl;                      /* CURL *, made at the first request to agent */
} orch_agent_conn;

typedef struct orch_daemon {
    orch_config cfg;
    orch_tenants tenants;
    orch_cluster *cluster;
    orch_store *store;
    orch_decision *decisions;        /* the newest cfg.decisions_kept, oldest first */
    int ndecisions;
    uint64_t decision_counts[ORCH_ACT_COUNT];
    orch_agent_conn agent_conns[ORCH_MAX_NODES];   /* used under lock, as every agent request is */
    int nagent_conns;
    pthread_mutex_t lock;
} orch_daemon;

/* An HTTP answer a handler fills: a status and a body (JSON unless content_type says else). */
typedef struct orch_reply {
    unsigned status;
    char *body;                      /* malloc'd */
    const char *content_type;
} orch_reply;

/* Answers with json (taken: put), or with {"error": text}. */
void orch_reply_json(orch_reply *r, unsigned status, json_object *json);
void orch_reply_error(orch_reply *r, unsigned status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Records d: in memory, in the store, counted, and as one log line.  Its time is the caller's
 * (when the decision was taken, before any node agent was asked: orch_wall_s) or, if 0, now. */
void orch_decide(orch_daemon *d, orch_decision *dec);
/* Seconds since the epoch, wall clock: a decision's time. */
double orch_wall_s(void);

/* POSTs json to agent's path (agent "http://H:P") over the agent's kept connection; the answer's
 * JSON object in *answer (caller puts it).  0, or -1 with why (unreachable, timed out, a status
 * other than 200 with its error).  Called under d->lock. */
int orch_agent_post(orch_daemon *d, const char *agent, const char *path, json_object *json,
                    json_object **answer, char *why, size_t whylen);
/* Closes the kept connections (at exit). */
void orch_agent_conns_close(orch_daemon *d);

/* The handlers, each called under d->lock. */
void orch_api_register(orch_daemon *d, json_object *body, orch_reply *r);
void orch_api_telemetry(orch_daemon *d, json_object *body, orch_reply *r);
void orch_api_drain(orch_daemon *d, const char *node, orch_reply *r);
void orch_api_place(orch_daemon *d, json_object *body, orch_reply *r);
void orch_api_share(orch_daemon *d, json_object *body, orch_reply *r);
void orch_api_state(orch_daemon *d, orch_reply *r);
void orch_api_decisions(orch_daemon *d, orch_reply *r);
void orch_api_metrics(orch_daemon *d, orch_reply *r);
void orch_api_status_page(orch_daemon *d, orch_reply *r);

/* Marks nodes silent for cfg.node_lost_ms lost (their placements stay; they get no new one), then
 * releases reserved placements whose guest never connected within cfg.reserved_timeout_ms. */
void orch_check_lost(orch_daemon *d, double now_ms);

/* What one telemetry report of a node showed: which placements it listed (by index in the
 * cluster) and which of the node's registered servers answered (by GPU and server position). */
typedef struct orch_report_seen {
    bool listed[ORCH_MAX_PLACEMENTS];
    bool ended[ORCH_MAX_PLACEMENTS];   /* a server's "ended": its session closed since the last report */
    bool answered[ORCH_MAX_GPUS][ORCH_MAX_SERVERS];
} orch_report_seen;

/* Steps the lifecycle of every placement on node n by what its report showed (orch_lifecycle.h):
 * listed ones become live, live ones a full report no longer lists are released. */
void orch_lifecycle_report(orch_daemon *d, const orch_node *n, const orch_report_seen *seen);
/* Releases reserved placements past cfg.reserved_timeout_ms whose node is not lost. */
void orch_check_reserved(orch_daemon *d, double now_ms);
/* Sends a share change of placement p to its node agent and, once it applied, stores it;
 * *applied_us: how long the server took, as the agent says (NULL: not wanted). */
int orch_apply_share(orch_daemon *d, orch_placement *p, int sm, int64_t *applied_us, char *why, size_t whylen);

/* Starts the HTTP server on cfg.listen; NULL with why on failure. */
struct MHD_Daemon *orch_http_start(orch_daemon *d, char *why, size_t whylen);

/* JSON field helpers: each answers 0, or -1 with why naming the key. */
int orch_json_string(json_object *o, const char *key, bool required, char *out, size_t outlen, char *why,
                     size_t whylen);
int orch_json_int(json_object *o, const char *key, bool required, long lo, long hi, int *out, char *why,
                  size_t whylen);
int orch_json_double(json_object *o, const char *key, bool required, double lo, double hi, double *out,
                     char *why, size_t whylen);

#endif
