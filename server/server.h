/* Process-wide state of one tandem-server: the backend driving its GPU, the
 * logical arena, limits.  One per process; sessions point at it. */
#ifndef TANDEM_SERVER_SERVER_H
#define TANDEM_SERVER_SERVER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "arena.h"
#include "backend.h"

#define TDM_DEFAULT_ARENA_BASE 0x200000000000ull  /* 32 TiB: free in both CPU and GPU VA on x86-64 */
#define TDM_DEFAULT_ARENA_SIZE (256ull << 30)

typedef struct tdm_server_config {
    const char *backend;         /* "cuda" or "sim" */
    int device;
    uint64_t arena_base, arena_size;
    uint64_t session_mem_quota;  /* bytes; 0 = no quota beyond the device */
    int max_sessions;
    const char *sim_mps_domain;  /* sim backend: MPS domain name, or NULL */
    const char *mps_mode;        /* cuda backend: NULL, "start" or "attach" (mps.h) */
    const char *mps_dir;         /* --mps attach DIR / --mps-run-dir */
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
} tdm_server;

/* 0 on success; otherwise a cudaError_t and a message on stderr. */
int tdm_server_start(tdm_server *srv, const tdm_server_config *cfg);
void tdm_server_stop(tdm_server *srv);

#endif
