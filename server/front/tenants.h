/* Tenants (issue 16): who may open a session on this server, by which credential, and how much
 * each may hold.  Loaded once at start from `--tenants FILE` (tenants_file.c); every HELLO and
 * RESUME presents a token that must be one of theirs (tenants.c).  Without a file the server is
 * open to whoever reaches it, as before (docs/security.md). */
#ifndef TANDEM_SERVER_TENANTS_H
#define TANDEM_SERVER_TENANTS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "session.h"
#include "tandem_rpc.h"

#define TDM_TENANT_NAME_MAX 64
#define TDM_TENANT_TOKEN_MIN 16    /* shorter tokens are refused at load: guessable */

typedef struct tdm_tenant {
    char name[TDM_TENANT_NAME_MAX];
    /* Zero-padded to the protocol's longest token so that a check reads every byte of it, whatever
     * was presented (tdm_tenant_token_matches). */
    unsigned char token[TDM_MAX_TOKEN];
    uint32_t token_len;
    /* The tenant's overrides of the server's per-session defaults; has_* false: the default. */
    bool has_quota, has_streams, has_events;
    bool has_modules, has_host_memory, has_idle_timeout;   /* ---- host resources (issue 16) ---- */
    tdm_session_bounds bounds;
    tdm_tenant_usage usage;        /* all its sessions hold, and its tenant_memory, tenant_host_memory */
    int max_sessions;              /* its sessions at once; 0 = no bound of its own */
    long uid;                      /* the only user its shm guests may run as; -1 = any */
    atomic_int live;               /* its sessions now */
} tdm_tenant;

typedef struct tdm_tenants {
    tdm_tenant *v;
    size_t n;
} tdm_tenants;

/* Reads the tenants file at path (INI: one [name] section per tenant; docs/security.md).  A file
 * (or token_file) that others may read or write, a malformed line, an unknown key, a weak or
 * duplicate token are refused: -1 with why (naming the line or the tenant), else 0. */
int tdm_tenants_load(const char *path, tdm_tenants *out, char *why, size_t whylen);
void tdm_tenants_free(tdm_tenants *ts);
/* A tenant's process of a server with a process per tenant (isolate.h) serves that tenant
 * alone: ts keeps only the tenant called name, so that any other token is refused there.
 * 0, or -1 when ts has no such tenant. */
int tdm_tenants_keep_only(tdm_tenants *ts, const char *name);

/* Whether token (len bytes) is t's.  Constant time: every byte of the padded token is compared,
 * whatever the length presented or where the first difference lies. */
bool tdm_tenant_token_matches(const tdm_tenant *t, const void *token, uint32_t len);
/* The tenant whose token this is, or NULL; every tenant is checked, so the time taken does not
 * say how far a guess got. */
tdm_tenant *tdm_tenants_find(tdm_tenants *ts, const void *token, uint32_t len);

/* HELLO and RESUME: admits session s for the tenant whose token it presented, applying the
 * tenant's bounds and counting it against the tenant's max_sessions.  0, or the error the guest
 * is answered with after a line naming the peer (never the token): cudaErrorNoDevice for a
 * credential that is no tenant's, cudaErrorDevicesUnavailable at the tenant's max_sessions.
 * Without tenants (ts NULL) every session is admitted with the server's defaults. */
int tdm_tenants_admit(tdm_tenants *ts, tdm_session *s, const tdm_token *token);
/* The session ends (or is admitted again): it no longer counts for its tenant. */
void tdm_tenants_release(tdm_session *s);
/* Whether s may make call proc now: with tenants, nothing but HELLO and RESUME before its
 * credential was accepted. */
bool tdm_tenants_allow_call(const tdm_session *s, uint32_t proc);

#endif
