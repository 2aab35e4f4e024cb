/* On-boarding through the orchestrator (issue 17; docs/onboarding.md): with
 * TANDEM_ORCHESTRATOR=HOST:PORT the guest asks POST /v1/place at its first CUDA call which
 * server to use, and presents the placement key it was given in HELLO and RESUME.
 *
 * libcurl and json-c are used here and nowhere else in the guest: a program that does not set
 * TANDEM_ORCHESTRATOR never calls into them. */
#ifndef TANDEM_GUEST_ONBOARD_H
#define TANDEM_GUEST_ONBOARD_H

#include <stdbool.h>
#include <stddef.h>

#include "app_params.h"
#include "placement_key.h"
#include "token.h"

#define TDM_ONBOARD_ENDPOINT_MAX 256   /* as long as resume/'s standby may be */
#define TDM_ONBOARD_NAME_MAX 64        /* node, server, rule, tenant */
#define TDM_ONBOARD_ANSWER_MAX 65536   /* bytes of an answer read at most */

/* What POST /v1/place answered, checked (tdm_place_answer_parse). */
typedef struct tdm_place_answer {
    char placement[TDM_PLACEMENT_KEY_SIZE];
    char endpoint[TDM_ONBOARD_ENDPOINT_MAX];   /* tcp://H:P or shm:NAME, as TANDEM_SERVER */
    char standby[TDM_ONBOARD_ENDPOINT_MAX];    /* "" when none */
    char transport[8];                         /* "shm" or "tcp", matching the endpoint */
    char node[TDM_ONBOARD_NAME_MAX], server[TDM_ONBOARD_NAME_MAX], rule[TDM_ONBOARD_NAME_MAX];  /* "" if absent */
} tdm_place_answer;

/* What the guest sends: its tenant, credential, host and Table 2 parameters. */
typedef struct tdm_place_request {
    char tenant[TDM_ONBOARD_NAME_MAX];
    const tdm_guest_token *token;
    char host[TDM_ONBOARD_NAME_MAX * 4];
    tdm_app_params app;
} tdm_place_request;

/* Whether the environment asks for on-boarding (TANDEM_ORCHESTRATOR set and not empty). */
bool tdm_onboard_wanted(void);

/* The whole of on-boarding: reads TANDEM_ORCHESTRATOR, TANDEM_TENANT, TANDEM_HOST, the token
 * (into *token, which HELLO presents too) and Table 2, asks the orchestrator and checks its
 * answer.  0, or -1 with msg: one line naming the cause (the orchestrator unreachable at
 * HOST:PORT, its refusal and error text, a bad parameter VAR=VALUE, a malformed answer, both
 * TANDEM_ORCHESTRATOR and TANDEM_SERVER set). */
int tdm_onboard(tdm_guest_token *token, tdm_place_answer *out, char *msg, size_t msglen);

/* "HOST:PORT" (HOST a name, an IPv4 address or [IPv6]) as http://HOST:PORT/v1/place.  0, or -1
 * with why. */
int tdm_onboard_url(const char *hostport, char *url, size_t urllen, char *why, size_t whylen);

/* The request's JSON text ({"tenant","token","host","app":{...}}; app holds only the variables
 * set), malloc'ed; NULL when out of memory. */
char *tdm_place_request_json(const tdm_place_request *r);

/* Reads the orchestrator's answer: status (the HTTP status) and body (len bytes, untrusted).
 * 0 for a 200 whose body is a placement with a valid key, an endpoint of the transport it
 * names, and well-typed optional fields.  Otherwise -1 with why: for a 4xx/5xx "refused the placement
 * (HTTP N): TEXT" with the answer's error text (control characters replaced, cut short), else
 * "gave a malformed answer: WHAT". */
int tdm_place_answer_parse(long status, const char *body, size_t len, tdm_place_answer *out, char *why,
                           size_t whylen);

#endif
