#include "shm_watch.h"

#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "shm_wait.h"

static void *watch_main(void *arg)
{
    tdm_shm_watch *w = arg;
    struct pollfd p[2] = { { .fd = w->sock, .events = POLLIN | POLLRDHUP }, { .fd = w->stop_fd, .events = POLLIN } };

    for (;;) {
        if (poll(p, 2, -1) < 0) {
            if (errno == EINTR)
                continue;
            return NULL;     /* cannot watch: waiters still notice at the end of a slice */
        }
        if (p[1].revents)
            return NULL;
        /* Nothing is sent after the handshake: readable means closed. */
        if (p[0].revents) {
            /* Published before the wake: a waiter either sees it in its
             * alive check before sleeping, or is asleep and woken here. */
            atomic_store(&w->gone, true);
            for (size_t i = 0; i < w->nwps; i++)
                tdm_shm_wake(w->wps[i]);
            return NULL;
        }
    }
}

int tdm_shm_watch_start(tdm_shm_watch *w, int sock, tdm_shm_waitpoint *const *wps, size_t n)
{
    /* Field by field: a waiter of another thread may be reading `gone`. */
    atomic_store(&w->gone, false);
    w->running = false;
    w->sock = sock;
    w->stop_fd = eventfd(0, EFD_CLOEXEC);
    w->wps = calloc(n ? n : 1, sizeof(*w->wps));
    if (w->stop_fd < 0 || !w->wps)
        goto fail;
    memcpy(w->wps, wps, n * sizeof(*wps));
    w->nwps = n;
    if (pthread_create(&w->thread, NULL, watch_main, w) != 0)
        goto fail;
    w->running = true;
    return 0;
fail:
    if (w->stop_fd >= 0)
        close(w->stop_fd);
    free(w->wps);
    w->wps = NULL;
    w->stop_fd = -1;
    return -1;
}

void tdm_shm_watch_stop(tdm_shm_watch *w)
{
    uint64_t one = 1;

    if (!w->running)
        return;
    if (write(w->stop_fd, &one, sizeof(one)) != sizeof(one))
        pthread_cancel(w->thread);   /* poll is a cancellation point */
    pthread_join(w->thread, NULL);
    close(w->stop_fd);
    free(w->wps);
    w->wps = NULL;
    w->stop_fd = -1;
    w->running = false;
}

bool tdm_shm_watch_gone(tdm_shm_watch *w)
{
    return atomic_load(&w->gone);
}
