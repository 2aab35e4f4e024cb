#include "shm_ring.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t pad8(uint64_t n)
{
    return (n + 7) & ~(uint64_t)7;
}

void tdm_shm_ring_attach(tdm_shm_ring *r, void *ctl, uint64_t cap)
{
    memset(r, 0, sizeof(*r));
    r->ctl = ctl;
    r->bytes = (uint8_t *)ctl + TDM_SHM_RING_CTL_SIZE;
    r->cap = cap;
    r->mask = cap - 1;
}

void tdm_shm_ring_restart(tdm_shm_ring *r)
{
    tdm_shm_ring_ctl *c = r->ctl;
    uint64_t cap = r->cap;

    atomic_store(&c->head, 0);
    atomic_store(&c->tail, 0);
    atomic_store(&c->data_wait.seq, 0);
    atomic_store(&c->data_wait.sleeping, 0);
    atomic_store(&c->space_wait.seq, 0);
    atomic_store(&c->space_wait.sleeping, 0);
    tdm_shm_ring_attach(r, c, cap);
}

void tdm_shm_msg_free(tdm_shm_msg *m)
{
    free(m->p);
    memset(m, 0, sizeof(*m));
}

/* Nothing to copy is no copy: a zero-length frame's buffer may be NULL,
 * which memcpy must not be given even for 0 bytes. */
static void copy_in(tdm_shm_ring *r, uint64_t at, const void *src, size_t n)
{
    uint64_t off = at & r->mask, first = n < r->cap - off ? n : r->cap - off;

    if (n == 0)
        return;
    memcpy(r->bytes + off, src, first);
    memcpy(r->bytes, (const uint8_t *)src + first, n - first);
}

static void copy_out(const tdm_shm_ring *r, uint64_t at, void *dst, size_t n)
{
    uint64_t off = at & r->mask, first = n < r->cap - off ? n : r->cap - off;

    if (n == 0)
        return;
    memcpy(dst, r->bytes + off, first);
    memcpy((uint8_t *)dst + first, r->bytes, n - first);
}

static int corrupt(tdm_shm_ring *r, const char *what, uint64_t a, uint64_t b)
{
    snprintf(r->why, sizeof(r->why), "%s (%llu, %llu)", what, (unsigned long long)a, (unsigned long long)b);
    return TDM_SHM_CORRUPT;
}

/* ---- producer ---- */

/* The consumer's tail, read once and checked: it may only move forward,
 * never past what we produced, and stays 8-aligned. */
static int read_tail(tdm_shm_ring *r, uint64_t *tail)
{
    uint64_t t = atomic_load_explicit(&r->ctl->tail, memory_order_acquire);

    if (t > r->pos)
        return corrupt(r, "consumer index beyond the producer's (tail, head)", t, r->pos);
    if (t < r->seen)
        return corrupt(r, "consumer index went backwards (tail, previous tail)", t, r->seen);
    if (t & 7)
        return corrupt(r, "consumer index misaligned (tail, head)", t, r->pos);
    if (r->pos - t > r->cap)
        return corrupt(r, "consumer index more than the capacity behind (tail, head)", t, r->pos);
    r->seen = t;
    *tail = t;
    return TDM_SHM_OK;
}

typedef struct room_arg {
    tdm_shm_ring *r;
    uint64_t need;
} room_arg;

static int has_room(void *arg)
{
    room_arg *a = arg;
    uint64_t t;
    int rc = read_tail(a->r, &t);

    if (rc)
        return rc;
    return a->r->cap - (a->r->pos - t) >= a->need;
}

int tdm_shm_ring_send(tdm_shm_ring *r, const void *msg, size_t len, tdm_shm_alive alive, void *alive_arg)
{
    const uint8_t *p = msg;
    uint64_t maxfrag = r->cap / 4;

    do {
        uint64_t n = len < maxfrag ? len : maxfrag;
        tdm_shm_frame_hdr h = { (uint32_t)n, len == n ? TDM_SHM_FRAME_LAST : 0 };
        room_arg ra = { r, sizeof(h) + pad8(n) };
        int rc = has_room(&ra);

        if (rc < 0)
            return rc;
        if (rc == 0) {
            /* Full: the consumer is behind.  Make sure it is not asleep
             * on frames we already published, then wait for room. */
            tdm_shm_wake(&r->ctl->data_wait);
            rc = tdm_shm_wait(&r->ctl->space_wait, has_room, &ra, alive, alive_arg);
            if (rc)
                return rc;
        }
        copy_in(r, r->pos, &h, sizeof(h));
        copy_in(r, r->pos + sizeof(h), p, n);
        r->pos += sizeof(h) + pad8(n);
        atomic_store_explicit(&r->ctl->head, r->pos, memory_order_release);
        tdm_shm_wake(&r->ctl->data_wait);
        p += n;
        len -= n;
    } while (len > 0);
    return TDM_SHM_OK;
}

/* ---- consumer ---- */

/* The producer's head, read once and checked: forward only, at most the
 * capacity ahead of what we consumed, 8-aligned. */
static int read_head(tdm_shm_ring *r, uint64_t *head)
{
    uint64_t h = atomic_load_explicit(&r->ctl->head, memory_order_acquire);

    if (h < r->pos)
        return corrupt(r, "producer index behind the consumer's (head, tail)", h, r->pos);
    if (h < r->seen)
        return corrupt(r, "producer index went backwards (head, previous head)", h, r->seen);
    if (h - r->pos > r->cap)
        return corrupt(r, "producer index beyond the ring's capacity (head, tail)", h, r->pos);
    if (h & 7)
        return corrupt(r, "producer index misaligned (head, tail)", h, r->pos);
    r->seen = h;
    *head = h;
    return TDM_SHM_OK;
}

static int has_frame(void *arg)
{
    tdm_shm_ring *r = arg;
    uint64_t h;
    int rc = read_head(r, &h);

    return rc ? rc : h != r->pos;
}

uint64_t tdm_shm_ring_unread(const tdm_shm_ring *r)
{
    uint64_t h = atomic_load_explicit(&r->ctl->head, memory_order_acquire);

    return h >= r->pos ? h - r->pos : 0;
}

/* One whole message into m; publish: whether the consumed bytes are given back to the producer
 * (recv) or only r's private position moves (peek). */
static int take(tdm_shm_ring *r, tdm_shm_msg *m, size_t max, bool wait, tdm_shm_alive alive, void *alive_arg,
                bool publish)
{
    bool first = true;

    m->len = 0;
    for (;;) {
        tdm_shm_frame_hdr h;
        uint64_t head;
        int rc = has_frame(r);

        if (rc < 0)
            return rc;
        if (rc == 0) {
            /* In the middle of a message the rest is on its way. */
            if (!wait && first)
                return TDM_SHM_EMPTY;
            rc = tdm_shm_wait(&r->ctl->data_wait, has_frame, r, alive, alive_arg);
            if (rc)
                return rc;
        }
        first = false;
        head = r->seen;
        if (head - r->pos < sizeof(h))
            return corrupt(r, "partial frame header published (head, tail)", head, r->pos);
        copy_out(r, r->pos, &h, sizeof(h));   /* the header is read once, here */
        if (h.flags & ~TDM_SHM_FRAME_LAST)
            return corrupt(r, "frame header with unknown flags (flags, tail)", h.flags, r->pos);
        if (sizeof(h) + pad8(h.len) > head - r->pos)
            return corrupt(r, "frame length past the published bytes (length, published)", h.len,
                           head - r->pos - sizeof(h));
        if (m->len + h.len > max) {
            snprintf(r->why, sizeof(r->why), "message of more than %zu bytes", max);
            return TDM_SHM_TOO_BIG;
        }
        if (m->len + h.len > m->cap) {
            size_t ncap = m->cap ? m->cap : 4096;
            uint8_t *np;

            while (ncap < m->len + h.len)
                ncap *= 2;
            np = realloc(m->p, ncap);
            if (!np)
                return TDM_SHM_NOMEM;
            m->p = np;
            m->cap = ncap;
        }
        /* An empty first frame leaves m->p NULL, and even NULL + 0 is
         * undefined behaviour (clang's UBSan aborts on it; fuzz_shm_ring). */
        if (h.len)
            copy_out(r, r->pos + sizeof(h), m->p + m->len, h.len);
        m->len += h.len;
        r->pos += sizeof(h) + pad8(h.len);
        if (publish) {
            atomic_store_explicit(&r->ctl->tail, r->pos, memory_order_release);
            tdm_shm_wake(&r->ctl->space_wait);
        }
        if (h.flags & TDM_SHM_FRAME_LAST)
            return TDM_SHM_OK;
    }
}

int tdm_shm_ring_recv(tdm_shm_ring *r, tdm_shm_msg *m, size_t max, bool wait, tdm_shm_alive alive,
                      void *alive_arg)
{
    return take(r, m, max, wait, alive, alive_arg, true);
}

int tdm_shm_ring_peek(tdm_shm_ring *r, tdm_shm_msg *m, size_t max, tdm_shm_alive alive, void *alive_arg)
{
    return take(r, m, max, true, alive, alive_arg, false);
}
