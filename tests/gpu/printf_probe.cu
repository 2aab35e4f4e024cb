// Probe, run natively on a GPU host (NVIDIA's libcudart): does the driver
// write device printf and device assert output through C stdio (the
// process's `stdout`/`stderr` FILEs) in the thread that synchronizes?
// tandem-server relies on that to hand each session its own output
// (docs/device-output.md).  The probe puts stdio streams of its own
// (fopencookie) in place of stdout and stderr, points fds 1 and 2 at files
// to catch writes that bypass stdio, launches a printf kernel and an
// asserting kernel, synchronizes each from a second thread, and reports.
// Exit 0 when printf is captured from the synchronizing thread.
#include <cassert>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <pthread.h>
#include <unistd.h>
#include <cuda_runtime.h>

struct capture {
    char buf[65536];
    size_t len;
    int writes;
    bool foreign;          // a write from a thread other than the synchronizing one
};

static capture out_cap, err_cap;
static pthread_t syncer;

static ssize_t cookie_write(void *c, const char *p, size_t n)
{
    capture *k = (capture *)c;
    size_t room = sizeof(k->buf) - 1 - k->len;
    size_t m = n < room ? n : room;

    memcpy(k->buf + k->len, p, m);
    k->len += m;
    k->buf[k->len] = 0;
    k->writes++;
    if (!pthread_equal(pthread_self(), syncer))
        k->foreign = true;
    return (ssize_t)n;
}

__global__ void say(int v)
{
    printf("probe: device line %d\n", v);
}

__global__ void fail(int v)
{
    assert(v > 0);
}

static cudaError_t sync_result;

static void *sync_thread(void *)
{
    sync_result = cudaDeviceSynchronize();
    return nullptr;
}

// Synchronizes from a fresh thread, which the cookie checks writes against.
static cudaError_t sync_elsewhere(void)
{
    pthread_create(&syncer, nullptr, sync_thread, nullptr);
    pthread_join(syncer, nullptr);
    return sync_result;
}

static size_t file_size(int fd)
{
    off_t n = lseek(fd, 0, SEEK_END);
    return n < 0 ? 0 : (size_t)n;
}

int main()
{
    char p1[] = "/tmp/printf-probe-1-XXXXXX", p2[] = "/tmp/printf-probe-2-XXXXXX";
    int f1 = mkstemp(p1), f2 = mkstemp(p2);
    if (f1 < 0 || f2 < 0 || cudaFree(0) != cudaSuccess) {
        fprintf(stderr, "printf_probe: cannot set up (temp files or CUDA)\n");
        return 2;
    }
    unlink(p1);
    unlink(p2);
    cookie_io_functions_t io = {};
    io.write = cookie_write;
    FILE *mine_out = fopencookie(&out_cap, "w", io), *mine_err = fopencookie(&err_cap, "w", io);
    setvbuf(mine_out, nullptr, _IONBF, 0);
    setvbuf(mine_err, nullptr, _IONBF, 0);

    fflush(stdout);
    fflush(stderr);
    int saved1 = dup(1), saved2 = dup(2);
    FILE *real_out = stdout, *real_err = stderr;
    dup2(f1, 1);
    dup2(f2, 2);
    stdout = mine_out;
    stderr = mine_err;

    say<<<1, 1>>>(42);
    cudaError_t e1 = sync_elsewhere();
    size_t printf_cookie = out_cap.len, printf_err_cookie = err_cap.len;
    bool printf_foreign = out_cap.foreign || err_cap.foreign;
    size_t printf_direct1 = file_size(f1), printf_direct2 = file_size(f2);
    char printf_text[256];
    snprintf(printf_text, sizeof(printf_text), "%s", out_cap.buf);

    fail<<<1, 1>>>(-1);
    cudaError_t e2 = sync_elsewhere();

    stdout = real_out;
    stderr = real_err;
    dup2(saved1, 1);
    dup2(saved2, 2);
    size_t assert_direct1 = file_size(f1) - printf_direct1, assert_direct2 = file_size(f2) - printf_direct2;

    printf("printf: sync %s; through stdout FILE %zu bytes, through stderr FILE %zu, straight to fd 1 %zu, "
           "fd 2 %zu; every stdio write from the synchronizing thread: %s\n",
           cudaGetErrorName(e1), printf_cookie, printf_err_cookie, printf_direct1, printf_direct2,
           printf_foreign ? "NO" : "yes");
    printf("printf text: %s", printf_text[0] ? printf_text : "(none)\n");
    printf("assert: sync %s; through stdout FILE %zu bytes, through stderr FILE %zu, straight to fd 1 %zu, "
           "fd 2 %zu; every stdio write from the synchronizing thread: %s\n",
           cudaGetErrorName(e2), out_cap.len - printf_cookie, err_cap.len - printf_err_cookie, assert_direct1,
           assert_direct2, out_cap.foreign || err_cap.foreign ? "NO" : "yes");
    printf("assert text: %s%s", err_cap.buf, err_cap.len ? "" : "(none on stderr FILE)\n");
    bool ok = printf_cookie > 0 && !printf_foreign && printf_direct1 == 0;
    printf("PROBE %s: device printf %s through stdio in the synchronizing thread\n", ok ? "PASS" : "FAIL",
           ok ? "goes" : "does not go");
    return ok ? 0 : 1;
}
