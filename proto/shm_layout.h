/* Layout of a shm transport region: one per session, shared by the guest
 * and the server.
 *
 * Everything is named by offsets from the start of the region, never by
 * pointers, so the same bytes work wherever each side maps them (a memfd in
 * two processes today, a VM's ivshmem BAR later).  Integers are in the
 * host's byte order (guest and server share the machine).
 *
 *   0                 header (one page): magic, version, sizes, geometry
 *   ring_off[0]       guest->server ring: tdm_shm_ring_ctl, then ring_cap[0] bytes
 *   ring_off[1]       server->guest ring: the same
 *   slots_off         nslots completion slots (tdm_shm_slot)
 *   data_off          data area: nslots chunks of data_size/nslots bytes
 *   host_off          host memory for cudaMallocHost/cudaHostAlloc
 *
 * The guest writes the header once before handing the region over; the
 * server reads it once, validates it and keeps its own copy.  After that the
 * server never reads geometry from the region again: a guest may scribble
 * over any of these bytes, and only its own session suffers. */
#ifndef TANDEM_PROTO_SHM_LAYOUT_H
#define TANDEM_PROTO_SHM_LAYOUT_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define TDM_SHM_MAGIC 0x31304d4853444d54ull  /* "TDMSHM01" */
#define TDM_SHM_VERSION 1u
#define TDM_SHM_HEADER_SIZE 4096u
#define TDM_SHM_RING_CTL_SIZE 256u
#define TDM_SHM_MIN_RING (4u << 10)
#define TDM_SHM_MAX_RING (64u << 20)
#define TDM_SHM_MAX_SLOTS 64u
#define TDM_SHM_NO_SLOT 0xffffffffu          /* copy without a completion */
#define TDM_SHM_MAX_REGION (64ull << 30)     /* the server refuses larger regions */

enum { TDM_SHM_G2S = 0, TDM_SHM_S2G = 1 };

/* A place one side sleeps on.  `sleeping` is set by the waiter before it
 * goes to sleep; the other side only makes the futex system call when it
 * sees it set, so the fast path costs no system call. */
typedef struct tdm_shm_waitpoint {
    _Atomic uint32_t seq;        /* the futex word: bumped by every wake */
    _Atomic uint32_t sleeping;   /* waiter announced it sleeps (or is about to) */
} tdm_shm_waitpoint;

/* Control block of one single-producer/single-consumer ring.  head and tail
 * count bytes since the start and never wrap in practice (2^64); the byte at
 * index i lives at i % cap.  Producer and consumer fields sit on their own
 * cache lines. */
typedef struct tdm_shm_ring_ctl {
    _Atomic uint64_t head;              /* written by the producer */
    uint8_t pad0[56];
    _Atomic uint64_t tail;              /* written by the consumer */
    uint8_t pad1[56];
    tdm_shm_waitpoint data_wait;        /* consumer sleeps here for frames */
    uint8_t pad2[56];
    tdm_shm_waitpoint space_wait;       /* producer sleeps here for room */
    uint8_t pad3[56];
} tdm_shm_ring_ctl;

/* Frames in a ring: an 8-byte header, then `len` payload bytes, padded to
 * 8.  A message (one ONC RPC call or reply, XDR-encoded) is one or more
 * frames; the last has TDM_SHM_FRAME_LAST. */
typedef struct tdm_shm_frame_hdr {
    uint32_t len;
    uint32_t flags;
} tdm_shm_frame_hdr;
#define TDM_SHM_FRAME_LAST 1u

/* Completion of a copy that asked for one: the server writes err, then
 * done = the copy's ticket, then wakes the guest if it sleeps. */
typedef struct tdm_shm_slot {
    _Atomic uint32_t done;
    _Atomic int32_t err;
    tdm_shm_waitpoint wait;
    uint8_t pad[48];
} tdm_shm_slot;

typedef struct tdm_shm_header {
    uint64_t magic;
    uint32_t version;
    uint32_t header_size;
    uint64_t region_size;
    uint64_t ring_off[2];
    uint64_t ring_cap[2];               /* powers of two */
    uint64_t slots_off;
    uint32_t nslots;
    uint32_t reserved;
    uint64_t data_off, data_size;
    uint64_t host_off, host_size;
} tdm_shm_header;

_Static_assert(sizeof(tdm_shm_ring_ctl) == TDM_SHM_RING_CTL_SIZE, "ring control block layout");
_Static_assert(sizeof(tdm_shm_slot) == 64, "slot layout");
_Static_assert(sizeof(tdm_shm_header) <= TDM_SHM_HEADER_SIZE, "header layout");
_Static_assert(sizeof(_Atomic uint64_t) == 8 && sizeof(_Atomic uint32_t) == 4, "atomics are plain words");

#endif
