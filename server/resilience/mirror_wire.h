/* The mirror feed: how an active server tells its standby about every
 * session's device state (docs/takeover.md).
 *
 * One unix stream socket per active server.  A message is a fixed header
 * followed by `len` payload bytes; a message that carries physical memory
 * passes its POSIX file descriptor as SCM_RIGHTS with the header.  Messages
 * are one-way: the active writes each one before it answers the guest call
 * that caused it, and the kernel keeps what was written (fds included) for
 * the standby to read even after the active dies, so the standby has every
 * acknowledged change once it reads the feed to its end. */
#ifndef TANDEM_RESILIENCE_MIRROR_WIRE_H
#define TANDEM_RESILIENCE_MIRROR_WIRE_H

#include <stddef.h>
#include <stdint.h>

#define TDM_MIRROR_MAGIC 0x54444d4d49523031ull  /* "TDMMIR01" */
#define TDM_MIRROR_MAX_PAYLOAD (300u << 20)     /* a module image of up to 256 MiB plus names */

typedef enum {
    TDM_M_HELLO = 1,       /* a: arena base, b: arena size, c: magic.  The
                            * standby answers with a HELLO whose payload is
                            * the endpoints guests resume at, each ending in
                            * a NUL: tcp://HOST:PORT, then shm:NAME when it
                            * serves shm (or an error: a = 0, payload = why) */
    TDM_M_SESSION_OPEN,    /* a: resume token, b: policy */
    TDM_M_SESSION_CLOSE,
    TDM_M_MAP,             /* fd; a: address, b: mapped bytes, c: guest size */
    TDM_M_UNMAP,           /* a: address */
    TDM_M_SHADOW,          /* fd; a: shadow address, b: mapped bytes,
                            * c: address of the buffer it shadows, d: marker slot */
    TDM_M_MARKERS,         /* fd; a: address, b: mapped bytes */
    TDM_M_MODULE_LOAD,     /* a: module handle; payload below */
    TDM_M_MODULE_UNLOAD,   /* a: module handle */
    TDM_M_STREAM_CREATE,   /* a: handle, b: flags, c: priority */
    TDM_M_STREAM_DESTROY,  /* a: handle */
    TDM_M_EVENT_CREATE,    /* a: handle, b: flags */
    TDM_M_EVENT_DESTROY,   /* a: handle */
    TDM_M_RESET,           /* cudaDeviceReset: everything of the session released */
    TDM_M_GLOBALS_AREA,    /* fd; a: address, b: mapped bytes: where variables' shadows live */
    TDM_M_GLOBAL_SHADOW,   /* a: shadow address (two copies of b bytes), c: the variable's
                            * logical address, d: marker slots (even copy | odd copy << 32) */
    TDM_M_EPOCH,           /* a: the epoch the active reached (its variables are shadowed) */
    TDM_M_HANDOFF,         /* a: epoch.  Fail-back: the active quiesced the session at that
                            * epoch and hands it over; its guest resumes here now */
    TDM_M_FAILBACK,        /* instead of HELLO, from a new active server: "hand me your
                            * sessions"; payload: the unix socket its standby side listens
                            * on.  Answered with a HELLO (a = 1 done, a = 0 payload = why) */
    TDM_M_LIBRARY_GLOBAL,  /* a: library handle, c: the variable's address the guest was given;
                            * payload: its name (no NUL).  cuLibraryGetGlobal (issue 15) */
} tdm_mirror_type;

typedef struct tdm_mirror_hdr {
    uint32_t type;
    uint32_t len;          /* payload bytes */
    uint64_t session;
    uint64_t a, b, c, d;
} tdm_mirror_hdr;

/* Writes one message (and fd, when fd >= 0) in full.  0, or -errno. */
int tdm_mirror_send(int sock, const tdm_mirror_hdr *h, const void *payload, int fd);
/* Reads one message: *payload is malloc'ed (NULL when len is 0), *fd is the
 * descriptor it carried or -1.  0; 1 at a clean end of the feed (before a
 * message); -EPROTO for a malformed message (a header past the limits, a
 * feed that ends inside a message); -errno on another error.  On any
 * failure nothing is handed out: a descriptor that came along is closed. */
int tdm_mirror_recv(int sock, tdm_mirror_hdr *h, void **payload, int *fd);

/* Connects to the unix socket at `path`, sends one message and reads the
 * answer, which must be a TDM_M_HELLO (*reply_payload malloc'ed or NULL).
 * The connected socket, or -errno. */
int tdm_mirror_exchange(const char *path, const tdm_mirror_hdr *h, const void *payload, tdm_mirror_hdr *reply,
                        void **reply_payload);

/* TDM_M_MODULE_LOAD payload: the guest's module-load arguments as XDR
 * (tdm_module_load_args), then u32 nfuncs, nfuncs u64 function handles,
 * u32 nvars, nvars u64 variable addresses, as the active assigned them. */

#endif
