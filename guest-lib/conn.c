#include "conn.h"

#include "log.h"

cudaError_t tdm_conn_lost_error(const tdm_conn *c)
{
    return c->lost_err ? c->lost_err : cudaErrorDevicesUnavailable;
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
