/* The due/done state machine of host callbacks (callback_queue.h). */
#include "callback_queue.h"

#include <stdlib.h>
#include <string.h>

#include <driver_types.h>

#include "grow.h"

void tdm_cbq_init(tdm_cbq *q)
{
    memset(q, 0, sizeof(*q));
}

void tdm_cbq_release(tdm_cbq *q)
{
    free(q->v);
    tdm_cbq_init(q);
}

int tdm_cbq_add(tdm_cbq *q, uint64_t fn, uint64_t *seq)
{
    if (q->n >= TDM_CBQ_MAX)
        return cudaErrorLaunchOutOfResources;
    if (tdm_grow(&q->v, &q->cap, q->n + 1, sizeof(*q->v), 16) != 0)
        return cudaErrorMemoryAllocation;
    q->v[q->n++] = (tdm_cb_inst){ .seq = ++q->next_seq, .fn = fn, .state = TDM_CB_QUEUED };
    *seq = q->next_seq;
    return 0;
}

tdm_cb_inst *tdm_cbq_find(tdm_cbq *q, uint64_t seq)
{
    for (size_t i = 0; i < q->n; i++)
        if (q->v[i].seq == seq)
            return &q->v[i];
    return NULL;
}

void tdm_cbq_remove(tdm_cbq *q, uint64_t seq)
{
    tdm_cb_inst *c = tdm_cbq_find(q, seq);

    if (!c)
        return;
    /* Keeps the order: take_due hands instances out oldest first. */
    memmove(c, c + 1, (size_t)(q->v + q->n - (c + 1)) * sizeof(*c));
    q->n--;
}

int tdm_cbq_due(tdm_cbq *q, uint64_t seq, int status)
{
    tdm_cb_inst *c = tdm_cbq_find(q, seq);

    if (!c || c->state != TDM_CB_QUEUED)
        return -1;
    c->state = TDM_CB_DUE;
    c->status = status;
    return 0;
}

size_t tdm_cbq_take_due(tdm_cbq *q, tdm_cb_inst *out, size_t max)
{
    size_t k = 0;

    for (size_t i = 0; i < q->n && k < max; i++) {
        if (q->v[i].state != TDM_CB_DUE)
            continue;
        q->v[i].state = TDM_CB_TAKEN;
        out[k++] = q->v[i];
    }
    return k;
}

int tdm_cbq_done(tdm_cbq *q, uint64_t seq, void **hold)
{
    tdm_cb_inst *c = tdm_cbq_find(q, seq);

    if (!c || c->state != TDM_CB_TAKEN)
        return cudaErrorInvalidValue;
    *hold = c->hold;
    tdm_cbq_remove(q, seq);
    return 0;
}
