/* The orchestrator's configuration: orchestrator.conf and the vms.conf it names (libconfig,
 * loaded through tandem_conf so every error reads "FILE:LINE: what").  Keys and defaults:
 * docs/orchestrator.md. */
#ifndef TANDEM_ORCH_CONFIG_H
#define TANDEM_ORCH_CONFIG_H

#include <limits.h>
#include <stddef.h>

#include "orch_model.h"

typedef struct orch_config {
    char listen[ORCH_ADDR_MAX];          /* "HOST:PORT" */
    char state_dir[PATH_MAX];
    char tenants_file[PATH_MAX];
    char vms_file[PATH_MAX];
    /* policies */
    int telemetry_ms;                    /* what node agents are told to report at */
    int node_lost_ms;                    /* a node silent this long is lost */
    int cooldown_ms;                     /* the elasticity cool-down after a change */
    int decisions_kept;                  /* in memory and in the store */
    int agent_timeout_ms;                /* a node agent's answer to reserve and share */
    int reserved_timeout_ms;             /* a placement whose guest never connects is released after it */
    orch_params defaults;                /* Flyt's Table 2 defaults of every application */
    orch_vm vms[ORCH_MAX_VMS];
    int nvms;
} orch_config;

/* Loads path and the vms file it names (relative paths resolve beside path).  0, or -errno with
 * err "FILE:LINE: what". */
int orch_config_load(const char *path, orch_config *out, char *err, size_t errlen);
/* Loads a vms.conf into cfg->vms (what orch_config_load does with the file it names). */
int orch_config_load_vms(const char *path, orch_config *cfg, char *err, size_t errlen);
const orch_vm *orch_config_vm(const orch_config *cfg, const char *name);

#endif
