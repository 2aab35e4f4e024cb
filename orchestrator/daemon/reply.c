/* Answers and decisions (orch_daemon.h). */
#include "orch_daemon.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "log.h"

void orch_reply_json(orch_reply *r, unsigned status, json_object *json)
{
    r->status = status;
    r->content_type = "application/json";
    free(r->body);
    r->body = strdup(json_object_to_json_string_ext(json, JSON_C_TO_STRING_PLAIN));
    json_object_put(json);
}

void orch_reply_error(orch_reply *r, unsigned status, const char *fmt, ...)
{
    char text[512];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    json_object *o = json_object_new_object();
    json_object_object_add(o, "error", json_object_new_string(text));
    orch_reply_json(r, status, o);
}

double orch_wall_s(void)
{
    struct timeval tv;

    gettimeofday(&tv, NULL);
    return (double)tv.tv_sec + tv.tv_usec / 1e6;
}

void orch_decide(orch_daemon *d, orch_decision *dec)
{
    int keep = d->cfg.decisions_kept;

    if (dec->time <= 0)
        dec->time = orch_wall_s();
    if (d->ndecisions == keep) {
        memmove(d->decisions, d->decisions + 1, (size_t)(keep - 1) * sizeof(*dec));
        d->ndecisions--;
    }
    d->decisions[d->ndecisions++] = *dec;
    d->decision_counts[dec->action]++;
    tdm_log("decision %s %s: %s -> %s: %s", orch_action_name(dec->action), dec->placement, dec->from, dec->to,
            dec->why);
    if (orch_store_add_decision(d->store, dec, keep) != 0)
        tdm_log("cannot store that decision: %s", orch_store_error(d->store));
}
