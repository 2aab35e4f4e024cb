/* Reservations (issue 17, docs/adr/0002-control-plane.md): the orchestrator placed a guest
 * here and reserved its SM share and memory quota before the guest connects; the session whose
 * HELLO names the placement key takes it.  The table is bounded in count and in age: a guest
 * that never comes does not hold a slot for long, and a flood of reserves cannot grow it. */
#ifndef TANDEM_SERVER_RESERVATIONS_H
#define TANDEM_SERVER_RESERVATIONS_H

#include <pthread.h>
#include <sys/types.h>
#include <stddef.h>
#include <stdint.h>

#include "session_stats.h"   /* TDM_PLACEMENT_KEY_MAX */

#define TDM_RESERVATIONS_MAX 256          /* default count bound */
#define TDM_RESERVATION_AGE_MS 120000     /* default age limit: 2 minutes */
#define TDM_RESERVATION_TENANT_MAX 64     /* with its NUL, as a tenant's name (front/tenants.h) */

typedef struct tdm_reservation {
    char placement[TDM_PLACEMENT_KEY_MAX];
    char tenant[TDM_RESERVATION_TENANT_MAX];
    int sm;                      /* SMs of the session's share */
    uint64_t memory_mib;         /* its device memory quota */
    uint64_t made_ms;            /* when it was made (the table's clock) */
} tdm_reservation;

typedef struct tdm_reservations {
    pthread_mutex_t lock;
    tdm_reservation *slots;
    size_t n, cap;
    uint64_t max_age_ms;
    uint64_t (*now_ms)(void *ctx); /* the clock: CLOCK_MONOTONIC unless a test sets its own */
    void *clock_ctx;
} tdm_reservations;

/* 0, or -ENOMEM. cap and max_age_ms: 0 takes the defaults above. */
int tdm_reservations_init(tdm_reservations *t, size_t cap, uint64_t max_age_ms);
void tdm_reservations_destroy(tdm_reservations *t);
/* Tests: the table's clock. */
void tdm_reservations_set_clock(tdm_reservations *t, uint64_t (*now_ms)(void *ctx), void *ctx);

/* Stores r (its made_ms set here).  A reservation of the same key is replaced: the
 * orchestrator may send its reserve again after a lost answer.  Expired ones go first.
 * 0, or -ENOSPC when the table is full of live reservations. */
int tdm_reservations_put(tdm_reservations *t, const tdm_reservation *r);
/* The reservation of placement key `key`, removed from the table: it is taken once.
 * 0 with *out filled, or -ENOENT when there is none, or it expired. */
int tdm_reservations_take(tdm_reservations *t, const char *key, tdm_reservation *out);
/* Live (unexpired) reservations. */
size_t tdm_reservations_count(tdm_reservations *t);

#endif
