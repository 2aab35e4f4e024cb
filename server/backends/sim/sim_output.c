/* Device output of simulated kernels (docs/device-output.md): sim_printf
 * and sim_assert_fail, the twins' device printf and assert, write into the
 * launching stream's buffer; the host side writes it out through stdio
 * when it synchronizes with the stream, in its own thread, as the driver
 * writes its printf FIFO out.  The server routes that write to the session
 * the thread serves. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "sim_internal.h"

void sim_output_init(sim_output *o)
{
    memset(o, 0, sizeof(*o));
    pthread_mutex_init(&o->lock, NULL);
}

static void free_pieces(sim_output_piece *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i].bytes);
    free(v);
}

void sim_output_release(sim_output *o)
{
    free_pieces(o->v, o->n);
    pthread_mutex_destroy(&o->lock);
}

/* Takes ownership of bytes.  Beyond SIM_OUTPUT_MAX the output is lost, as
 * the GPU's FIFO loses what does not fit, with one log line. */
static void add(sim_output *o, int fd, char *bytes, size_t len)
{
    bool note = false;

    pthread_mutex_lock(&o->lock);
    /* Once full, everything is lost until the next flush, as on the GPU. */
    if (o->dropped || o->bytes + len > SIM_OUTPUT_MAX || tdm_grow(&o->v, &o->cap, o->n + 1, sizeof(*o->v), 16) != 0) {
        note = !o->dropped;
        o->dropped = true;
        free(bytes);
    } else {
        o->v[o->n++] = (sim_output_piece){ fd, bytes, len };
        o->bytes += len;
    }
    pthread_mutex_unlock(&o->lock);
    if (note)
        sim_log("a stream's device output exceeds %u bytes before the host synchronized: the rest is dropped",
                SIM_OUTPUT_MAX);
}

void sim_output_take(sim_output *o, sim_output_piece **v, size_t *n)
{
    pthread_mutex_lock(&o->lock);
    *v = o->v;
    *n = o->n;
    o->v = NULL;
    o->n = o->cap = o->bytes = 0;
    o->dropped = false;
    pthread_mutex_unlock(&o->lock);
}

void sim_output_write(sim_output_piece *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        FILE *f = v[i].fd == 2 ? stderr : stdout;

        fwrite(v[i].bytes, 1, v[i].len, f);
        fflush(f);
    }
    free_pieces(v, n);
}

void sim_output_flush(sim_output *o)
{
    sim_output_piece *v;
    size_t n;

    sim_output_take(o, &v, &n);
    sim_output_write(v, n);
}

static void vadd(const sim_launch *l, int fd, const char *fmt, va_list ap)
{
    char *text = NULL;
    int n = vasprintf(&text, fmt, ap);

    if (n < 0)
        return;
    add(l->exec->output, fd, text, (size_t)n);
}

void sim_printf(const sim_launch *l, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vadd(l, 1, fmt, ap);
    va_end(ap);
}

/* The driver's message for a failed device assert, word for word, then
 * the context's sticky cudaErrorAssert. */
void sim_assert_fail(const sim_launch *l, const char *expr, const char *file, unsigned line, const char *func,
                     tdm_dim3 block_idx, tdm_dim3 thread_idx)
{
    char *text = NULL;
    int n = asprintf(&text, "%s:%u: %s: block: [%u,%u,%u], thread: [%u,%u,%u] Assertion `%s` failed.\n", file, line,
                     func, block_idx.x, block_idx.y, block_idx.z, thread_idx.x, thread_idx.y, thread_idx.z, expr);

    if (n >= 0)
        add(l->exec->output, 2, text, (size_t)n);
    sim_launch_fault(l, cudaErrorAssert, "device-side assert triggered");
}
