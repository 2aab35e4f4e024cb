/* Waiting on shared memory: poll briefly, then sleep on a futex in the
 * region.  The futex is process-shared (no FUTEX_PRIVATE_FLAG) because the
 * peer is another process. */
#ifndef TANDEM_PROTO_SHM_WAIT_H
#define TANDEM_PROTO_SHM_WAIT_H

#include <stdbool.h>
#include <stdint.h>

#include "shm_layout.h"

#define TDM_SHM_WAIT_DEAD (-1000)   /* the peer is gone */

/* 1: what we wait for is there; 0: not yet; < 0: an error to return. */
typedef int (*tdm_shm_cond)(void *arg);
/* false once the peer is known to be gone. */
typedef bool (*tdm_shm_alive)(void *arg);

/* Polls cond for up to the spin time (TANDEM_SHM_SPIN_US, default 50 us),
 * then sleeps on wp in slices of at most 50 ms, calling alive before the
 * first and after each slice, so a peer that dies without waking us is
 * noticed (at once when a watcher wakes wp: shm_watch.h).  Returns 0 when
 * cond became true, cond's negative value, or TDM_SHM_WAIT_DEAD. */
int tdm_shm_wait(tdm_shm_waitpoint *wp, tdm_shm_cond cond, void *arg, tdm_shm_alive alive, void *alive_arg);

/* Called after publishing what a waiter on wp may wait for.  Makes a
 * system call only when the waiter announced that it sleeps. */
void tdm_shm_wake(tdm_shm_waitpoint *wp);

/* The spin time in nanoseconds (read once from the environment). */
uint64_t tdm_shm_spin_ns(void);

#endif
