/* Reading typed, bounded fields of an untrusted JSON object (orch_daemon.h). */
#include "orch_daemon.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static json_object *field(json_object *o, const char *key, bool required, bool *absent, char *why, size_t whylen)
{
    json_object *v = NULL;

    *absent = !json_object_object_get_ex(o, key, &v) || json_object_is_type(v, json_type_null);
    if (*absent && required)
        snprintf(why, whylen, "'%s' is missing", key);
    return *absent ? NULL : v;
}

int orch_json_string(json_object *o, const char *key, bool required, char *out, size_t outlen, char *why,
                     size_t whylen)
{
    bool absent;
    json_object *v = field(o, key, required, &absent, why, whylen);

    if (absent)
        return required ? -1 : 0;
    if (!json_object_is_type(v, json_type_string)) {
        snprintf(why, whylen, "'%s' must be a string", key);
        return -1;
    }
    const char *s = json_object_get_string(v);
    size_t n = strlen(s);
    if (n == 0 || n >= outlen || n != (size_t)json_object_get_string_len(v)) {
        snprintf(why, whylen, "'%s' must be 1 to %zu characters", key, outlen - 1);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        if ((unsigned char)s[i] < ' ' || s[i] == 0x7f) {
            snprintf(why, whylen, "'%s' has a control character", key);
            return -1;
        }
    }
    memcpy(out, s, n + 1);
    return 0;
}

int orch_json_int(json_object *o, const char *key, bool required, long lo, long hi, int *out, char *why,
                  size_t whylen)
{
    bool absent;
    json_object *v = field(o, key, required, &absent, why, whylen);

    if (absent)
        return required ? -1 : 0;
    if (!json_object_is_type(v, json_type_int)) {
        snprintf(why, whylen, "'%s' must be an integer", key);
        return -1;
    }
    int64_t n = json_object_get_int64(v);
    if (n < lo || n > hi) {
        snprintf(why, whylen, "'%s' is %lld: it must be %ld to %ld", key, (long long)n, lo, hi);
        return -1;
    }
    *out = (int)n;
    return 0;
}

int orch_json_double(json_object *o, const char *key, bool required, double lo, double hi, double *out,
                     char *why, size_t whylen)
{
    bool absent;
    json_object *v = field(o, key, required, &absent, why, whylen);

    if (absent)
        return required ? -1 : 0;
    if (!json_object_is_type(v, json_type_int) && !json_object_is_type(v, json_type_double)) {
        snprintf(why, whylen, "'%s' must be a number", key);
        return -1;
    }
    double n = json_object_get_double(v);
    if (!isfinite(n) || n < lo || n > hi) {
        snprintf(why, whylen, "'%s' is %g: it must be %g to %g", key, n, lo, hi);
        return -1;
    }
    *out = n;
    return 0;
}
