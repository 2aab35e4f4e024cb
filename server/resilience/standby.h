/* The standby: a server outside MPS that mirrors the sessions of active
 * servers on the same GPU and takes a session over when its active dies
 * (docs/takeover.md).
 *
 * Actives connect to a unix socket (--standby-listen PATH) and feed it
 * mirror_wire.h messages.  The standby imports every allocation at the same
 * logical address, loads the same modules and creates the same streams and
 * events under the same handles, and launches nothing.  When a feed ends
 * (the active died), its sessions wait to be resumed by their guests; a
 * session nobody resumes within a minute is dropped. */
#ifndef TANDEM_RESILIENCE_STANDBY_H
#define TANDEM_RESILIENCE_STANDBY_H

#include <stdbool.h>
#include <stdint.h>

#include "server.h"

struct tdm_session;
typedef struct tdm_standby tdm_standby;

/* A new active server asks for this server's sessions: mirror them to the
 * standby socket `path` and hand each over.  0, or -1 after logging why. */
typedef int (*tdm_standby_fail_back_fn)(void *ctx, const char *path);

/* Listens for active servers on unix socket sock_path.  0, or -errno. */
int tdm_standby_start(tdm_standby **out, tdm_server *srv, const char *sock_path, tdm_standby_fail_back_fn fail_back,
                      void *fail_back_ctx);
/* True when nothing of it is left; false when a feed thread still runs
 * (it and what it uses stay until the process ends). */
bool tdm_standby_stop(tdm_standby *sb);

/* TDM_RESUME: gives the connection's fresh session `s` the state of the
 * mirrored session (id, token) at the epoch its active reached (`epoch` or
 * `epoch_sent`, told in *resumed), after restoring the shadows of that
 * epoch.  cudaSuccess, or an error after logging why (unknown session,
 * wrong token, its active still alive, a mirror that diverged). */
int tdm_standby_resume(tdm_standby *sb, struct tdm_session *s, uint64_t id, uint64_t token, uint64_t epoch,
                       uint64_t epoch_sent, uint64_t *resumed, int *policy);
/* The guest of a successful tdm_standby_resume has its reply (its next call
 * came, so it knows this server's own standby, if any), or is gone. */
void tdm_standby_resume_done(tdm_standby *sb);
/* Before a resumed session replays: waits until every session of the
 * actives that died has been resumed (or max_wait_s after the last death),
 * so that each guest has its reply, and with it this server's own standby,
 * before any replay could fault this server too. */
void tdm_standby_settle(tdm_standby *sb, double max_wait_s);
/* --failback-from: asks the server whose standby socket is `from` to hand
 * its sessions to this one, whose standby side listens on `my_listen`.
 * 0, or -1 after logging why. */
int tdm_standby_ask_fail_back(const char *from, const char *my_listen);

#endif
