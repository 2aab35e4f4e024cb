/* Process-wide state of one tandem-server: the backend driving its GPU, the
 * logical arena, limits.  One per process; sessions point at it. */
#ifndef TANDEM_SERVER_SERVER_H
#define TANDEM_SERVER_SERVER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arena.h"
#include "backend.h"
#include "health.h"
#include "ipc_exports.h"
#include "session_hooks.h"
#include "session_stats.h"
#include "tcp_send.h"

#define TDM_DEFAULT_ARENA_BASE 0x200000000000ull  /* 32 TiB: free in both CPU and GPU VA on x86-64 */
#define TDM_DEFAULT_ARENA_SIZE (256ull << 30)

typedef struct tdm_server_config {
    const char *backend;         /* "cuda" or "sim" */
    int device;
    uint64_t arena_base, arena_size;
    uint64_t session_mem_quota;  /* bytes; 0 = no quota beyond the device */
    int max_sessions;
    int handshake_timeout_s;     /* a connection that sends nothing for this long is closed (0 = never) */
    uint32_t session_streams;    /* live streams per session (each has a server thread); 0 = no bound */
    uint32_t session_events;     /* live events per session; 0 = no bound */
    /* ---- host resources and time limits (issue 16) ---- */
    uint32_t session_modules;    /* modules and libraries loaded per session; 0 = no bound */
    uint64_t session_host_memory; /* host bytes a session holds (its code images); 0 = no bound */
    uint64_t host_budget;        /* host bytes all sessions hold together; 0 = no bound */
    uint32_t frame_timeout_s;    /* a peer stalled this long in the middle of a frame is cut off (0 = never) */
    uint32_t idle_timeout_s;     /* a session that sends nothing this long is closed (0 = never) */
    tdm_tx_mode tcp_send;        /* how lanes send downloads (--tcp-send, TANDEM_TCP_SEND; tcp_send.h) */
    unsigned tcp_down_bufs;      /* a session's download staging buffers (TANDEM_TCP_DOWN_BUFS; 0: 4) */
    const char *sim_mps_domain;  /* sim backend: MPS domain name, or NULL */
    const char *mps_mode;        /* cuda backend: NULL, "start" or "attach" (mps.h) */
    const char *mps_dir;         /* --mps attach DIR / --mps-run-dir */
    const char *standby_sock;    /* active: the standby's mirror socket (--standby) */
    const char *standby_listen;  /* standby: where actives connect (--standby-listen) */
    const char *failback_from;   /* a new active: take the sessions of the standby
                                  * listening there (--failback-from) */
    /* ---- tenants (issue 16) ---- */
    struct tdm_tenants *tenants; /* --tenants: who may open sessions, and their bounds (front/tenants.h);
                                  * NULL: anyone who reaches the server, with the defaults above */
    uint64_t session_id_base;    /* its first session's id (0: 1); a tenant's process of a server
                                  * with a process per tenant numbers from its own (isolate.h) */
    /* ---- SM shares (issue 17): docs/sm-shares.md ---- */
    unsigned session_sms;        /* a new session's SM share (--session-sms; 0: the whole device) */
    unsigned sim_sms;            /* sim: the device's SMs (--sim-sms; 0: 132) */
    unsigned sm_window_first;    /* --sm-window: the first SM this server's shares may take */
    unsigned sm_window_sms;      /* ... and how many (0: the whole device) */
    uint32_t sim_wave_us;        /* sim: modelled time of a wave of blocks (--sim-wave-us; 0: no model) */
    uint64_t test_share_work;    /* test hook: a session's share becomes test_share_sms as its */
    unsigned test_share_sms;     /* test_share_work-th piece of work is queued (0 = never) */
    long crash_after_calls;      /* test hook: die by SIGKILL at this call (0 = never) */
    bool crash_before_reply;     /* ... after serving it, before its reply, instead */
} tdm_server_config;

typedef struct tdm_server {
    const tdm_backend_ops *ops;
    tdm_backend *be;
    tdm_arena *arena;
    tdm_server_config cfg;
    tdm_device_info info;
    int driver_version;
    atomic_uint_fast64_t next_session_id;
    atomic_int live_sessions;
    const tdm_session_hooks *hooks; /* who hears of sessions' changes (session_hooks.h); NULL: nobody */
    void *hooks_ctx;
    atomic_long calls;           /* calls served, for crash_after_calls */
    pthread_mutex_t endpoint_lock;
    char endpoint[160];          /* tcp://HOST:PORT once the listener is up */
    char shm_endpoint[160];      /* shm:NAME when it also serves shm, else "" */
    /* ---- health (issue 14) ---- */
    tdm_health health;           /* its device context's (health.h) */
    /* ---- ipc (issue 14) ---- */
    tdm_ipc_table ipc;           /* what its sessions exported (ipc_exports.h) */
    /* ---- host resources (issue 16) ---- */
    _Atomic uint64_t host_held;  /* host bytes its sessions hold, within cfg.host_budget */
    /* ---- control plane (issue 17): session_stats.h, server/control ---- */
    pthread_mutex_t sessions_lock;
    struct tdm_session *sessions;          /* its live sessions, for the control socket's stats */
    atomic_uint_fast64_t takeovers;        /* sessions resumed here after their active died */
    struct tdm_reservations *reservations; /* --control: placements waiting for their HELLO; else NULL */
    tdm_ended_keys ended;                  /* under sessions_lock: keys of sessions closed since stats */
} tdm_server;

/* A size as options and the tenants file give it: a number (decimal, 0x hex), optionally
 * followed by K, M or G (binary).  0, or -1 when s is not one (parse_size.c). */
int tdm_parse_size(const char *s, uint64_t *out);
/* --host-budget's default: half the host's physical memory (0 when unknown: no budget). */
uint64_t tdm_default_host_budget(void);

/* 0 on success; otherwise a cudaError_t after logging why. */
int tdm_server_start(tdm_server *srv, const tdm_server_config *cfg);
void tdm_server_stop(tdm_server *srv);
/* The front of a server with a process per tenant (front/isolate.h): a tdm_server with the
 * configuration and endpoints only; it never touches a device, so it has no backend, arena or
 * sessions, and nothing to stop. */
void tdm_server_init_front(tdm_server *srv, const tdm_server_config *cfg);
/* The server is stopping and `sessions` are still open: ends their device work (backend op
 * end_work), so that a session waiting for a long kernel returns at once instead of holding
 * the stop up (issue 16), and says so in the log. */
void tdm_server_end_work(tdm_server *srv, int sessions);
/* Installs the hooks every session of this server calls from now on;
 * before the first session, once. */
void tdm_server_set_hooks(tdm_server *srv, const tdm_session_hooks *hooks, void *ctx);
/* The listener's addresses for guests, once bound (the standby tells
 * actives): tcp://HOST:PORT, and shm:NAME or NULL. */
void tdm_server_set_endpoint(tdm_server *srv, const char *tcp, const char *shm);
/* Copies the endpoints into tcp and shm ("" when it serves no shm); false
 * while there are none yet. */
bool tdm_server_endpoint(tdm_server *srv, char *tcp, char *shm, size_t len);

/* ---- health (issue 14) ---- */
/* Replaces the backend by a fresh one (a new device context) with the same
 * arena; only when no session uses the backend.  0 or a cudaError_t. */
int tdm_server_rebuild_context(tdm_server *srv);

#endif
