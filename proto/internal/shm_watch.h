/* A thread that notices at once when the peer of an shm connection is
 * gone (its end of the unix socket closed) and wakes every waiter of the
 * region, so a guest whose server died resumes on its standby within
 * microseconds instead of at the end of a sleep slice (shm_wait.h). */
#ifndef TANDEM_PROTO_SHM_WATCH_H
#define TANDEM_PROTO_SHM_WATCH_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "shm_layout.h"

typedef struct tdm_shm_watch {
    pthread_t thread;
    bool running;
    int sock, stop_fd;
    atomic_bool gone;
    tdm_shm_waitpoint **wps;   /* woken when the peer goes */
    size_t nwps;
} tdm_shm_watch;

/* Watches sock; wps (n of them, copied) are woken when its peer closes.
 * 0, or -1 (then no thread runs and tdm_shm_watch_gone stays false). */
int tdm_shm_watch_start(tdm_shm_watch *w, int sock, tdm_shm_waitpoint *const *wps, size_t n);
/* Stops the thread (before sock is closed).  Safe when none runs. */
void tdm_shm_watch_stop(tdm_shm_watch *w);
/* True once the peer was seen gone. */
bool tdm_shm_watch_gone(tdm_shm_watch *w);

#endif
