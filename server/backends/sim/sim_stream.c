/* Streams: one worker thread per stream runs its queue in order, so work is
 * really asynchronous to the caller, as on a GPU. */
#include <stdlib.h>

#include "sim_internal.h"

tdm_bstream *sim_stream_or_legacy(tdm_backend *b, tdm_bstream *s)
{
    return s ? s : b->legacy;
}

/* Runs the head op.  b->lock held; dropped while a copy or kernel runs. */
static void run_head_locked(tdm_backend *b, tdm_bstream *s, sim_op *op)
{
    bool stopping = atomic_load(&b->stopping);
    int err = 0;

    switch (op->kind) {
    case SIM_OP_RECORD:
        sim_event_complete_locked(b, op->event, op->event_seq);
        break;
    case SIM_OP_WAIT:
        /* The awaited record is already queued on some stream and nothing
         * it depends on can wait for this one (waits only look backwards
         * in time), so this ends, unless shutdown cuts it short. */
        while (op->event->completed < op->event_seq && !atomic_load(&b->stopping))
            pthread_cond_wait(&b->progress, &b->lock);
        break;
    case SIM_OP_HOST:        /* ---- host callbacks (issue 14) ---- */
        sim_host_run_locked(b, s, op);
        break;
    default:
        sim_context_poll_locked(b, s);
        if (s->sticky || stopping) {
            err = s->sticky ? s->sticky : cudaErrorContextIsDestroyed;
            break;
        }
        pthread_mutex_unlock(&b->lock);
        uint64_t started = sim_now_ns();   /* ---- SM shares (issue 17) ---- */
        err = sim_op_execute(b, op);
        if (op->kind == SIM_OP_LAUNCH && !err)
            sim_share_hold(b, s, op, started);
        pthread_mutex_lock(&b->lock);
        if (err && !s->sticky)
            s->sticky = err;
        if (err && op->kind == SIM_OP_LAUNCH)
            sim_context_kernel_fault_locked(b, s, err);
        break;
    }
    if (op->result)
        *op->result = err;
}

static void *worker(void *arg)
{
    tdm_bstream *s = arg;
    tdm_backend *b = s->b;

    pthread_mutex_lock(&b->lock);
    for (;;) {
        while (!s->head && !s->stop)
            pthread_cond_wait(&s->wake, &b->lock);
        if (!s->head)
            break;
        sim_op *op = s->head;
        run_head_locked(b, s, op);
        /* Only now does the op leave the queue: until here the stream is
         * busy for stream_query, and an event's completion and the
         * stream's are one step for observers. */
        s->head = op->next;
        if (!s->head)
            s->tail = NULL;
        s->completed = op->seq;
        sim_op_free_locked(b, op);
        pthread_cond_broadcast(&b->progress);
    }
    pthread_mutex_unlock(&b->lock);
    return NULL;
}

int sim_stream_create(tdm_backend *b, unsigned flags, int priority, tdm_bspace *sp, tdm_bstream **out)
{
    tdm_bstream *s = calloc(1, sizeof(*s));

    *out = NULL;
    if (!s)
        return cudaErrorMemoryAllocation;
    s->b = b;
    s->space = sp;
    s->mps_gen = sim_mps_generation(b);
    sim_output_init(&s->output);
    if (pthread_cond_init(&s->wake, NULL) != 0) {
        free(s);
        return cudaErrorMemoryAllocation;
    }
    if (pthread_create(&s->thread, NULL, worker, s) != 0) {
        pthread_cond_destroy(&s->wake);
        free(s);
        return cudaErrorMemoryAllocation;
    }
    pthread_mutex_lock(&b->lock);
    s->next = b->streams;
    b->streams = s;
    pthread_mutex_unlock(&b->lock);
    *out = s;
    return 0;
}

/* Finishes the queue (or, during shutdown, drops it), then frees s. */
static void stream_free(tdm_backend *b, tdm_bstream *s)
{
    pthread_mutex_lock(&b->lock);
    sim_capture_stream_gone_locked(b, s);
    for (tdm_bstream **p = &b->streams; *p; p = &(*p)->next)
        if (*p == s) {
            *p = s->next;
            break;
        }
    for (tdm_bevent *e = b->events; e; e = e->next)
        if (e->recorded_on == s)
            e->recorded_on = NULL;
    s->stop = true;
    pthread_cond_signal(&s->wake);
    pthread_mutex_unlock(&b->lock);
    pthread_join(s->thread, NULL);
    pthread_cond_destroy(&s->wake);
    /* Destroying a stream completes its work: what it printed is due. */
    sim_output_flush(&s->output);
    sim_output_release(&s->output);
    free(s);
}

int sim_stream_destroy(tdm_backend *b, tdm_bstream *s)
{
    if (!s || s == b->legacy)
        return cudaErrorInvalidResourceHandle;
    stream_free(b, s);
    return 0;
}

void sim_streams_free_all(tdm_backend *b)
{
    while (b->streams)
        stream_free(b, b->streams);
    b->legacy = NULL;
}

uint64_t sim_enqueue(tdm_backend *b, tdm_bstream *s, sim_op *op)
{
    uint64_t seq;

    s = sim_stream_or_legacy(b, s);
    pthread_mutex_lock(&b->lock);
    if (sim_capture_take_locked(b, s, op)) {   /* recorded into a graph, not run */
        pthread_mutex_unlock(&b->lock);
        return 0;
    }
    op->next = NULL;
    op->seq = seq = ++s->enqueued;
    op->stream = s;
    if (s->tail)
        s->tail->next = op;
    else
        s->head = op;
    s->tail = op;
    pthread_cond_signal(&s->wake);
    pthread_mutex_unlock(&b->lock);
    return seq;
}

void sim_wait_seq_locked(tdm_backend *b, tdm_bstream *s, uint64_t seq)
{
    s = sim_stream_or_legacy(b, s);
    while (s->completed < seq)
        pthread_cond_wait(&b->progress, &b->lock);
}

int sim_stream_synchronize(tdm_backend *b, tdm_bstream *s)
{
    int err;

    s = sim_stream_or_legacy(b, s);
    pthread_mutex_lock(&b->lock);
    if ((err = sim_capture_refuse_sync_locked(b, s))) {
        pthread_mutex_unlock(&b->lock);
        return err;
    }
    sim_wait_seq_locked(b, s, s->enqueued);
    sim_context_poll_locked(b, s);
    err = s->sticky;
    pthread_mutex_unlock(&b->lock);
    sim_output_flush(&s->output);
    return err;
}

int sim_stream_query(tdm_backend *b, tdm_bstream *s)
{
    int err;

    s = sim_stream_or_legacy(b, s);
    pthread_mutex_lock(&b->lock);
    sim_context_poll_locked(b, s);
    err = sim_capture_refuse_sync_locked(b, s);
    if (!err)
        err = s->head ? cudaErrorNotReady : s->sticky;
    pthread_mutex_unlock(&b->lock);
    return err;
}

int sim_device_synchronize(tdm_backend *b)
{
    int err = 0;
    bool busy;

    /* Waits until every queue is empty at once: streams come and go while
     * the lock is dropped, so no list walk could stay valid across waits. */
    pthread_mutex_lock(&b->lock);
    do {
        busy = false;
        for (tdm_bstream *s = b->streams; s && !busy; s = s->next)
            busy = s->head != NULL;
        if (busy)
            pthread_cond_wait(&b->progress, &b->lock);
    } while (busy);
    for (tdm_bstream *s = b->streams; s && !err; s = s->next) {
        sim_context_poll_locked(b, s);
        err = s->sticky;
    }
    pthread_mutex_unlock(&b->lock);
    return err;
}
