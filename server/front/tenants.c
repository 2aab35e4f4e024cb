/* Admitting sessions by their tenant's token (issue 16): the check at HELLO and RESUME, the
 * tenant's bounds and its count of sessions.  The file is read by tenants_file.c. */
#include "tenants.h"

#include <string.h>

#include <driver_types.h>

#include "log.h"

bool tdm_tenant_token_matches(const tdm_tenant *t, const void *token, uint32_t len)
{
    unsigned char given[TDM_MAX_TOKEN] = { 0 };
    /* volatile: the compiler may not turn the sum of differences into a loop that stops at the
     * first one, which would tell a guesser by the time taken how many bytes were right. */
    volatile unsigned char diff = 0;

    if (len > sizeof(given))
        len = sizeof(given);   /* XDR bounds it already; this only keeps the copy in bounds */
    if (len)
        memcpy(given, token, len);   /* an empty token comes as NULL */
    for (size_t i = 0; i < sizeof(given); i++)
        diff |= given[i] ^ t->token[i];
    /* Padding alone cannot tell "abc" from "abc\0": the lengths must match too. */
    uint32_t dl = len ^ t->token_len;
    diff |= (unsigned char)(dl | dl >> 8 | dl >> 16 | dl >> 24);
    memset(given, 0, sizeof(given));
    return diff == 0 && t->token_len > 0;
}

tdm_tenant *tdm_tenants_find(tdm_tenants *ts, const void *token, uint32_t len)
{
    tdm_tenant *found = NULL;

    /* No early exit: a match on the first tenant takes as long as one on the last, or none. */
    for (size_t i = 0; i < ts->n; i++)
        if (tdm_tenant_token_matches(&ts->v[i], token, len))
            found = &ts->v[i];
    return found;
}

/* One more session for t, unless it holds its max_sessions already. */
static bool enter(tdm_tenant *t)
{
    int now = atomic_load(&t->live);

    do
        if (t->max_sessions > 0 && now >= t->max_sessions)
            return false;
    while (!atomic_compare_exchange_weak(&t->live, &now, now + 1));
    return true;
}

int tdm_tenants_admit(tdm_tenants *ts, tdm_session *s, const tdm_token *token)
{
    const tdm_server_config *cfg = &s->srv->cfg;
    tdm_tenant *t;

    if (!ts)
        return 0;
    /* A second HELLO on the session (a guest starting over) is admitted anew. */
    tdm_tenants_release(s);
    t = tdm_tenants_find(ts, token->tdm_token_val, token->tdm_token_len);
    if (!t) {
        tdm_log_session(s->id, "%s refused: %s (--tenants)", s->peer,
                        token->tdm_token_len ? "its token is no tenant's" : "it presented no token");
        return cudaErrorNoDevice;
    }
    if (t->uid >= 0 && s->peer_uid >= 0 && s->peer_uid != t->uid) {
        tdm_log_session(s->id, "%s refused: it runs as uid %ld, and tenant %s's shm guests must run as uid %ld",
                        s->peer, s->peer_uid, t->name, t->uid);
        return cudaErrorNoDevice;
    }
    if (!enter(t)) {
        tdm_log_session(s->id, "%s refused: tenant %s holds %d sessions (max_sessions of tenant %s)", s->peer,
                        t->name, t->max_sessions, t->name);
        return cudaErrorDevicesUnavailable;
    }
    s->tenant = t;
    s->tenant_name = t->name;
    s->bounds = (tdm_session_bounds){
        .mem_quota = t->has_quota ? t->bounds.mem_quota : cfg->session_mem_quota,
        .streams = t->has_streams ? t->bounds.streams : cfg->session_streams,
        .events = t->has_events ? t->bounds.events : cfg->session_events,
        .modules = t->has_modules ? t->bounds.modules : cfg->session_modules,
        .host_memory = t->has_host_memory ? t->bounds.host_memory : cfg->session_host_memory,
        .idle_timeout_s = t->has_idle_timeout ? t->bounds.idle_timeout_s : cfg->idle_timeout_s,
    };
    s->wire.idle_s = s->bounds.idle_timeout_s;
    tdm_session_usage_enter(s, &t->usage);
    tdm_log_session(s->id, "%s is tenant %s", s->peer, t->name);
    return 0;
}

void tdm_tenants_release(tdm_session *s)
{
    if (!s->tenant)
        return;
    atomic_fetch_sub(&s->tenant->live, 1);
    tdm_session_usage_leave(s);
    s->tenant = NULL;
    s->tenant_name = NULL;
}

bool tdm_tenants_allow_call(const tdm_session *s, uint32_t proc)
{
    return !s->srv->cfg.tenants || s->tenant || proc == TDM_HELLO || proc == TDM_RESUME;
}
