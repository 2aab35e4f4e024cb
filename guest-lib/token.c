#include "token.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Sets t from text; a token the protocol cannot carry is refused here rather than cut short,
 * which would only be refused by the server with a less helpful message. */
static int set(tdm_guest_token *t, const char *text, const char *from, char *why, size_t whylen)
{
    size_t n = strlen(text);

    if (n > sizeof(t->bytes)) {
        snprintf(why, whylen, "the token in %s is longer than %zu bytes", from, sizeof(t->bytes));
        return -1;
    }
    memcpy(t->bytes, text, n);
    t->len = (uint32_t)n;
    return 0;
}

int tdm_guest_token_load(tdm_guest_token *t, char *why, size_t whylen)
{
    const char *env = getenv("TANDEM_TOKEN"), *path = getenv("TANDEM_TOKEN_FILE");
    char line[TDM_MAX_TOKEN + 2] = "";
    FILE *f;
    int rc;

    memset(t, 0, sizeof(*t));
    if (env && *env)
        return set(t, env, "TANDEM_TOKEN", why, whylen);
    if (!path || !*path)
        return 0;
    f = fopen(path, "r");
    if (!f) {
        snprintf(why, whylen, "cannot read TANDEM_TOKEN_FILE %s: %s", path, strerror(errno));
        return -1;
    }
    if (!fgets(line, sizeof(line), f))
        line[0] = 0;
    fclose(f);
    line[strcspn(line, "\r\n")] = 0;
    rc = set(t, line, "TANDEM_TOKEN_FILE", why, whylen);
    memset(line, 0, sizeof(line));
    return rc;
}

tdm_token tdm_guest_token_wire(tdm_guest_token *t)
{
    return (tdm_token){ .tdm_token_len = t->len, .tdm_token_val = t->bytes };
}
