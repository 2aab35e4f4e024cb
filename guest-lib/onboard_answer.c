/* The orchestrator's answer to POST /v1/place (docs/adr/0002-control-plane.md), checked field by
 * field: the guest connects where it says and presents its key to a server, so nothing in it is
 * taken on trust. */
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#include "onboard.h"

#define JSON_DEPTH 8          /* the answer is flat; deeper nesting is refused while parsing */
#define ERROR_TEXT_MAX 200    /* of a refusal's text, printed to the program's stderr */

/* text, made fit for one line of stderr: control characters become '?', cut at max bytes. */
static void printable(const char *text, char *out, size_t outlen, size_t max)
{
    size_t n = 0;

    for (; text[n] && n < max && n + 1 < outlen; n++)
        out[n] = (unsigned char)text[n] < 0x20 || text[n] == 0x7f ? '?' : text[n];
    out[n] = 0;
}

/* The string member key of o into out (outlen bytes).  required: absence is an error; null
 * counts as absent.  0, or -1 with why. */
static int take_string(json_object *o, const char *key, bool required, char *out, size_t outlen, char *why,
                       size_t whylen)
{
    json_object *v = NULL;
    const char *s;
    size_t n;

    out[0] = 0;
    if (!json_object_object_get_ex(o, key, &v) || !v) {
        if (!required)
            return 0;
        snprintf(why, whylen, "gave a malformed answer: it has no \"%s\"", key);
        return -1;
    }
    if (!json_object_is_type(v, json_type_string)) {
        snprintf(why, whylen, "gave a malformed answer: \"%s\" is not a string", key);
        return -1;
    }
    s = json_object_get_string(v);
    n = (size_t)json_object_get_string_len(v);
    if (n >= outlen || strlen(s) != n) {   /* too long, or a NUL inside */
        snprintf(why, whylen, "gave a malformed answer: \"%s\" is longer than %zu bytes or holds a NUL", key,
                 outlen - 1);
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] <= 0x20 || s[i] == 0x7f) {
            snprintf(why, whylen, "gave a malformed answer: \"%s\" holds a space or control character", key);
            return -1;
        }
    memcpy(out, s, n + 1);
    return 0;
}

/* An optional member that, when present, must be a whole number from 0 (sm, memory_mib, gpu):
 * the guest does not use them, but an answer that gets them wrong is not one to trust. */
static int check_count(json_object *o, const char *key, char *why, size_t whylen)
{
    json_object *v = NULL;

    if (!json_object_object_get_ex(o, key, &v) || !v)
        return 0;
    if (!json_object_is_type(v, json_type_int) || json_object_get_int64(v) < 0) {
        snprintf(why, whylen, "gave a malformed answer: \"%s\" is not a whole number from 0", key);
        return -1;
    }
    return 0;
}

/* A 4xx/5xx: the refusal's {"error": "text"}, or what the status says without one. */
static void refusal(long status, json_object *o, char *why, size_t whylen)
{
    json_object *e = NULL;
    char text[ERROR_TEXT_MAX + 1];

    if (o && json_object_is_type(o, json_type_object) && json_object_object_get_ex(o, "error", &e) &&
        json_object_is_type(e, json_type_string)) {
        printable(json_object_get_string(e), text, sizeof(text), ERROR_TEXT_MAX);
        snprintf(why, whylen, "refused the placement (HTTP %ld): %s", status, text);
    } else {
        snprintf(why, whylen, "refused the placement (HTTP %ld) without an error text", status);
    }
}

static int placement(json_object *o, tdm_place_answer *out, char *why, size_t whylen)
{
    const char *scheme;

    if (take_string(o, "placement", true, out->placement, sizeof(out->placement), why, whylen) ||
        take_string(o, "endpoint", true, out->endpoint, sizeof(out->endpoint), why, whylen) ||
        take_string(o, "transport", true, out->transport, sizeof(out->transport), why, whylen) ||
        take_string(o, "standby", false, out->standby, sizeof(out->standby), why, whylen) ||
        take_string(o, "node", false, out->node, sizeof(out->node), why, whylen) ||
        take_string(o, "server", false, out->server, sizeof(out->server), why, whylen) ||
        take_string(o, "rule", false, out->rule, sizeof(out->rule), why, whylen) ||
        check_count(o, "gpu", why, whylen) || check_count(o, "sm", why, whylen) ||
        check_count(o, "memory_mib", why, whylen))
        return -1;
    if (!tdm_placement_key_ok(out->placement, strlen(out->placement))) {
        snprintf(why, whylen, "gave a malformed answer: \"placement\" is not 1 to %d letters, digits, '.', '_', ':' "
                 "or '-'", TDM_MAX_PLACEMENT);
        return -1;
    }
    if (strcmp(out->transport, "shm") == 0)
        scheme = "shm:";
    else if (strcmp(out->transport, "tcp") == 0)
        scheme = "tcp://";
    else {
        snprintf(why, whylen, "gave a malformed answer: \"transport\" is neither \"shm\" nor \"tcp\"");
        return -1;
    }
    if (strncmp(out->endpoint, scheme, strlen(scheme)) != 0 || !out->endpoint[strlen(scheme)]) {
        snprintf(why, whylen, "gave a malformed answer: \"endpoint\" %s is no %s endpoint (%s...)", out->endpoint,
                 out->transport, scheme);
        return -1;
    }
    if (out->standby[0] && strncmp(out->standby, "tcp://", 6) != 0 && strncmp(out->standby, "shm:", 4) != 0) {
        snprintf(why, whylen, "gave a malformed answer: \"standby\" %s is no endpoint (tcp://... or shm:...)",
                 out->standby);
        return -1;
    }
    return 0;
}

int tdm_place_answer_parse(long status, const char *body, size_t len, tdm_place_answer *out, char *why,
                           size_t whylen)
{
    json_tokener *tok = json_tokener_new_ex(JSON_DEPTH);
    json_object *o = NULL;
    int rc = -1;

    memset(out, 0, sizeof(*out));
    if (!tok) {
        snprintf(why, whylen, "could not be read: out of memory");
        return -1;
    }
    if (len > TDM_ONBOARD_ANSWER_MAX) {
        snprintf(why, whylen, "gave a malformed answer: longer than %d bytes", TDM_ONBOARD_ANSWER_MAX);
        goto out;
    }
    if (len > 0) {
        o = json_tokener_parse_ex(tok, body, (int)len);
        /* The whole body, one JSON value and nothing after it. */
        if (json_tokener_get_error(tok) != json_tokener_success || json_tokener_get_parse_end(tok) != len) {
            json_object_put(o);
            o = NULL;
        }
    }
    if (status < 200 || status > 299) {
        refusal(status, o, why, whylen);
        goto out;
    }
    if (status != 200) {
        snprintf(why, whylen, "gave a malformed answer: HTTP %ld, not 200", status);
        goto out;
    }
    if (!o || !json_object_is_type(o, json_type_object)) {
        snprintf(why, whylen, "gave a malformed answer: %s", o ? "not a JSON object" : "no JSON");
        goto out;
    }
    rc = placement(o, out, why, whylen);
out:
    json_object_put(o);
    json_tokener_free(tok);
    return rc;
}
