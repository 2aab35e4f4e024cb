#include "shm_wait.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define SLICE_NS 50000000L

static uint64_t now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

uint64_t tdm_shm_spin_ns(void)
{
    static _Atomic int64_t cached = -1;
    int64_t v = atomic_load_explicit(&cached, memory_order_relaxed);

    if (v < 0) {
        const char *e = getenv("TANDEM_SHM_SPIN_US");
        char *end = NULL;
        long us = e && *e ? strtol(e, &end, 10) : -1;

        v = (us >= 0 && us <= 1000000 && end && *end == '\0') ? us * 1000 : 50000;
        atomic_store_explicit(&cached, v, memory_order_relaxed);
    }
    return (uint64_t)v;
}

int tdm_shm_wait(tdm_shm_waitpoint *wp, tdm_shm_cond cond, void *arg, tdm_shm_alive alive, void *alive_arg)
{
    uint64_t spin = tdm_shm_spin_ns(), deadline = now_ns() + spin;
    int r;

    /* Poll first: a peer that is awake answers within microseconds, and a
     * futex sleep would cost a wake-up on both sides. */
    for (unsigned i = 0;; i++) {
        r = cond(arg);
        if (r != 0)
            return r < 0 ? r : 0;
        if ((i & 15) == 15 && now_ns() >= deadline)
            break;
        cpu_relax();
    }
    for (;;) {
        uint32_t seq = atomic_load(&wp->seq);
        struct timespec slice = { 0, SLICE_NS };

        atomic_store(&wp->sleeping, 1);
        /* Pairs with the fence in tdm_shm_wake: either we see what the peer
         * published, or the peer sees `sleeping` and wakes us. */
        atomic_thread_fence(memory_order_seq_cst);
        r = cond(arg);
        /* A peer's death published before `sleeping` was set woke nobody
         * (shm_watch.c): seen here instead of a slice later. */
        if (r == 0 && alive && !alive(alive_arg)) {
            atomic_store(&wp->sleeping, 0);
            return TDM_SHM_WAIT_DEAD;
        }
        if (r == 0)
            syscall(SYS_futex, &wp->seq, FUTEX_WAIT, seq, &slice, NULL, 0);
        atomic_store(&wp->sleeping, 0);
        if (r == 0)
            r = cond(arg);
        if (r != 0)
            return r < 0 ? r : 0;
        if (alive && !alive(alive_arg))
            return TDM_SHM_WAIT_DEAD;
    }
}

void tdm_shm_wake(tdm_shm_waitpoint *wp)
{
    atomic_thread_fence(memory_order_seq_cst);
    if (atomic_load_explicit(&wp->sleeping, memory_order_relaxed) &&
        atomic_exchange(&wp->sleeping, 0)) {
        atomic_fetch_add(&wp->seq, 1);
        syscall(SYS_futex, &wp->seq, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
    }
}
