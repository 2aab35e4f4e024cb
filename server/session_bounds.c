/* A bound on what a session holds (issue 16): host memory for its code images, counted for the
 * session, its tenant and the server; device memory counted for its tenant too.  A refusal
 * answers cudaErrorMemoryAllocation, as a GPU out of the resource does, and says in the log
 * whose limit it was and what was held, so an operator can tell a bound from a fault. */
#include "session.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <driver_types.h>

#include "log.h"

bool tdm_bound_admits(uint64_t held, uint64_t want, uint64_t limit)
{
    return !limit || (want <= limit && held <= limit - want);
}

bool tdm_bound_take(_Atomic uint64_t *held, uint64_t want, uint64_t limit)
{
    uint64_t now = atomic_load(held);

    do
        if (!tdm_bound_admits(now, want, limit))
            return false;
    while (!atomic_compare_exchange_weak(held, &now, now + want));
    return true;
}

int tdm_session_refuse_at_bound(tdm_session *s, const char *call, uint64_t held, const char *what, const char *key)
{
    char option[64];

    if (s->tenant_name) {
        tdm_log_session(s->id, "%s refused: the session of tenant %s holds %llu %s (session_%s of tenant %s)", call,
                        s->tenant_name, (unsigned long long)held, what, key, s->tenant_name);
    } else {
        /* The option is the key with dashes: session_host_memory, --session-host-memory. */
        snprintf(option, sizeof(option), "%s", key);
        for (char *c = option; *c; c++)
            if (*c == '_')
                *c = '-';
        tdm_log_session(s->id, "%s refused: the session holds %llu %s (--session-%s)", call, (unsigned long long)held,
                        what, option);
    }
    return cudaErrorMemoryAllocation;
}

/* A tenant's total would pass its bound. */
static int refuse_for_tenant(tdm_session *s, const char *call, uint64_t held, uint64_t n, const char *what,
                             const char *key)
{
    tdm_log_session(s->id, "%s refused: tenant %s's sessions hold %llu bytes of %s, %llu more would pass its bound "
                    "(%s of tenant %s)", call, s->tenant_name ? s->tenant_name : "?", (unsigned long long)held,
                    what, (unsigned long long)n, key, s->tenant_name ? s->tenant_name : "?");
    return cudaErrorMemoryAllocation;
}

int tdm_session_host_take(tdm_session *s, uint64_t n, const char *call)
{
    tdm_server *srv = s->srv;

    if (!tdm_bound_admits(s->host_held, n, s->bounds.host_memory))
        return tdm_session_refuse_at_bound(s, call, s->host_held, "bytes of host memory", "host_memory");
    if (s->usage && !tdm_bound_take(&s->usage->host, n, s->usage->host_limit))
        return refuse_for_tenant(s, call, atomic_load(&s->usage->host), n, "host memory", "tenant_host_memory");
    if (!tdm_bound_take(&srv->host_held, n, srv->cfg.host_budget)) {
        if (s->usage)
            atomic_fetch_sub(&s->usage->host, n);
        tdm_log_session(s->id, "%s refused: the server's sessions hold %llu bytes of host memory, %llu more for the "
                        "session%s%s would pass --host-budget %llu", call,
                        (unsigned long long)atomic_load(&srv->host_held), (unsigned long long)n,
                        s->tenant_name ? " of tenant " : "", s->tenant_name ? s->tenant_name : "",
                        (unsigned long long)srv->cfg.host_budget);
        return cudaErrorMemoryAllocation;
    }
    s->host_held += n;
    return 0;
}

void tdm_session_host_give(tdm_session *s, uint64_t n)
{
    s->host_held -= n;
    if (s->usage)
        atomic_fetch_sub(&s->usage->host, n);
    atomic_fetch_sub(&s->srv->host_held, n);
}

int tdm_session_mem_take(tdm_session *s, uint64_t n, const char *call)
{
    if (s->usage) {
        if (!call)
            atomic_fetch_add(&s->usage->mem, n);
        else if (!tdm_bound_take(&s->usage->mem, n, s->usage->mem_limit))
            return refuse_for_tenant(s, call, atomic_load(&s->usage->mem), n, "device memory", "tenant_memory");
    }
    s->mem_used += n;
    return 0;
}

void tdm_session_mem_give(tdm_session *s, uint64_t n)
{
    s->mem_used -= n;
    if (s->usage)
        atomic_fetch_sub(&s->usage->mem, n);
}

void tdm_session_usage_enter(tdm_session *s, tdm_tenant_usage *u)
{
    tdm_session_usage_leave(s);
    s->usage = u;
    if (!u)
        return;
    /* What it holds already counts, even past the bound: the bound refuses what comes next. */
    atomic_fetch_add(&u->mem, s->mem_used);
    atomic_fetch_add(&u->host, s->host_held);
}

void tdm_session_usage_leave(tdm_session *s)
{
    if (!s->usage)
        return;
    atomic_fetch_sub(&s->usage->mem, s->mem_used);
    atomic_fetch_sub(&s->usage->host, s->host_held);
    s->usage = NULL;
}

uint64_t tdm_default_host_budget(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);

    return pages > 0 && size > 0 ? (uint64_t)pages * (uint64_t)size / 2 : 0;
}
