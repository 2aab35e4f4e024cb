#include "background.h"

#include <criterion/criterion.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"

double th_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

const char *th_fault_bin(const char *name)
{
    static _Thread_local char buf[4][1024];
    static _Thread_local int i;
    char *p = buf[i++ % 4];

    snprintf(p, 1024, "%s/faults/%s", th_build_dir(), name);
    return p;
}

static void read_file(const char *path, char *buf, size_t cap)
{
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(buf, 1, cap - 1, f) : 0;

    buf[n] = 0;
    if (f)
        fclose(f);
}

void th_bg_start(th_bg *b, const char *endpoint, const char *const *argv, const char *const *env,
                 const char *ready_text)
{
    long tag = random();

    snprintf(b->out, sizeof(b->out), "/tmp/tandem-bg-%d-%ld.out", (int)getpid(), tag);
    snprintf(b->err, sizeof(b->err), "/tmp/tandem-bg-%d-%ld.err", (int)getpid(), tag);
    b->pid = fork();
    cr_assert_neq(b->pid, -1);
    if (b->pid == 0) {
        char ldpath[4096];
        const char *old = getenv("LD_LIBRARY_PATH");
        int fo = open(b->out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int fe = open(b->err, O_WRONLY | O_CREAT | O_TRUNC, 0644);

        snprintf(ldpath, sizeof(ldpath), "%s/lib%s%s", th_build_dir(), old ? ":" : "", old ? old : "");
        setenv("LD_LIBRARY_PATH", ldpath, 1);
        setenv("TANDEM_SERVER", endpoint, 1);
        setenv("TANDEM_QUIET", "1", 1);
        for (int i = 0; env && env[i]; i++)
            putenv((char *)env[i]);
#ifdef TANDEM_SANITIZER_PRELOAD
        setenv("LD_PRELOAD", TANDEM_SANITIZER_PRELOAD, 1);
        setenv("ASAN_OPTIONS", "detect_leaks=0", 1);
#endif
        dup2(fo, 1);
        dup2(fe, 2);
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    if (!ready_text)
        return;
    for (double end = th_now() + 20; th_now() < end; usleep(5000)) {
        char buf[4096];
        read_file(b->out, buf, sizeof(buf));
        if (strstr(buf, ready_text))
            return;
        cr_assert_eq(waitpid(b->pid, NULL, WNOHANG), 0, "%s exited before '%s':\n%s", argv[0], ready_text, buf);
    }
    cr_assert_fail("%s did not get to '%s'", argv[0], ready_text);
}

bool th_bg_alive(const th_bg *b)
{
    return waitpid(b->pid, NULL, WNOHANG) == 0 && kill(b->pid, 0) == 0;
}

int th_bg_wait(th_bg *b, int timeout_s, char *out, size_t outcap, char *err, size_t errcap)
{
    int st = 0;
    double end = th_now() + timeout_s;
    pid_t done;

    while ((done = waitpid(b->pid, &st, WNOHANG)) == 0 && th_now() < end)
        usleep(5000);
    if (done == 0) {
        kill(b->pid, SIGKILL);
        waitpid(b->pid, &st, 0);
        st = -1;
    }
    if (out)
        read_file(b->out, out, outcap);
    if (err)
        read_file(b->err, err, errcap);
    unlink(b->out);
    unlink(b->err);
    return st == -1 ? -1 : WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
