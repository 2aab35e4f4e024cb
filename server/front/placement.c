#include "placement.h"

#include <string.h>

#include <driver_types.h>

#include "log.h"
#include "placement_key.h"

int tdm_placement_take(tdm_session *s, const tdm_placement *key)
{
    size_t len = key->tdm_placement_len;

    s->placement[0] = 0;
    if (len == 0)
        return 0;
    /* Never logged as sent: a key from an untrusted guest could carry anything into the log. */
    if (!tdm_placement_key_ok(key->tdm_placement_val, len)) {
        tdm_log_session(s->id, "%s refused: its placement key (%zu bytes) is not 1 to %d letters, digits, '.', '_', "
                        "':' or '-'", s->peer, len, TDM_MAX_PLACEMENT);
        return cudaErrorInvalidValue;
    }
    memcpy(s->placement, key->tdm_placement_val, len);
    s->placement[len] = 0;
    tdm_log_session(s->id, "%s has placement %s", s->peer, s->placement);
    return 0;
}
