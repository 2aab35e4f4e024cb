/* The recording half of scripts/driver-trace (build.sh says what it is for).  Every entry
 * point of the generated stubs jumps through trace_real[i] after counting the call in
 * trace_calls[i]; cuGetProcAddress(_v2) and cuGetExportTable are written out here, to record
 * what is asked for.  Single purpose, measurement only: never shipped to guests. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern const char *const trace_names[];
extern const unsigned trace_count;
extern void *const trace_stubs[];

__attribute__((visibility("hidden"))) void *trace_real[1024];
__attribute__((visibility("hidden"))) unsigned long trace_calls[1024];

#define MAX_ASKED 4096
static struct asked {
    char what[96];
    unsigned long n;
} asked[MAX_ASKED];
static unsigned nasked;
static pthread_mutex_t asked_lock = PTHREAD_MUTEX_INITIALIZER;
static void *real_lib;

typedef int (*proc_v2_fn)(const char *, void **, int, unsigned long long, void *);
typedef int (*proc_v1_fn)(const char *, void **, int, unsigned long long);
typedef int (*export_fn)(const void **, const void *);
static proc_v2_fn real_proc_v2;
static proc_v1_fn real_proc_v1;
static export_fn real_export;

static void note(const char *what)
{
    pthread_mutex_lock(&asked_lock);
    for (unsigned i = 0; i < nasked; i++)
        if (strcmp(asked[i].what, what) == 0) {
            asked[i].n++;
            goto out;
        }
    if (nasked < MAX_ASKED) {
        snprintf(asked[nasked].what, sizeof(asked[nasked].what), "%s", what);
        asked[nasked++].n = 1;
    }
out:
    pthread_mutex_unlock(&asked_lock);
}

static const char *real_path(void)
{
    const char *p = getenv("DRIVER_TRACE_REAL");
    return p && *p ? p : "/usr/local/nvidia/lib64/libcuda.so.1";
}

__attribute__((constructor)) static void trace_open(void)
{
    real_lib = dlopen(real_path(), RTLD_NOW | RTLD_LOCAL);
    if (!real_lib) {
        fprintf(stderr, "driver-trace: cannot open the real driver %s: %s\n", real_path(), dlerror());
        return;
    }
    for (unsigned i = 0; i < trace_count && i < 1024; i++)
        trace_real[i] = dlsym(real_lib, trace_names[i]);
    real_proc_v2 = (proc_v2_fn)dlsym(real_lib, "cuGetProcAddress_v2");
    real_proc_v1 = (proc_v1_fn)dlsym(real_lib, "cuGetProcAddress");
    real_export = (export_fn)dlsym(real_lib, "cuGetExportTable");
}

__attribute__((destructor)) static void trace_report(void)
{
    const char *path = getenv("DRIVER_TRACE_OUT");
    FILE *f = path && *path ? fopen(path, "a") : stderr;

    if (!f)
        return;
    fprintf(f, "# driver-trace of pid %d: calls per entry point, entry points asked for, export tables\n", (int)getpid());
    for (unsigned i = 0; i < trace_count && i < 1024; i++)
        if (trace_calls[i])
            fprintf(f, "calls %s %lu\n", trace_names[i], trace_calls[i]);
    for (unsigned i = 0; i < nasked; i++)
        fprintf(f, "%s %lu\n", asked[i].what, asked[i].n);
    if (f != stderr)
        fclose(f);
}

int cuGetProcAddress_v2(const char *symbol, void **pfn, int version, unsigned long long flags, void *status);
int cuGetProcAddress(const char *symbol, void **pfn, int version, unsigned long long flags);
int cuGetExportTable(const void **table, const void *uuid);

/* The runtime asks for cuGetProcAddress and cuGetExportTable themselves
 * first, then calls what it got: those must be ours, or every later
 * lookup bypasses the record. */
static bool ours(const char *symbol, void **pfn, int version)
{
    if (!symbol || !pfn)
        return false;
    if (strcmp(symbol, "cuGetProcAddress") == 0)
        *pfn = version >= 12000 ? (void *)cuGetProcAddress_v2 : (void *)cuGetProcAddress;
    else if (strcmp(symbol, "cuGetExportTable") == 0)
        *pfn = (void *)cuGetExportTable;
    else
        return false;
    return true;
}

static void note_proc(const char *symbol, int version)
{
    char what[96];

    snprintf(what, sizeof(what), "proc %s v%d", symbol && *symbol ? symbol : "(empty)", version);
    note(what);
}

/* The real function a lookup found, swapped for the trampoline of the
 * exported entry point it is (versions differ: "cuMemAlloc" at 12000 is
 * the export cuMemAlloc_v2), so its calls are counted; a function the
 * driver does not export stays as it is, uncounted. */
static void counted(int rc, void **pfn)
{
    if (rc != 0 || !pfn || !*pfn)
        return;
    for (unsigned i = 0; i < trace_count && i < 1024; i++)
        if (trace_real[i] == *pfn && trace_stubs[i]) {
            *pfn = trace_stubs[i];
            return;
        }
}

int cuGetProcAddress_v2(const char *symbol, void **pfn, int version, unsigned long long flags, void *status)
{
    int rc;

    note_proc(symbol, version);
    if (ours(symbol, pfn, version)) {
        if (status)
            *(int *)status = 0;   /* CU_GET_PROC_ADDRESS_SUCCESS */
        return 0;
    }
    rc = real_proc_v2 ? real_proc_v2(symbol, pfn, version, flags, status) : 3 /* not initialized */;
    counted(rc, pfn);
    return rc;
}

int cuGetProcAddress(const char *symbol, void **pfn, int version, unsigned long long flags)
{
    int rc;

    note_proc(symbol, version);
    if (ours(symbol, pfn, version))
        return 0;
    rc = real_proc_v1 ? real_proc_v1(symbol, pfn, version, flags) : 3;
    counted(rc, pfn);
    return rc;
}

int cuGetExportTable(const void **table, const void *uuid)
{
    const unsigned char *u = uuid;
    char what[96];
    int n = snprintf(what, sizeof(what), "export ");

    for (int i = 0; u && i < 16; i++)
        n += snprintf(what + n, sizeof(what) - (size_t)n, "%02x", u[i]);
    note(what);
    return real_export ? real_export(table, uuid) : 3;
}
