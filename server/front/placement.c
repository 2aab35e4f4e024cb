#include "placement.h"

#include <string.h>

#include <driver_types.h>

#include "log.h"
#include "placement_key.h"
#include "reservations.h"
#include "session_stats.h"

/* The orchestrator's reservation of s's key, when this server has one (--control): its SM share
 * and memory quota apply from now on.  A key with no reservation (none made, expired, or a
 * RESUME on a standby the orchestrator reserved nothing on) keeps the server's defaults, which
 * the orchestrator's next set_share corrects.  A reservation made for another tenant is
 * refused: a key a guest learned is no way into another tenant's share. */
static int apply_reservation(tdm_session *s)
{
    tdm_reservation r;
    uint64_t ns = 0;
    int err;

    if (!s->srv->reservations || tdm_reservations_take(s->srv->reservations, s->placement, &r) != 0) {
        tdm_log_session(s->id, "placement %s: no reservation here; the server's defaults apply", s->placement);
        return 0;
    }
    if (s->tenant_name && strcmp(r.tenant, s->tenant_name) != 0) {
        tdm_log_session(s->id, "%s refused: placement %s was reserved for tenant %s, not %s", s->peer, s->placement,
                        r.tenant, s->tenant_name);
        return cudaErrorInvalidValue;
    }
    if (r.memory_mib) {
        uint64_t quota = r.memory_mib << 20;
        if (s->bounds.mem_quota == 0 || quota < s->bounds.mem_quota) {
            s->bounds.mem_quota = quota;   /* the tenant's own bound stays when it is smaller */
            s->bounds.mem_quota_placed = true;
        }
    }
    err = tdm_session_set_sm_share(s, (unsigned)r.sm, &ns);
    if (err)
        return err;   /* logged there, with the reason */
    tdm_log_session(s->id, "placement %s: reservation taken: %u SMs, memory quota %llu MiB", s->placement,
                    tdm_session_sm_share(s), (unsigned long long)(s->bounds.mem_quota >> 20));
    return 0;
}

int tdm_placement_take(tdm_session *s, const tdm_placement *key)
{
    size_t len = key->tdm_placement_len;
    char taken[TDM_PLACEMENT_KEY_SIZE];

    tdm_session_set_placement(s, "");
    if (len == 0)
        return 0;
    /* Never logged as sent: a key from an untrusted guest could carry anything into the log. */
    if (!tdm_placement_key_ok(key->tdm_placement_val, len)) {
        tdm_log_session(s->id, "%s refused: its placement key (%zu bytes) is not 1 to %d letters, digits, '.', '_', "
                        "':' or '-'", s->peer, len, TDM_MAX_PLACEMENT);
        return cudaErrorInvalidValue;
    }
    memcpy(taken, key->tdm_placement_val, len);
    taken[len] = 0;
    /* Under the sessions lock: the control socket's stats reads it from its own thread. */
    tdm_session_set_placement(s, taken);
    tdm_log_session(s->id, "%s has placement %s", s->peer, s->placement);
    return apply_reservation(s);
}
