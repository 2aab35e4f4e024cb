/* Events: a record is a marker op on a stream; the event completes when its
 * most recent record has run. */
#include <stdlib.h>
#include <time.h>

#include "sim_internal.h"
#include "clock.h"

int sim_event_create(tdm_backend *b, unsigned flags, tdm_bevent **out)
{
    tdm_bevent *e = calloc(1, sizeof(*e));

    *out = NULL;
    if (!e)
        return cudaErrorMemoryAllocation;
    e->flags = flags;
    e->refs = 1;
    pthread_mutex_lock(&b->lock);
    e->next = b->events;
    if (b->events)
        b->events->prev = e;
    b->events = e;
    pthread_mutex_unlock(&b->lock);
    *out = e;
    return 0;
}

void sim_event_unref_locked(tdm_backend *b, tdm_bevent *e)
{
    if (--e->refs > 0)
        return;
    if (e->prev)
        e->prev->next = e->next;
    else
        b->events = e->next;
    if (e->next)
        e->next->prev = e->prev;
    free(e);
}

/* As in CUDA, destroying an event with records still queued is allowed:
 * the queued ops keep it alive until they have run. */
int sim_event_destroy(tdm_backend *b, tdm_bevent *e)
{
    if (!e)
        return cudaErrorInvalidResourceHandle;
    pthread_mutex_lock(&b->lock);
    sim_event_unref_locked(b, e);
    pthread_mutex_unlock(&b->lock);
    return 0;
}

void sim_events_free_all(tdm_backend *b)
{
    while (b->events) {
        tdm_bevent *e = b->events;
        b->events = e->next;
        free(e);
    }
}

void sim_event_complete_locked(tdm_backend *b, tdm_bevent *e, uint64_t seq)
{
    /* Records on different streams may finish out of order; the event
     * reflects the latest one issued. */
    if (seq > e->completed) {
        e->completed = seq;
        e->t_ms = tdm_now_ms();
    }
}

int sim_event_record(tdm_backend *b, tdm_bevent *e, tdm_bstream *s)
{
    sim_op *op = calloc(1, sizeof(*op));

    if (!op)
        return cudaErrorMemoryAllocation;
    op->kind = SIM_OP_RECORD;
    op->event = e;
    pthread_mutex_lock(&b->lock);
    if (sim_capture_record_locked(b, e, sim_stream_or_legacy(b, s))) {
        pthread_mutex_unlock(&b->lock);
        free(op);
        return 0;
    }
    e->refs++;
    op->event_seq = ++e->recorded;
    e->recorded_on = sim_stream_or_legacy(b, s);
    pthread_mutex_unlock(&b->lock);
    sim_enqueue(b, s, op);
    return 0;
}

int sim_stream_wait_event(tdm_backend *b, tdm_bstream *s, tdm_bevent *e)
{
    sim_op *op;
    int joined;

    pthread_mutex_lock(&b->lock);
    /* A wait on a record made in a capture is an edge of that capture. */
    joined = sim_capture_wait_locked(b, sim_stream_or_legacy(b, s), e);
    /* Waiting for an event never recorded, or already complete, is a no-op. */
    if (joined || e->completed >= e->recorded) {
        pthread_mutex_unlock(&b->lock);
        return joined < 0 ? -joined : 0;
    }
    op = calloc(1, sizeof(*op));
    if (!op) {
        pthread_mutex_unlock(&b->lock);
        return cudaErrorMemoryAllocation;
    }
    op->kind = SIM_OP_WAIT;
    op->event = e;
    op->event_seq = e->recorded;
    e->refs++;
    pthread_mutex_unlock(&b->lock);
    sim_enqueue(b, s, op);
    return 0;
}

int sim_event_synchronize(tdm_backend *b, tdm_bevent *e)
{
    uint64_t target;
    sim_output_piece *out = NULL;
    size_t nout = 0;

    pthread_mutex_lock(&b->lock);

    target = e->recorded;
    while (e->completed < target && !atomic_load(&b->stopping))
        pthread_cond_wait(&b->progress, &b->lock);
    /* An event synchronize is a point where the GPU's printf buffer is
     * written out. */
    if (e->recorded_on)
        sim_output_take(&e->recorded_on->output, &out, &nout);
    pthread_mutex_unlock(&b->lock);
    sim_output_write(out, nout);
    return 0;
}

int sim_event_query(tdm_backend *b, tdm_bevent *e)
{
    int err;

    pthread_mutex_lock(&b->lock);
    err = e->completed < e->recorded ? cudaErrorNotReady : 0;
    pthread_mutex_unlock(&b->lock);
    return err;
}

int sim_event_elapsed_ms(tdm_backend *b, tdm_bevent *start, tdm_bevent *end, float *ms)
{
    int err = 0;

    if ((start->flags | end->flags) & cudaEventDisableTiming)
        return cudaErrorInvalidResourceHandle;
    pthread_mutex_lock(&b->lock);
    if (!start->recorded || !end->recorded)
        err = cudaErrorInvalidResourceHandle;
    else if (start->completed < start->recorded || end->completed < end->recorded)
        err = cudaErrorNotReady;
    else
        *ms = (float)(end->t_ms - start->t_ms);
    pthread_mutex_unlock(&b->lock);
    return err;
}
