/* The server's IPC export table (ipc_exports.h, docs/ipc.md). */
#include "ipc_exports.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include <driver_types.h>

#include "grow.h"

/* A handle's layout: magic and version, kind, the server's nonce, the
 * export's id and its secret; the rest is zero. */
enum {
    H_MAGIC = 0,     /* "TDMI" */
    H_VERSION = 4,
    H_KIND = 5,
    H_NONCE = 8,     /* 16 bytes */
    H_ID = 24,       /* 8 bytes, little-endian */
    H_SECRET = 32,   /* TDM_IPC_SECRET_LEN bytes */
    H_END = 48,
};
static const uint8_t magic[4] = { 'T', 'D', 'M', 'I' };
#define H_VERSION_1 1

static int random_bytes(void *p, size_t n)
{
    uint8_t *b = p;

    while (n) {
        ssize_t got = getrandom(b, n, 0);
        if (got < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        b += got;
        n -= (size_t)got;
    }
    return 0;
}

/* Equal without a timing that tells how many leading bytes matched: a guest
 * guessing a secret learns nothing from how long a refusal took. */
static bool equal_ct(const uint8_t *a, const uint8_t *b, size_t n)
{
    uint8_t diff = 0;

    for (size_t i = 0; i < n; i++)
        diff |= (uint8_t)(a[i] ^ b[i]);
    return diff == 0;
}

int tdm_ipc_table_init(tdm_ipc_table *t)
{
    int err;

    memset(t, 0, sizeof(*t));
    err = random_bytes(t->nonce, sizeof(t->nonce));
    if (err)
        return err;
    t->next_id = 1;
    pthread_mutex_init(&t->lock, NULL);
    return 0;
}

void tdm_ipc_table_destroy(tdm_ipc_table *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->v[i]);
    free(t->v);
    pthread_mutex_destroy(&t->lock);
    memset(t, 0, sizeof(*t));
}

void tdm_ipc_export_free(tdm_ipc_export *e)
{
    free(e);
}

static void write_handle(const tdm_ipc_table *t, const tdm_ipc_export *e, uint8_t h[TDM_IPC_HANDLE_LEN])
{
    memset(h, 0, TDM_IPC_HANDLE_LEN);
    memcpy(h + H_MAGIC, magic, sizeof(magic));
    h[H_VERSION] = H_VERSION_1;
    h[H_KIND] = (uint8_t)e->kind;
    memcpy(h + H_NONCE, t->nonce, sizeof(t->nonce));
    for (int i = 0; i < 8; i++)
        h[H_ID + i] = (uint8_t)(e->id >> (8 * i));
    memcpy(h + H_SECRET, e->secret, TDM_IPC_SECRET_LEN);
}

static size_t owned_locked(const tdm_ipc_table *t, uint64_t owner)
{
    size_t n = 0;

    for (size_t i = 0; i < t->n; i++)
        n += t->v[i]->owner == owner;
    return n;
}

static void remove_locked(tdm_ipc_table *t, tdm_ipc_export *e)
{
    for (size_t i = 0; i < t->n; i++)
        if (t->v[i] == e) {
            t->v[i] = t->v[--t->n];
            return;
        }
}

/* Under the lock: the owner's live export of this kind matching key (addr
 * is the pool handle for a pool). */
static tdm_ipc_export *owned_locked_find(tdm_ipc_table *t, uint64_t owner, tdm_ipc_kind kind, uint64_t addr,
                                         const tdm_bevent *ev)
{
    for (size_t i = 0; i < t->n; i++) {
        tdm_ipc_export *e = t->v[i];
        if (e->owner != owner || !e->owner_holds || e->kind != kind)
            continue;
        if (kind == TDM_IPC_MEM ? e->range.addr == addr : kind == TDM_IPC_POOL ? e->pool == addr : e->ev == ev)
            return e;
    }
    return NULL;
}

static int export_locked(tdm_ipc_table *t, tdm_ipc_export *proto, uint8_t handle[TDM_IPC_HANDLE_LEN],
                         tdm_ipc_export **out)
{
    uint64_t key = proto->kind == TDM_IPC_POOL ? proto->pool : proto->range.addr;
    tdm_ipc_export *e = owned_locked_find(t, proto->owner, proto->kind, key, proto->ev);
    int err;

    if (e)
        goto done;
    if (t->n >= TDM_IPC_MAX_EXPORTS || owned_locked(t, proto->owner) >= TDM_IPC_MAX_EXPORTS_PER_SESSION)
        return cudaErrorMemoryAllocation;
    if (tdm_grow(&t->v, &t->cap, t->n + 1, sizeof(*t->v), 16) != 0)
        return cudaErrorMemoryAllocation;
    e = malloc(sizeof(*e));
    if (!e)
        return cudaErrorMemoryAllocation;
    *e = *proto;
    err = random_bytes(e->secret, sizeof(e->secret));
    if (err) {
        free(e);
        return cudaErrorOperatingSystem;
    }
    e->id = t->next_id++;
    e->owner_holds = e->owner_alive = true;
    e->opens = 0;
    t->v[t->n++] = e;
done:
    write_handle(t, e, handle);
    *out = e;
    return 0;
}

int tdm_ipc_export_mem(tdm_ipc_table *t, uint64_t owner, const tdm_range *r, uint8_t handle[TDM_IPC_HANDLE_LEN],
                       tdm_ipc_export **out)
{
    tdm_ipc_export proto = { .kind = TDM_IPC_MEM, .owner = owner, .range = *r };
    int err;

    pthread_mutex_lock(&t->lock);
    err = export_locked(t, &proto, handle, out);
    pthread_mutex_unlock(&t->lock);
    return err;
}

int tdm_ipc_export_event(tdm_ipc_table *t, uint64_t owner, tdm_bevent *ev, unsigned flags,
                         uint8_t handle[TDM_IPC_HANDLE_LEN], tdm_ipc_export **out)
{
    tdm_ipc_export proto = { .kind = TDM_IPC_EVENT, .owner = owner, .ev = ev, .ev_flags = flags };
    int err;

    pthread_mutex_lock(&t->lock);
    err = export_locked(t, &proto, handle, out);
    pthread_mutex_unlock(&t->lock);
    return err;
}

tdm_ipc_export *tdm_ipc_owned_mem(tdm_ipc_table *t, uint64_t owner, uint64_t addr)
{
    tdm_ipc_export *e;

    pthread_mutex_lock(&t->lock);
    e = owned_locked_find(t, owner, TDM_IPC_MEM, addr, NULL);
    pthread_mutex_unlock(&t->lock);
    return e;
}

int tdm_ipc_open(tdm_ipc_table *t, uint64_t opener, const uint8_t handle[TDM_IPC_HANDLE_LEN], tdm_ipc_kind kind,
                 tdm_ipc_export **out)
{
    static const uint8_t zero[TDM_IPC_HANDLE_LEN - H_END];
    tdm_ipc_export *found = NULL;
    uint64_t id = 0;
    int err = cudaErrorInvalidResourceHandle;

    *out = NULL;
    if (memcmp(handle + H_MAGIC, magic, sizeof(magic)) != 0 || handle[H_VERSION] != H_VERSION_1 ||
        handle[H_KIND] != (uint8_t)kind || handle[H_KIND + 1] || handle[H_KIND + 2] ||
        memcmp(handle + H_END, zero, sizeof(zero)) != 0)
        return err;
    for (int i = 0; i < 8; i++)
        id |= (uint64_t)handle[H_ID + i] << (8 * i);
    pthread_mutex_lock(&t->lock);
    if (!equal_ct(handle + H_NONCE, t->nonce, sizeof(t->nonce)))
        goto out;
    for (size_t i = 0; i < t->n; i++)
        if (t->v[i]->id == id) {
            found = t->v[i];
            break;
        }
    /* An export the owner let go of may still be open elsewhere, but it
     * can no longer be opened: natively its handle names freed memory. */
    if (!found || found->kind != kind || !found->owner_holds ||
        !equal_ct(handle + H_SECRET, found->secret, TDM_IPC_SECRET_LEN))
        goto out;
    if (found->owner == opener) {
        err = cudaErrorDeviceUninitialized;
        goto out;
    }
    found->opens++;
    *out = found;
    err = 0;
out:
    pthread_mutex_unlock(&t->lock);
    return err;
}

/* Under the lock: out of the table when nobody holds it. */
static bool dies_locked(tdm_ipc_table *t, tdm_ipc_export *e)
{
    if (e->owner_holds || e->opens)
        return false;
    remove_locked(t, e);
    return true;
}

bool tdm_ipc_close(tdm_ipc_table *t, tdm_ipc_export *e)
{
    bool dead;

    pthread_mutex_lock(&t->lock);
    if (e->opens)
        e->opens--;
    dead = dies_locked(t, e);
    pthread_mutex_unlock(&t->lock);
    return dead;
}

bool tdm_ipc_owner_drops(tdm_ipc_table *t, tdm_ipc_export *e)
{
    bool dead;

    pthread_mutex_lock(&t->lock);
    e->owner_holds = false;
    dead = dies_locked(t, e);
    pthread_mutex_unlock(&t->lock);
    return dead;
}

void tdm_ipc_owner_ended(tdm_ipc_table *t, uint64_t owner)
{
    pthread_mutex_lock(&t->lock);
    for (size_t i = 0; i < t->n; i++)
        if (t->v[i]->owner == owner)
            t->v[i]->owner_alive = false;
    pthread_mutex_unlock(&t->lock);
}

uint64_t tdm_ipc_kept_bytes(tdm_ipc_table *t, uint64_t owner)
{
    uint64_t bytes = 0;

    pthread_mutex_lock(&t->lock);
    for (size_t i = 0; i < t->n; i++) {
        const tdm_ipc_export *e = t->v[i];
        if (e->owner == owner && e->owner_alive && !e->owner_holds && e->kind == TDM_IPC_MEM)
            bytes += e->range.mapped;
    }
    pthread_mutex_unlock(&t->lock);
    return bytes;
}

/* ---- pool sharing (issue 14) ---- */

int tdm_ipc_export_pool(tdm_ipc_table *t, uint64_t owner, uint64_t pool, uint8_t handle[TDM_IPC_HANDLE_LEN],
                        tdm_ipc_export **out)
{
    tdm_ipc_export proto = { .kind = TDM_IPC_POOL, .owner = owner, .pool = pool };
    int err;

    pthread_mutex_lock(&t->lock);
    err = export_locked(t, &proto, handle, out);
    pthread_mutex_unlock(&t->lock);
    return err;
}

tdm_ipc_export *tdm_ipc_owned_pool(tdm_ipc_table *t, uint64_t owner, uint64_t pool)
{
    tdm_ipc_export *e;

    pthread_mutex_lock(&t->lock);
    e = owned_locked_find(t, owner, TDM_IPC_POOL, pool, NULL);
    pthread_mutex_unlock(&t->lock);
    return e;
}

uint64_t tdm_ipc_mark_pool_ptr(tdm_ipc_table *t, tdm_ipc_export *e, uint64_t pool)
{
    uint64_t p;

    pthread_mutex_lock(&t->lock);
    if (!e->pool)
        e->pool = pool;
    p = e->pool;
    pthread_mutex_unlock(&t->lock);
    return p;
}
