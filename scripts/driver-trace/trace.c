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

/* Export-table slots: each function slot of a table the driver hands out is
 * swapped, in a copy of the table, for slot stub k (stubs.S), which counts
 * the call in slot_calls[k] and jumps to slot_real[k]. */
#define SLOT_STUBS 1024
#define TABLE_SLOTS_MAX 128   /* cuBLAS's table 21318c60 has 93 */
extern void *const slot_stubs[SLOT_STUBS];
__attribute__((visibility("hidden"))) void *slot_real[SLOT_STUBS];
__attribute__((visibility("hidden"))) unsigned long slot_calls[SLOT_STUBS];
static struct wrapped {
    unsigned char uuid[16];
    const void *real_table;
    void *copy[TABLE_SLOTS_MAX];
    unsigned nslots, first_stub;
    char layout[TABLE_SLOTS_MAX + 1];   /* per slot: S size, F function, D data */
} wrapped[64];
static unsigned nwrapped, nstubs_used;
/* DRIVER_TRACE_ARGS=1 (read at load): slot stubs log their calls' arguments. */
__attribute__((visibility("hidden"))) char slot_args;

#define MAX_ASKED 2048
static struct asked {
    char what[1400];   /* a slot call's arguments (DRIVER_TRACE_ARGS) take up to ~1,300 */
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
    slot_args = getenv("DRIVER_TRACE_ARGS") && strcmp(getenv("DRIVER_TRACE_ARGS"), "1") == 0;
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
    for (unsigned t = 0; t < nwrapped; t++) {
        char u[33];
        for (int i = 0; i < 16; i++)
            snprintf(u + 2 * i, 3, "%02x", wrapped[t].uuid[i]);
        fprintf(f, "table %s slots %u layout %s\n", u, wrapped[t].nslots, wrapped[t].layout);
        for (unsigned i = 0; i < wrapped[t].nslots; i++) {
            unsigned k = wrapped[t].first_stub + i;
            if (wrapped[t].layout[i] == 'F' && slot_calls[k])
                fprintf(f, "slot %s %u %lu\n", u, i, slot_calls[k]);
        }
    }
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

/* A slot holds a function when it points into the real driver's code. */
static bool in_driver(const void *p)
{
    Dl_info info;

    return p && dladdr(p, &info) && info.dli_fname && strstr(info.dli_fname, "libcuda");
}

/* The copy of `table` with counting stubs in its function slots (the same
 * copy for every request of the same table); the real table when the stubs
 * or copies run out, or DRIVER_TRACE_SLOTS=0.  A table starts with its size
 * in bytes when its first word is small; otherwise its slots run while they
 * point into the driver. */
static const void *wrap_table(const void *table, const unsigned char *uuid)
{
    const uintptr_t *w = table;
    const char *env = getenv("DRIVER_TRACE_SLOTS");
    const void *out = table;
    struct wrapped *t;
    unsigned n;

    const char *keep = getenv("DRIVER_TRACE_KEEP");
    char hex[33];

    for (int i = 0; i < 16; i++)
        snprintf(hex + 2 * i, 3, "%02x", uuid[i]);
    if (!table || (env && strcmp(env, "0") == 0) || (keep && strstr(keep, hex)))
        return table;
    pthread_mutex_lock(&asked_lock);
    for (unsigned i = 0; i < nwrapped; i++)
        if (wrapped[i].real_table == table) {
            out = wrapped[i].copy;
            goto out;
        }
    if (nwrapped == sizeof(wrapped) / sizeof(wrapped[0]))
        goto out;
    if (w[0] > 0 && w[0] < 8 * TABLE_SLOTS_MAX && w[0] % 8 == 0)
        n = (unsigned)(w[0] / 8);
    else
        for (n = 0; n < TABLE_SLOTS_MAX && in_driver((const void *)w[n]); n++)
            ;
    if (n == 0 || nstubs_used + n > SLOT_STUBS)
        goto out;
    t = &wrapped[nwrapped++];
    memcpy(t->uuid, uuid, 16);
    t->real_table = table;
    t->nslots = n;
    t->first_stub = nstubs_used;
    nstubs_used += n;
    for (unsigned i = 0; i < n; i++) {
        void *v = (void *)w[i];
        if (i == 0 && w[0] < 8 * TABLE_SLOTS_MAX) {
            t->layout[i] = 'S';
            t->copy[i] = v;
        } else if (in_driver(v)) {
            t->layout[i] = 'F';
            slot_real[t->first_stub + i] = v;
            t->copy[i] = slot_stubs[t->first_stub + i];
            {
                char m[96];
                snprintf(m, sizeof(m), "stub %u is slot %u", t->first_stub + i, i);
                pthread_mutex_unlock(&asked_lock);
                note(m);
                pthread_mutex_lock(&asked_lock);
            }
        } else {
            t->layout[i] = 'D';
            t->copy[i] = v;
        }
    }
    out = t->copy;
out:
    pthread_mutex_unlock(&asked_lock);
    return out;
}

/* DRIVER_TRACE_ARGS=1: the first calls of each slot are also written out with their six
 * integer arguments, the return value, and the first 32 bytes each argument points to
 * before and after the call (read with process_vm_readv, so a non-pointer is harmless).
 * Slots are assumed to take at most six integer arguments: measurement only. */
#include <sys/uio.h>
typedef uintptr_t (*slot_fn)(uintptr_t, uintptr_t, uintptr_t, uintptr_t, uintptr_t, uintptr_t);
static void peek(char *out, size_t cap, uintptr_t p)
{
    unsigned char b[32];
    struct iovec l = {b, sizeof(b)}, r = {(void *)p, sizeof(b)};
    size_t n = 0;

    out[0] = 0;
    if (p < 4096 || process_vm_readv(getpid(), &l, 1, &r, 1, 0) != (ssize_t)sizeof(b))
        return;
    for (int i = 0; i < 32 && n + 3 < cap; i++)
        n += (size_t)snprintf(out + n, cap - n, "%02x", b[i]);
}
__attribute__((visibility("hidden"))) uintptr_t slot_logged(unsigned k, uintptr_t a0, uintptr_t a1, uintptr_t a2,
                                                             uintptr_t a3, uintptr_t a4, uintptr_t a5)
{
    uintptr_t a[6] = {a0, a1, a2, a3, a4, a5}, rv;
    char before[6][72], after[6][72], line[1400];
    static unsigned long logged[SLOT_STUBS];
    bool log = __atomic_fetch_add(&logged[k], 1, __ATOMIC_RELAXED) < 6;
    int n;

    for (int i = 0; log && i < 6; i++)
        peek(before[i], sizeof(before[i]), a[i]);
    rv = ((slot_fn)slot_real[k])(a0, a1, a2, a3, a4, a5);
    if (!log)
        return rv;
    for (int i = 0; i < 6; i++)
        peek(after[i], sizeof(after[i]), a[i]);
    n = snprintf(line, sizeof(line), "args stub %u rv %#lx:", k, (unsigned long)rv);
    for (int i = 0; i < 6 && n < (int)sizeof(line); i++)
        n += snprintf(line + n, sizeof(line) - (size_t)n, " a%d=%#lx[%s->%s]", i, (unsigned long)a[i], before[i],
                      after[i]);
    note(line);
    return rv;
}

/* DRIVER_TRACE_REFUSE=UUID[,UUID...]: those tables are refused, as a driver
 * that does not know them would, to learn which ones a program can do without. */
static bool refused(const char *hex)
{
    const char *list = getenv("DRIVER_TRACE_REFUSE");

    return list && *list && strstr(list, hex);
}

int cuGetExportTable(const void **table, const void *uuid)
{
    const unsigned char *u = uuid;
    char what[96];
    int n = snprintf(what, sizeof(what), "export ");
    int rc;

    for (int i = 0; u && i < 16; i++)
        n += snprintf(what + n, sizeof(what) - (size_t)n, "%02x", u[i]);
    if (u && refused(what + 7)) {
        strcat(what, " refused");
        note(what);
        return 500;   /* CUDA_ERROR_NOT_FOUND */
    }
    rc = real_export ? real_export(table, uuid) : 3;
    if (rc != 0) {
        snprintf(what + n, sizeof(what) - (size_t)n, " rc %d", rc);
        note(what);
        return rc;
    }
    note(what);
    if (table && u)
        *table = wrap_table(*table, u);
    return rc;
}
