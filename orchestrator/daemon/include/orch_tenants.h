/* The tenants' tokens, from the servers' tenants file (configs/tenants.example.ini; its full
 * rules: docs/security.md and server/front/tenants_file.c).  The orchestrator reads only the
 * sections' names and their token or token_file; the server checks the other keys.  The same
 * rules as the server's for what it reads: a file group or others may read is refused, a token is
 * 16 to 256 printable characters. */
#ifndef TANDEM_ORCH_TENANTS_H
#define TANDEM_ORCH_TENANTS_H

#include <stdbool.h>
#include <stddef.h>

#include "orch_model.h"

#define ORCH_TOKEN_MIN 16
#define ORCH_TOKEN_MAX 256
#define ORCH_MAX_TENANTS 256

typedef struct orch_tenant {
    char name[ORCH_NAME_MAX];
    unsigned char token[ORCH_TOKEN_MAX];   /* zero-padded: a check reads every byte */
    size_t token_len;
} orch_tenant;

typedef struct orch_tenants {
    orch_tenant v[ORCH_MAX_TENANTS];
    int n;
} orch_tenants;

/* 0, or -1 with why naming the file and line or tenant. */
int orch_tenants_load(const char *path, orch_tenants *out, char *why, size_t whylen);
/* Whether token is tenant's: constant time over the padded token, whatever was presented; false
 * for a tenant the file does not name. */
bool orch_tenants_check(const orch_tenants *ts, const char *tenant, const char *token);
/* Zeroes the tokens. */
void orch_tenants_clear(orch_tenants *ts);

#endif
