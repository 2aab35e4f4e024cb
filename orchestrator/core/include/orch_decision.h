/* A decision the orchestrator took: what it did to which placement, from what to what, and why.
 * Every placement, share change, migration choice, drain, lost node and release is one (docs/orchestrator.md). */
#ifndef TANDEM_ORCH_DECISION_H
#define TANDEM_ORCH_DECISION_H

#include "orch_model.h"

typedef enum {
    ORCH_ACT_NONE,          /* nothing to do (not recorded) */
    ORCH_ACT_PLACE,
    ORCH_ACT_SCALE_UP,
    ORCH_ACT_SCALE_DOWN,
    ORCH_ACT_MIGRATE,       /* decided and exposed; carried out by the live-migration issue */
    ORCH_ACT_HOLD,          /* a violation nothing can fix now (VM budget reached, no GPU free) */
    ORCH_ACT_SET_SHARE,     /* an operator's tandemctl share */
    ORCH_ACT_DRAIN,
    ORCH_ACT_NODE_LOST,
    ORCH_ACT_RELEASE,       /* its session ended, or its guest never connected (orch_lifecycle.h) */
    ORCH_ACT_COUNT
} orch_action;

typedef struct orch_decision {
    double time;                      /* seconds since the epoch: when it was decided, before a node
                                       * agent was asked to carry it out */
    double agent_ms;                  /* how long the node agent took to carry it out (reserve, share),
                                       * 0 when none was asked; not kept in the store */
    char placement[ORCH_NAME_MAX];    /* or the node, for drain and node-lost */
    orch_action action;
    char from[ORCH_ADDR_MAX];
    char to[ORCH_ADDR_MAX];
    char why[ORCH_WHY_MAX];
} orch_decision;

const char *orch_action_name(orch_action a);
int orch_action_parse(const char *s, orch_action *out);

#endif
