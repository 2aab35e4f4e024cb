/* func_state.h.  Both tables are small (a setting per function and attribute; the occupancy
 * cache is emptied when it fills) and searched linearly under one lock: a search costs far
 * less than the round trip it saves. */
#include "func_state.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <driver_types.h>

#include "calls.h"
#include "guest.h"
#include "log.h"
#include "tandem_rpc.h"
#include "transport.h"

#define OCCUPANCY_CACHE_MAX 1024

/* Keys are compared with memcmp: no padding bytes. */
_Static_assert(sizeof(tdm_occupancy_key) == 2 * 8 + 4 * 4 + 10 * 4, "tdm_occupancy_key has padding");

typedef struct setting {
    uint64_t func;
    uint32_t proc;
    int what, value;
} setting;

/* The process has one session and so one set of functions. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static setting *settings;
static size_t nsettings, settings_cap;
static tdm_occupancy_key occ_keys[OCCUPANCY_CACHE_MAX];
static uint64_t occ_values[OCCUPANCY_CACHE_MAX];
static size_t nocc;

static setting *find_setting(uint32_t proc, uint64_t func, int what)
{
    for (size_t i = 0; i < nsettings; i++)
        if (settings[i].func == func && settings[i].proc == proc && settings[i].what == what)
            return &settings[i];
    return NULL;
}

bool tdm_func_setting_known(uint32_t proc, uint64_t func, int what, int value)
{
    bool known;

    pthread_mutex_lock(&lock);
    const setting *s = find_setting(proc, func, what);
    known = s && s->value == value;
    pthread_mutex_unlock(&lock);
    return known;
}

static void forget_occupancies_locked(uint64_t func)
{
    for (size_t i = 0; i < nocc;)
        if (occ_keys[i].func == func) {
            occ_keys[i] = occ_keys[--nocc];
            occ_values[i] = occ_values[nocc];
        } else {
            i++;
        }
}

void tdm_func_setting_note(uint32_t proc, uint64_t func, int what, int value)
{
    pthread_mutex_lock(&lock);
    forget_occupancies_locked(func);
    setting *s = find_setting(proc, func, what);
    if (s) {
        s->value = value;
    } else {
        if (nsettings == settings_cap) {
            size_t cap = settings_cap ? settings_cap * 2 : 64;
            setting *grown = realloc(settings, cap * sizeof(*grown));

            if (!grown) {
                /* Answered, but a standby would not have it: say so now, not after a fault. */
                tdm_log("out of memory keeping a function attribute: a takeover would lose it");
                goto out;
            }
            settings = grown;
            settings_cap = cap;
        }
        settings[nsettings++] = (setting){ func, proc, what, value };
    }
out:
    pthread_mutex_unlock(&lock);
}

int tdm_func_settings_reregister(struct tdm_transport *t)
{
    setting *copy = NULL;
    size_t n;
    int rc = TDM_T_OK;

    /* Copied out: the calls are made without the lock. */
    pthread_mutex_lock(&lock);
    n = nsettings;
    if (n && (copy = malloc(n * sizeof(*copy))) != NULL)
        memcpy(copy, settings, n * sizeof(*copy));
    pthread_mutex_unlock(&lock);
    if (n && !copy) {
        tdm_log("out of memory re-sending function attributes to the standby");
        return TDM_T_REJECTED;
    }
    for (size_t i = 0; i < n && rc == TDM_T_OK; i++) {
        tdm_func_set_args a = { .func = copy[i].func, .what = copy[i].what, .value = copy[i].value };
        const tdm_call_info *call = tdm_call_find(copy[i].proc);
        int err = 0;

        if (!call)
            continue;
        rc = t->ops->call(t, copy[i].proc, call->xargs, &a, call->xres, &err);
        /* Device output waiting is no error: the next call's reply says so again. */
        tdm_output_flag_take_err(&err);
        if (rc == TDM_T_OK && (err == cudaErrorInvalidResourceHandle || err == cudaErrorInvalidDeviceFunction)) {
            /* Its library was unloaded (the server's answer for a function it no longer has):
             * handles are never reused, so nothing else is named. */
            pthread_mutex_lock(&lock);
            for (size_t j = 0; j < nsettings;)
                if (settings[j].func == copy[i].func)
                    settings[j] = settings[--nsettings];
                else
                    j++;
            pthread_mutex_unlock(&lock);
        } else if (rc == TDM_T_OK && err != 0) {
            tdm_log("the standby refused %s (attribute %d = %d) of function %#llx (cudaError %d)", call->name,
                    copy[i].what, copy[i].value, (unsigned long long)copy[i].func, err);
            rc = TDM_T_REJECTED;
        }
    }
    free(copy);
    return rc;
}

bool tdm_occupancy_cached(const tdm_occupancy_key *k, uint64_t *value)
{
    bool hit = false;

    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < nocc && !hit; i++)
        if (!memcmp(&occ_keys[i], k, sizeof(*k))) {
            *value = occ_values[i];
            hit = true;
        }
    pthread_mutex_unlock(&lock);
    return hit;
}

void tdm_occupancy_note(const tdm_occupancy_key *k, uint64_t value)
{
    pthread_mutex_lock(&lock);
    if (nocc == OCCUPANCY_CACHE_MAX)
        nocc = 0;   /* a program asking this many kinds of question gets them asked again */
    occ_keys[nocc] = *k;
    occ_values[nocc++] = value;
    pthread_mutex_unlock(&lock);
}
