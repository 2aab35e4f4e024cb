/* Every call whose MIRROR column in proto/calls.def is MIRROR_FEED(X) sends
 * its server's standby feed message TDM_M_X: one case per such row.  The
 * server is a real one on the sim backend; the standby is this test, at the
 * other end of a unix socket, answering the feed's HELLO.  A feed row with
 * no case here, or naming a message mirror_wire.h lacks, fails. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "calls.h"
#include "dispatch.h"
#include "mirror_wire.h"
#include "resilience.h"
#include "session.h"

/* mirror_wire.h's messages by the name calls.def gives them. */
static const struct {
    const char *name;
    uint32_t type;
} feed_names[] = {
    { "MAP", TDM_M_MAP },
    { "UNMAP", TDM_M_UNMAP },
    { "MODULE_LOAD", TDM_M_MODULE_LOAD },
    { "MODULE_UNLOAD", TDM_M_MODULE_UNLOAD },
    { "STREAM_CREATE", TDM_M_STREAM_CREATE },
    { "STREAM_DESTROY", TDM_M_STREAM_DESTROY },
    { "EVENT_CREATE", TDM_M_EVENT_CREATE },
    { "EVENT_DESTROY", TDM_M_EVENT_DESTROY },
    { "RESET", TDM_M_RESET },
    { "LIBRARY_GLOBAL", TDM_M_LIBRARY_GLOBAL },   /* ---- driver API (issue 15) ---- */
};

static uint32_t feed_type(const char *name)
{
    for (size_t i = 0; i < sizeof(feed_names) / sizeof(feed_names[0]); i++)
        if (strcmp(feed_names[i].name, name) == 0)
            return feed_names[i].type;
    return 0;
}

/* ---- the test-side standby ---- */

typedef struct standby_end {
    int lsock, sock;
} standby_end;

/* Accepts the active's connection and answers its HELLO. */
static void *answer_hello(void *arg)
{
    standby_end *e = arg;
    static const char eps[] = "tcp://127.0.0.1:1";
    tdm_mirror_hdr h, r = { .type = TDM_M_HELLO, .a = 1, .len = sizeof(eps) };
    void *payload = NULL;
    int fd = -1;

    e->sock = accept(e->lsock, NULL, NULL);
    if (e->sock < 0 || tdm_mirror_recv(e->sock, &h, &payload, &fd) != 0 || h.type != TDM_M_HELLO ||
        tdm_mirror_send(e->sock, &r, eps, -1) != 0) {
        close(e->sock);
        e->sock = -1;
    }
    free(payload);
    return NULL;
}

/* The type of the next feed message (what it carried is let go). */
static uint32_t next_message(standby_end *e)
{
    tdm_mirror_hdr h;
    void *payload = NULL;
    int fd = -1;
    int rc = tdm_mirror_recv(e->sock, &h, &payload, &fd);

    cr_assert_eq(rc, 0, "the feed ended or broke (%d)", rc);
    free(payload);
    if (fd >= 0)
        close(fd);
    return h.type;
}

/* Reads the feed up to and including a message of `type`. */
static void read_through(standby_end *e, uint32_t type)
{
    while (next_message(e) != type)
        ;
}

typedef struct world {
    tdm_server srv;
    tdm_resilience *res;
    tdm_session *s;
    standby_end end;
    char path[108];
} world;

static void world_start(world *w)
{
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    struct timeval tv = { .tv_sec = 10 };
    pthread_t t;

    memset(w, 0, sizeof(*w));
    snprintf(w->path, sizeof(w->path), "/tmp/tandem-feedtest-%d.sock", (int)getpid());
    snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", w->path);
    unlink(w->path);
    w->end.lsock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    cr_assert_eq(bind(w->end.lsock, (struct sockaddr *)&sa, sizeof(sa)), 0);
    cr_assert_eq(listen(w->end.lsock, 1), 0);
    cr_assert_eq(pthread_create(&t, NULL, answer_hello, &w->end), 0);

    tdm_server_config cfg = { .backend = "sim", .arena_base = TDM_DEFAULT_ARENA_BASE, .arena_size = 1ull << 30,
                              .max_sessions = 4, .standby_sock = w->path };
    cr_assert_eq(tdm_server_start(&w->srv, &cfg), 0);
    cr_assert_eq(tdm_resilience_start(&w->res, &w->srv), 0);
    pthread_join(t, NULL);
    cr_assert_geq(w->end.sock, 0, "the active did not connect");
    setsockopt(w->end.sock, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));

    cr_assert_eq(tdm_session_create(&w->srv, &w->s), 0);
    tdm_resilience_hello(w->s, TDM_RESUME_REPLAY);
    tdm_protection p;
    tdm_resilience_describe(w->s, &p);
    cr_assert_str_eq(p.standby, "tcp://127.0.0.1:1", "the session is not protected");
    read_through(&w->end, TDM_M_EPOCH);     /* the sync that protects it ends with its epoch */
}

static void world_stop(world *w)
{
    tdm_session_destroy(w->s);
    tdm_resilience_stop(w->res);
    tdm_server_stop(&w->srv);
    close(w->end.sock);
    close(w->end.lsock);
    unlink(w->path);
}

/* ---- one case per feed row ---- */

static size_t feed_rows(size_t *rows, size_t cap)
{
    size_t n = 0;

    for (size_t i = 0; i < tdm_ncalls && n < cap; i++)
        if (tdm_calls[i].mirror == TDM_MIRROR_ON_FEED)
            rows[n++] = i;
    return n;
}

ParameterizedTestParameters(feed_messages, row)
{
    static size_t rows[512];

    return cr_make_param_array(size_t, rows, feed_rows(rows, 64));
}

static size_t fatbin(uint8_t *buf)
{
    uint32_t magic = 0xBA55ED50u;
    uint16_t version = 1, header_size = 16;
    uint64_t fat_size = 16;

    memcpy(buf, &magic, 4);
    memcpy(buf + 4, &version, 2);
    memcpy(buf + 6, &header_size, 2);
    memcpy(buf + 8, &fat_size, 8);
    memset(buf + 16, 0x5a, 16);
    return 32;
}

ParameterizedTest(size_t *i, feed_messages, row)
{
    const tdm_call_info *c = &tdm_calls[*i];
    uint32_t want = feed_type(c->feed_msg);
    union {
        tdm_u64 size;
        tdm_addr addr;
        tdm_handle handle;
        tdm_u32 flags;
        tdm_stream_create_args stream;
        tdm_module_load_args module;
        tdm_library_load_args library;   /* ---- libraries (issue 14) ---- */
        tdm_library_global_args global;  /* ---- driver API (issue 15) ---- */
    } args;
    static uint8_t lib_image[1 << 20];
    char res[512];
    uint8_t image[32];
    world w;

    cr_assert_neq(want, 0, "%s: feed message TDM_M_%s is not in mirror_wire.h", c->name, c->feed_msg);
    cr_assert_leq(c->res_size, sizeof(res));
    world_start(&w);
    memset(&args, 0, sizeof(args));
    /* What the call needs to exist first; its own feed messages are read. */
    switch (c->proc) {
    case TDM_MALLOC:
        args.size = 4096;
        break;
    case TDM_FREE:
        cr_assert_eq(tdm_session_malloc(w.s, 4096, &args.addr), 0);
        read_through(&w.end, TDM_M_MAP);
        break;
    case TDM_MODULE_LOAD:
        args.module.image.image_val = (char *)image;
        args.module.image.image_len = (u_int)fatbin(image);
        break;
    case TDM_MODULE_UNLOAD: {
        uint64_t m = 0;
        cr_assert_eq(tdm_session_module_load(w.s, image, fatbin(image), NULL, 0, NULL, 0, NULL, &m, NULL, NULL,
                                             NULL, NULL, NULL), 0);
        read_through(&w.end, TDM_M_MODULE_LOAD);
        args.handle = m;
        break;
    }
    case TDM_STREAM_CREATE:
        break;
    case TDM_STREAM_DESTROY:
        cr_assert_eq(tdm_session_stream_create(w.s, 0, 0, &args.handle), 0);
        read_through(&w.end, TDM_M_STREAM_CREATE);
        break;
    case TDM_EVENT_CREATE:
        break;
    case TDM_EVENT_DESTROY:
        cr_assert_eq(tdm_session_event_create(w.s, 0, &args.handle), 0);
        read_through(&w.end, TDM_M_EVENT_CREATE);
        break;
    case TDM_DEVICE_RESET:
        break;
    /* ---- libraries (issue 14): a library is mirrored as a module ---- */
    case TDM_LIBRARY_LOAD:
        args.library.image.image_val = (char *)image;
        args.library.image.image_len = (u_int)fatbin(image);
        break;
    case TDM_LIBRARY_UNLOAD: {
        uint64_t lib = 0, *fh = NULL;
        char **names = NULL;
        int *fe = NULL;
        uint32_t n = 0;
        cr_assert_eq(tdm_session_library_load(w.s, image, fatbin(image), &lib, &names, &fh, &fe, &n), 0);
        tdm_library_names_free(names, n);
        free(fh);
        free(fe);
        read_through(&w.end, TDM_M_MODULE_LOAD);
        args.handle = lib;
        break;
    }
    /* ---- driver API (issue 15): a library's global, asked for by name ---- */
    case TDM_LIBRARY_GET_GLOBAL: {
        uint64_t lib = 0, *fh = NULL;
        char **names = NULL;
        int *fe = NULL;
        uint32_t n = 0;
        FILE *f = fopen(TANDEM_LIBRARY_IMAGE, "rb");
        cr_assert(f, "cannot open %s", TANDEM_LIBRARY_IMAGE);
        size_t len = fread(lib_image, 1, sizeof(lib_image), f);
        fclose(f);
        cr_assert_eq(tdm_session_library_load(w.s, lib_image, len, &lib, &names, &fh, &fe, &n), 0);
        tdm_library_names_free(names, n);
        free(fh);
        free(fe);
        read_through(&w.end, TDM_M_MODULE_LOAD);
        args.global.library = lib;
        args.global.name = "lib_bias";
        break;
    }
    default:
        cr_assert_fail("%s is a feed row this test has no case for: add one", c->name);
    }
    memset(res, 0, sizeof(res));
    cr_assert(tdm_dispatch_program.procs[c->proc].handler(w.s, &args, res), "%s", c->name);
    if (c->mode == TDM_CALL_SYNC)
        cr_assert_eq(*(int *)res, 0, "%s failed", c->name);   /* every result starts with its cudaError_t */
    cr_assert_eq(next_message(&w.end), want, "%s did not send TDM_M_%s", c->name, c->feed_msg);
    if (c->xres)
        xdr_free(c->xres, res);
    world_stop(&w);
}
