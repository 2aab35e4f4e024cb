/* The one HTTP exchange of on-boarding (onboard_http.c, libcurl). */
#ifndef TANDEM_GUEST_ONBOARD_HTTP_H
#define TANDEM_GUEST_ONBOARD_HTTP_H

#include <stdbool.h>
#include <stddef.h>

#include "onboard.h"

typedef struct tdm_http_answer {
    bool reached;        /* the orchestrator was reached (false: unreachable or silent) */
    long status;         /* its HTTP status */
    char *body;          /* malloc'ed, len bytes (not NUL-ended), at most TDM_ONBOARD_ANSWER_MAX */
    size_t len;
} tdm_http_answer;

/* POSTs body (JSON) to url.  0 with *out (free out->body), or -1 with why (libcurl's words) and
 * out->reached saying whether the orchestrator was reached at all. */
int tdm_onboard_post(const char *url, const char *body, tdm_http_answer *out, char *why, size_t whylen);

#endif
