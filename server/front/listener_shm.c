/* One shm guest: its region, its session, and the loop serving it. */
#include "listener.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "dispatch.h"
#include "log.h"
#include "session.h"
#include "shm_guest.h"
#include "tenants.h"

void tdm_listener_serve_shm(tdm_server *srv, int fd, const char *peer, long uid, int region_fd)
{
    tdm_shm_guest g;
    tdm_session *s = NULL;
    char why[300];
    int err, rc;

    memset(&g, 0, sizeof(g));
    if (region_fd >= 0) {   /* ---- a process per tenant (issue 16) ---- */
        rc = tdm_shm_conn_adopt(&g.conn, fd, region_fd, TDM_SHM_MAX_REGION, why, sizeof(why));
        close(region_fd);
    } else {
        rc = tdm_shm_conn_accept(&g.conn, fd, TDM_SHM_MAX_REGION, why, sizeof(why));
    }
    if (rc != 0) {
        tdm_log("refusing shm guest %s: %s (other sessions are unaffected)", peer, why);
        tdm_shm_conn_release(&g.conn);
        return;
    }
    err = tdm_session_create(srv, &s);
    if (err) {
        tdm_log("cannot open a session for %s (cudaError %d)", peer, err);
        goto out;
    }
    s->shm = &g;
    s->peer_uid = uid;
    snprintf(s->peer, sizeof(s->peer), "%s", peer);
    tdm_log("session %llu opened by %s (region %llu MiB)", (unsigned long long)s->id,
            peer, (unsigned long long)(g.conn.region.g.size >> 20));
    g.conn.limits = &s->wire;   /* ---- time limits on the wire (issue 16) ---- */
    tdm_rpc_end end = tdm_shm_serve(&tdm_dispatch_program, s, &g.conn, why, sizeof(why));
    tdm_log("session %llu (pid %d%s%s) closed: %s%s", (unsigned long long)s->id, s->pid,
            s->placement[0] ? ", placement " : "", s->placement, /* ---- on-boarding (issue 17) ---- */
            why, end == TDM_RPC_MALFORMED ? " (other sessions are unaffected)" : "");
    /* The session waits for its work first: the device may still read or
     * write the region until then. */
    tdm_tenants_release(s);
    tdm_session_destroy(s);
    tdm_shm_guest_release(srv, &g);
out:
    tdm_shm_conn_release(&g.conn);
}
