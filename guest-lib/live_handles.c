/* The streams and events the program holds (server handles; each carries
 * its kind in its tag, so one set serves both).  A takeover needs to know:
 * a destroy the active completed just before it died, sent again to the
 * standby, finds no such handle there, and that is a success only for a
 * handle the program really held (client.c). */
#include <pthread.h>
#include <stdlib.h>

#include "guest.h"
#include "grow.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t *live;
static size_t n, cap;

void tdm_live_handle_add(uint64_t handle)
{
    pthread_mutex_lock(&lock);
    if (tdm_grow(&live, &cap, n + 1, sizeof(*live), 16) != 0)
        goto out;                 /* only a takeover's retried destroy would notice */
    live[n++] = handle;
out:
    pthread_mutex_unlock(&lock);
}

void tdm_live_handle_remove(uint64_t handle)
{
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < n; i++)
        if (live[i] == handle) {
            live[i] = live[--n];
            break;
        }
    pthread_mutex_unlock(&lock);
}

bool tdm_live_handle_held(uint64_t handle)
{
    bool held = false;

    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < n && !held; i++)
        held = live[i] == handle;
    pthread_mutex_unlock(&lock);
    return held;
}

void tdm_live_handles_clear(void)
{
    pthread_mutex_lock(&lock);
    n = 0;
    pthread_mutex_unlock(&lock);
}
