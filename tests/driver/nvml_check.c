/* Tandem's NVML as PyTorch meets it: dlopen("libnvidia-ml.so.1") and dlsym by name.  Each
 * line says an answer and, where the runtime layer knows the same thing, whether the two
 * agree (the program links Tandem's libcudart.so.13 to ask it).  tests/integration/
 * test_nvml.c compares the lines with what NVML documents.
 *
 *   nvml-check            the queries, with a server (TANDEM_SERVER)
 *   nvml-check --absent   nvmlInit with no server reachable */
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "nvml_types.h"

typedef nvmlReturn_t (*init_fn)(void);
typedef nvmlReturn_t (*init_flags_fn)(unsigned int);
typedef const char *(*error_string_fn)(nvmlReturn_t);
typedef nvmlReturn_t (*count_fn)(unsigned int *);
typedef nvmlReturn_t (*by_index_fn)(unsigned int, nvmlDevice_t *);
typedef nvmlReturn_t (*by_string_fn)(const char *, nvmlDevice_t *);
typedef nvmlReturn_t (*dev_string_fn)(nvmlDevice_t, char *, unsigned int);
typedef nvmlReturn_t (*dev_uint_fn)(nvmlDevice_t, unsigned int *);
typedef nvmlReturn_t (*dev_ull_fn)(nvmlDevice_t, unsigned long long *);
typedef nvmlReturn_t (*sys_string_fn)(char *, unsigned int);
typedef nvmlReturn_t (*sys_int_fn)(int *);
typedef nvmlReturn_t (*memory_fn)(nvmlDevice_t, nvmlMemory_t *);
typedef nvmlReturn_t (*memory_v2_fn)(nvmlDevice_t, nvmlMemory_v2_t *);
typedef nvmlReturn_t (*pci_fn)(nvmlDevice_t, nvmlPciInfo_t *);
typedef nvmlReturn_t (*cc_fn)(nvmlDevice_t, int *, int *);
typedef nvmlReturn_t (*mode_fn)(nvmlDevice_t, nvmlComputeMode_t *);
typedef nvmlReturn_t (*state_fn)(nvmlDevice_t, nvmlEnableState_t *);
typedef nvmlReturn_t (*util_fn)(nvmlDevice_t, nvmlUtilization_t *);
typedef nvmlReturn_t (*temp_fn)(nvmlDevice_t, nvmlTemperatureSensors_t, unsigned int *);
typedef nvmlReturn_t (*procs_fn)(nvmlDevice_t, unsigned int *, nvmlProcessInfo_t *);
typedef nvmlReturn_t (*nvlink_fn)(nvmlDevice_t, unsigned int, nvmlEnableState_t *);
typedef nvmlReturn_t (*p2p_fn)(nvmlDevice_t, nvmlDevice_t, nvmlGpuP2PCapsIndex_t, nvmlGpuP2PStatus_t *);

static void *lib;
static int missing;

static void *sym(const char *name)
{
    void *p = dlsym(lib, name);

    if (!p) {
        printf("missing entry point %s\n", name);
        missing = 1;
    }
    return p;
}

#define SYM(type, name) type name = (type)sym(#name)

static const char *code(nvmlReturn_t r)
{
    static const char *const names[] = {
        [NVML_SUCCESS] = "NVML_SUCCESS",
        [NVML_ERROR_UNINITIALIZED] = "NVML_ERROR_UNINITIALIZED",
        [NVML_ERROR_INVALID_ARGUMENT] = "NVML_ERROR_INVALID_ARGUMENT",
        [NVML_ERROR_NOT_SUPPORTED] = "NVML_ERROR_NOT_SUPPORTED",
        [NVML_ERROR_NOT_FOUND] = "NVML_ERROR_NOT_FOUND",
        [NVML_ERROR_INSUFFICIENT_SIZE] = "NVML_ERROR_INSUFFICIENT_SIZE",
        [NVML_ERROR_DRIVER_NOT_LOADED] = "NVML_ERROR_DRIVER_NOT_LOADED",
        [NVML_ERROR_GPU_IS_LOST] = "NVML_ERROR_GPU_IS_LOST",
        [NVML_ERROR_FUNCTION_NOT_FOUND] = "NVML_ERROR_FUNCTION_NOT_FOUND",
        [NVML_ERROR_ARGUMENT_VERSION_MISMATCH] = "NVML_ERROR_ARGUMENT_VERSION_MISMATCH",
    };
    static char other[32];

    if ((unsigned)r < sizeof(names) / sizeof(names[0]) && names[r])
        return names[r];
    snprintf(other, sizeof(other), "nvmlReturn_t %d", (int)r);
    return other;
}

static const char *agree(int yes)
{
    return yes ? "agrees with the runtime" : "DIFFERS from the runtime";
}

/* With no server: nvmlInit fails as with no driver, every time, and the reason is printed
 * once (on stderr, which the test counts). */
static int absent(void)
{
    SYM(init_fn, nvmlInit_v2);
    SYM(count_fn, nvmlDeviceGetCount_v2);
    unsigned n = 0;

    if (missing)
        return 1;
    printf("nvmlInit_v2: %s\n", code(nvmlInit_v2()));
    printf("nvmlInit_v2 again: %s\n", code(nvmlInit_v2()));
    printf("nvmlDeviceGetCount_v2: %s\n", code(nvmlDeviceGetCount_v2(&n)));
    return 0;
}

static void uuid_of(const struct cudaDeviceProp *p, char *s, size_t len)
{
    const unsigned char *b = (const unsigned char *)p->uuid.bytes;
    int at = snprintf(s, len, "GPU-");

    for (int i = 0; i < 16; i++)
        at += snprintf(s + at, len - (size_t)at, "%s%02x", i == 4 || i == 6 || i == 8 || i == 10 ? "-" : "", b[i]);
}

static void identity(nvmlDevice_t dev, const struct cudaDeviceProp *p)
{
    SYM(dev_string_fn, nvmlDeviceGetName);
    SYM(dev_string_fn, nvmlDeviceGetUUID);
    SYM(by_string_fn, nvmlDeviceGetHandleByUUID);
    SYM(dev_uint_fn, nvmlDeviceGetIndex);
    SYM(dev_uint_fn, nvmlDeviceGetMinorNumber);
    SYM(cc_fn, nvmlDeviceGetCudaComputeCapability);
    char s[NVML_DEVICE_UUID_V2_BUFFER_SIZE], want[NVML_DEVICE_UUID_V2_BUFFER_SIZE];
    nvmlDevice_t other = NULL;
    unsigned u = 99;
    int major = 0, minor = 0;
    nvmlReturn_t r;

    if (missing)
        return;
    r = nvmlDeviceGetName(dev, s, sizeof(s));
    printf("name: %s, %s\n", code(r), agree(!r && strcmp(s, p->name) == 0));
    printf("name into 4 bytes: %s\n", code(nvmlDeviceGetName(dev, s, 4)));
    printf("name into NULL: %s\n", code(nvmlDeviceGetName(dev, NULL, sizeof(s))));
    uuid_of(p, want, sizeof(want));
    r = nvmlDeviceGetUUID(dev, s, sizeof(s));
    printf("uuid: %s, %s\n", code(r), agree(!r && strcmp(s, want) == 0));
    printf("uuid into 10 bytes: %s\n", code(nvmlDeviceGetUUID(dev, s, 10)));
    r = nvmlDeviceGetHandleByUUID(want, &other);
    printf("handle by uuid: %s, %s\n", code(r), other == dev ? "the same handle" : "ANOTHER handle");
    printf("handle by an unknown uuid: %s\n",
           code(nvmlDeviceGetHandleByUUID("GPU-00000000-0000-0000-0000-000000000000", &other)));
    printf("handle by a NULL uuid: %s\n", code(nvmlDeviceGetHandleByUUID(NULL, &other)));
    r = nvmlDeviceGetIndex(dev, &u);
    printf("index: %s, %u\n", code(r), u);
    r = nvmlDeviceGetMinorNumber(dev, &u);
    printf("minor number: %s\n", code(r));
    r = nvmlDeviceGetCudaComputeCapability(dev, &major, &minor);
    printf("compute capability: %s, %s\n", code(r), agree(!r && major == p->major && minor == p->minor));
}

static void pci(nvmlDevice_t dev)
{
    SYM(pci_fn, nvmlDeviceGetPciInfo_v3);
    SYM(by_string_fn, nvmlDeviceGetHandleByPciBusId_v2);
    nvmlPciInfo_t info;
    nvmlDevice_t other = NULL;
    char legacy[32], wide[40];
    int domain = -1, bus = -1, device = -1;
    nvmlReturn_t r;

    if (missing)
        return;
    cudaDeviceGetPCIBusId(legacy, (int)sizeof(legacy), 0);
    cudaDeviceGetAttribute(&domain, cudaDevAttrPciDomainId, 0);
    cudaDeviceGetAttribute(&bus, cudaDevAttrPciBusId, 0);
    cudaDeviceGetAttribute(&device, cudaDevAttrPciDeviceId, 0);
    snprintf(wide, sizeof(wide), "%08x:%02x:%02x.0", (unsigned)domain, (unsigned)bus, (unsigned)device);
    memset(&info, 0x5a, sizeof(info));
    r = nvmlDeviceGetPciInfo_v3(dev, &info);
    printf("pci info: %s\n", code(r));
    printf("  busIdLegacy %s\n", agree(!r && strcasecmp(info.busIdLegacy, legacy) == 0));
    printf("  busId %s\n", agree(!r && strcasecmp(info.busId, wide) == 0));
    printf("  domain, bus, device %s\n",
           agree(!r && info.domain == (unsigned)domain && info.bus == (unsigned)bus && info.device == (unsigned)device));
    printf("  vendor 0x%04x\n", info.pciDeviceId & 0xffffu);
    printf("pci info into NULL: %s\n", code(nvmlDeviceGetPciInfo_v3(dev, NULL)));
    r = nvmlDeviceGetHandleByPciBusId_v2(info.busId, &other);
    printf("handle by busId: %s, %s\n", code(r), other == dev ? "the same handle" : "ANOTHER handle");
    other = NULL;
    r = nvmlDeviceGetHandleByPciBusId_v2(legacy, &other);
    printf("handle by the runtime's bus id: %s, %s\n", code(r), other == dev ? "the same handle" : "ANOTHER handle");
    snprintf(wide, sizeof(wide), "%08x:%02x:%02x.0", (unsigned)domain, (unsigned)(bus + 1) & 0xffu, (unsigned)device);
    printf("handle by another bus id: %s\n", code(nvmlDeviceGetHandleByPciBusId_v2(wide, &other)));
    printf("handle by a NULL bus id: %s\n", code(nvmlDeviceGetHandleByPciBusId_v2(NULL, &other)));
}

static void memory(nvmlDevice_t dev)
{
    SYM(memory_fn, nvmlDeviceGetMemoryInfo);
    SYM(memory_v2_fn, nvmlDeviceGetMemoryInfo_v2);
    nvmlMemory_t m;
    nvmlMemory_v2_t m2;
    size_t free_ = 0, total = 0;
    nvmlReturn_t r;

    if (missing)
        return;
    cudaMemGetInfo(&free_, &total);
    r = nvmlDeviceGetMemoryInfo(dev, &m);
    printf("memory: %s, total %s, used + free = total %s\n", code(r), agree(!r && m.total == total),
           !r && m.used + m.free == m.total ? "yes" : "NO");
    printf("memory into NULL: %s\n", code(nvmlDeviceGetMemoryInfo(dev, NULL)));
    memset(&m2, 0, sizeof(m2));
    m2.version = nvmlMemory_v2;
    r = nvmlDeviceGetMemoryInfo_v2(dev, &m2);
    printf("memory v2: %s, total %s\n", code(r), agree(!r && m2.total == total));
    m2.version = 1u << 24 | (unsigned)sizeof(m2);
    printf("memory v2 of version 1: %s\n", code(nvmlDeviceGetMemoryInfo_v2(dev, &m2)));
    m2.version = 3u << 24 | (unsigned)sizeof(m2);
    printf("memory v2 of version 3: %s\n", code(nvmlDeviceGetMemoryInfo_v2(dev, &m2)));
}

static void state(nvmlDevice_t dev)
{
    SYM(mode_fn, nvmlDeviceGetComputeMode);
    SYM(state_fn, nvmlDeviceGetPersistenceMode);
    SYM(util_fn, nvmlDeviceGetUtilizationRates);
    SYM(temp_fn, nvmlDeviceGetTemperature);
    SYM(dev_uint_fn, nvmlDeviceGetPowerUsage);
    SYM(dev_ull_fn, nvmlDeviceGetTotalEnergyConsumption);
    SYM(procs_fn, nvmlDeviceGetComputeRunningProcesses_v3);
    SYM(nvlink_fn, nvmlDeviceGetNvLinkState);
    SYM(p2p_fn, nvmlDeviceGetP2PStatus);
    nvmlComputeMode_t mode = 99;
    nvmlEnableState_t on = 99;
    nvmlUtilization_t util;
    nvmlProcessInfo_t procs[4];
    nvmlGpuP2PStatus_t p2p = 99;
    unsigned u = 0, n = 4;
    unsigned long long energy = 0;
    int want = -1;
    nvmlReturn_t r;

    if (missing)
        return;
    cudaDeviceGetAttribute(&want, cudaDevAttrComputeMode, 0);
    r = nvmlDeviceGetComputeMode(dev, &mode);
    printf("compute mode: %s, %s\n", code(r), agree(!r && (int)mode == want));
    r = nvmlDeviceGetPersistenceMode(dev, &on);
    printf("persistence mode: %s\n", code(r));
    printf("utilization: %s\n", code(nvmlDeviceGetUtilizationRates(dev, &util)));
    printf("temperature: %s\n", code(nvmlDeviceGetTemperature(dev, NVML_TEMPERATURE_GPU, &u)));
    printf("power: %s\n", code(nvmlDeviceGetPowerUsage(dev, &u)));
    printf("energy: %s\n", code(nvmlDeviceGetTotalEnergyConsumption(dev, &energy)));
    r = nvmlDeviceGetComputeRunningProcesses_v3(dev, &n, procs);
    printf("compute processes: %s, %u\n", code(r), n);
    printf("compute processes, NULL count: %s\n", code(nvmlDeviceGetComputeRunningProcesses_v3(dev, NULL, procs)));
    printf("nvlink 0: %s\n", code(nvmlDeviceGetNvLinkState(dev, 0, &on)));
    r = nvmlDeviceGetP2PStatus(dev, dev, NVML_P2P_CAPS_INDEX_READ, &p2p);
    printf("p2p read with itself: %s, %s\n", code(r), p2p == NVML_P2P_STATUS_OK ? "OK" : "not OK");
    printf("p2p of index 77: %s\n", code(nvmlDeviceGetP2PStatus(dev, dev, (nvmlGpuP2PCapsIndex_t)77, &p2p)));
}

static void system_(void)
{
    SYM(sys_int_fn, nvmlSystemGetCudaDriverVersion);
    SYM(sys_int_fn, nvmlSystemGetCudaDriverVersion_v2);
    SYM(sys_string_fn, nvmlSystemGetDriverVersion);
    SYM(sys_string_fn, nvmlSystemGetNVMLVersion);
    char s[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE];
    int v = 0, v2 = 0, want = -1;
    nvmlReturn_t r;

    if (missing)
        return;
    cudaDriverGetVersion(&want);
    r = nvmlSystemGetCudaDriverVersion(&v);
    printf("cuda driver version: %s, %s\n", code(r), agree(!r && v == want));
    r = nvmlSystemGetCudaDriverVersion_v2(&v2);
    printf("cuda driver version v2: %s, %s\n", code(r), agree(!r && v2 == want));
    printf("cuda driver version into NULL: %s\n", code(nvmlSystemGetCudaDriverVersion(NULL)));
    printf("driver version: %s\n", code(nvmlSystemGetDriverVersion(s, sizeof(s))));
    printf("driver version into 1 byte: %s\n", code(nvmlSystemGetDriverVersion(s, 1)));
    printf("nvml version: %s\n", code(nvmlSystemGetNVMLVersion(s, sizeof(s))));
}

static int present(void)
{
    SYM(init_fn, nvmlInit);
    SYM(init_fn, nvmlInit_v2);
    SYM(init_fn, nvmlShutdown);
    SYM(init_flags_fn, nvmlInitWithFlags);
    SYM(error_string_fn, nvmlErrorString);
    SYM(count_fn, nvmlDeviceGetCount_v2);
    SYM(count_fn, nvmlDeviceGetCount);
    SYM(by_index_fn, nvmlDeviceGetHandleByIndex_v2);
    SYM(dev_string_fn, nvmlDeviceGetName);
    SYM(dev_string_fn, nvmlDeviceGetSerial);
    struct cudaDeviceProp p;
    nvmlDevice_t dev = NULL;
    unsigned n = 99, n1 = 99;
    int want = -1;
    char s[64];
    struct nvmlDevice_st *forged = (struct nvmlDevice_st *)&n;
    nvmlReturn_t r;

    if (missing)
        return 1;
    printf("count before nvmlInit: %s\n", code(nvmlDeviceGetCount_v2(&n)));
    printf("handle before nvmlInit: %s\n", code(nvmlDeviceGetHandleByIndex_v2(0, &dev)));
    printf("shutdown before nvmlInit: %s\n", code(nvmlShutdown()));
    printf("error string of NVML_ERROR_UNINITIALIZED: %s\n",
           nvmlErrorString(NVML_ERROR_UNINITIALIZED) && *nvmlErrorString(NVML_ERROR_UNINITIALIZED) ? "a text" : "none");
    printf("nvmlInit: %s\n", code(nvmlInit()));
    printf("nvmlInit_v2: %s\n", code(nvmlInit_v2()));
    printf("nvmlInitWithFlags(4): %s\n", code(nvmlInitWithFlags(4)));
    printf("shutdown of it: %s\n", code(nvmlShutdown()));
    if (cudaGetDeviceCount(&want) != cudaSuccess || cudaGetDeviceProperties(&p, 0) != cudaSuccess) {
        printf("the runtime has no device\n");
        return 1;
    }
    r = nvmlDeviceGetCount_v2(&n);
    printf("count: %s, %s\n", code(r), agree(!r && (int)n == want));
    r = nvmlDeviceGetCount(&n1);
    printf("count (v1): %s, %s\n", code(r), agree(!r && (int)n1 == want));
    printf("count into NULL: %s\n", code(nvmlDeviceGetCount_v2(NULL)));
    printf("handle of index 0: %s\n", code(nvmlDeviceGetHandleByIndex_v2(0, &dev)));
    printf("handle of index count: %s\n", code(nvmlDeviceGetHandleByIndex_v2(n, &dev)));
    printf("handle into NULL: %s\n", code(nvmlDeviceGetHandleByIndex_v2(0, NULL)));
    nvmlDeviceGetHandleByIndex_v2(0, &dev);
    identity(dev, &p);
    pci(dev);
    memory(dev);
    state(dev);
    system_();
    printf("name of a forged handle: %s\n", code(nvmlDeviceGetName(forged, s, sizeof(s))));
    printf("name of a NULL handle: %s\n", code(nvmlDeviceGetName(NULL, s, sizeof(s))));
    printf("serial (refused): %s\n", code(nvmlDeviceGetSerial(dev, s, sizeof(s))));
    printf("an entry point NVML never had: %s\n",
           dlsym(lib, "nvmlDeviceGetTandemSecret") ? "found" : "absent");
    printf("shutdown: %s\n", code(nvmlShutdown()));
    printf("count after one shutdown: %s\n", code(nvmlDeviceGetCount_v2(&n)));
    printf("shutdown: %s\n", code(nvmlShutdown()));
    printf("count after both: %s\n", code(nvmlDeviceGetCount_v2(&n)));
    printf("shutdown once more: %s\n", code(nvmlShutdown()));
    return missing;
}

int main(int argc, char **argv)
{
    int rc;

    lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        printf("dlopen: %s\n", dlerror());
        return 1;
    }
    rc = argc > 1 && strcmp(argv[1], "--absent") == 0 ? absent() : present();
    printf("done\n");
    return rc;   /* the library stays loaded, as PyTorch leaves it */
}
