/* Issue 16, findings 3 and 4 (the rest): what a session holds in host memory and how long it
 * may keep the server waiting are bounded.  Each test starts a sim server with a small bound,
 * drives a guest past it, and checks the CUDA error the guest gets, the line in the server's
 * log that names the limit, and that another session goes on. */
#include <criterion/criterion.h>
#include <arpa/inet.h>
#include <driver_types.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "tandem_rpc.h"
#include "transport.h"
#include "xdr_extra.h"

#define ALICE "alice-token-0123456789abcdef"

static th_server srv;
static char dir[64], tenants_path[128];

static void start(const char *const *args)
{
    th_server_start(&srv, args);
}

static void down(void)
{
    cr_expect_eq(th_server_stop(&srv), 0, "tandem-server did not stop cleanly; see %s", srv.log);
    if (dir[0]) {
        unlink(tenants_path);
        rmdir(dir);
        dir[0] = 0;
    }
}

static void wait_log(const char *text, int seconds)
{
    for (int i = 0; i < seconds * 50 && !th_server_log_has(&srv, text); i++)
        usleep(20000);
    cr_expect(th_server_log_has(&srv, text), "the server log lacks '%s'; see %s", text, srv.log);
}

/* ---- a guest speaking the protocol directly ---- */

static int call_err(tdm_transport *t, uint32_t proc, xdrproc_t xa, void *a)
{
    int res = -1;
    cr_assert_eq(t->ops->call(t, proc, xa, a, (xdrproc_t)xdr_int, &res), 0, "transport failed");
    return res;
}

static int dev_sync(tdm_transport *t)
{
    return call_err(t, TDM_DEVICE_SYNCHRONIZE, (xdrproc_t)tdm_xdr_void, NULL);
}

/* A PTX image (the sim backend takes any) of exactly len bytes, NUL included. */
static char *ptx_of(size_t len)
{
    static const char head[] = ".version 8.0\n.target sm_90\n.address_size 64\n// ";
    char *p = malloc(len);

    cr_assert(p && len > sizeof(head) + 1);
    memcpy(p, head, sizeof(head) - 1);
    memset(p + sizeof(head) - 1, 'x', len - sizeof(head) - 1);
    p[len - 2] = '\n';
    p[len - 1] = 0;
    return p;
}

/* cudaLibraryLoadData of a PTX image of len bytes: its error, and the library in *lib. */
static int load(tdm_transport *t, size_t len, uint64_t *lib)
{
    char *image = ptx_of(len);
    tdm_library_load_args a = { { (u_int)len, image } };
    tdm_library_load_res r;

    memset(&r, 0, sizeof(r));
    cr_assert_eq(t->ops->call(t, TDM_LIBRARY_LOAD, (xdrproc_t)xdr_tdm_library_load_args, &a,
                              (xdrproc_t)xdr_tdm_library_load_res, &r), 0, "transport failed");
    free(image);
    if (lib)
        *lib = r.library;
    int err = r.err;
    xdr_free((xdrproc_t)xdr_tdm_library_load_res, (char *)&r);
    return err;
}

static int unload(tdm_transport *t, uint64_t lib)
{
    return call_err(t, TDM_LIBRARY_UNLOAD, (xdrproc_t)xdr_tdm_handle, &lib);
}

static tdm_transport *guest(void)
{
    return th_guest_open(srv.endpoint, "bounds-test");
}

/* ---- modules and their images (finding 3) ---- */

static void up_two_modules(void)
{
    const char *args[] = { "--session-modules", "2", NULL };
    start(args);
}

Test(bounds, modules_past_session_modules_are_refused_and_logged, .init = up_two_modules, .fini = down)
{
    tdm_transport *a = guest(), *b = guest();
    uint64_t lib[2];

    cr_assert_eq(load(a, 256, &lib[0]), 0);
    cr_assert_eq(load(a, 256, &lib[1]), 0);
    cr_expect_eq(load(a, 256, NULL), cudaErrorMemoryAllocation, "a third module was loaded");
    cr_expect(th_server_log_has(&srv, "holds 2 modules and libraries (--session-modules)"), "no line; see %s",
              srv.log);
    cr_expect_eq(load(b, 256, NULL), 0, "another session's module was refused");
    cr_expect_eq(unload(a, lib[0]), 0);
    cr_expect_eq(load(a, 256, NULL), 0, "a module after one was unloaded was refused");
    a->ops->close(a);
    b->ops->close(b);
}

static void up_small_host_memory(void)
{
    const char *args[] = { "--session-host-memory", "1K", NULL };
    start(args);
}

Test(bounds, code_images_past_session_host_memory_are_refused_and_logged, .init = up_small_host_memory,
     .fini = down)
{
    tdm_transport *a = guest();
    uint64_t lib;

    cr_assert_eq(load(a, 600, &lib), 0);
    cr_expect_eq(load(a, 600, NULL), cudaErrorMemoryAllocation, "1200 bytes of images under a 1K bound");
    cr_expect(th_server_log_has(&srv, "holds 600 bytes of host memory (--session-host-memory)"), "no line; see %s",
              srv.log);
    cr_expect_eq(unload(a, lib), 0);
    cr_expect_eq(load(a, 600, NULL), 0, "the bytes of an unloaded image still counted");
    cr_expect_eq(dev_sync(a), 0);
    a->ops->close(a);
}

static void up_small_budget(void)
{
    const char *args[] = { "--host-budget", "1K", NULL };
    start(args);
}

Test(bounds, the_host_budget_refuses_what_would_pass_it_across_sessions, .init = up_small_budget, .fini = down)
{
    tdm_transport *a = guest(), *b = guest();

    cr_assert_eq(load(a, 600, NULL), 0);
    cr_expect_eq(load(b, 600, NULL), cudaErrorMemoryAllocation, "two sessions' 1200 bytes under a 1K budget");
    cr_expect(th_server_log_has(&srv, "would pass --host-budget 1024"), "no line; see %s", srv.log);
    a->ops->close(a);   /* its image goes with it */
    for (int i = 0; i < 100 && load(b, 600, NULL) != 0; i++)
        usleep(20000);
    cr_expect(th_server_log_count(&srv, "would pass --host-budget") < 100, "a closed session's image still counts");
    b->ops->close(b);
}

/* ---- tenants' totals ---- */

static void up_tenant_totals(void)
{
    snprintf(dir, sizeof(dir), "/tmp/tandem-bounds-XXXXXX");
    cr_assert(mkdtemp(dir) != NULL);
    snprintf(tenants_path, sizeof(tenants_path), "%s/tenants.ini", dir);
    FILE *f = fopen(tenants_path, "w");
    cr_assert(f != NULL);
    fputs("[alice]\ntoken = " ALICE "\ntenant_memory = 3M\ntenant_host_memory = 1K\n", f);
    fclose(f);
    cr_assert_eq(chmod(tenants_path, 0600), 0);
    const char *args[] = { "--tenants", tenants_path, NULL };
    start(args);
}

static uint64_t g_malloc(tdm_transport *t, uint64_t size, int *err)
{
    tdm_malloc_res r;
    u_quad_t sz = size;

    memset(&r, 0, sizeof(r));
    cr_assert_eq(t->ops->call(t, TDM_MALLOC, (xdrproc_t)xdr_u_quad_t, &sz, (xdrproc_t)xdr_tdm_malloc_res, &r), 0);
    *err = r.err;
    return r.addr;
}

Test(bounds, a_tenants_sessions_together_stay_within_tenant_memory_and_tenant_host_memory,
     .init = up_tenant_totals, .fini = down)
{
    tdm_transport *a = NULL, *b = NULL;
    int err;

    cr_assert_eq(th_guest_hello(srv.endpoint, "bounds-a", ALICE, &a), 0);
    cr_assert_eq(th_guest_hello(srv.endpoint, "bounds-b", ALICE, &b), 0);
    uint64_t p = g_malloc(a, 2 << 20, &err);
    cr_assert_eq(err, 0);
    g_malloc(b, 2 << 20, &err);
    cr_expect_eq(err, cudaErrorMemoryAllocation, "two sessions' 4 MiB under the tenant's 3M");
    cr_expect(th_server_log_has(&srv, "(tenant_memory of tenant alice)"), "no line; see %s", srv.log);
    cr_expect_eq(call_err(a, TDM_FREE, (xdrproc_t)xdr_u_quad_t, &p), 0);
    g_malloc(b, 2 << 20, &err);
    cr_expect_eq(err, 0, "memory freed by another session of the tenant still counted");

    cr_assert_eq(load(a, 600, NULL), 0);
    cr_expect_eq(load(b, 600, NULL), cudaErrorMemoryAllocation, "two sessions' images under the tenant's 1K");
    cr_expect(th_server_log_has(&srv, "(tenant_host_memory of tenant alice)"), "no line; see %s", srv.log);
    a->ops->close(a);
    b->ops->close(b);
}

/* ---- time limits on the wire (finding 4) ---- */

static int raw_connect(void)
{
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)srv.port) };
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    cr_assert_eq(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    return fd;
}

/* Whether the server closes fd within `seconds`. */
static int closed_within(int fd, int seconds)
{
    struct timeval tv = { seconds, 0 };
    char buf[256];

    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    for (;;) {
        ssize_t n = read(fd, buf, sizeof(buf));
        if (n == 0)
            return 1;
        if (n < 0)
            return 0;
    }
}

static void up_frame_timeout(void)
{
    const char *args[] = { "--frame-timeout", "1", NULL };
    start(args);
}

Test(bounds, a_stalled_half_frame_is_closed_after_the_frame_timeout_while_another_session_works,
     .init = up_frame_timeout, .fini = down)
{
    tdm_transport *v = guest();
    int fd = raw_connect();
    /* Claims a 1 MiB record and sends 12 bytes of it. */
    const char partial[] = "\x80\x10\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00";

    cr_assert_eq(write(fd, partial, 12), 12);
    for (int i = 0; i < 10; i++) {
        cr_expect_eq(dev_sync(v), 0, "the other session stopped working");
        usleep(100000);
    }
    cr_expect(closed_within(fd, 5), "the server kept a connection stalled in the middle of a frame");
    close(fd);
    wait_log("stalled in the middle of a frame for 1 s (--frame-timeout)", 5);
    cr_expect_eq(dev_sync(v), 0, "the other session stopped working");
    v->ops->close(v);
}

static void up_idle_timeout(void)
{
    const char *args[] = { "--idle-timeout", "1", NULL };
    start(args);
}

/* Over TCP and over shm: the session is closed, its memory given back, and the guest's next
 * call finds the connection gone. */
static void idle_session_is_closed(const char *endpoint)
{
    tdm_transport *t = th_guest_open(endpoint, "bounds-idle");
    int err, res = -1;

    g_malloc(t, 1 << 20, &err);
    cr_assert_eq(err, 0);
    sleep(2);
    wait_log("sent nothing for 1 s (--idle-timeout", 5);
    cr_expect_neq(t->ops->call(t, TDM_DEVICE_SYNCHRONIZE, (xdrproc_t)tdm_xdr_void, NULL, (xdrproc_t)xdr_int, &res),
                  0, "a session idle past --idle-timeout was still served");
    t->ops->close(t);
    tdm_transport *busy = guest();   /* a new session is served */
    cr_expect_eq(dev_sync(busy), 0);
    busy->ops->close(busy);
}

Test(bounds, an_idle_tcp_session_is_closed_after_the_idle_timeout, .init = up_idle_timeout, .fini = down)
{
    idle_session_is_closed(srv.endpoint);
}

Test(bounds, an_idle_shm_session_is_closed_after_the_idle_timeout, .init = up_idle_timeout, .fini = down)
{
    idle_session_is_closed(srv.shm_endpoint);
}

/* ---- a frame that declares more than it sends (XDR) ---- */

static long vm_kib(const char *field)
{
    char path[64], line[256];
    long v = -1;
    size_t n = strlen(field);

    snprintf(path, sizeof(path), "/proc/%d/status", (int)srv.pid);
    FILE *f = fopen(path, "r");
    cr_assert(f != NULL);
    while (fgets(line, sizeof(line), f))
        if (strncmp(line, field, n) == 0)
            v = atol(line + n + 1);
    fclose(f);
    return v;
}

static void put32(unsigned char *p, uint32_t v)
{
    v = htonl(v);
    memcpy(p, &v, 4);
}

/* A connection that sent a library load's first 48 bytes, declaring an image of `declared`
 * bytes, and stalls: how much the server's virtual size grew (KiB), the connection in *fd. */
static long stalled_load_growth(uint32_t declared, int *fd)
{
    unsigned char f[48];
    /* The record claims all the bytes; the call message is 40 bytes; then the image's length. */
    const uint32_t words[] = { 0x80000000u | (40 + 4 + declared), 1, CALL, RPC_MSG_VERSION, TANDEM_PROG,
                               TANDEM_V1, TDM_LIBRARY_LOAD, 0, 0, 0, 0, declared };
    long before = vm_kib("VmSize:");

    for (size_t i = 0; i < sizeof(words) / 4; i++)
        put32(f + 4 * i, words[i]);
    *fd = raw_connect();
    cr_assert_eq(write(*fd, f, sizeof(f)), (ssize_t)sizeof(f));
    usleep(300000);   /* the server is now waiting for the image's bytes */
    return vm_kib("VmSize:") - before;
}

/* libtirpc's xdr_bytes allocated the declared 256 MiB before a byte of it came (tdm_xdr_bytes).
 * A connection's thread costs the same virtual memory either way, so the growth is compared with
 * a connection declaring 1 KiB. */
Test(bounds, a_40_byte_frame_declaring_256_MiB_does_not_make_the_server_take_it, .init = up_frame_timeout,
     .fini = down)
{
    long rss = vm_kib("VmRSS:");
    int small_fd, big_fd;
    long small = stalled_load_growth(1024, &small_fd);
    long big = stalled_load_growth(TDM_MAX_FATBIN, &big_fd);

    cr_expect_lt(big - small, 64 << 10, "the server mapped %ld KiB more for a frame declaring 256 MiB than for one "
                 "declaring 1 KiB; each sent 48 bytes", big - small);
    cr_expect_lt(vm_kib("VmRSS:") - rss, 32 << 10, "the server's RSS grew for frames of 48 bytes");
    cr_expect(closed_within(big_fd, 5), "the stalled frame was not closed");
    cr_expect(closed_within(small_fd, 5), "the stalled frame was not closed");
    close(big_fd);
    close(small_fd);
    tdm_transport *v = guest();
    cr_expect_eq(dev_sync(v), 0);
    v->ops->close(v);
}
