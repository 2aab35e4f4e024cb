#include "device_output.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "grow.h"
#include "log.h"

struct tdm_device_output {
    pthread_mutex_t lock;       /* the session's thread writes; a fetch may come from another */
    uint64_t session;
    size_t max_bytes, max_pieces;
    tdm_output_piece *v;
    size_t n, cap;
    size_t bytes;               /* held now */
    uint64_t dropped;           /* since the last take */
    bool noted;                 /* the current overflow was logged */
};

int tdm_device_output_create(uint64_t session, size_t max_bytes, size_t max_pieces, tdm_device_output **out)
{
    tdm_device_output *o = calloc(1, sizeof(*o));

    if (!o)
        return -ENOMEM;
    pthread_mutex_init(&o->lock, NULL);
    o->session = session;
    o->max_bytes = max_bytes;
    o->max_pieces = max_pieces;
    *out = o;
    return 0;
}

static void free_pieces(tdm_output_piece *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i].bytes);
    free(v);
}

void tdm_device_output_destroy(tdm_device_output *o)
{
    if (!o)
        return;
    if (o->bytes)
        tdm_log_session(o->session, "%zu bytes of device output dropped: the guest did not take them", o->bytes);
    free_pieces(o->v, o->n);
    pthread_mutex_destroy(&o->lock);
    free(o);
}

/* Appends to the last piece when it is for the same fd: a kernel's lines
 * usually arrive in many small writes. */
static bool append_locked(tdm_device_output *o, int fd, const char *p, size_t n)
{
    tdm_output_piece *last = o->n ? &o->v[o->n - 1] : NULL;

    if (o->bytes + n > o->max_bytes)
        return false;
    if (!last || last->fd != fd) {
        if (o->n == o->max_pieces || tdm_grow(&o->v, &o->cap, o->n + 1, sizeof(*o->v), 16) != 0)
            return false;
        last = &o->v[o->n++];
        *last = (tdm_output_piece){ .fd = fd };
    }
    char *grown = realloc(last->bytes, last->len + n);
    if (!grown)
        return false;
    memcpy(grown + last->len, p, n);
    last->bytes = grown;
    last->len += n;
    o->bytes += n;
    return true;
}

void tdm_device_output_append(tdm_device_output *o, int fd, const char *p, size_t n)
{
    bool note = false;

    pthread_mutex_lock(&o->lock);
    /* As the driver's full FIFO: once something did not fit, everything is
     * lost until the guest takes what is held (so no line reaches the
     * guest with an earlier one missing in between).  Logged once per
     * overflow, not once per write. */
    if (o->dropped || !append_locked(o, fd, p, n)) {
        o->dropped += n;
        note = !o->noted;
        o->noted = true;
    }
    pthread_mutex_unlock(&o->lock);
    if (note)
        tdm_log_session(o->session, "device output buffer full (%zu bytes): further device output is dropped "
                        "until the guest takes it", o->max_bytes);
}

bool tdm_device_output_pending(tdm_device_output *o)
{
    bool pending;

    pthread_mutex_lock(&o->lock);
    pending = o->n > 0 || o->dropped > 0;
    pthread_mutex_unlock(&o->lock);
    return pending;
}

int tdm_device_output_take(tdm_device_output *o, tdm_output_piece **pieces, size_t *n, uint64_t *dropped)
{
    pthread_mutex_lock(&o->lock);
    *pieces = o->v;
    *n = o->n;
    *dropped = o->dropped;
    o->v = NULL;
    o->n = o->cap = o->bytes = 0;
    o->dropped = 0;
    o->noted = false;
    pthread_mutex_unlock(&o->lock);
    return 0;
}

/* ---- routing the process's stdout and stderr ---- */

/* Which session this thread serves: a thread's own, so sessions served in
 * parallel never share it. */
static _Thread_local tdm_device_output *served;
/* The thread that installed the streams: the server's own output. */
static pthread_t installer;

void tdm_device_output_serve(tdm_device_output *o)
{
    served = o;
}

static ssize_t route(void *cookie, const char *p, size_t n)
{
    int fd = (int)(intptr_t)cookie;
    size_t done = 0;

    if (served) {
        tdm_device_output_append(served, fd, p, n);
        return (ssize_t)n;
    }
    /* Outside a guest's call: the server's own writes (its banner), or
     * device output flushed where no session can own it (then it must not
     * pass unnoticed: it belongs to some tenant). */
    if (!pthread_equal(pthread_self(), installer))
        tdm_log("%zu bytes of device output on fd %d with no session to own them: written to the server's own "
                "fd %d", n, fd, fd);
    while (done < n) {
        ssize_t w = write(fd, p + done, n - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            break;
        done += (size_t)w;
    }
    /* A failed write to the server's own stream has nowhere to be
     * reported; claiming it written keeps stdio from retrying forever. */
    return (ssize_t)n;
}

static FILE *routing_stream(int fd)
{
    cookie_io_functions_t io = { .write = route };
    FILE *f = fopencookie((void *)(intptr_t)fd, "w", io);

    /* Unbuffered: a write is routed in the thread that made it, never in
     * whichever thread flushes a buffer later. */
    if (f)
        setvbuf(f, NULL, _IONBF, 0);
    return f;
}

int tdm_device_output_install(void)
{
    FILE *out, *err;

    fflush(stdout);
    fflush(stderr);
    out = routing_stream(STDOUT_FILENO);
    err = routing_stream(STDERR_FILENO);
    if (!out || !err) {
        if (out)
            fclose(out);
        if (err)
            fclose(err);
        return -ENOMEM;
    }
    installer = pthread_self();
    stdout = out;
    stderr = err;
    return 0;
}
