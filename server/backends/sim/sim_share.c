/* SM shares on the simulated GPU (issue 17, docs/sm-shares.md): a share is
 * only a number of SMs that the streams made in it carry, and a kernel's
 * completion on such a stream is held until the time sim_share_kernel_ns
 * models has passed since it started.  The twin itself runs at host speed,
 * so results are exact whatever the share. */
#include <stdlib.h>
#include <time.h>

#include "sim_internal.h"
#include "sim_share_model.h"

struct tdm_bshare {
    unsigned sms;
};

unsigned sim_device_sms(const tdm_backend *b)
{
    return b->cfg.sim_sms ? b->cfg.sim_sms : SIM_DEFAULT_SMS;
}

int sim_share_get(tdm_backend *b, unsigned sms, tdm_bshare **out, unsigned *granted)
{
    tdm_bshare *sh;

    *out = NULL;
    if (sms < 1 || sms > sim_device_sms(b))
        return cudaErrorInvalidValue;
    sh = malloc(sizeof(*sh));
    if (!sh)
        return cudaErrorMemoryAllocation;
    /* The sim partitions SM by SM: what is asked is what it gets, within the
     * server's window (--sm-window) as the GPU's share is. */
    if (b->cfg.sm_window_sms && sms > b->cfg.sm_window_sms)
        sms = b->cfg.sm_window_sms;
    sh->sms = sms;
    *out = sh;
    *granted = sms;
    return 0;
}

void sim_share_put(tdm_backend *b, tdm_bshare *sh)
{
    (void)b;
    free(sh);
}

int sim_share_stream_create(tdm_backend *b, tdm_bshare *sh, unsigned flags, int priority, tdm_bspace *sp,
                            tdm_bstream **out)
{
    int err = sim_stream_create(b, flags, priority, sp, out);

    if (err)
        return err;
    /* Under the lock the worker takes before it runs anything. */
    pthread_mutex_lock(&b->lock);
    (*out)->sms = sh->sms;
    pthread_mutex_unlock(&b->lock);
    return 0;
}

uint64_t sim_now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void sim_share_hold(tdm_backend *b, const tdm_bstream *s, const sim_op *op, uint64_t started_ns)
{
    uint64_t blocks = (uint64_t)op->grid.x * op->grid.y * op->grid.z;
    uint64_t until = started_ns + sim_share_kernel_ns(blocks, s->sms ? s->sms : sim_device_sms(b),
                                                      b->cfg.sim_wave_us);

    /* In slices, so that a server stop (b->stopping) ends the wait soon. */
    for (uint64_t now = sim_now_ns(); now < until && !atomic_load(&b->stopping); now = sim_now_ns()) {
        uint64_t left = until - now, slice = left < 10000000u ? left : 10000000u;
        struct timespec ts = { .tv_sec = 0, .tv_nsec = (long)slice };

        nanosleep(&ts, NULL);
    }
}
