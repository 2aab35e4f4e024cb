/* The attackers of the hostile-tenant suite (test_hostile.c): each a round
 * of one attack, repeated on a thread of its own until the test stops it,
 * while the victim (hostile.h) works on the test's thread.
 *
 * A round never asserts (criterion's assertions belong to the test's
 * thread): what the attacker got that it must not get is counted in
 * `breaches`, with the first one described in `note`, for the test to
 * check after hv_attack_stop. */
#ifndef TANDEM_TEST_HOSTILE_ATTACKS_H
#define TANDEM_TEST_HOSTILE_ATTACKS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "harness.h"
#include "hostile.h"
#include "transport.h"

typedef struct hv_attack hv_attack;
struct hv_attack {
    const th_server *srv;
    void (*round)(hv_attack *a);
    tdm_transport *t;            /* the attacker's session, where the attack needs one (opened by the test) */
    hv_kernel k;                 /* its kernel, where it launches one */
    uint64_t mem;                /* its own device memory, where it needs some */
    uint64_t mem_elems;          /* how many 32-bit words of it a launch works on */
    const char *token;           /* a credential to try, where the attack tries one */
    int fds[64];                 /* connections it holds (silent connections) */
    unsigned nfds;
    atomic_bool stop;
    atomic_long rounds;
    atomic_long breaches;
    char note[256];
    pthread_t th;
};

/* Starts a's thread and returns after its first round. */
void hv_attack_start(hv_attack *a);
/* Stops it and joins the thread (closes what it holds, not a->t). */
void hv_attack_stop(hv_attack *a);

/* The rounds. */
void hv_garbage_frames(hv_attack *a);     /* a TCP connection, one malformed frame of four kinds */
void hv_forged_pointers(hv_attack *a);    /* reads, writes, memsets and frees of guessed addresses; forged handles */
void hv_launch_flood(hv_attack *a);       /* 256 one-way launches of a->k on a->mem_elems of a->mem, never synchronized */
void hv_silent_connections(hv_attack *a); /* one more connection that never speaks, up to 64 held */
void hv_empty_shm_frame(hv_attack *a);    /* an shm session whose first frame is empty */
void hv_bad_credentials(hv_attack *a);    /* HELLO with no token, with a->token (not a tenant's), a call before HELLO */
void hv_exhausted_asks(hv_attack *a);     /* one more stream and event asked of a session at its bounds */

#endif
