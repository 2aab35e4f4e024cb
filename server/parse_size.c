/* Sizes as the operator writes them, on the command line and in the tenants file. */
#include <errno.h>
#include <stdlib.h>

#include "server.h"

int tdm_parse_size(const char *s, uint64_t *out)
{
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 0);

    if (errno || end == s || *s == '-')
        return -1;
    switch (*end) {
    case 'K': case 'k': v <<= 10; end++; break;
    case 'M': case 'm': v <<= 20; end++; break;
    case 'G': case 'g': v <<= 30; end++; break;
    default: break;
    }
    if (*end)
        return -1;
    *out = v;
    return 0;
}
