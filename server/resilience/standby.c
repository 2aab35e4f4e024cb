#include "standby.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <driver_types.h>

#include "log.h"
#include "mirror_wire.h"
#include "session.h"
#include "shadow.h"
#include "takeover_state.h"
#include "tandem_rpc.h"
#include "clock.h"

#define UNCLAIMED_TTL_S 60      /* a dead active's sessions wait this long for their guests */
#define ACTIVE_GONE_WAIT_S 5    /* a resume waits this long for the active's feed to end */

typedef struct feed {
    struct tdm_standby *sb;
    int sock;
    bool ended;
    uint64_t arena_base, arena_size;
} feed;

typedef struct mirror_session {
    struct mirror_session *next;
    feed *f;
    uint64_t id, token;
    int policy;
    uint64_t epoch;           /* the last epoch the active reached */
    tdm_session *sess;
    bool diverged, claimed;
    bool handed_off;          /* fail-back: resumable while its feed goes on */
} mirror_session;

struct tdm_standby {
    tdm_server *srv;
    tdm_standby_fail_back_fn fail_back;  /* a new active asks for the sessions */
    void *fail_back_ctx;
    int lsock;
    char path[108];
    pthread_t acceptor;
    pthread_mutex_t lock;
    pthread_cond_t changed;   /* a feed ended or a session was claimed */
    mirror_session *sessions;
    int live_feeds;           /* feeds not yet read to their end */
    struct timespec last_end; /* CLOCK_REALTIME: when a feed last ended */
    int resuming;             /* claimed sessions whose guest has not called since its reply */
    int feed_threads;         /* feed threads not yet finished */
};

static mirror_session *find_locked(tdm_standby *sb, feed *f, uint64_t id)
{
    for (mirror_session *m = sb->sessions; m; m = m->next)
        if (m->f == f && m->id == id)
            return m;
    return NULL;
}

static void unlink_locked(tdm_standby *sb, mirror_session *ms)
{
    for (mirror_session **p = &sb->sessions; *p; p = &(*p)->next)
        if (*p == ms) {
            *p = ms->next;
            return;
        }
}

static void diverge(mirror_session *ms, const char *what, int err)
{
    if (!ms->diverged)
        tdm_log("standby: session %llu cannot be resumed: %s failed here (cudaError %d)", (unsigned long long)ms->id,
                what, err);
    ms->diverged = true;
}

/* Imports memory the active exported, at its address. */
static int import_at(tdm_standby *sb, uint64_t addr, uint64_t mapped, int fd, tdm_bmem **mem)
{
    tdm_server *srv = sb->srv;
    int err;

    if (fd < 0)
        return cudaErrorInvalidValue;
    if (tdm_arena_claim(srv->arena, addr, mapped) != 0)
        return cudaErrorMemoryAllocation;
    err = srv->ops->mem_import(srv->be, addr, mapped, fd, mem);
    if (err)
        tdm_arena_free(srv->arena, addr, mapped);
    return err;
}

/* A session-wide hidden mapping (marker table, globals area): imported
 * once.  True when it was. */
static bool import_hidden(tdm_standby *sb, mirror_session *ms, const tdm_mirror_hdr *h, int fd, tdm_bmem **mem,
                          uint64_t *addr, uint64_t *mapped, const char *what)
{
    char why[64];
    int err = *mem ? cudaErrorInvalidValue : import_at(sb, h->a, h->b, fd, mem);

    if (err) {
        snprintf(why, sizeof(why), "importing %s", what);
        diverge(ms, why, err);
        return false;
    }
    *addr = h->a;
    *mapped = h->b;
    return true;
}

/* cuLibraryGetGlobal on the active: the variable at the address its guest holds (issue 15). */
static int apply_library_global(mirror_session *ms, const tdm_mirror_hdr *h, const void *payload)
{
    char name[1024];

    if (!payload || h->len == 0 || h->len >= sizeof(name))
        return cudaErrorInvalidValue;
    memcpy(name, payload, h->len);
    name[h->len] = 0;
    int err = tdm_session_library_global_at(ms->sess, h->a, name, h->c);
    /* Kept as the active keeps it: should this server take the session over, its own standby
     * (or a fail-back target) must get the global too. */
    if (!err && !tdm_takeover_keep_global(tdm_takeover(ms->sess), h->a, name, h->c))
        err = cudaErrorMemoryAllocation;
    return err;
}

static void apply_module_load(mirror_session *ms, const tdm_mirror_hdr *h, const void *payload)
{
    tdm_module_load_args a;
    uint32_t nf = 0, nv = 0;
    uint64_t module = 0, *fh = NULL, *va = NULL, *vs = NULL, *want_fh = NULL, *logical = NULL;
    int *fe = NULL, *ve = NULL, err = cudaErrorInvalidValue;
    XDR x;

    memset(&a, 0, sizeof(a));
    xdrmem_create(&x, (char *)payload, h->len, XDR_DECODE);
    if (!xdr_tdm_module_load_args(&x, &a))
        goto out;
    size_t pos = xdr_getpos(&x);
    const char *p = (const char *)payload + pos;
    size_t left = h->len - pos;
    if (left < 4)
        goto out;
    memcpy(&nf, p, 4);
    if (nf != a.funcs.funcs_len || left < 8 + (size_t)nf * 8)
        goto out;
    want_fh = malloc((nf + 1) * 8);
    memcpy(want_fh, p + 4, (size_t)nf * 8);
    p += 4 + (size_t)nf * 8;
    left -= 4 + (size_t)nf * 8;
    memcpy(&nv, p, 4);
    if (nv != a.vars.vars_len || left != 4 + (size_t)nv * 8)
        goto out;
    logical = malloc((nv + 1) * 8);
    fh = calloc(nf + 1, 8), va = calloc(nv + 1, 8), vs = calloc(nv + 1, 8);
    fe = calloc(nf + 1, sizeof(int)), ve = calloc(nv + 1, sizeof(int));
    if (!want_fh || !logical || !fh || !va || !vs || !fe || !ve) {
        err = cudaErrorMemoryAllocation;
        goto out;
    }
    memcpy(logical, p + 4, (size_t)nv * 8);
    /* The active's handles, in the order the load takes them: its
     * functions (those it resolved), then the module. */
    uint32_t nwant = 0;
    for (uint32_t i = 0; i < nf; i++)
        if (want_fh[i])
            want_fh[nwant++] = want_fh[i];
    want_fh[nwant++] = h->a;
    tdm_takeover(ms->sess)->want_ids = want_fh;
    tdm_takeover(ms->sess)->n_want = nwant;
    err = tdm_session_module_load(ms->sess, a.image.image_val, a.image.image_len,
                                  (const char *const *)a.funcs.funcs_val, nf, (const char *const *)a.vars.vars_val,
                                  nv, logical, &module, fh, fe, va, vs, ve);
    tdm_takeover(ms->sess)->n_want = 0;
    if (!err && module != h->a)
        err = cudaErrorInvalidResourceHandle;
    for (uint32_t i = 0, k = 0; !err && i < nf; i++)
        if (fh[i] && fh[i] != want_fh[k++])
            err = cudaErrorInvalidResourceHandle;
out:
    if (err)
        diverge(ms, "loading a module", err);
    xdr_destroy(&x);
    xdr_free((xdrproc_t)xdr_tdm_module_load_args, (char *)&a);
    free(want_fh);
    free(logical);
    free(fh);
    free(va);
    free(vs);
    free(fe);
    free(ve);
}

/* The shadow that lives at addr, or NULL. */
static const tdm_shadow *shadow_at(tdm_session *s, uint64_t addr)
{
    const tdm_range_map *shadows = &tdm_takeover(s)->shadows;

    for (size_t i = 0; i < shadows->n; i++)
        if (((const tdm_shadow *)shadows->v[i].backing)->addr == addr)
            return shadows->v[i].backing;
    return NULL;
}

static void apply_unmap(mirror_session *ms, uint64_t addr)
{
    tdm_session *s = ms->sess;
    const tdm_shadow_markers *mk = &tdm_takeover(s)->markers;
    const tdm_shadow *sh;
    int err;

    if (mk->mem && mk->addr == addr) {
        tdm_shadow_release_markers(s);
        return;
    }
    if ((sh = shadow_at(s, addr))) {
        tdm_shadow_drop(s, sh->of_addr);
        return;
    }
    err = tdm_session_free(s, addr);
    if (err)
        diverge(ms, "releasing an allocation", err);
}

/* A shadow the active made of the range at `of`, as the standby records
 * it; NULL when that range is not the session's own of that kind, or is
 * shadowed already. */
static tdm_shadow *imported_shadow(tdm_session *s, uint64_t of, tdm_range_kind kind)
{
    const tdm_range *r = tdm_range_map_find(&s->ranges, of);
    tdm_shadow *sh;

    if (!r || r->addr != of || r->kind != kind || tdm_shadow_of(s, of))
        return NULL;
    sh = calloc(1, sizeof(*sh));
    if (!sh)
        return NULL;
    sh->of_addr = r->addr;
    sh->of_size = r->size;
    sh->of_dev = tdm_session_range_dev(r);
    sh->global = kind == TDM_RANGE_GLOBAL;
    return sh;
}

static void apply_shadow(tdm_standby *sb, mirror_session *ms, const tdm_mirror_hdr *h, int fd)
{
    tdm_shadow *sh = imported_shadow(ms->sess, h->c, TDM_RANGE_ALLOC);
    int err = cudaErrorInvalidValue;

    if (!sh)
        goto fail;
    err = import_at(sb, h->a, h->b, fd, &sh->mem);
    if (err)
        goto fail;
    sh->addr = h->a;
    sh->mapped = h->b;
    sh->slot = (uint32_t)h->d;
    if (tdm_shadow_attach(ms->sess, sh) != 0) {
        sb->srv->ops->mem_unmap(sb->srv->be, sh->addr, sh->mapped, sh->mem);
        tdm_arena_free(sb->srv->arena, sh->addr, sh->mapped);
        err = cudaErrorMemoryAllocation;
        goto fail;
    }
    /* Should this session become its server's (a takeover), shadows it
     * makes must not take slots the imported ones use. */
    tdm_markers_slot_in_use(&tdm_takeover(ms->sess)->markers, sh->slot);
    return;
fail:
    free(sh);
    diverge(ms, "importing a shadow", err);
}

static void apply_global_shadow(mirror_session *ms, const tdm_mirror_hdr *h)
{
    tdm_session *s = ms->sess;
    tdm_shadow_markers *mk = &tdm_takeover(s)->markers;
    tdm_shadow *sh;

    if (!mk->gmem || h->a < mk->gaddr || h->a - mk->gaddr > mk->gmapped - 2 * h->b ||
        !(sh = imported_shadow(s, h->c, TDM_RANGE_GLOBAL))) {
        diverge(ms, "placing a variable's shadow", cudaErrorInvalidValue);
        return;
    }
    sh->addr = h->a;
    sh->mapped = h->b;
    sh->slot = (uint32_t)h->d;
    sh->slot_odd = (uint32_t)(h->d >> 32);
    if (tdm_shadow_attach(s, sh) != 0) {
        free(sh);
        diverge(ms, "placing a variable's shadow", cudaErrorMemoryAllocation);
        return;
    }
    tdm_markers_slot_in_use(mk, sh->slot_odd);
    if (h->a - mk->gaddr + 2 * h->b > mk->gused)
        mk->gused = h->a - mk->gaddr + 2 * h->b;
}

/* The next handle the session gives is `id`, the active's. */
static void want_one(tdm_session *s, const uint64_t *id)
{
    tdm_takeover(s)->want_ids = id;
    tdm_takeover(s)->n_want = 1;
}

static void apply(tdm_standby *sb, feed *f, const tdm_mirror_hdr *h, const void *payload, int fd)
{
    tdm_shadow_markers *mk;
    mirror_session *ms;
    uint64_t handle = 0;
    tdm_bmem *mem = NULL;
    int err = 0;

    pthread_mutex_lock(&sb->lock);
    ms = find_locked(sb, f, h->session);
    pthread_mutex_unlock(&sb->lock);
    if (h->type == TDM_M_SESSION_OPEN) {
        if (ms) {                          /* a second hello: new token */
            ms->token = h->a;
            ms->policy = (int)h->b;
            return;
        }
        ms = calloc(1, sizeof(*ms));
        if (!ms || tdm_session_create(sb->srv, &ms->sess) != 0) {
            tdm_log("standby: no room to mirror session %llu", (unsigned long long)h->session);
            free(ms);
            return;
        }
        ms->f = f;
        ms->id = h->session;
        ms->token = h->a;
        ms->policy = (int)h->b;
        pthread_mutex_lock(&sb->lock);
        ms->next = sb->sessions;
        sb->sessions = ms;
        pthread_cond_broadcast(&sb->changed);
        pthread_mutex_unlock(&sb->lock);
        return;
    }
    if (!ms || ms->diverged)
        return;                            /* unknown (never protected) or already lost */
    mk = &tdm_takeover(ms->sess)->markers;
    switch (h->type) {
    case TDM_M_SESSION_CLOSE:
        pthread_mutex_lock(&sb->lock);
        unlink_locked(sb, ms);
        pthread_mutex_unlock(&sb->lock);
        tdm_session_destroy(ms->sess);
        free(ms);
        return;
    case TDM_M_MAP:
        err = import_at(sb, h->a, h->b, fd, &mem);
        if (!err) {
            err = tdm_session_adopt_mem(ms->sess, h->a, h->b, h->c, mem);
            if (err) {
                sb->srv->ops->mem_unmap(sb->srv->be, h->a, h->b, mem);
                tdm_arena_free(sb->srv->arena, h->a, h->b);
            }
        }
        if (err)
            diverge(ms, "importing an allocation", err);
        return;
    case TDM_M_UNMAP:
        apply_unmap(ms, h->a);
        return;
    case TDM_M_SHADOW:
        apply_shadow(sb, ms, h, fd);
        return;
    case TDM_M_MARKERS:
        if (import_hidden(sb, ms, h, fd, &mk->mem, &mk->addr, &mk->mapped, "the marker table"))
            mk->nslots = (uint32_t)(h->b / sizeof(uint64_t));
        return;
    case TDM_M_MODULE_LOAD:
        apply_module_load(ms, h, payload);
        return;
    case TDM_M_GLOBALS_AREA:
        import_hidden(sb, ms, h, fd, &mk->gmem, &mk->gaddr, &mk->gmapped, "the globals area");
        return;
    case TDM_M_GLOBAL_SHADOW:
        apply_global_shadow(ms, h);
        return;
    case TDM_M_EPOCH:
        ms->epoch = h->a;
        return;
    case TDM_M_HANDOFF:
        pthread_mutex_lock(&sb->lock);
        ms->epoch = h->a;
        ms->handed_off = true;
        pthread_cond_broadcast(&sb->changed);
        pthread_mutex_unlock(&sb->lock);
        tdm_log("standby: session %llu handed over at epoch %llu (fail-back)", (unsigned long long)ms->id,
                (unsigned long long)h->a);
        return;
    case TDM_M_MODULE_UNLOAD:
        err = tdm_session_module_unload(ms->sess, h->a);
        break;
    case TDM_M_LIBRARY_GLOBAL:
        err = apply_library_global(ms, h, payload);
        break;
    case TDM_M_STREAM_CREATE:
        want_one(ms->sess, &h->a);
        err = tdm_session_stream_create(ms->sess, (unsigned)h->b, (int)(int64_t)h->c, &handle);
        tdm_takeover(ms->sess)->n_want = 0;
        if (!err && handle != h->a)
            err = cudaErrorInvalidResourceHandle;
        break;
    case TDM_M_STREAM_DESTROY:
        err = tdm_session_stream_destroy(ms->sess, h->a);
        break;
    case TDM_M_EVENT_CREATE:
        want_one(ms->sess, &h->a);
        err = tdm_session_event_create(ms->sess, (unsigned)h->b, &handle);
        tdm_takeover(ms->sess)->n_want = 0;
        if (!err && handle != h->a)
            err = cudaErrorInvalidResourceHandle;
        break;
    case TDM_M_EVENT_DESTROY:
        err = tdm_session_event_destroy(ms->sess, h->a);
        break;
    case TDM_M_RESET:
        err = tdm_session_reset(ms->sess);
        break;
    default:
        err = cudaErrorInvalidValue;
        break;
    }
    if (err)
        diverge(ms, "mirroring a stream, event or module change", err);
}

static bool arena_covers(tdm_server *srv, uint64_t base, uint64_t size)
{
    return base >= srv->cfg.arena_base && size <= srv->cfg.arena_size &&
           base - srv->cfg.arena_base <= srv->cfg.arena_size - size;
}

/* A new active asks for this server's sessions (--failback-from). */
static void answer_fail_back(tdm_standby *sb, feed *f, const char *path, uint32_t len)
{
    tdm_mirror_hdr h = { .type = TDM_M_HELLO, .c = TDM_MIRROR_MAGIC };
    char p[108];
    const char *why = "its socket path is empty or too long";

    if (path && len > 0 && len < sizeof(p)) {
        snprintf(p, sizeof(p), "%.*s", (int)len, path);
        why = "this server cannot mirror to it";
        if (sb->fail_back(sb->fail_back_ctx, p) == 0)
            why = NULL;
    }
    h.a = why == NULL;
    h.len = why ? (uint32_t)strlen(why) : 0;
    tdm_mirror_send(f->sock, &h, why, -1);
}

/* 0: an active's feed follows; 1: a fail-back request, answered; -1: bad. */
static int handshake(tdm_standby *sb, feed *f)
{
    tdm_mirror_hdr h;
    void *payload = NULL;
    char ep[160], shm_ep[160], eps[2 * 160], why[200];
    int fd = -1;

    if (tdm_mirror_recv(f->sock, &h, &payload, &fd) != 0 || h.c != TDM_MIRROR_MAGIC ||
        (h.type != TDM_M_HELLO && h.type != TDM_M_FAILBACK)) {
        free(payload);
        if (fd >= 0)
            close(fd);
        return -1;
    }
    if (h.type == TDM_M_FAILBACK) {
        answer_fail_back(sb, f, payload, h.len);
        free(payload);
        if (fd >= 0)
            close(fd);
        return 1;
    }
    free(payload);
    if (fd >= 0)
        close(fd);
    f->arena_base = h.a;
    f->arena_size = h.b;
    for (int i = 0; i < 500 && !tdm_server_endpoint(sb->srv, ep, shm_ep, sizeof(ep)); i++)
        usleep(10000);
    memset(&h, 0, sizeof(h));
    h.type = TDM_M_HELLO;
    if (!arena_covers(sb->srv, f->arena_base, f->arena_size)) {
        snprintf(why, sizeof(why), "its arena [%#llx, +%llu) is not inside the standby's [%#llx, +%llu)",
                 (unsigned long long)f->arena_base, (unsigned long long)f->arena_size,
                 (unsigned long long)sb->srv->cfg.arena_base, (unsigned long long)sb->srv->cfg.arena_size);
        tdm_log("standby: refused an active server: %s", why);
        h.len = (uint32_t)strlen(why);
        tdm_mirror_send(f->sock, &h, why, -1);
        return -1;
    }
    /* One endpoint per transport this standby serves, each ending in a NUL:
     * an active hands each guest the one of its own transport. */
    h.a = 1;
    h.len = (uint32_t)(strlen(ep) + 1);
    memcpy(eps, ep, h.len);
    if (shm_ep[0]) {
        memcpy(eps + h.len, shm_ep, strlen(shm_ep) + 1);
        h.len += (uint32_t)strlen(shm_ep) + 1;
    }
    return ep[0] && tdm_mirror_send(f->sock, &h, eps, -1) == 0 ? 0 : -1;
}

/* After the feed ends: sessions nobody resumes in time are dropped. */
static void reap_unclaimed(tdm_standby *sb, feed *f)
{
    struct timespec until;
    mirror_session *gone = NULL;

    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += UNCLAIMED_TTL_S;
    pthread_mutex_lock(&sb->lock);
    for (;;) {
        bool any = false;
        for (mirror_session *m = sb->sessions; m; m = m->next)
            any |= m->f == f;
        if (!any || pthread_cond_timedwait(&sb->changed, &sb->lock, &until) == ETIMEDOUT)
            break;
    }
    for (mirror_session **p = &sb->sessions; *p;) {
        mirror_session *m = *p;
        if (m->f == f && !m->claimed) {
            *p = m->next;
            m->next = gone;
            gone = m;
        } else {
            p = &m->next;
        }
    }
    pthread_mutex_unlock(&sb->lock);
    while (gone) {
        mirror_session *m = gone;
        gone = m->next;
        tdm_log("standby: session %llu was not resumed within %d s: released", (unsigned long long)m->id,
                UNCLAIMED_TTL_S);
        tdm_session_destroy(m->sess);
        free(m);
    }
}

static void *feed_main(void *arg)
{
    feed *f = arg;
    tdm_standby *sb = f->sb;
    tdm_mirror_hdr h;
    void *payload;
    int fd, rc = -1;

    rc = handshake(sb, f);
    if (rc == 1)
        goto out;
    if (rc != 0) {
        tdm_log("standby: a mirror connection failed its handshake");
        goto out;
    }
    tdm_log("standby: an active server (arena %#llx) is mirrored here", (unsigned long long)f->arena_base);
    while ((rc = tdm_mirror_recv(f->sock, &h, &payload, &fd)) == 0) {
        apply(sb, f, &h, payload, fd);
        free(payload);
        if (fd >= 0)
            close(fd);
    }
    tdm_log("standby: the feed of active server (arena %#llx) %s", (unsigned long long)f->arena_base,
            rc == 1 ? "ended: its sessions may resume here" : "broke off: its sessions may resume here");
out:
    pthread_mutex_lock(&sb->lock);
    clock_gettime(CLOCK_REALTIME, &sb->last_end);
    f->ended = true;
    sb->live_feeds--;
    pthread_cond_broadcast(&sb->changed);
    pthread_mutex_unlock(&sb->lock);
    reap_unclaimed(sb, f);
    close(f->sock);
    /* No session points at f any more: resumed ones left the list, the
     * rest were reaped. */
    free(f);
    pthread_mutex_lock(&sb->lock);
    sb->feed_threads--;             /* the last touch of sb: a stop may free it now */
    pthread_mutex_unlock(&sb->lock);
    return NULL;
}

static void *accept_main(void *arg)
{
    tdm_standby *sb = arg;

    for (;;) {
        int s = accept4(sb->lsock, NULL, NULL, SOCK_CLOEXEC);
        if (s < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            return NULL;                 /* the socket was shut down: stopping */
        }
        feed *f = calloc(1, sizeof(*f));
        pthread_t t;
        if (!f) {
            close(s);
            continue;
        }
        f->sb = sb;
        f->sock = s;
        pthread_mutex_lock(&sb->lock);
        sb->live_feeds++;
        sb->feed_threads++;
        pthread_mutex_unlock(&sb->lock);
        if (pthread_create(&t, NULL, feed_main, f) != 0) {
            pthread_mutex_lock(&sb->lock);
            sb->live_feeds--;
            sb->feed_threads--;
            pthread_mutex_unlock(&sb->lock);
            close(s);
            free(f);
            continue;
        }
        pthread_detach(t);
    }
}

int tdm_standby_start(tdm_standby **out, tdm_server *srv, const char *sock_path, tdm_standby_fail_back_fn fail_back,
                      void *fail_back_ctx)
{
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    tdm_standby *sb;
    int rc = 0;

    if (strlen(sock_path) >= sizeof(sa.sun_path))
        return -ENAMETOOLONG;
    sb = calloc(1, sizeof(*sb));
    if (!sb)
        return -ENOMEM;
    sb->srv = srv;
    sb->fail_back = fail_back;
    sb->fail_back_ctx = fail_back_ctx;
    strcpy(sa.sun_path, sock_path);
    snprintf(sb->path, sizeof(sb->path), "%s", sock_path);
    pthread_mutex_init(&sb->lock, NULL);
    pthread_cond_init(&sb->changed, NULL);
    unlink(sock_path);
    sb->lsock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (sb->lsock < 0 || bind(sb->lsock, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(sb->lsock, 16) != 0) {
        rc = -errno;
        goto out;
    }
    rc = -pthread_create(&sb->acceptor, NULL, accept_main, sb);
out:
    if (rc) {
        if (sb->lsock >= 0)
            close(sb->lsock);
        pthread_cond_destroy(&sb->changed);
        pthread_mutex_destroy(&sb->lock);
        free(sb);
        return rc;
    }
    tdm_log("standby: active servers connect to %s", sock_path);
    *out = sb;
    return 0;
}

bool tdm_standby_stop(tdm_standby *sb)
{
    if (!sb)
        return true;
    shutdown(sb->lsock, SHUT_RDWR);
    pthread_join(sb->acceptor, NULL);
    close(sb->lsock);
    unlink(sb->path);
    /* Feed threads are detached and their sessions belong to this process
     * that is ending: if one still runs, what it uses stays.  Otherwise
     * (every active gone, its sessions resumed or reaped) nothing does. */
    pthread_mutex_lock(&sb->lock);
    bool idle = sb->feed_threads == 0;
    pthread_mutex_unlock(&sb->lock);
    if (!idle)
        return false;
    pthread_cond_destroy(&sb->changed);
    pthread_mutex_destroy(&sb->lock);
    free(sb);
    return true;
}

int tdm_standby_resume(tdm_standby *sb, tdm_session *s, uint64_t id, uint64_t token, uint64_t epoch,
                       uint64_t epoch_sent, uint64_t *resumed, int *policy)
{
    mirror_session *ms;
    struct timespec until;
    double t0 = tdm_now_ms();
    int err, restored;

    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += ACTIVE_GONE_WAIT_S;
    pthread_mutex_lock(&sb->lock);
    for (;;) {
        ms = NULL;
        for (mirror_session *m = sb->sessions; m; m = m->next)
            if (m->id == id && m->token == token && token)
                ms = m;
        /* Not found yet: a feed still being read may bring it.  A diverged mirror can never be
         * resumed: refused at once, not after the wait (a guest failing back retries, and each
         * retry waited ACTIVE_GONE_WAIT_S: a PyTorch loop hung for minutes on the H200). */
        if (ms ? ms->claimed || ms->f->ended || ms->handed_off || ms->diverged : sb->live_feeds == 0)
            break;
        if (pthread_cond_timedwait(&sb->changed, &sb->lock, &until) == ETIMEDOUT)
            break;
    }
    bool epoch_ok = ms && (ms->epoch == epoch || ms->epoch == epoch_sent);
    if (!ms || ms->claimed || !(ms->f->ended || ms->handed_off) || ms->diverged || !epoch_ok) {
        const char *why = !ms ? "no such session here (or a wrong token)"
                          : ms->claimed ? "it is being resumed already"
                          : ms->diverged ? "its mirror diverged (see above)"
                          : !(ms->f->ended || ms->handed_off) ? "its active server is still serving it"
                                         : "the guest's journal does not reach back to the active's last epoch";
        uint64_t mirrored = ms ? ms->epoch : 0;
        pthread_mutex_unlock(&sb->lock);
        /* The epochs tell a journal that lost its reach (the guest's two
         * against the mirror's) from the other refusals at a glance. */
        tdm_log("standby: refused to resume session %llu: %s (guest at epoch %llu or %llu, mirror at %llu)",
                (unsigned long long)id, why, (unsigned long long)epoch, (unsigned long long)epoch_sent,
                (unsigned long long)mirrored);
        return cudaErrorDevicesUnavailable;
    }
    ms->claimed = true;
    sb->resuming++;
    unlink_locked(sb, ms);
    pthread_cond_broadcast(&sb->changed);
    pthread_mutex_unlock(&sb->lock);

    epoch = ms->epoch;
    restored = ms->policy == TDM_RESUME_EXACT ? tdm_shadow_restore(ms->sess, epoch, &err) : (err = 0, 0);
    if (err) {
        tdm_log("standby: restoring the shadows of session %llu failed (cudaError %d)", (unsigned long long)id, err);
        tdm_session_destroy(ms->sess);
        free(ms);
        tdm_standby_resume_done(sb);
        return err;
    }
    /* The connection's session becomes the mirrored one; what belongs to the
     * connection (an shm guest's region) stays with it. */
    tdm_session_take_over(s, ms->sess);
    tdm_session_destroy(ms->sess);
    tdm_takeover(s)->epoch = epoch;
    *resumed = epoch;
    *policy = ms->policy;
    /* Not protected here until the caller syncs it to a standby of this
     * server's own. */
    tdm_takeover(s)->resume_token = 0;
    tdm_takeover(s)->resume_policy = TDM_RESUME_NONE;
    atomic_fetch_add(&s->srv->takeovers, 1);   /* ---- control plane (issue 17): stats' takeovers ---- */
    tdm_log("standby: resumed session %llu at epoch %llu (%d allocation(s) restored from shadows) in %.2f ms",
            (unsigned long long)id, (unsigned long long)epoch, restored, tdm_now_ms() - t0);
    free(ms);
    return 0;
}

int tdm_standby_ask_fail_back(const char *from, const char *my_listen)
{
    tdm_mirror_hdr h = { .type = TDM_M_FAILBACK, .c = TDM_MIRROR_MAGIC }, r;
    void *payload = NULL;
    int sock, rc = -1;

    if (!my_listen) {
        tdm_log("--failback-from needs --standby-listen (where the sessions come in)");
        return -1;
    }
    h.len = (uint32_t)strlen(my_listen);
    sock = tdm_mirror_exchange(from, &h, my_listen, &r, &payload);
    if (sock < 0) {
        tdm_log("fail-back: the server at %s did not answer: %s", from, strerror(-sock));
        return -1;
    }
    if (r.a != 1)
        tdm_log("fail-back: the server at %s refused: %.*s", from, (int)r.len, payload ? (char *)payload : "");
    else {
        tdm_log("fail-back: the sessions of the server at %s come here", from);
        rc = 0;
    }
    free(payload);
    close(sock);
    return rc;
}

void tdm_standby_settle(tdm_standby *sb, double max_wait_s)
{
    struct timespec until;
    long ns;

    pthread_mutex_lock(&sb->lock);
    until = sb->last_end;
    ns = until.tv_nsec + (long)(max_wait_s * 1e9);
    until.tv_sec += ns / 1000000000L;
    until.tv_nsec = ns % 1000000000L;
    for (;;) {
        bool waiting = false;
        for (mirror_session *m = sb->sessions; m; m = m->next)
            waiting |= m->f->ended && !m->diverged;
        waiting |= sb->resuming > 0;
        if (!waiting || pthread_cond_timedwait(&sb->changed, &sb->lock, &until) == ETIMEDOUT)
            break;
    }
    pthread_mutex_unlock(&sb->lock);
}

void tdm_standby_resume_done(tdm_standby *sb)
{
    pthread_mutex_lock(&sb->lock);
    sb->resuming--;
    pthread_cond_broadcast(&sb->changed);
    pthread_mutex_unlock(&sb->lock);
}
