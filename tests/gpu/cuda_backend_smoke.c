/* Drives the cuda backend's ops directly on a real GPU, without the RPC
 * layer: a quick check that every entry point does what backend.h promises.
 * Usage: cuda_backend_smoke SMOKE_KERNELS.fatbin
 * Prints each step, then "N passed, N failed"; exits non-zero on failure. */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cuda.h>
#include <driver_types.h>

#include "backend.h"

#define ARENA_BASE 0x200000000000ull
#define ARENA_SIZE (64ull << 30)
#define SPIN_CYCLES 200000000ll /* ~0.1 s at H100 clocks */

static const tdm_backend_ops *ops = &tdm_backend_cuda_ops;
static int passed, failed;

static bool check(bool ok, const char *what, int err)
{
    if (ok)
        passed++;
    else
        failed++;
    printf("%s: %s", ok ? "PASS" : "FAIL", what);
    if (!ok && err)
        printf(" (error %d)", err);
    printf("\n");
    fflush(stdout);
    return ok;
}

static void *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    void *buf = NULL;
    long n;

    if (!f)
        return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0) {
        buf = malloc((size_t)n);
        if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
            free(buf);
            buf = NULL;
        }
        *len = (size_t)n;
    }
    fclose(f);
    return buf;
}

static bool all_bytes(const uint8_t *p, size_t n, uint8_t v)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != v)
            return false;
    return true;
}

/* ---- memory and copies ---- */

static void test_copies(tdm_backend *b, uint64_t a, uint64_t a_size, uint64_t bb, uint64_t b_size)
{
    uint8_t *h = malloc(a_size), *h2 = malloc(a_size);
    int err;

    if (!h || !h2) {
        check(false, "host buffers", 0);
        goto out;
    }
    memset(h, 0xee, a_size);
    err = ops->memcpy_dtoh_sync(b, h, a, a_size, NULL);
    check(!err && all_bytes(h, a_size, 0), "fresh mapping A reads as zeros", err);
    memset(h, 0xee, b_size);
    err = ops->memcpy_dtoh_sync(b, h, bb, b_size, NULL);
    check(!err && all_bytes(h, b_size, 0), "fresh mapping B reads as zeros", err);

    err = ops->memset_d8(b, a, 0x5a, a_size, NULL);
    if (!err)
        err = ops->memcpy_dtoh_sync(b, h, a, a_size, NULL);
    check(!err && all_bytes(h, a_size, 0x5a), "memset_d8 0x5a over A, read back", err);

    for (size_t i = 0; i < a_size; i++)
        h[i] = (uint8_t)(i * 7 + 3);
    err = ops->memcpy_htod(b, a, h, a_size, NULL);
    memset(h2, 0, a_size);
    if (!err)
        err = ops->memcpy_dtoh_sync(b, h2, a, a_size, NULL);
    check(!err && memcmp(h, h2, a_size) == 0, "htod pattern into A, dtoh matches", err);

    err = ops->memcpy_dtod(b, bb, a + 4096, b_size, NULL);
    memset(h2, 0, b_size);
    if (!err)
        err = ops->memcpy_dtoh_sync(b, h2, bb, b_size, NULL);
    check(!err && memcmp(h + 4096, h2, b_size) == 0, "dtod A+4096 -> B, dtoh matches", err);

    err = ops->memset_d8(b, bb + 100, 0x11, 10, NULL);
    memset(h2, 0, 200);
    if (!err)
        err = ops->memcpy_dtoh_sync(b, h2, bb, 200, NULL);
    check(!err && all_bytes(h2 + 100, 10, 0x11) && h2[99] == h[4096 + 99] &&
              h2[110] == h[4096 + 110],
          "unaligned memset_d8 touches exactly its bytes", err);
out:
    free(h);
    free(h2);
}

/* backend.h promises memcpy_htod consumes `src` before returning.  Queue the
 * copy behind a busy kernel, so the DMA cannot have run yet, then destroy the
 * source at once: the device must still receive the original bytes. */
static void test_htod_consumes_source(tdm_backend *b, tdm_bfunc *spin, tdm_bstream *s,
                                      uint64_t a, uint64_t a_size)
{
    static const size_t sizes[] = { 4, 4096, 65536 + 8, 1u << 20, 0 };
    long long cycles = SPIN_CYCLES;

    for (int k = 0; k < 5; k++) {
        size_t n = sizes[k] ? sizes[k] : a_size;
        uint8_t *src = malloc(n), *back = malloc(n);
        char what[128];
        int err;

        if (!src || !back) {
            check(false, "host buffers", 0);
            free(src);
            free(back);
            return;
        }
        for (size_t i = 0; i < n; i++)
            src[i] = (uint8_t)(i * 13 + k);
        err = ops->launch(b, spin, (tdm_dim3){ 1, 1, 1 }, (tdm_dim3){ 1, 1, 1 }, 0, s, &cycles,
                          sizeof(cycles));
        if (!err)
            err = ops->memcpy_htod(b, a, src, n, s);
        bool pending = !err && ops->stream_query(b, s) == cudaErrorNotReady;
        /* The source dies here, as the RPC buffer does after the call. */
        for (size_t i = 0; i < n; i++)
            src[i] = (uint8_t)~(i * 13 + k);
        if (!err)
            err = ops->memcpy_dtoh_sync(b, back, a, n, s);
        for (size_t i = 0; i < n; i++)
            src[i] = (uint8_t)(i * 13 + k);
        snprintf(what, sizeof(what), "htod of %zu bytes behind a busy kernel took the source "
                 "at call time (stream still busy after the call: %s)", n, pending ? "yes" : "no");
        check(!err && memcmp(src, back, n) == 0, what, err);
        free(src);
        free(back);
    }
}

/* ---- modules and launches ---- */

struct thread_job {
    tdm_backend *b;
    tdm_bfunc *add_one;
    uint64_t addr;
    int n;
    int err;
    bool ok;
};

/* A fresh thread has no current context: this exercises the backend's
 * per-call context check the way session threads do. */
static void *thread_main(void *arg)
{
    struct thread_job *j = arg;
    int *h = malloc((size_t)j->n * sizeof(int));
    tdm_bstream *s = NULL;
    struct { uint64_t p; int32_t n; } params = { j->addr, j->n };

    if (!h)
        return NULL;
    for (int i = 0; i < j->n; i++)
        h[i] = i * 3;
    j->err = ops->stream_create(j->b, cudaStreamNonBlocking, 0, NULL, &s);
    if (!j->err)
        j->err = ops->memcpy_htod(j->b, j->addr, h, (size_t)j->n * sizeof(int), s);
    if (!j->err)
        j->err = ops->launch(j->b, j->add_one, (tdm_dim3){ (uint32_t)(j->n + 255) / 256, 1, 1 },
                             (tdm_dim3){ 256, 1, 1 }, 0, s, &params, 12);
    if (!j->err)
        j->err = ops->memcpy_dtoh_sync(j->b, h, j->addr, (size_t)j->n * sizeof(int), s);
    j->ok = !j->err;
    for (int i = 0; j->ok && i < j->n; i++)
        j->ok = h[i] == i * 3 + 1;
    if (s)
        ops->stream_destroy(j->b, s);
    free(h);
    return NULL;
}

static void test_threads(tdm_backend *b, tdm_bfunc *add_one, uint64_t a)
{
    struct thread_job jobs[4];
    pthread_t t[4];

    for (int i = 0; i < 4; i++) {
        jobs[i] = (struct thread_job){ b, add_one, a + (uint64_t)i * 65536, 16384, 0, false };
        if (pthread_create(&t[i], NULL, thread_main, &jobs[i]) != 0)
            jobs[i].err = -1;
    }
    for (int i = 0; i < 4; i++) {
        char what[96];

        if (jobs[i].err != -1)
            pthread_join(t[i], NULL);
        snprintf(what, sizeof(what), "thread %d: own stream, htod + add_one + dtoh", i);
        check(jobs[i].ok, what, jobs[i].err);
    }
}

static void test_streams_events(tdm_backend *b, tdm_bfunc *spin)
{
    tdm_bstream *s1 = NULL, *s2 = NULL;
    tdm_bevent *e0 = NULL, *e1 = NULL, *nt = NULL, *ip = NULL;
    long long cycles = SPIN_CYCLES;
    float ms = -1;
    int err;

    err = ops->stream_create(b, cudaStreamNonBlocking, -1, NULL, &s1);
    check(!err && s1, "stream_create non-blocking, priority -1", err);
    err = ops->stream_create(b, 0, 0, NULL, &s2);
    check(!err && s2, "stream_create blocking", err);
    err = ops->event_create(b, 0, &e0);
    check(!err, "event_create timing", err);
    err = ops->event_create(b, cudaEventBlockingSync, &e1);
    check(!err, "event_create blocking-sync", err);
    err = ops->event_create(b, cudaEventDisableTiming, &nt);
    check(!err, "event_create disable-timing", err);
    err = ops->event_create(b, cudaEventInterprocess | cudaEventDisableTiming, &ip);
    check(err == cudaErrorNotSupported && !ip, "event_create interprocess is cudaErrorNotSupported", err);
    if (!s1 || !s2 || !e0 || !e1 || !nt)
        goto out;

    err = ops->event_record(b, e0, s1);
    if (!err)
        err = ops->launch(b, spin, (tdm_dim3){ 1, 1, 1 }, (tdm_dim3){ 1, 1, 1 }, 0, s1, &cycles,
                          sizeof(cycles));
    if (!err)
        err = ops->event_record(b, e1, s1);
    check(!err, "record e0, spin kernel, record e1 on s1", err);
    err = ops->stream_query(b, s1);
    check(err == cudaErrorNotReady, "stream_query(s1) while spinning is cudaErrorNotReady", err);
    err = ops->event_query(b, e1);
    check(err == cudaErrorNotReady, "event_query(e1) while spinning is cudaErrorNotReady", err);
    err = ops->stream_wait_event(b, s2, e1);
    if (!err)
        err = ops->event_record(b, nt, s2);
    check(!err, "s2 waits for e1, records nt", err);
    err = ops->event_synchronize(b, nt);
    check(!err && ops->event_query(b, e1) == cudaSuccess,
          "event_synchronize(nt) implies e1 done (stream_wait_event ordered s2)", err);
    err = ops->event_elapsed_ms(b, e0, e1, &ms);
    printf("      elapsed e0 -> e1: %.3f ms\n", ms);
    check(!err && ms > 1.0f, "event_elapsed_ms over the spin kernel > 1 ms", err);
    err = ops->event_elapsed_ms(b, e0, nt, &ms);
    check(err == cudaErrorInvalidResourceHandle,
          "event_elapsed_ms with a disable-timing event is cudaErrorInvalidResourceHandle", err);
    err = ops->stream_synchronize(b, s1);
    check(!err && ops->stream_query(b, s1) == cudaSuccess && ops->stream_query(b, NULL) == cudaSuccess,
          "stream_synchronize, then s1 and the legacy stream are idle", err);
out:
    if (e0)
        check(!ops->event_destroy(b, e0), "event_destroy e0", 0);
    if (e1)
        check(!ops->event_destroy(b, e1), "event_destroy e1", 0);
    if (nt)
        check(!ops->event_destroy(b, nt), "event_destroy nt", 0);
    if (s1)
        check(!ops->stream_destroy(b, s1), "stream_destroy s1", 0);
    if (s2)
        check(!ops->stream_destroy(b, s2), "stream_destroy s2", 0);
}

/* Not a check, a number for the record: the cost of one ops->launch,
 * context check included, with the GPU kept busy on trivial kernels. */
static void time_launches(tdm_backend *b, tdm_bfunc *spin)
{
    enum { N = 20000 };
    long long cycles = 0;
    struct timespec t0, t1;
    int err = 0;

    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 0; !err && i < N; i++)
        err = ops->launch(b, spin, (tdm_dim3){ 1, 1, 1 }, (tdm_dim3){ 1, 1, 1 }, 0, NULL, &cycles,
                          sizeof(cycles));
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (!err)
        err = ops->device_synchronize(b);
    check(!err, "20000 back-to-back launches", err);
    printf("      %.2f us per launch call\n",
           ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / 1e3 / N);
}

static void test_module(tdm_backend *b, const char *path, uint64_t a, uint64_t a_size)
{
    tdm_bmodule *m = NULL;
    tdm_bfunc *add_one = NULL, *again = NULL, *spin = NULL, *none = NULL;
    static tdm_param_info pi, pi2;
    tdm_func_attrs fa;
    uint64_t gaddr = 0, gsize = 0;
    size_t len = 0;
    void *image = read_file(path, &len);
    uint8_t junk[64] = { 1, 2, 3 };
    int err, n = 1000, *h = NULL;

    if (!check(image != NULL, "read fatbin file", 0))
        return;
    printf("      %s: %zu bytes, magic 0x%08x\n", path, len, *(uint32_t *)image);
    err = ops->module_load(b, junk, sizeof(junk), &m);
    check(err == cudaErrorInvalidKernelImage && !m, "module_load of junk is cudaErrorInvalidKernelImage", err);
    err = ops->module_load(b, image, len, &m);
    /* The backend must not keep pointing at the caller's buffer. */
    memset(image, 0, len);
    free(image);
    if (!check(!err && m, "module_load", err))
        return;

    err = ops->module_get_function(b, m, "add_one", &add_one, &pi);
    check(!err && pi.count == 2 && pi.offset[0] == 0 && pi.size[0] == 8 && pi.offset[1] == 8 &&
              pi.size[1] == 4,
          "module_get_function add_one: params (0,8) (8,4)", err);
    printf("      add_one params: %u:", pi.count);
    for (uint32_t i = 0; i < pi.count; i++)
        printf(" (%u,%u)", pi.offset[i], pi.size[i]);
    printf("\n");
    err = ops->module_get_function(b, m, "add_one", &again, &pi2);
    check(!err && again == add_one && pi2.count == pi.count, "module_get_function twice: same object", err);
    err = ops->module_get_function(b, m, "spin", &spin, &pi2);
    check(!err && pi2.count == 1 && pi2.size[0] == 8, "module_get_function spin: one 8-byte param", err);
    err = ops->module_get_function(b, m, "no_such_kernel", &none, &pi2);
    check(err == cudaErrorInvalidDeviceFunction && !none,
          "module_get_function of a missing kernel is cudaErrorInvalidDeviceFunction", err);
    if (!add_one || !spin)
        goto out;

    err = ops->func_get_attributes(b, add_one, &fa);
    printf("      add_one attrs: regs %d, max threads %d, binary %d, ptx %d, shared %lld, local %lld, "
           "max dyn shared %d\n", fa.num_regs, fa.max_threads_per_block, fa.binary_version,
           fa.ptx_version, (long long)fa.shared_size_bytes, (long long)fa.local_size_bytes,
           fa.max_dynamic_shared_size_bytes);
    check(!err && fa.max_threads_per_block > 0 && fa.binary_version >= 90, "func_get_attributes", err);

    err = ops->module_get_global(b, m, "smoke_global", &gaddr, &gsize);
    check(!err && gsize == 4 && (gaddr < ARENA_BASE || gaddr >= ARENA_BASE + ARENA_SIZE),
          "module_get_global smoke_global: 4 bytes, outside the arena", err);
    if (!err) {
        int v = 0;

        err = ops->memcpy_dtoh_sync(b, &v, gaddr, sizeof(v), NULL);
        check(!err && v == 42, "smoke_global reads 42", err);
    }
    err = ops->module_get_global(b, m, "no_such_global", &gaddr, &gsize);
    check(err == cudaErrorInvalidSymbol, "module_get_global of a missing symbol is cudaErrorInvalidSymbol", err);

    h = malloc((size_t)n * sizeof(int));
    if (!h)
        goto out;
    for (int i = 0; i < n; i++)
        h[i] = i;
    {
        uint8_t params[12];
        uint64_t p = a;
        tdm_dim3 grid = { (uint32_t)(n + 127) / 128, 1, 1 }, block = { 128, 1, 1 };

        memcpy(params + pi.offset[0], &p, 8);
        memcpy(params + pi.offset[1], &n, 4);
        err = ops->memcpy_htod(b, a, h, (size_t)n * sizeof(int), NULL);
        if (!err)
            err = ops->launch(b, add_one, grid, block, 0, NULL, params, sizeof(params));
        if (!err)
            err = ops->launch(b, add_one, grid, block, 0, NULL, params, sizeof(params));
        if (!err)
            err = ops->memcpy_dtoh_sync(b, h, a, (size_t)n * sizeof(int), NULL);
        bool ok = !err;
        for (int i = 0; ok && i < n; i++)
            ok = h[i] == i + 2;
        check(ok, "launch add_one twice on the legacy stream: p[i] == i + 2", err);
        err = ops->launch(b, add_one, grid, block, 0, NULL, params, 16);
        check(err == cudaErrorInvalidValue, "launch with wrong params_len is cudaErrorInvalidValue", err);
        err = ops->launch(b, add_one, grid, (tdm_dim3){ 2048, 1, 1 }, 0, NULL, params, sizeof(params));
        check(err == cudaErrorInvalidConfiguration,
              "launch with 2048 threads per block is cudaErrorInvalidConfiguration", err);
        err = ops->device_synchronize(b);
        check(!err, "device_synchronize after the bad launches", err);
    }
    test_threads(b, add_one, a);
    time_launches(b, spin);
    test_streams_events(b, spin);
    {
        tdm_bstream *s = NULL;

        err = ops->stream_create(b, cudaStreamNonBlocking, 0, NULL, &s);
        if (check(!err, "stream_create for the htod source test", err)) {
            test_htod_consumes_source(b, spin, s, a, a_size);
            ops->stream_destroy(b, s);
        }
    }
out:
    free(h);
    err = ops->module_unload(b, m);
    check(!err, "module_unload", err);
}

/* A second instance wanting the same arena must be refused, since the
 * address is already taken: arena_reserve may not settle for another. */
static void test_arena_collision(const tdm_backend_config *cfg)
{
    tdm_backend *b2 = NULL;
    int err = ops->init(&b2, cfg);

    if (!check(!err, "second backend instance init", err))
        return;
    err = ops->arena_reserve(b2);
    check(err == cudaErrorMemoryAllocation,
          "arena_reserve where the arena is taken is cudaErrorMemoryAllocation", err);
    ops->shutdown(b2);
}

/* The standby's view: a second process (this program re-executed with
 * --import FD ADDR SIZE) imports the exported memory at the same address,
 * checks the bytes the exporter wrote and writes its own. */
static int import_child(const char *fd_s, const char *addr_s, const char *size_s)
{
    tdm_backend_config cfg = { .device = 0, .arena_base = ARENA_BASE, .arena_size = ARENA_SIZE };
    uint64_t addr = strtoull(addr_s, NULL, 0), size = strtoull(size_s, NULL, 0);
    tdm_backend *b = NULL;
    tdm_bmem *m = NULL;
    uint8_t buf[4096], mark[16];

    if (ops->init(&b, &cfg) || ops->arena_reserve(b))
        return 10;
    if (ops->mem_import(b, addr, size, atoi(fd_s), &m))
        return 11;
    if (ops->memcpy_dtoh_sync(b, buf, addr, sizeof(buf), NULL) || !all_bytes(buf, sizeof(buf), 0xc3))
        return 12;
    memset(mark, 0x3c, sizeof(mark));
    if (ops->memcpy_htod(b, addr, mark, sizeof(mark), NULL) || ops->device_synchronize(b))
        return 13;
    if (ops->mem_unmap(b, addr, size, m))
        return 14;
    ops->shutdown(b);
    return 0;
}

static void test_export_import(tdm_backend *b, const char *self, uint64_t a, uint64_t size, tdm_bmem *ma,
                               uint64_t spare)
{
    uint8_t buf[4096];
    tdm_bmem *alias = NULL;
    char fd_s[16], addr_s[32], size_s[32];
    int fd = -1, st = 0, err;
    pid_t pid;

    err = ops->memset_d8(b, a, 0xc3, size, NULL);
    if (!err)
        err = ops->device_synchronize(b);
    err = err ? err : ops->mem_export(b, ma, &fd);
    if (!check(!err && fd >= 0, "mem_export A as a POSIX fd", err))
        return;
    /* Same process, second address: both mappings show the same bytes. */
    err = ops->mem_import(b, spare, size, fd, &alias);
    if (!err)
        err = ops->memcpy_dtoh_sync(b, buf, spare + size - sizeof(buf), sizeof(buf), NULL);
    check(!err && all_bytes(buf, sizeof(buf), 0xc3), "mem_import A at a second address: same bytes", err);
    if (alias)
        check(!ops->mem_unmap(b, spare, size, alias), "mem_unmap the alias", 0);

    snprintf(fd_s, sizeof(fd_s), "%d", fd);
    snprintf(addr_s, sizeof(addr_s), "%#llx", (unsigned long long)a);
    snprintf(size_s, sizeof(size_s), "%llu", (unsigned long long)size);
    pid = fork();
    if (pid == 0) {
        fcntl(fd, F_SETFD, 0); /* the child must inherit it across exec */
        execl(self, self, "--import", fd_s, addr_s, size_s, (char *)NULL);
        _exit(127);
    }
    st = -1;
    if (pid > 0)
        waitpid(pid, &st, 0);
    close(fd);
    check(pid > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0,
          "another process imports A at the same address and sees its bytes", st);
    err = ops->memcpy_dtoh_sync(b, buf, a, 16, NULL);
    check(!err && all_bytes(buf, 16, 0x3c), "its write is visible here", err);
}

int main(int argc, char **argv)
{
    tdm_backend_config cfg = { .device = 0, .arena_base = ARENA_BASE, .arena_size = ARENA_SIZE };
    tdm_backend *b = NULL;
    tdm_device_info *info = calloc(1, sizeof(*info));
    tdm_bmem *ma = NULL, *mb = NULL;
    uint64_t gran, a, bb, a_size, b_size, free_b = 0, total_b = 0;
    int err, version = 0;

    if (argc == 5 && strcmp(argv[1], "--import") == 0)
        return import_child(argv[2], argv[3], argv[4]);
    if (argc != 2) {
        fprintf(stderr, "usage: %s SMOKE_KERNELS.fatbin\n", argv[0]);
        return 2;
    }
    if (!info)
        return 2;
    printf("backend: %s (simulated=%d)\n", ops->name, ops->simulated);
    err = ops->init(&b, &cfg);
    if (!check(!err && b, "init device 0", err)) {
        printf("cannot initialize the cuda backend (cudaError %d): no usable GPU or driver here\n", err);
        goto done;
    }
    err = ops->driver_version(b, &version);
    check(!err && version >= 12040, "driver_version", err);
    printf("      driver CUDA version %d\n", version);
    err = ops->device_info(b, info);
    check(!err && info->name[0] && info->total_mem > 0 && !info->simulated &&
              info->attrs[CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR] >= 1,
          "device_info", err);
    printf("      name \"%s\", %llu MiB, cc %d.%d, %d SMs, uuid ", info->name,
           (unsigned long long)(info->total_mem >> 20),
           info->attrs[CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR],
           info->attrs[CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR],
           info->attrs[CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT]);
    for (int i = 0; i < 16; i++)
        printf("%02x", info->uuid[i]);
    printf("\n");
    err = ops->mem_get_info(b, &free_b, &total_b);
    check(!err && free_b > 0 && total_b >= free_b, "mem_get_info", err);
    printf("      free %llu MiB of %llu MiB\n", (unsigned long long)(free_b >> 20),
           (unsigned long long)(total_b >> 20));

    err = ops->arena_reserve(b);
    if (!check(!err, "arena_reserve 64 GiB at 0x200000000000", err))
        goto shutdown;
    err = ops->arena_reserve(b);
    check(!err, "arena_reserve again is a no-op", err);
    gran = ops->granularity(b);
    printf("      granularity %llu bytes\n", (unsigned long long)gran);
    check(gran > 0 && (gran & (gran - 1)) == 0, "granularity is a power of two", 0);
    a = ARENA_BASE;
    a_size = 4 * gran;
    bb = ARENA_BASE + 16 * gran;
    b_size = gran;
    err = ops->mem_map(b, a, a_size, &ma);
    check(!err && ma, "mem_map A: 4 units at the arena base", err);
    err = ops->mem_map(b, bb, b_size, &mb);
    check(!err && mb, "mem_map B: 1 unit at base + 16 units", err);
    if (!ma || !mb)
        goto unmap;

    test_copies(b, a, a_size, bb, b_size);
    test_module(b, argv[1], a, a_size);
    test_export_import(b, "/proc/self/exe", a, a_size, ma, ARENA_BASE + 32 * gran);
    test_arena_collision(&cfg);

unmap:
    if (ma)
        check(!ops->mem_unmap(b, a, a_size, ma), "mem_unmap A", 0);
    if (mb)
        check(!ops->mem_unmap(b, bb, b_size, mb), "mem_unmap B", 0);
    if (ma) {
        /* The range is free again: mapping it anew must give zeros. */
        uint8_t buf[4096];

        err = ops->mem_map(b, a, a_size, &ma);
        if (!err)
            err = ops->memcpy_dtoh_sync(b, buf, a, sizeof(buf), NULL);
        check(!err && all_bytes(buf, sizeof(buf), 0), "remap A after unmap: zeros again", err);
        if (!err)
            check(!ops->mem_unmap(b, a, a_size, ma), "mem_unmap A again", 0);
    }
shutdown:
    ops->shutdown(b);
    check(true, "shutdown", 0);
done:
    free(info);
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
