/* See control_ops.h.  Every field is checked before anything is done: a key outside the
 * request's own, a wrong type or a value out of range gets {"ok":false,"error":...} naming
 * it, and the request does nothing. */
#include "control_ops.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "placement_key.h"

#define MEMORY_MIB_MAX (1ull << 30)   /* a petabyte: beyond any device, so a typo is refused */

typedef struct request {
    const tdm_control_target *t;
    json_object *in, *out;
    char why[256];
} request;

typedef bool (*op_fn)(request *q);

typedef struct op_row {
    const char *name;
    op_fn run;
    const char *keys[6];             /* the keys it takes besides "op" */
} op_row;

static bool fail(request *q, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static bool fail(request *q, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(q->why, sizeof(q->why), fmt, ap);
    va_end(ap);
    return false;
}

/* A placement key or tenant name: 1 to max-1 characters of [A-Za-z0-9._:-]. */
static bool get_name(request *q, const char *key, size_t max, char *out)
{
    json_object *v;

    if (!json_object_object_get_ex(q->in, key, &v) || !json_object_is_type(v, json_type_string))
        return fail(q, "\"%s\" must be a string", key);
    const char *s = json_object_get_string(v);
    size_t n = strlen(s);
    if (n == 0 || n >= max || n != (size_t)json_object_get_string_len(v))
        return fail(q, "\"%s\" must have 1 to %zu characters", key, max - 1);
    if (!tdm_placement_key_ok(s, n))   /* names and keys share proto's alphabet */
        return fail(q, "\"%s\" may hold only letters, digits and . _ : -", key);
    memcpy(out, s, n + 1);
    return true;
}

static bool get_int(request *q, const char *key, long long lo, long long hi, long long *out)
{
    json_object *v;

    if (!json_object_object_get_ex(q->in, key, &v) || !json_object_is_type(v, json_type_int))
        return fail(q, "\"%s\" must be an integer", key);
    long long n = (long long)json_object_get_int64(v);
    /* json-c clamps what does not fit in int64; the range check below refuses it. */
    if (n < lo || n > hi)
        return fail(q, "\"%s\" must be from %lld to %lld", key, lo, hi);
    *out = n;
    return true;
}

static bool op_reserve(request *q)
{
    tdm_reservation r = { 0 };
    long long sm, mib;

    if (!get_name(q, "placement", sizeof(r.placement), r.placement) ||
        !get_name(q, "tenant", sizeof(r.tenant), r.tenant) || !get_int(q, "sm", 1, q->t->sms, &sm) ||
        !get_int(q, "memory_mib", 0, (long long)MEMORY_MIB_MAX, &mib))
        return false;
    r.sm = (int)sm;
    r.memory_mib = (uint64_t)mib;
    int rc = tdm_reservations_put(q->t->reservations, &r);
    if (rc == -ENOSPC)
        return fail(q, "the reservation table is full: %zu reservations wait for their guests already",
                    q->t->reservations->cap);
    return rc == 0 || fail(q, "cannot store the reservation");
}

static bool op_stats(request *q)
{
    q->t->stats(q->t->ctx, q->out);
    return true;
}

static bool op_set_share(request *q)
{
    char key[TDM_PLACEMENT_KEY_MAX];
    long long sm;
    uint64_t applied_us = 0;

    if (!get_name(q, "placement", sizeof(key), key) || !get_int(q, "sm", 1, q->t->sms, &sm))
        return false;
    int granted = (int)sm;
    if (q->t->set_share(q->t->ctx, key, &granted, &applied_us, q->why, sizeof(q->why)) != 0)
        return false;
    json_object_object_add(q->out, "sm", json_object_new_int64(granted));
    json_object_object_add(q->out, "applied_us", json_object_new_int64((int64_t)applied_us));
    return true;
}

static const op_row ops[] = {
    { "reserve", op_reserve, { "placement", "tenant", "sm", "memory_mib" } },
    { "set_share", op_set_share, { "placement", "sm" } },
    { "stats", op_stats, { NULL } },
};

static bool key_known(const op_row *op, const char *key)
{
    if (strcmp(key, "op") == 0)
        return true;
    for (size_t i = 0; i < sizeof(op->keys) / sizeof(op->keys[0]) && op->keys[i]; i++)
        if (strcmp(op->keys[i], key) == 0)
            return true;
    return false;
}

static const op_row *find_op(request *q)
{
    json_object *v;

    if (!json_object_object_get_ex(q->in, "op", &v) || !json_object_is_type(v, json_type_string)) {
        fail(q, "\"op\" must be a string: reserve, set_share or stats");
        return NULL;
    }
    for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
        if (strcmp(ops[i].name, json_object_get_string(v)) != 0)
            continue;
        json_object_object_foreach(q->in, key, val) {
            (void)val;
            if (!key_known(&ops[i], key)) {
                fail(q, "\"%s\" is not a field of op %s", key, ops[i].name);
                return NULL;
            }
        }
        return &ops[i];
    }
    fail(q, "unknown op (have: reserve, set_share, stats)");
    return NULL;
}

/* The request as an object, or NULL with why: a line is one JSON object and nothing else. */
static json_object *parse(request *q, const char *line, size_t len)
{
    json_tokener *tok = json_tokener_new();
    json_object *o = NULL;

    if (!tok) {
        fail(q, "out of memory");
        return NULL;
    }
    o = json_tokener_parse_ex(tok, line, (int)len);
    size_t end = json_tokener_get_parse_end(tok);
    enum json_tokener_error e = json_tokener_get_error(tok);
    json_tokener_free(tok);
    if (!o || e != json_tokener_success) {
        fail(q, "not JSON: %s", e == json_tokener_continue ? "the object is not complete"
                                                           : json_tokener_error_desc(e));
        json_object_put(o);
        return NULL;
    }
    while (end < len && (line[end] == ' ' || line[end] == '\t' || line[end] == '\r'))
        end++;
    if (end != len || !json_object_is_type(o, json_type_object)) {
        fail(q, "%s", end != len ? "one JSON object a line, and nothing after it" : "a request is a JSON object");
        json_object_put(o);
        return NULL;
    }
    return o;
}

char *tdm_control_answer(const tdm_control_target *t, const char *line, size_t len)
{
    request q = { .t = t };
    const op_row *op = NULL;
    bool ok = false;
    char *text;

    q.out = json_object_new_object();
    if (!q.out)
        return NULL;
    json_object_object_add(q.out, "ok", NULL);   /* first in the answer; set below */
    if (len > 0 && memchr(line, '\0', len) != NULL)
        fail(&q, "a NUL byte in the line");
    else if ((q.in = parse(&q, line, len)) != NULL && (op = find_op(&q)) != NULL)
        ok = op->run(&q);
    json_object_object_add(q.out, "ok", json_object_new_boolean(ok));
    if (!ok)
        json_object_object_add(q.out, "error", json_object_new_string(q.why));
    text = strdup(json_object_to_json_string_ext(q.out, JSON_C_TO_STRING_PLAIN));
    json_object_put(q.in);
    json_object_put(q.out);
    return text;
}
