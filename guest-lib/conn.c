#include "conn.h"

#include <string.h>

#include "calls.h"
#include "log.h"

int tdm_conn_call(tdm_conn *c, uint32_t proc, void *args, void *res)
{
    const tdm_call_info *call = tdm_call_find(proc);

    return call ? c->t->ops->call(c->t, proc, call->xargs, args, call->xres, res) : TDM_T_REJECTED;
}

int tdm_conn_post(tdm_conn *c, uint32_t proc, void *args)
{
    const tdm_call_info *call = tdm_call_find(proc);

    return call ? c->t->ops->post(c->t, proc, call->xargs, args) : TDM_T_REJECTED;
}

cudaError_t tdm_conn_lost_error(const tdm_conn *c)
{
    return c->lost_err ? c->lost_err : cudaErrorDevicesUnavailable;
}

/* ---- on-boarding (issue 17) ---- */
tdm_placement tdm_conn_placement(tdm_conn *c)
{
    return (tdm_placement){ .tdm_placement_len = (u_int)strlen(c->placement), .tdm_placement_val = c->placement };
}

cudaError_t tdm_conn_fail(tdm_conn *c, const char *why)
{
    if (!c->broken)
        tdm_log("%s", why);
    c->broken = true;
    return tdm_conn_lost_error(c);
}

int tdm_conn_reconnect(tdm_conn *c, const char *to, char *err, size_t len)
{
    c->gen++;
    if (tdm_transport_shm_region(c->t))
        return tdm_transport_shm_reattach(c->t, to, err, len);
    if (c->t)
        c->t->ops->close(c->t);
    c->t = NULL;
    return tdm_transport_open(to, &c->t, err, len);
}

void tdm_conn_drop(tdm_conn *c)
{
    if (c->t && tdm_transport_shm_region(c->t)) {
        tdm_transport_shm_drop(c->t);
    } else if (c->t) {
        c->t->ops->close(c->t);
        c->t = NULL;
    }
}
