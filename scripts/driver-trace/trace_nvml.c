/* The NVML half of scripts/driver-trace: every entry point of the real libnvidia-ml.so.1
 * (NVML_TRACE_REAL) counts its calls in trace_calls[i] and jumps through trace_real[i]
 * (generated stubs); the counts go to DRIVER_TRACE_OUT at exit.  Measurement only. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

extern const char *const trace_names[];
extern const unsigned trace_count;

__attribute__((visibility("hidden"))) void *trace_real[1024];
__attribute__((visibility("hidden"))) unsigned long trace_calls[1024];

__attribute__((constructor)) static void trace_open(void)
{
    const char *path = getenv("NVML_TRACE_REAL");
    void *lib = path && *path ? dlopen(path, RTLD_NOW | RTLD_LOCAL) : NULL;

    if (!lib) {
        fprintf(stderr, "driver-trace: cannot open the real NVML %s: %s\n", path ? path : "(NVML_TRACE_REAL unset)",
                dlerror());
        return;
    }
    for (unsigned i = 0; i < trace_count && i < 1024; i++)
        trace_real[i] = dlsym(lib, trace_names[i]);
}

__attribute__((destructor)) static void trace_report(void)
{
    const char *path = getenv("DRIVER_TRACE_OUT");
    FILE *f = path && *path ? fopen(path, "a") : stderr;

    if (!f)
        return;
    fprintf(f, "# nvml-trace of pid %d: calls per entry point\n", (int)getpid());
    for (unsigned i = 0; i < trace_count && i < 1024; i++)
        if (trace_calls[i])
            fprintf(f, "nvml %s %lu\n", trace_names[i], trace_calls[i]);
    if (f != stderr)
        fclose(f);
}
