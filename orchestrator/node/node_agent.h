/* tandem-node's state (docs/node-agent.md): its configuration, its servers, and what it knows
 * of the orchestrator.  The main thread supervises and reports; the HTTP API's thread reads the
 * servers under the lock. */
#ifndef TANDEM_NODE_AGENT_H
#define TANDEM_NODE_AGENT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "node_conf.h"
#include "node_servers.h"

typedef struct tdm_node_agent {
    tdm_node_conf conf;
    tdm_node_servers servers;        /* under lock */
    pthread_mutex_t lock;
    char state_path[TDM_NODE_PATH_MAX + 16];
    char mps_pipe[TDM_NODE_PATH_MAX + 32];  /* cuda with mps on: the MPS daemon's pipe directory */
    bool registered;                 /* the orchestrator answered our register since we lost it */
    bool warned;                     /* the orchestrator's absence was logged */
    int telemetry_ms;
    uint64_t next_report_ms;
    struct MHD_Daemon *http;
} tdm_node_agent;

uint64_t tdm_node_now_ms(void);

/* node_report.c: registers, or sends telemetry when registered; on failure it registers again
 * at the next interval.  Never stops a server. */
void tdm_node_report(tdm_node_agent *a);
/* The register body (for tests and the log); the caller puts it. */
struct json_object *tdm_node_register_body(tdm_node_agent *a);

/* node_http.c: its HTTP API on conf.listen.  0 or -errno. */
int tdm_node_http_start(tdm_node_agent *a);
void tdm_node_http_stop(tdm_node_agent *a);

/* node_mps.c: starts (stop: quits) the MPS control daemon of each GPU when mps is on with the
 * cuda backend (the sim backend models a domain per GPU with --sim-mps-domain instead).
 * 0, or -errno with why (a missing nvidia-cuda-mps-control says so). */
int tdm_node_mps_start(tdm_node_agent *a, char *why, size_t whylen);
void tdm_node_mps_stop(tdm_node_agent *a);

#endif
