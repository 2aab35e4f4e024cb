/* On-boarding (issue 17): from the environment to a checked placement, every failure one line
 * that names its cause (docs/onboarding.md lists them). */
#include "onboard.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "onboard_http.h"

bool tdm_onboard_wanted(void)
{
    const char *o = getenv("TANDEM_ORCHESTRATOR");

    return o && *o;
}

static const char *from_env(void *ctx, const char *name)
{
    return getenv(name);
}

/* Who asks, from the environment: tenant, host, token and Table 2.  0, or -1 with msg. */
static int describe(tdm_place_request *req, tdm_guest_token *token, const char *orch, char *msg, size_t msglen)
{
    const char *tenant = getenv("TANDEM_TENANT"), *host = getenv("TANDEM_HOST");
    char why[400];

    if (!tenant || !*tenant) {
        snprintf(msg, msglen, "cannot on-board through the orchestrator at %s: TANDEM_TENANT is not set (the tenant "
                 "the program runs for)", orch);
        return -1;
    }
    if (strlen(tenant) >= sizeof(req->tenant)) {
        snprintf(msg, msglen, "cannot on-board through the orchestrator at %s: TANDEM_TENANT is longer than %zu bytes",
                 orch, sizeof(req->tenant) - 1);
        return -1;
    }
    snprintf(req->tenant, sizeof(req->tenant), "%s", tenant);
    if (tdm_app_params_read(&req->app, from_env, NULL, why, sizeof(why)) != 0) {
        snprintf(msg, msglen, "bad parameter %s (on-boarding through the orchestrator at %s)", why, orch);
        return -1;
    }
    if (tdm_guest_token_load(token, why, sizeof(why)) != 0) {
        snprintf(msg, msglen, "cannot on-board through the orchestrator at %s: %s", orch, why);
        return -1;
    }
    req->token = token;
    if (host && *host) {
        if (strlen(host) >= sizeof(req->host)) {
            snprintf(msg, msglen, "cannot on-board through the orchestrator at %s: TANDEM_HOST is longer than %zu "
                     "bytes", orch, sizeof(req->host) - 1);
            return -1;
        }
        snprintf(req->host, sizeof(req->host), "%s", host);
    } else if (gethostname(req->host, sizeof(req->host) - 1) != 0) {
        snprintf(msg, msglen, "cannot on-board through the orchestrator at %s: no host name (set TANDEM_HOST)", orch);
        return -1;
    }
    return 0;
}

int tdm_onboard(tdm_guest_token *token, tdm_place_answer *out, char *msg, size_t msglen)
{
    const char *orch = getenv("TANDEM_ORCHESTRATOR"), *server = getenv("TANDEM_SERVER");
    tdm_place_request req;
    tdm_http_answer ans = { 0 };
    char url[512], why[600];
    char *body = NULL;
    int rc = -1;

    memset(&req, 0, sizeof(req));
    memset(out, 0, sizeof(*out));
    /* Two sources for one choice: refused rather than one silently winning (docs/onboarding.md). */
    if (server && *server) {
        snprintf(msg, msglen, "TANDEM_ORCHESTRATOR=%s and TANDEM_SERVER=%s are both set: the orchestrator chooses the "
                 "server, so unset one of them", orch, server);
        return -1;
    }
    if (tdm_onboard_url(orch, url, sizeof(url), why, sizeof(why)) != 0) {
        snprintf(msg, msglen, "cannot on-board: %s", why);
        return -1;
    }
    if (describe(&req, token, orch, msg, msglen) != 0)
        return -1;
    body = tdm_place_request_json(&req);
    if (!body) {
        snprintf(msg, msglen, "cannot on-board through the orchestrator at %s: out of memory", orch);
        goto out;
    }
    if (tdm_onboard_post(url, body, &ans, why, sizeof(why)) != 0) {
        if (!ans.reached)
            snprintf(msg, msglen, "the orchestrator at %s is unreachable: %s", orch, why);
        else if (strncmp(why, "gave a malformed answer", 23) == 0)
            snprintf(msg, msglen, "the orchestrator at %s %s", orch, why);
        else
            snprintf(msg, msglen, "the orchestrator at %s did not answer: %s", orch, why);
        goto out;
    }
    if (tdm_place_answer_parse(ans.status, ans.body, ans.len, out, why, sizeof(why)) != 0) {
        snprintf(msg, msglen, "the orchestrator at %s %s", orch, why);
        goto out;
    }
    rc = 0;
out:
    if (body) {   /* it holds the token */
        memset(body, 0, strlen(body));
        free(body);
    }
    free(ans.body);
    return rc;
}
