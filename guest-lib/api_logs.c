/* Error log management (CUDA 12.9+; docs/runtime-api.md, "Device odds and
 * ends"): the process's log of the errors its CUDA calls returned.  The
 * driver's own log lives in the server, which is shared and whose messages
 * may name other tenants' work, so the guest keeps its own: every error an
 * entry point returns (tdm_ret) becomes one message, in the driver's
 * format "[HH:MM:SS.mmm][thread][CUDA][E] text", kept in a ring of at most
 * TDM_LOGS_BYTES bytes as the driver keeps at most 25600. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "guest.h"

#define TDM_LOGS_BYTES 25600
#define TDM_LOG_MESSAGE_MAX 256

typedef struct log_message {
    unsigned int seq; /* cudaLogIterator value naming it */
    size_t len;       /* without the newline */
    char text[TDM_LOG_MESSAGE_MAX];
} log_message;

/* Enough slots for the byte budget's worth of the shortest messages. */
#define TDM_LOG_SLOTS (TDM_LOGS_BYTES / 48)

struct CUlogsCallbackEntry_st {
    struct CUlogsCallbackEntry_st *next;
    cudaLogsCallback_t func;
    void *user_data;
};

static pthread_mutex_t logs_lock = PTHREAD_MUTEX_INITIALIZER;
static log_message ring[TDM_LOG_SLOTS];
static unsigned int next_seq;   /* the iterator of the next message */
static unsigned int oldest_seq; /* the oldest message still kept */
static size_t kept_bytes;       /* with their newlines */
static struct CUlogsCallbackEntry_st *log_callbacks;
/* A callback's own failing calls are not logged again into it. */
static _Thread_local bool in_log_callback;

static log_message *slot(unsigned int seq)
{
    return &ring[seq % TDM_LOG_SLOTS];
}

static void drop_oldest(void)
{
    kept_bytes -= slot(oldest_seq)->len + 1;
    oldest_seq++;
}

static void format_message(cudaError_t err, char *out, size_t cap, size_t *len)
{
    struct timespec ts;
    struct tm tm;
    int n;

    clock_gettime(CLOCK_REALTIME, &ts);
    localtime_r(&ts.tv_sec, &tm);
    n = snprintf(out, cap, "[%02d:%02d:%02d.%03ld][%lu][CUDA][E] Returning %d (%s)", tm.tm_hour, tm.tm_min,
                 tm.tm_sec, ts.tv_nsec / 1000000, (unsigned long)pthread_self(), (int)err, cudaGetErrorName(err));
    *len = n < 0 ? 0 : (size_t)n >= cap ? cap - 1 : (size_t)n;
}

void tdm_logs_note(cudaError_t err)
{
    log_message m;
    struct CUlogsCallbackEntry_st *cb[16];
    size_t ncb = 0;

    if (in_log_callback)
        return;
    format_message(err, m.text, sizeof(m.text), &m.len);
    pthread_mutex_lock(&logs_lock);
    while (next_seq - oldest_seq >= TDM_LOG_SLOTS || (next_seq != oldest_seq && kept_bytes + m.len + 1 > TDM_LOGS_BYTES))
        drop_oldest();
    m.seq = next_seq++;
    *slot(m.seq) = m;
    kept_bytes += m.len + 1;
    for (struct CUlogsCallbackEntry_st *e = log_callbacks; e && ncb < sizeof(cb) / sizeof(cb[0]); e = e->next)
        cb[ncb++] = e;
    /* Callbacks run outside the lock (they may call CUDA), on the thread
     * whose call failed, as the driver's do; one unregistered meanwhile by
     * another thread is the program's race, as natively. */
    struct { cudaLogsCallback_t f; void *d; } run[sizeof(cb) / sizeof(cb[0])];
    for (size_t i = 0; i < ncb; i++) {
        run[i].f = cb[i]->func;
        run[i].d = cb[i]->user_data;
    }
    pthread_mutex_unlock(&logs_lock);
    in_log_callback = true;
    for (size_t i = 0; i < ncb; i++)
        run[i].f(run[i].d, cudaLogLevelError, m.text, m.len);
    in_log_callback = false;
}

cudaError_t cudaLogsRegisterCallback(cudaLogsCallback_t callbackFunc, void *userData,
                                     cudaLogsCallbackHandle *callback_out)
{
    struct CUlogsCallbackEntry_st *e;

    if (!callbackFunc)
        return tdm_ret(cudaErrorInvalidValue);
    if (!(e = calloc(1, sizeof(*e))))
        return tdm_ret(cudaErrorMemoryAllocation);
    e->func = callbackFunc;
    e->user_data = userData;
    pthread_mutex_lock(&logs_lock);
    e->next = log_callbacks;
    log_callbacks = e;
    pthread_mutex_unlock(&logs_lock);
    if (callback_out)
        *callback_out = e;
    return cudaSuccess;
}

cudaError_t cudaLogsUnregisterCallback(cudaLogsCallbackHandle callback)
{
    struct CUlogsCallbackEntry_st **p, *found = NULL;

    pthread_mutex_lock(&logs_lock);
    for (p = &log_callbacks; *p; p = &(*p)->next)
        if (*p == callback) {
            found = *p;
            *p = found->next;
            break;
        }
    pthread_mutex_unlock(&logs_lock);
    if (!found)
        return tdm_ret(cudaErrorInvalidValue);
    free(found);
    return cudaSuccess;
}

cudaError_t cudaLogsCurrent(cudaLogIterator *iterator_out, unsigned int flags)
{
    (void)flags; /* reserved: the driver ignores it (flags 1 succeeds natively) */
    if (!iterator_out)
        return tdm_ret(cudaErrorInvalidValue);
    pthread_mutex_lock(&logs_lock);
    *iterator_out = next_seq;
    pthread_mutex_unlock(&logs_lock);
    return cudaSuccess;
}

/* The first message a dump from `it` (NULL: all) gives; *truncated when
 * messages after `it` were dropped from the ring. Under logs_lock. */
static unsigned int dump_start(const cudaLogIterator *it, bool *truncated)
{
    unsigned int from = it ? *it : oldest_seq;

    *truncated = false;
    if ((int)(from - oldest_seq) < 0) {
        *truncated = true;
        from = oldest_seq;
    }
    if ((int)(next_seq - from) < 0)
        from = next_seq;
    return from;
}

static const char truncated_note[] = "[CUDA][W] Log buffer truncated: earlier messages were dropped";

cudaError_t cudaLogsDumpToFile(cudaLogIterator *iterator, const char *pathToFile, unsigned int flags)
{
    FILE *f;
    bool truncated;
    unsigned int from;
    int bad = 0;

    (void)flags; /* reserved and ignored, as cudaLogsCurrent's */
    if (!pathToFile)
        return tdm_ret(cudaErrorInvalidValue);
    if (!(f = fopen(pathToFile, "a")))
        return tdm_ret(cudaErrorInvalidValue);
    pthread_mutex_lock(&logs_lock);
    from = dump_start(iterator, &truncated);
    if (truncated)
        bad |= fprintf(f, "%s\n", truncated_note) < 0;
    for (unsigned int seq = from; seq != next_seq; seq++)
        bad |= fprintf(f, "%.*s\n", (int)slot(seq)->len, slot(seq)->text) < 0;
    if (iterator)
        *iterator = next_seq;
    pthread_mutex_unlock(&logs_lock);
    bad |= fclose(f) != 0;
    return bad ? tdm_ret(cudaErrorUnknown) : cudaSuccess;
}

/* As the driver documents it: newline after each message, a NUL after the
 * last; too small for everything, a note first and then the most recent
 * messages that fit; too small for any, *size 0 and cudaErrorInvalidValue. */
cudaError_t cudaLogsDumpToMemory(cudaLogIterator *iterator, char *buffer, size_t *size, unsigned int flags)
{
    bool truncated;
    unsigned int from, first;
    size_t need = 0, cap, at = 0;
    cudaError_t err = cudaSuccess;

    (void)flags; /* reserved: the driver ignores it (flags 1 succeeds natively) */
    if (!buffer || !size)
        return tdm_ret(cudaErrorInvalidValue);
    cap = *size;
    pthread_mutex_lock(&logs_lock);
    from = dump_start(iterator, &truncated);
    if (from == next_seq) {
        *size = 0;
        if (cap)
            buffer[0] = '\0';
        goto out;
    }
    first = from;
    for (unsigned int seq = from; seq != next_seq; seq++)
        need += slot(seq)->len + 1;
    if (need + 1 > cap || truncated) {
        /* The newest messages that fit behind the note. */
        size_t room = cap > sizeof(truncated_note) ? cap - sizeof(truncated_note) - 1 : 0, used = 0;
        first = next_seq;
        while (first != from && used + slot(first - 1)->len + 1 <= room) {
            used += slot(first - 1)->len + 1;
            first--;
        }
        if (first == next_seq) {
            *size = 0;
            err = cudaErrorInvalidValue;
            goto out;
        }
        memcpy(buffer, truncated_note, sizeof(truncated_note) - 1);
        at = sizeof(truncated_note) - 1;
        buffer[at++] = '\n';
    }
    for (unsigned int seq = first; seq != next_seq; seq++) {
        memcpy(buffer + at, slot(seq)->text, slot(seq)->len);
        at += slot(seq)->len;
        buffer[at++] = '\n';
    }
    buffer[at] = '\0';
    *size = at;
    if (iterator)
        *iterator = next_seq;
out:
    pthread_mutex_unlock(&logs_lock);
    return tdm_ret(err);
}
