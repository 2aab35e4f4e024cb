/* The server's IPC export table (docs/ipc.md): what sessions exported with
 * cudaIpcGetMemHandle/cudaIpcGetEventHandle, for other sessions of this
 * server to open.
 *
 * An export is held by its owner (until the owner frees the memory or
 * destroys the event, or ends) and by every open of it; it dies when the
 * last holder lets go, and the caller that learns so releases what it
 * names.  Handles are minted here: a handle names the server (a random
 * instance nonce), the export (an id never used again) and carries the
 * export's random secret, so a guest can neither forge one nor reach an
 * export that died.  The table knows nothing of sessions beyond their ids;
 * it is one per server, locked inside. */
#ifndef TANDEM_SERVER_IPC_EXPORTS_H
#define TANDEM_SERVER_IPC_EXPORTS_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backend.h"
#include "range_map.h"

#define TDM_IPC_HANDLE_LEN 64
#define TDM_IPC_SECRET_LEN 16
/* Bounds: exports a session may own (live or kept for its importers), and
 * all exports of the server. */
#define TDM_IPC_MAX_EXPORTS_PER_SESSION 1024
#define TDM_IPC_MAX_EXPORTS 65536

typedef enum { TDM_IPC_MEM = 1, TDM_IPC_EVENT = 2,
               TDM_IPC_POOL = 3 /* ---- pool sharing (issue 14): a memory pool ---- */ } tdm_ipc_kind;

typedef struct tdm_ipc_export {
    tdm_ipc_kind kind;
    uint64_t id;                 /* in its handle; never reused */
    uint8_t secret[TDM_IPC_SECRET_LEN];
    uint64_t owner;              /* the exporting session's id (kept after it let go: bounds) */
    bool owner_holds;            /* the owner still has the memory or event */
    bool owner_alive;            /* the owner's session has not ended */
    uint32_t opens;              /* holds of importers */
    /* What it names; fixed once made, so holders read it without the lock. */
    tdm_range range;             /* TDM_IPC_MEM: the owner's allocation */
    tdm_bevent *ev;              /* TDM_IPC_EVENT */
    unsigned ev_flags;
    /* ---- pool sharing (issue 14) ---- */
    /* TDM_IPC_POOL: the owner's pool handle.  TDM_IPC_MEM: the pool whose
     * pointer export it is (0: a cudaIpcGetMemHandle export); set under
     * the table's lock by tdm_ipc_mark_pool_ptr. */
    uint64_t pool;
} tdm_ipc_export;

typedef struct tdm_ipc_table {
    pthread_mutex_t lock;
    uint8_t nonce[16];           /* this server instance's: a handle of another server is refused */
    tdm_ipc_export **v;
    size_t n, cap;
    uint64_t next_id;
} tdm_ipc_table;

/* 0, or -errno (no randomness, no memory). */
int tdm_ipc_table_init(tdm_ipc_table *t);
/* Frees the records; what live exports name is the backend's, gone with it. */
void tdm_ipc_table_destroy(tdm_ipc_table *t);

/* The owner's export of this memory range (r->addr) or event (ev): the
 * existing one if the owner exported it already (natively the same handle
 * comes back), else a new one.  Writes its handle into `handle`.
 * cudaErrorMemoryAllocation past the bounds. */
int tdm_ipc_export_mem(tdm_ipc_table *t, uint64_t owner, const tdm_range *r, uint8_t handle[TDM_IPC_HANDLE_LEN],
                       tdm_ipc_export **out);
int tdm_ipc_export_event(tdm_ipc_table *t, uint64_t owner, tdm_bevent *ev, unsigned flags,
                         uint8_t handle[TDM_IPC_HANDLE_LEN], tdm_ipc_export **out);
/* The owner's live export of the memory starting at addr, or NULL. */
tdm_ipc_export *tdm_ipc_owned_mem(tdm_ipc_table *t, uint64_t owner, uint64_t addr);

/* Opens the export a handle names for session `opener`: one more hold.
 * cudaErrorInvalidResourceHandle for a handle that names no live export of
 * this kind on this server (forged, truncated, stale, another server's),
 * cudaErrorDeviceUninitialized ("invalid device context", as the driver
 * answers a process opening its own export) when the opener owns it. */
int tdm_ipc_open(tdm_ipc_table *t, uint64_t opener, const uint8_t handle[TDM_IPC_HANDLE_LEN], tdm_ipc_kind kind,
                 tdm_ipc_export **out);
/* An importer lets go of one hold.  True when the export died: the caller
 * releases what it named (it is out of the table; free it with
 * tdm_ipc_export_free). */
bool tdm_ipc_close(tdm_ipc_table *t, tdm_ipc_export *e);
/* The owner lets go (cudaFree, cudaEventDestroy, its session ending).
 * True when the export died, as for tdm_ipc_close. */
bool tdm_ipc_owner_drops(tdm_ipc_table *t, tdm_ipc_export *e);
/* The owner's session ended: its exports kept alive for importers are
 * no longer counted as its memory. */
void tdm_ipc_owner_ended(tdm_ipc_table *t, uint64_t owner);
/* Bytes of memory the owner freed that its importers still hold (they
 * still count in its quota). */
uint64_t tdm_ipc_kept_bytes(tdm_ipc_table *t, uint64_t owner);
void tdm_ipc_export_free(tdm_ipc_export *e);

/* ---- pool sharing (issue 14) ---- */
/* The owner's export of its pool (docs/ipc.md "Sharing memory pools"):
 * the existing one or a new one, as tdm_ipc_export_mem. */
int tdm_ipc_export_pool(tdm_ipc_table *t, uint64_t owner, uint64_t pool, uint8_t handle[TDM_IPC_HANDLE_LEN],
                        tdm_ipc_export **out);
/* The owner's live export of its pool, or NULL. */
tdm_ipc_export *tdm_ipc_owned_pool(tdm_ipc_table *t, uint64_t owner, uint64_t pool);
/* Marks a memory export as a pointer export of `pool` (the first pool to
 * claim it keeps it); the pool it belongs to, read under the lock. */
uint64_t tdm_ipc_mark_pool_ptr(tdm_ipc_table *t, tdm_ipc_export *e, uint64_t pool);

#endif
