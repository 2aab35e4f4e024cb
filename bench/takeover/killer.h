/* The fault of a recovery run: a thread that SIGKILLs a process (the active
 * Tandem server) at a moment the loop chooses, and records that moment on
 * CLOCK_MONOTONIC, the clock the loop stamps its iterations with.  Living in
 * the measuring process, it needs no clock shared across processes and no
 * polling between them: the kill lands within a few microseconds of the
 * chosen moment, anywhere in an iteration (mid-launch, mid-kernel, between
 * a kernel and its synchronize). */
#ifndef TANDEM_BENCH_KILLER_H
#define TANDEM_BENCH_KILLER_H

#include <pthread.h>
#include <stdbool.h>
#include <sys/types.h>

typedef struct killer {
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    pid_t pid;
    bool armed, quit;
    double at_us;        /* when to kill (bench_now_us clock) */
    double killed_us;    /* when kill() was called; 0 if it was not */
    int err;             /* kill()'s errno, 0 if it worked */
} killer;

/* Starts the thread, idle.  0, or -1 with errno. */
int killer_start(killer *k, pid_t pid);
/* Kill at bench_now_us() == at_us (at once if that has passed). */
void killer_arm(killer *k, double at_us);
/* Stops the thread: waits for an armed kill to happen, drops an unarmed
 * one.  Then killed_us and err say what happened. */
void killer_join(killer *k);

#endif
