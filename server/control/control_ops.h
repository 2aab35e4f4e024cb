/* The control socket's requests (docs/adr/0002-control-plane.md, docs/node-agent.md): one JSON
 * object a line in, one a line out.  This part only parses, checks and answers; what a request
 * does to a server is the target's (control_server.c for a tandem-server, a fake in the unit
 * test), so that every line, good or bad, can be tested without a server. */
#ifndef TANDEM_CONTROL_OPS_H
#define TANDEM_CONTROL_OPS_H

#include <json-c/json.h>
#include <stddef.h>
#include <stdint.h>

#include "reservations.h"

typedef struct tdm_control_target {
    void *ctx;
    tdm_reservations *reservations;  /* where reserve stores */
    int sms;                         /* the device's SMs: no share or reservation above it */
    /* Adds "sms", "memory_used_mib", "takeovers" and "sessions" to answer. */
    void (*stats)(void *ctx, json_object *answer);
    /* Gives the session of placement key `placement` a share of sm SMs: 0 with *applied_us
     * (how long it took), or -errno with why. */
    /* *sm: asked on entry, granted on return (a GPU grants whole SM groups: docs/sm-shares.md). */
    int (*set_share)(void *ctx, const char *placement, int *sm, uint64_t *applied_us, char *why, size_t whylen);
} tdm_control_target;

/* The answer (no newline; the caller frees it) to the request line of len bytes. */
char *tdm_control_answer(const tdm_control_target *t, const char *line, size_t len);

#endif
