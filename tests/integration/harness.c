#include "harness.h"
#include "guest_calls.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tandem_rpc.h"
#include "transport.h"
#include "xdr_extra.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

const char *th_backend(void)
{
    const char *b = getenv("TANDEM_TEST_BACKEND");
    return b && *b ? b : "sim";
}

int th_simulated(void)
{
    return strcmp(th_backend(), "sim") == 0;
}

const char *th_build_dir(void)
{
    const char *d = getenv("TANDEM_TEST_BUILD_DIR");
    return d && *d ? d : TANDEM_BUILD_DIR;
}

static const char *build_path(const char *sub, const char *name)
{
    static _Thread_local char buf[8][1024];
    static _Thread_local int i;
    char *p = buf[i++ % 8];
    snprintf(p, 1024, "%s/%s/%s", th_build_dir(), sub, name);
    return p;
}

const char *th_bin(const char *name)
{
    return build_path("bin", name);
}

const char *th_example(const char *name)
{
    return build_path("examples", name);
}

void th_server_start(th_server *s, const char *const *extra)
{
    char portfile[200]; /* leaves room in s->log for the ".log" suffix */
    const char *argv[32];
    int n = 0;

    memset(s, 0, sizeof(*s));
    snprintf(portfile, sizeof(portfile), "/tmp/tandem-test-%d-%ld.port", (int)getpid(), (long)random());
    snprintf(s->log, sizeof(s->log), "%s.log", portfile);
    unlink(portfile);
    argv[n++] = th_bin("tandem-server");
    argv[n++] = "--backend";
    argv[n++] = th_backend();
    argv[n++] = "--port";
    argv[n++] = "0";
    argv[n++] = "--port-file";
    argv[n++] = portfile;
    snprintf(s->shm_name, sizeof(s->shm_name), "test-%d-%ld", (int)getpid(), (long)random());
    snprintf(s->shm_endpoint, sizeof(s->shm_endpoint), "shm:%s", s->shm_name);
    argv[n++] = "--shm";
    argv[n++] = s->shm_name;
    for (int i = 0; extra && extra[i] && n < 30; i++)
        argv[n++] = extra[i];
    argv[n] = NULL;

    s->pid = fork();
    cr_assert_neq(s->pid, -1);
    if (s->pid == 0) {
        int fd = open(s->log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        /* stdout too: device output a guest should have had must show
         * up in the log, where tests look for it (test_device_output). */
        dup2(fd, 2);
        dup2(fd, 1);
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    double deadline = now() + 10;
    while (now() < deadline) {
        FILE *f = fopen(portfile, "r");
        if (f) {
            int ok = fscanf(f, "%d", &s->port) == 1;
            fclose(f);
            if (ok && s->port > 0)
                break;
        }
        int st;
        if (waitpid(s->pid, &st, WNOHANG) == s->pid)
            cr_assert_fail("tandem-server exited at start (status %d); see %s", st, s->log);
        usleep(20000);
    }
    unlink(portfile);
    cr_assert_gt(s->port, 0, "tandem-server did not come up; see %s", s->log);
    snprintf(s->endpoint, sizeof(s->endpoint), "tcp://127.0.0.1:%d", s->port);
}

int th_server_stop(th_server *s)
{
    int st = 0;
    double deadline = now() + 15;

    if (s->pid <= 0)
        return -1;
    kill(s->pid, SIGTERM);
    while (waitpid(s->pid, &st, WNOHANG) == 0) {
        if (now() > deadline) {
            kill(s->pid, SIGKILL);
            waitpid(s->pid, &st, 0);
            s->pid = 0;
            return -2;
        }
        usleep(20000);
    }
    s->pid = 0;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* The first MiB of the server's log, NUL-terminated, in a buffer of the
 * harness's (each call overwrites it). */
static const char *read_log(const th_server *s)
{
    static char buf[1 << 20];
    FILE *f = fopen(s->log, "r");
    size_t n;

    if (!f)
        return "";
    n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = 0;
    return buf;
}

int th_server_log_count(const th_server *s, const char *text)
{
    int count = 0;

    for (const char *p = strstr(read_log(s), text); p; p = strstr(p + 1, text))
        count++;
    return count;
}

const char *th_server_log_line(const th_server *s, const char *text, char *out, size_t len)
{
    const char *log = read_log(s), *p = strstr(log, text), *start, *end;

    if (!p || len == 0)
        return "";
    for (start = p; start > log && start[-1] != '\n'; start--)
        ;
    end = strchr(p, '\n');
    snprintf(out, len, "%.*s", (int)(end ? end - start : (ptrdiff_t)strlen(start)), start);
    return out;
}

int th_server_log_has(const th_server *s, const char *text)
{
    return th_server_log_count(s, text) > 0;
}

static void drain(int fd, char *buf, size_t cap, size_t *len)
{
    ssize_t n = read(fd, buf + *len, cap - 1 - *len);
    if (n > 0)
        *len += (size_t)n;
    buf[*len] = 0;
}

/* libs: the guest libraries' directories, first on the library path. */
static void run_with(const char *endpoint, const char *libs, const char *const *argv, int timeout_s, th_result *r)
{
    int out[2], err[2], st = 0;
    size_t lo = 0, le = 0;
    pid_t pid;

    memset(r, 0, sizeof(*r));
    cr_assert_eq(pipe(out), 0);
    cr_assert_eq(pipe(err), 0);
    pid = fork();
    cr_assert_neq(pid, -1);
    if (pid == 0) {
        dup2(out[1], 1);
        dup2(err[1], 2);
        close(out[0]);
        close(err[0]);
        if (endpoint) {
            char ldpath[4096];
            const char *old = getenv("LD_LIBRARY_PATH");
            snprintf(ldpath, sizeof(ldpath), "%s%s%s", libs, old ? ":" : "", old ? old : "");
            setenv("LD_LIBRARY_PATH", ldpath, 1);
            setenv("TANDEM_SERVER", endpoint, 1);
#ifdef TANDEM_SANITIZER_PRELOAD
            /* Leaks of the example programs themselves are not ours to report. */
            setenv("LD_PRELOAD", TANDEM_SANITIZER_PRELOAD, 1);
            setenv("ASAN_OPTIONS", "detect_leaks=0", 1);
#endif
        }
        execv(argv[0], (char *const *)argv);
        fprintf(stderr, "cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    close(out[1]);
    close(err[1]);
    double deadline = now() + timeout_s;
    int open_fds = 2;
    while (open_fds > 0 && now() < deadline) {
        struct pollfd p[2] = { { out[0], POLLIN, 0 }, { err[0], POLLIN, 0 } };
        if (poll(p, 2, 100) <= 0)
            continue;
        for (int i = 0; i < 2; i++) {
            if (p[i].fd < 0 || !(p[i].revents & (POLLIN | POLLHUP)))
                continue;
            size_t before = i ? le : lo;
            if (i)
                drain(err[0], r->err, sizeof(r->err), &le);
            else
                drain(out[0], r->out, sizeof(r->out), &lo);
            if ((i ? le : lo) == before) {   /* EOF or full */
                close(p[i].fd);
                if (i) err[0] = -1; else out[0] = -1;
                open_fds--;
            }
        }
    }
    if (out[0] >= 0) close(out[0]);
    if (err[0] >= 0) close(err[0]);
    if (open_fds > 0)
        kill(pid, SIGKILL);
    waitpid(pid, &st, 0);
    r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void run(const char *endpoint, const char *const *argv, int timeout_s, th_result *r)
{
    char libs[2048];

    snprintf(libs, sizeof(libs), "%s/lib", th_build_dir());
    run_with(endpoint, libs, argv, timeout_s, r);
}

void th_run_guest(const char *endpoint, const char *const *argv, int timeout_s, th_result *r)
{
    run(endpoint, argv, timeout_s, r);
}

void th_run_driver_guest(const char *endpoint, const char *const *argv, int timeout_s, th_result *r)
{
    char libs[4096];

    snprintf(libs, sizeof(libs), "%s/lib/driver:%s/lib", th_build_dir(), th_build_dir());
    run_with(endpoint, libs, argv, timeout_s, r);
}

void th_run(const char *const *argv, int timeout_s, th_result *r)
{
    run(NULL, argv, timeout_s, r);
}

int th_guest_hello(const char *endpoint, const char *name, const char *token, struct tdm_transport **out)
{
    tdm_transport *t = NULL;
    char err[256];
    tdm_hello_args a = { TDM_PROTO_VERSION, (int)getpid(), (char *)name, TDM_RESUME_NONE,
                         { token ? (u_int)strlen(token) : 0, (char *)token }, { 0, NULL } };
    tdm_hello_res r;
    int refused;

    cr_assert_eq(tdm_transport_open(endpoint, &t, err, sizeof(err)), 0, "%s", err);
    memset(&r, 0, sizeof(r));
    cr_assert_eq(t->ops->call(t, TDM_HELLO, (xdrproc_t)xdr_tdm_hello_args, &a, (xdrproc_t)xdr_tdm_hello_res, &r), 0);
    refused = r.err;
    if (!refused)
        cr_assert_eq(!!r.simulated, th_simulated(), "the server's simulated flag is wrong");
    xdr_free((xdrproc_t)xdr_tdm_hello_res, (char *)&r);
    if (refused)
        t->ops->close(t);
    *out = refused ? NULL : t;
    return refused;
}

struct tdm_transport *th_guest_open(const char *endpoint, const char *name)
{
    tdm_transport *t = NULL;

    cr_assert_eq(th_guest_hello(endpoint, name, NULL, &t), 0, "the server refused the session");
    return t;
}

int th_call_int(tdm_transport *t, uint32_t proc, xdrproc_t xa, void *a)
{
    int res = -1;

    cr_assert_eq(t->ops->call(t, proc, xa, a, (xdrproc_t)xdr_int, &res), 0, "transport failed");
    return res;
}

tdm_handle_res th_call_handle(tdm_transport *t, uint32_t proc, xdrproc_t xa, void *a)
{
    tdm_handle_res r;

    memset(&r, 0, sizeof(r));
    cr_assert_eq(t->ops->call(t, proc, xa, a, (xdrproc_t)xdr_tdm_handle_res, &r), 0, "transport failed");
    return r;
}
