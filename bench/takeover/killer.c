/* The killer thread (killer.h). */
#include "killer.h"

#include <errno.h>
#include <signal.h>
#include <time.h>

#include "bench.h"

static void sleep_until_us(double at_us)
{
    struct timespec ts = { (time_t)(at_us / 1e6), 0 };

    ts.tv_nsec = (long)((at_us - (double)ts.tv_sec * 1e6) * 1e3);
    if (ts.tv_nsec >= 1000000000L)
        ts.tv_nsec = 999999999L;
    /* Absolute time on the loop's clock: no drift from computing a delay. */
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
        ;
}

static void *run(void *arg)
{
    killer *k = arg;

    pthread_mutex_lock(&k->lock);
    while (!k->armed && !k->quit)
        pthread_cond_wait(&k->cond, &k->lock);
    if (!k->armed) {
        pthread_mutex_unlock(&k->lock);
        return NULL;
    }
    pthread_mutex_unlock(&k->lock);
    sleep_until_us(k->at_us);
    /* The fault's instant is the kill() call: what follows (the kernel
     * reaping the server, the guest seeing its socket close) is part of
     * the recovery being measured. */
    double t = bench_now_us();
    int err = kill(k->pid, SIGKILL) == 0 ? 0 : errno;
    pthread_mutex_lock(&k->lock);
    k->killed_us = err ? 0 : t;
    k->err = err;
    pthread_mutex_unlock(&k->lock);
    return NULL;
}

int killer_start(killer *k, pid_t pid)
{
    int e;

    k->pid = pid;
    k->armed = k->quit = false;
    k->at_us = k->killed_us = 0;
    k->err = 0;
    pthread_mutex_init(&k->lock, NULL);
    pthread_cond_init(&k->cond, NULL);
    if ((e = pthread_create(&k->thread, NULL, run, k)) != 0) {
        errno = e;
        return -1;
    }
    return 0;
}

void killer_arm(killer *k, double at_us)
{
    pthread_mutex_lock(&k->lock);
    k->at_us = at_us;
    k->armed = true;
    pthread_cond_signal(&k->cond);
    pthread_mutex_unlock(&k->lock);
}

void killer_join(killer *k)
{
    pthread_mutex_lock(&k->lock);
    k->quit = true;
    pthread_cond_signal(&k->cond);
    pthread_mutex_unlock(&k->lock);
    pthread_join(k->thread, NULL);
    pthread_mutex_destroy(&k->lock);
    pthread_cond_destroy(&k->cond);
}
