/* The tenants file (--tenants FILE): parsed with libinih, checked whole before the server
 * serves anyone, so that a mistake stops the start instead of locking out or letting in a
 * tenant later.  Format and rules: docs/security.md. */
#include "tenants.h"

#include <errno.h>
#include <ini.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "grow.h"
#include "server.h"

/* Keys a tenant's section may have, each at most once. */
enum { K_TOKEN = 1, K_TOKEN_FILE = 2, K_QUOTA = 4, K_STREAMS = 8, K_EVENTS = 16, K_MAX_SESSIONS = 32, K_UID = 64,
       /* ---- host resources and time limits (issue 16) ---- */
       K_MODULES = 128, K_HOST_MEMORY = 256, K_IDLE = 512, K_TENANT_MEMORY = 1024, K_TENANT_HOST_MEMORY = 2048 };
/* Keys whose value is a size (K, M, G). */
#define K_SIZES (K_QUOTA | K_HOST_MEMORY | K_TENANT_MEMORY | K_TENANT_HOST_MEMORY)

typedef struct load_ctx {
    tdm_tenants *ts;
    size_t cap;
    unsigned seen;           /* keys of the current tenant so far */
    char why[300];           /* why the handler refused a line (ini_parse gives its number) */
} load_ctx;

/* Opens a file holding tokens for reading, refusing one that group or others may read or
 * write: a token anyone on the host can read is no credential (ssh refuses such keys alike). */
static FILE *open_private(const char *path, char *why, size_t whylen)
{
    struct stat st;
    FILE *f = fopen(path, "r");

    if (!f) {
        snprintf(why, whylen, "cannot open %s: %s", path, strerror(errno));
        return NULL;
    }
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
        snprintf(why, whylen, "%s is not a regular file", path);
        goto fail;
    }
    if (st.st_mode & (S_IRWXG | S_IRWXO)) {
        snprintf(why, whylen, "%s holds tokens but its mode is %04o: group and others must have no access "
                 "(chmod 600 %s)", path, (unsigned)(st.st_mode & 07777), path);
        goto fail;
    }
    return f;
fail:
    fclose(f);
    return NULL;
}

/* A token must be printable ASCII without spaces: it travels in an environment variable, and
 * INI would cut it at a space or a comment character. */
static bool set_token(tdm_tenant *t, const char *v, char *why, size_t whylen)
{
    size_t n = strlen(v);

    if (n < TDM_TENANT_TOKEN_MIN || n > TDM_MAX_TOKEN) {
        snprintf(why, whylen, "the token of tenant %s has %zu characters: it needs %d to %d", t->name, n,
                 TDM_TENANT_TOKEN_MIN, TDM_MAX_TOKEN);
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        if (v[i] <= ' ' || v[i] > '~' || v[i] == ';' || v[i] == '#') {
            snprintf(why, whylen, "the token of tenant %s has a character other than printable ASCII "
                     "(no spaces, ';' or '#')", t->name);
            return false;
        }
    }
    memset(t->token, 0, sizeof(t->token));
    memcpy(t->token, v, n);
    t->token_len = (uint32_t)n;
    return true;
}

/* token_file: its first line is the token (a trailing newline is not part of it). */
static bool read_token_file(tdm_tenant *t, const char *path, char *why, size_t whylen)
{
    char buf[TDM_MAX_TOKEN + 2];
    FILE *f;
    bool ok;

    if (path[0] != '/') {
        snprintf(why, whylen, "token_file of tenant %s must be an absolute path", t->name);
        return false;
    }
    f = open_private(path, why, whylen);
    if (!f)
        return false;
    if (!fgets(buf, sizeof(buf), f))
        buf[0] = 0;
    fclose(f);
    buf[strcspn(buf, "\r\n")] = 0;
    ok = set_token(t, buf, why, whylen);
    memset(buf, 0, sizeof(buf));   /* no copy of a token lingers on the stack */
    return ok;
}

/* A count from 0 to INT_MAX, all of value. */
static bool parse_count(const char *v, int *out)
{
    char *end = NULL;
    long n;

    errno = 0;
    n = strtol(v, &end, 10);
    if (errno || end == v || *end || n < 0 || n > INT_MAX)
        return false;
    *out = (int)n;
    return true;
}

/* An override of a per-session count: *has says whether value is one. */
static bool set_bound(const char *value, bool *has, uint32_t *out)
{
    int n = 0;

    *has = parse_count(value, &n);
    *out = (uint32_t)n;
    return *has;
}

/* uid: a number or a user's name. */
static bool parse_uid(const char *v, long *out)
{
    struct passwd *pw;
    int n;

    if (parse_count(v, &n)) {
        *out = n;
        return true;
    }
    pw = getpwnam(v);
    if (!pw)
        return false;
    *out = (long)pw->pw_uid;
    return true;
}

static bool valid_name(const char *s)
{
    size_t n = strlen(s);

    if (n == 0 || n >= TDM_TENANT_NAME_MAX)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9') ||
              s[i] == '-' || s[i] == '_' || s[i] == '.'))
            return false;
    return true;
}

/* The tenant a line of `section` belongs to: the last one when the section goes on, a new one
 * when it starts.  NULL (why set) when the name is bad or the section comes twice. */
static tdm_tenant *tenant_of(load_ctx *c, const char *section)
{
    tdm_tenants *ts = c->ts;
    tdm_tenant *t;

    if (ts->n && strcmp(ts->v[ts->n - 1].name, section) == 0)
        return &ts->v[ts->n - 1];
    if (!section[0]) {
        snprintf(c->why, sizeof(c->why), "a key outside any [tenant] section");
        return NULL;
    }
    if (!valid_name(section)) {
        snprintf(c->why, sizeof(c->why), "tenant name [%s] is not 1 to %d letters, digits, '-', '_' or '.'", section,
                 TDM_TENANT_NAME_MAX - 1);
        return NULL;
    }
    for (size_t i = 0; i < ts->n; i++) {
        if (strcmp(ts->v[i].name, section) == 0) {
            snprintf(c->why, sizeof(c->why), "tenant [%s] appears twice", section);
            return NULL;
        }
    }
    if (ts->n && !(c->seen & (K_TOKEN | K_TOKEN_FILE))) {
        snprintf(c->why, sizeof(c->why), "tenant [%s] (before this line) has no token or token_file",
                 ts->v[ts->n - 1].name);
        return NULL;
    }
    if (tdm_grow(&ts->v, &c->cap, ts->n + 1, sizeof(*ts->v), 4) != 0) {
        snprintf(c->why, sizeof(c->why), "out of memory");
        return NULL;
    }
    t = &ts->v[ts->n++];
    memset(t, 0, sizeof(*t));
    snprintf(t->name, sizeof(t->name), "%s", section);
    t->uid = -1;
    c->seen = 0;
    return t;
}

/* One key of a tenant's section.  inih: nonzero goes on; 0 stops with this line's number. */
static int on_key(void *user, const char *section, const char *key, const char *value)
{
    load_ctx *c = user;
    tdm_tenant *t = tenant_of(c, section);
    char *why = c->why;
    size_t wl = sizeof(c->why);
    unsigned k;

    if (!t)
        return 0;
    k = strcmp(key, "token") == 0 ? K_TOKEN : strcmp(key, "token_file") == 0 ? K_TOKEN_FILE
      : strcmp(key, "session_quota") == 0 ? K_QUOTA : strcmp(key, "session_streams") == 0 ? K_STREAMS
      : strcmp(key, "session_events") == 0 ? K_EVENTS : strcmp(key, "max_sessions") == 0 ? K_MAX_SESSIONS
      : strcmp(key, "uid") == 0 ? K_UID : strcmp(key, "session_modules") == 0 ? K_MODULES
      : strcmp(key, "session_host_memory") == 0 ? K_HOST_MEMORY : strcmp(key, "idle_timeout") == 0 ? K_IDLE
      : strcmp(key, "tenant_memory") == 0 ? K_TENANT_MEMORY
      : strcmp(key, "tenant_host_memory") == 0 ? K_TENANT_HOST_MEMORY : 0;
    if (!k) {
        snprintf(why, wl, "unknown key '%s' in tenant [%s] (token, token_file, session_quota, session_streams, "
                 "session_events, session_modules, session_host_memory, idle_timeout, tenant_memory, "
                 "tenant_host_memory, max_sessions, uid)", key, t->name);
        return 0;
    }
    if (c->seen & k || (k & (K_TOKEN | K_TOKEN_FILE) && c->seen & (K_TOKEN | K_TOKEN_FILE))) {
        snprintf(why, wl, "tenant [%s] gives '%s' a second time (or both token and token_file)", t->name, key);
        return 0;
    }
    c->seen |= k;
    switch (k) {
    case K_TOKEN: return set_token(t, value, why, wl);
    case K_TOKEN_FILE: return read_token_file(t, value, why, wl);
    case K_QUOTA:
        t->has_quota = tdm_parse_size(value, &t->bounds.mem_quota) == 0;
        if (t->has_quota)
            return 1;
        break;
    case K_STREAMS:
        if (set_bound(value, &t->has_streams, &t->bounds.streams))
            return 1;
        break;
    case K_EVENTS:
        if (set_bound(value, &t->has_events, &t->bounds.events))
            return 1;
        break;
    case K_MODULES:
        if (set_bound(value, &t->has_modules, &t->bounds.modules))
            return 1;
        break;
    case K_IDLE:
        if (set_bound(value, &t->has_idle_timeout, &t->bounds.idle_timeout_s))
            return 1;
        break;
    case K_HOST_MEMORY:
        t->has_host_memory = tdm_parse_size(value, &t->bounds.host_memory) == 0;
        if (t->has_host_memory)
            return 1;
        break;
    case K_TENANT_MEMORY:
        if (tdm_parse_size(value, &t->usage.mem_limit) == 0)
            return 1;
        break;
    case K_TENANT_HOST_MEMORY:
        if (tdm_parse_size(value, &t->usage.host_limit) == 0)
            return 1;
        break;
    case K_MAX_SESSIONS:
        if (parse_count(value, &t->max_sessions))
            return 1;
        break;
    case K_UID:
        if (parse_uid(value, &t->uid))
            return 1;
        snprintf(why, wl, "tenant [%s]: uid '%s' is neither a number nor a user of this host", t->name, value);
        return 0;
    }
    snprintf(why, wl, "tenant [%s]: %s '%s' is not a %s", t->name, key, value,
             k & K_SIZES ? "size (a number, optionally K, M or G)" : "count (0 or more)");
    return 0;
}

/* What the handler cannot see line by line: the last tenant's token, and tokens shared by two
 * tenants (a session would belong to whichever the lookup met first). */
static bool check_whole(load_ctx *c, const char *path)
{
    tdm_tenants *ts = c->ts;

    if (!ts->n) {
        snprintf(c->why, sizeof(c->why), "%s names no tenant: nobody could connect", path);
        return false;
    }
    if (!(c->seen & (K_TOKEN | K_TOKEN_FILE))) {
        snprintf(c->why, sizeof(c->why), "tenant [%s] has no token or token_file", ts->v[ts->n - 1].name);
        return false;
    }
    for (size_t i = 0; i < ts->n; i++) {
        for (size_t j = i + 1; j < ts->n; j++) {
            if (tdm_tenant_token_matches(&ts->v[i], ts->v[j].token, ts->v[j].token_len)) {
                snprintf(c->why, sizeof(c->why), "tenants [%s] and [%s] have the same token", ts->v[i].name,
                         ts->v[j].name);
                return false;
            }
        }
    }
    return true;
}

int tdm_tenants_load(const char *path, tdm_tenants *out, char *why, size_t whylen)
{
    load_ctx c = { .ts = out };
    FILE *f;
    int line, rc = -1;

    memset(out, 0, sizeof(*out));
    f = open_private(path, why, whylen);
    if (!f)
        return -1;
    line = ini_parse_file(f, on_key, &c);
    fclose(f);
    if (line < 0) {
        snprintf(why, whylen, "cannot read %s", path);
        goto out;
    }
    if (line > 0) {
        /* inih stops at a line it cannot parse (then why is still empty) or that on_key refused. */
        snprintf(why, whylen, "%s line %d: %s", path, line, c.why[0] ? c.why : "not '[tenant]', 'key = value' or a comment");
        goto out;
    }
    if (!check_whole(&c, path)) {
        snprintf(why, whylen, "%s: %s", path, c.why);
        goto out;
    }
    rc = 0;
out:
    if (rc)
        tdm_tenants_free(out);
    return rc;
}

void tdm_tenants_free(tdm_tenants *ts)
{
    if (ts->v)
        memset(ts->v, 0, ts->n * sizeof(*ts->v));   /* the tokens do not outlive their use */
    free(ts->v);
    ts->v = NULL;
    ts->n = 0;
}

int tdm_tenants_keep_only(tdm_tenants *ts, const char *name)
{
    for (size_t i = 0; i < ts->n; i++) {
        if (strcmp(ts->v[i].name, name) != 0)
            continue;
        if (i != 0)
            memcpy(&ts->v[0], &ts->v[i], sizeof(ts->v[0]));
        /* The others' tokens do not stay in this process. */
        memset(&ts->v[1], 0, (ts->n - 1) * sizeof(ts->v[0]));
        ts->n = 1;
        return 0;
    }
    return -1;
}
