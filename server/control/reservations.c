/* See reservations.h. */
#include "reservations.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static uint64_t monotonic_ms(void *ctx)
{
    struct timespec ts;

    (void)ctx;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

int tdm_reservations_init(tdm_reservations *t, size_t cap, uint64_t max_age_ms)
{
    memset(t, 0, sizeof(*t));
    t->cap = cap ? cap : TDM_RESERVATIONS_MAX;
    t->max_age_ms = max_age_ms ? max_age_ms : TDM_RESERVATION_AGE_MS;
    t->slots = calloc(t->cap, sizeof(*t->slots));
    if (!t->slots)
        return -ENOMEM;
    t->now_ms = monotonic_ms;
    pthread_mutex_init(&t->lock, NULL);
    return 0;
}

void tdm_reservations_destroy(tdm_reservations *t)
{
    if (!t->slots)
        return;
    pthread_mutex_destroy(&t->lock);
    free(t->slots);
    t->slots = NULL;
}

void tdm_reservations_set_clock(tdm_reservations *t, uint64_t (*now_ms)(void *ctx), void *ctx)
{
    t->now_ms = now_ms;
    t->clock_ctx = ctx;
}

static void remove_at(tdm_reservations *t, size_t i)
{
    t->slots[i] = t->slots[--t->n];
}

/* Under the lock: drops what is past its age. */
static void expire(tdm_reservations *t, uint64_t now)
{
    for (size_t i = 0; i < t->n;) {
        if (now - t->slots[i].made_ms >= t->max_age_ms)
            remove_at(t, i);
        else
            i++;
    }
}

static ssize_t find(const tdm_reservations *t, const char *key)
{
    for (size_t i = 0; i < t->n; i++)
        if (strcmp(t->slots[i].placement, key) == 0)
            return (ssize_t)i;
    return -1;
}

int tdm_reservations_put(tdm_reservations *t, const tdm_reservation *r)
{
    int rc = 0;

    pthread_mutex_lock(&t->lock);
    uint64_t now = t->now_ms(t->clock_ctx);
    expire(t, now);
    ssize_t at = find(t, r->placement);
    if (at < 0 && t->n == t->cap) {
        rc = -ENOSPC;
        goto out;
    }
    if (at < 0)
        at = (ssize_t)t->n++;
    t->slots[at] = *r;
    t->slots[at].made_ms = now;
out:
    pthread_mutex_unlock(&t->lock);
    return rc;
}

int tdm_reservations_take(tdm_reservations *t, const char *key, tdm_reservation *out)
{
    int rc = -ENOENT;

    pthread_mutex_lock(&t->lock);
    expire(t, t->now_ms(t->clock_ctx));
    ssize_t at = find(t, key);
    if (at >= 0) {
        *out = t->slots[at];
        remove_at(t, (size_t)at);
        rc = 0;
    }
    pthread_mutex_unlock(&t->lock);
    return rc;
}

size_t tdm_reservations_count(tdm_reservations *t)
{
    pthread_mutex_lock(&t->lock);
    expire(t, t->now_ms(t->clock_ctx));
    size_t n = t->n;
    pthread_mutex_unlock(&t->lock);
    return n;
}
