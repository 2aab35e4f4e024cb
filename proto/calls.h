/* The C view of the procedure table (calls.def): what every layer asks of a
 * remoted call.  The guest's classifiers (journal, releases, idleness), the
 * server's dispatch table and the docs' call table all read this, so a call's
 * properties are written once, in calls.def.
 *
 * A file that needs more than tdm_call_info gives (the server naming its
 * handlers, say) expands calls.def itself with its own TDM_CALL; the
 * TDM_CALL_C_* helpers below turn a row's columns into C. */
#ifndef TANDEM_PROTO_CALLS_H
#define TANDEM_PROTO_CALLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rpc/rpc.h>

#include "tandem_rpc.h"
#include "xdr_extra.h"

/* calls.def's "no argument / no result".  rpcgen sees `void` (tandem.x
 * defines tdm_void so); C needs an object type for sizeof. */
typedef char tdm_void;
#define xdr_tdm_void tdm_xdr_void

typedef enum { TDM_CALL_SYNC, TDM_CALL_ONEWAY } tdm_call_mode;
typedef enum { TDM_IDLE_NEVER, TDM_IDLE_ALWAYS, TDM_IDLE_LEGACY_STREAM, TDM_IDLE_ONLY_STREAM } tdm_call_idle;
typedef enum { TDM_PROGRESS_HIDDEN, TDM_PROGRESS_SHOWN } tdm_call_progress;
typedef enum { TDM_EFFECT_NONE, TDM_EFFECT_CREATES, TDM_EFFECT_RELEASES } tdm_call_effect;
typedef enum {
    TDM_RES_NONE,
    TDM_RES_MEMORY,     /* device memory (cudaMalloc) */
    TDM_RES_PINNED,     /* host memory pinned for the device (shm region) */
    TDM_RES_STREAM,
    TDM_RES_EVENT,
    TDM_RES_MODULE,
    TDM_RES_SESSION,    /* everything the session holds */
    TDM_RES_ARRAY,      /* CUDA arrays and mipmapped arrays */
    TDM_RES_TEXOBJ,     /* texture and surface objects */
    TDM_RES_GRAPH,      /* graphs, their nodes and executable graphs */
    TDM_RES_MEMPOOL,    /* memory pools */
    TDM_RES_HOSTMAP,    /* host memory the device reads and writes (mapped, managed) */
} tdm_call_resource;
typedef enum {
    TDM_MIRROR_NONE,        /* nothing a standby needs */
    TDM_MIRROR_REPLAY,      /* journaled by the guest, replayed after a takeover */
    TDM_MIRROR_CONTROL,     /* takeover and session control */
    TDM_MIRROR_REREGISTER,  /* the guest registers it again with the new server */
    TDM_MIRROR_ON_FEED,     /* the server sends its standby a feed message */
    TDM_MIRROR_UNPROTECT,   /* no standby can have it: serving it ends the session's protection */
} tdm_call_mirror;

#define TDM_STREAM_NONE (-1)   /* stream_offset: the call names no stream */
#define TDM_STREAM_SELF (-2)   /* stream_offset: the argument is the stream handle */

typedef struct tdm_call_info {
    const char *name;          /* "TDM_MALLOC" */
    uint32_t proc;
    tdm_call_mode mode;
    xdrproc_t xargs, xres;     /* xres NULL for one-way calls */
    size_t args_size, res_size;
    int stream_offset;         /* TDM_STREAM_NONE, TDM_STREAM_SELF or the offset of the args' stream */
    tdm_call_idle idle;
    tdm_call_progress progress;
    tdm_call_effect effect;
    tdm_call_resource resource;
    tdm_call_mirror mirror;
    const char *feed_msg;      /* TDM_MIRROR_ON_FEED: the message's name ("MAP" for TDM_M_MAP), else NULL */
} tdm_call_info;

/* Every row of calls.def, in its order. */
extern const tdm_call_info tdm_calls[];
extern const size_t tdm_ncalls;

/* The row of procedure `proc`, or NULL for one the protocol does not have. */
const tdm_call_info *tdm_call_find(uint32_t proc);
/* The stream handle a call's arguments name; false when it names none. */
bool tdm_call_stream(const tdm_call_info *c, const void *args, uint64_t *stream);
/* Short lower-case names of the enum values, for logs and the docs table. */
const char *tdm_call_idle_name(tdm_call_idle v);
const char *tdm_call_effect_name(tdm_call_effect v);
const char *tdm_call_resource_name(tdm_call_resource v);
const char *tdm_call_mirror_name(tdm_call_mirror v);

/* ---- expanding calls.def in C (see calls.c for a use) ---- */
#define TDM_CALL_C_MODE(MODE) TDM_CALL_##MODE
#define TDM_CALL_C_XARGS(ARG) ((xdrproc_t)xdr_##ARG)
#define TDM_CALL_C_XRES(MODE, RES) TDM_CALL_C_XRES_##MODE(RES)
#define TDM_CALL_C_XRES_SYNC(RES) ((xdrproc_t)xdr_##RES)
#define TDM_CALL_C_XRES_ONEWAY(RES) NULL
#define TDM_CALL_C_RES_SIZE(MODE, RES) TDM_CALL_C_RES_SIZE_##MODE(RES)
#define TDM_CALL_C_RES_SIZE_SYNC(RES) sizeof(RES)
#define TDM_CALL_C_RES_SIZE_ONEWAY(RES) 0
#define TDM_CALL_C_STREAM(STREAM, ARG) TDM_CALL_C_STREAM_##STREAM(ARG)
#define TDM_CALL_C_STREAM_none(ARG) TDM_STREAM_NONE
#define TDM_CALL_C_STREAM_self(ARG) TDM_STREAM_SELF
#define TDM_CALL_C_STREAM_stream(ARG) ((int)offsetof(ARG, stream))
#define TDM_CALL_C_ENUM(V) TDM_##V             /* IDLE_NEVER -> TDM_IDLE_NEVER, RES_MEMORY -> TDM_RES_MEMORY */
/* MIRROR: MIRROR_FEED(MSG) -> TDM_MIRROR_ON_FEED, the others their enum value. */
#define TDM_CALL_C_MIRROR(M) TDM_CALL_C_MIRROR_##M
#define TDM_CALL_C_MIRROR_MIRROR_NONE TDM_MIRROR_NONE
#define TDM_CALL_C_MIRROR_MIRROR_REPLAY TDM_MIRROR_REPLAY
#define TDM_CALL_C_MIRROR_MIRROR_CONTROL TDM_MIRROR_CONTROL
#define TDM_CALL_C_MIRROR_MIRROR_REREGISTER TDM_MIRROR_REREGISTER
#define TDM_CALL_C_MIRROR_MIRROR_FEED(MSG) TDM_MIRROR_ON_FEED
#define TDM_CALL_C_MIRROR_MIRROR_UNPROTECT TDM_MIRROR_UNPROTECT
#define TDM_CALL_C_FEED_MSG(M) TDM_CALL_C_FEED_MSG_##M
#define TDM_CALL_C_FEED_MSG_MIRROR_NONE NULL
#define TDM_CALL_C_FEED_MSG_MIRROR_REPLAY NULL
#define TDM_CALL_C_FEED_MSG_MIRROR_CONTROL NULL
#define TDM_CALL_C_FEED_MSG_MIRROR_REREGISTER NULL
#define TDM_CALL_C_FEED_MSG_MIRROR_FEED(MSG) #MSG
#define TDM_CALL_C_FEED_MSG_MIRROR_UNPROTECT NULL

/* ---- device output (issue 14) ---- */
/* Whether a reply to c may carry TDM_ERR_OUTPUT_PENDING in its err: a
 * synchronous call whose result starts with err, other than the fetch
 * itself and session control (whose err the takeover path reads). */
bool tdm_call_carries_output_flag(const tdm_call_info *c);

#endif
