/* The tenants' tokens (orch_tenants.h), read with libinih as the server reads the same file. */
#include "orch_tenants.h"

#include <errno.h>
#include <ini.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

typedef struct load_ctx {
    orch_tenants *ts;
    const char *path;
    char why[300];
} load_ctx;

static bool set_token(orch_tenant *t, const char *v, char *why, size_t whylen)
{
    size_t n = strlen(v);

    if (n < ORCH_TOKEN_MIN || n > ORCH_TOKEN_MAX) {
        snprintf(why, whylen, "the token of tenant %s has %zu characters: it needs %d to %d", t->name, n,
                 ORCH_TOKEN_MIN, ORCH_TOKEN_MAX);
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        if (v[i] <= ' ' || v[i] > '~') {
            snprintf(why, whylen, "the token of tenant %s has a character other than printable ASCII", t->name);
            return false;
        }
    }
    memset(t->token, 0, sizeof(t->token));
    memcpy(t->token, v, n);
    t->token_len = n;
    return true;
}

/* A file holding tokens that group or others may read is no credential store (as the server). */
static FILE *open_private(const char *path, char *why, size_t whylen)
{
    struct stat st;
    FILE *f = fopen(path, "r");

    if (!f) {
        snprintf(why, whylen, "cannot open %s: %s", path, strerror(errno));
        return NULL;
    }
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode) || (st.st_mode & (S_IRWXG | S_IRWXO))) {
        snprintf(why, whylen, "%s holds tokens but is not a regular file of mode 600 (chmod 600 %s)", path, path);
        fclose(f);
        return NULL;
    }
    return f;
}

static bool read_token_file(orch_tenant *t, const char *path, char *why, size_t whylen)
{
    char buf[ORCH_TOKEN_MAX + 2] = "";
    FILE *f = open_private(path, why, whylen);
    bool ok;

    if (!f)
        return false;
    if (!fgets(buf, sizeof(buf), f))
        buf[0] = 0;
    fclose(f);
    buf[strcspn(buf, "\r\n")] = 0;
    ok = set_token(t, buf, why, whylen);
    memset(buf, 0, sizeof(buf));
    return ok;
}

static orch_tenant *tenant_of(load_ctx *c, const char *section)
{
    orch_tenants *ts = c->ts;

    if (ts->n && strcmp(ts->v[ts->n - 1].name, section) == 0)
        return &ts->v[ts->n - 1];
    if (!section[0] || strlen(section) >= ORCH_NAME_MAX) {
        snprintf(c->why, sizeof(c->why), "a key outside a [tenant] section of 1 to %d characters", ORCH_NAME_MAX - 1);
        return NULL;
    }
    if (ts->n == ORCH_MAX_TENANTS) {
        snprintf(c->why, sizeof(c->why), "more than %d tenants", ORCH_MAX_TENANTS);
        return NULL;
    }
    orch_tenant *t = &ts->v[ts->n++];
    memset(t, 0, sizeof(*t));
    snprintf(t->name, sizeof(t->name), "%s", section);
    return t;
}

static int on_key(void *user, const char *section, const char *key, const char *value)
{
    load_ctx *c = user;
    orch_tenant *t = tenant_of(c, section);

    if (!t)
        return 0;
    if (strcmp(key, "token") == 0)
        return set_token(t, value, c->why, sizeof(c->why));
    if (strcmp(key, "token_file") == 0)
        return read_token_file(t, value, c->why, sizeof(c->why));
    return 1;   /* the server's bounds: its to check */
}

int orch_tenants_load(const char *path, orch_tenants *out, char *why, size_t whylen)
{
    load_ctx c = { .ts = out, .path = path };
    FILE *f;
    int line;

    memset(out, 0, sizeof(*out));
    f = open_private(path, why, whylen);
    if (!f)
        return -1;
    line = ini_parse_file(f, on_key, &c);
    fclose(f);
    if (line != 0) {
        snprintf(why, whylen, "%s:%d: %s", path, line, c.why[0] ? c.why : "not '[tenant]', 'key = value' or a comment");
        goto fail;
    }
    for (int i = 0; i < out->n; i++) {
        if (!out->v[i].token_len) {
            snprintf(why, whylen, "%s: tenant [%s] has no token or token_file", path, out->v[i].name);
            goto fail;
        }
    }
    return 0;
fail:
    orch_tenants_clear(out);
    return -1;
}

bool orch_tenants_check(const orch_tenants *ts, const char *tenant, const char *token)
{
    unsigned char presented[ORCH_TOKEN_MAX] = { 0 };
    size_t n = strnlen(token, ORCH_TOKEN_MAX + 1);
    bool found = false;
    unsigned diff = 1;

    if (n > ORCH_TOKEN_MAX)
        return false;
    memcpy(presented, token, n);
    for (int i = 0; i < ts->n; i++) {
        if (strcmp(ts->v[i].name, tenant) != 0)
            continue;
        const orch_tenant *t = &ts->v[i];
        diff = (unsigned)(t->token_len ^ n);
        for (size_t b = 0; b < sizeof(presented); b++)
            diff |= (unsigned)(t->token[b] ^ presented[b]);
        found = true;
    }
    memset(presented, 0, sizeof(presented));
    return found && diff == 0;
}

void orch_tenants_clear(orch_tenants *ts)
{
    memset(ts, 0, sizeof(*ts));
}
