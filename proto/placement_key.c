#include "placement_key.h"

bool tdm_placement_key_ok(const char *key, size_t len)
{
    if (len == 0 || len > TDM_MAX_PLACEMENT)
        return false;
    for (size_t i = 0; i < len; i++) {
        char c = key[i];
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                  c == '_' || c == ':' || c == '-';
        if (!ok)
            return false;
    }
    return true;
}
