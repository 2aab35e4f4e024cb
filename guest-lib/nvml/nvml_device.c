/* The device queries of Tandem's NVML.  Every answer is the runtime layer's about the
 * session's device (its properties are fetched once and cached there), so a program polling
 * NVML costs the server nothing after the first query; what the guest cannot know, because
 * the server and not the guest owns the GPU (temperature, power, clocks, utilization,
 * NVLink), is NVML_ERROR_NOT_SUPPORTED, as NVML answers for a GPU without the sensor. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "nvml_lib.h"

#define MAX_DEVICES 16

/* The handles: one entry per device ordinal, never written (once per process, as NVML's own
 * device table is). */
static struct nvmlDevice_st devices[MAX_DEVICES] = {
    { 0 }, { 1 }, { 2 }, { 3 }, { 4 }, { 5 }, { 6 }, { 7 }, { 8 }, { 9 }, { 10 }, { 11 }, { 12 }, { 13 }, { 14 }, { 15 },
};

/* NVML's code for a runtime layer failure after a successful nvmlInit: the server gone is
 * the GPU become inaccessible. */
static nvmlReturn_t nvml_of(cudaError_t err)
{
    switch (err) {
    case cudaSuccess: return NVML_SUCCESS;
    case cudaErrorInvalidValue: return NVML_ERROR_INVALID_ARGUMENT;
    case cudaErrorInvalidDevice: return NVML_ERROR_INVALID_ARGUMENT;
    case cudaErrorDevicesUnavailable:
    case cudaErrorNoDevice: return NVML_ERROR_GPU_IS_LOST;
    default: return NVML_ERROR_UNKNOWN;
    }
}

/* The session's device count, at most the handles there are. */
static unsigned device_count(void)
{
    int n = 0;

    if (cudaGetDeviceCount(&n) != cudaSuccess || n < 0)
        return 0;
    return n > MAX_DEVICES ? MAX_DEVICES : (unsigned)n;
}

nvmlReturn_t tdm_nvml_device(nvmlDevice_t d, int *ordinal)
{
    nvmlReturn_t r = tdm_nvml_ready();
    uintptr_t p = (uintptr_t)d, lo = (uintptr_t)&devices[0], hi = (uintptr_t)&devices[MAX_DEVICES];

    if (r)
        return r;
    /* Compared as integers: a forged handle is any pointer, and comparing pointers into
     * different objects is undefined. */
    if (p < lo || p >= hi || (p - lo) % sizeof(devices[0]) != 0)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (d->index >= device_count())
        return NVML_ERROR_INVALID_ARGUMENT;
    *ordinal = (int)d->index;
    return NVML_SUCCESS;
}

nvmlReturn_t tdm_nvml_string(char *dst, unsigned int length, const char *s)
{
    size_t n = strlen(s);

    if (!dst)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (n + 1 > length)
        return NVML_ERROR_INSUFFICIENT_SIZE;
    memcpy(dst, s, n + 1);
    return NVML_SUCCESS;
}

/* The properties of the device d names (cached by the runtime layer). */
static nvmlReturn_t props(nvmlDevice_t d, struct cudaDeviceProp *p)
{
    int ordinal = 0;
    nvmlReturn_t r = tdm_nvml_device(d, &ordinal);

    return r ? r : nvml_of(cudaGetDeviceProperties(p, ordinal));
}

/* ---- counting and finding devices ---- */

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *deviceCount)
{
    nvmlReturn_t r = tdm_nvml_ready();

    if (r)
        return r;
    if (!deviceCount)
        return NVML_ERROR_INVALID_ARGUMENT;
    *deviceCount = device_count();
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCount(unsigned int *deviceCount)
{
    return nvmlDeviceGetCount_v2(deviceCount);
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device)
{
    nvmlReturn_t r = tdm_nvml_ready();

    if (r)
        return r;
    if (!device || index >= device_count())
        return NVML_ERROR_INVALID_ARGUMENT;
    *device = &devices[index];
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned int index, nvmlDevice_t *device)
{
    return nvmlDeviceGetHandleByIndex_v2(index, device);
}

/* "GPU-" and the 16 bytes of cudaDeviceProp::uuid as 8-4-4-4-12 hexadecimal digits, the form
 * NVML gives (and nvidia-smi -L prints). */
static void format_uuid(const struct cudaDeviceProp *p, char out[NVML_DEVICE_UUID_BUFFER_SIZE])
{
    const unsigned char *b = (const unsigned char *)p->uuid.bytes;

    snprintf(out, NVML_DEVICE_UUID_BUFFER_SIZE,
             "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1], b[2], b[3], b[4],
             b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
}

nvmlReturn_t nvmlDeviceGetHandleByUUID(const char *uuid, nvmlDevice_t *device)
{
    nvmlReturn_t r = tdm_nvml_ready();
    struct cudaDeviceProp p;
    char s[NVML_DEVICE_UUID_BUFFER_SIZE];
    unsigned n;

    if (r)
        return r;
    if (!uuid || !device)
        return NVML_ERROR_INVALID_ARGUMENT;
    n = device_count();
    for (unsigned i = 0; i < n; i++) {
        if ((r = props(&devices[i], &p)))
            return r;
        format_uuid(&p, s);
        if (strcasecmp(s, uuid) == 0) {
            *device = &devices[i];
            return NVML_SUCCESS;
        }
    }
    return NVML_ERROR_NOT_FOUND;
}

/* The runtime layer parses the id (the spellings NVML also takes) and matches it against the
 * device's: unparsable is an invalid argument, another address not found. */
nvmlReturn_t nvmlDeviceGetHandleByPciBusId_v2(const char *pciBusId, nvmlDevice_t *device)
{
    nvmlReturn_t r = tdm_nvml_ready();
    cudaError_t err;
    int ordinal = -1;

    if (r)
        return r;
    if (!pciBusId || !device)
        return NVML_ERROR_INVALID_ARGUMENT;
    err = cudaDeviceGetByPCIBusId(&ordinal, pciBusId);
    if (err == cudaErrorInvalidDevice)
        return NVML_ERROR_NOT_FOUND;
    if (err)
        return nvml_of(err);
    if (ordinal < 0 || (unsigned)ordinal >= device_count())
        return NVML_ERROR_NOT_FOUND;
    *device = &devices[ordinal];
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetHandleByPciBusId(const char *pciBusId, nvmlDevice_t *device)
{
    return nvmlDeviceGetHandleByPciBusId_v2(pciBusId, device);
}

/* ---- identity ---- */

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned int length)
{
    struct cudaDeviceProp p;
    nvmlReturn_t r = props(device, &p);

    if (r)
        return r;
    p.name[sizeof(p.name) - 1] = '\0';
    return tdm_nvml_string(name, length, p.name);
}

nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid, unsigned int length)
{
    struct cudaDeviceProp p;
    char s[NVML_DEVICE_UUID_BUFFER_SIZE];
    nvmlReturn_t r = props(device, &p);

    if (r)
        return r;
    format_uuid(&p, s);
    return tdm_nvml_string(uuid, length, s);
}

nvmlReturn_t nvmlDeviceGetIndex(nvmlDevice_t device, unsigned int *index)
{
    int ordinal = 0;
    nvmlReturn_t r = tdm_nvml_device(device, &ordinal);

    if (r)
        return r;
    if (!index)
        return NVML_ERROR_INVALID_ARGUMENT;
    *index = (unsigned)ordinal;
    return NVML_SUCCESS;
}

/* The guest has no /dev/nvidiaN: the number is the device's ordinal in the session, which is
 * the node a program would look for were the device its own. */
nvmlReturn_t nvmlDeviceGetMinorNumber(nvmlDevice_t device, unsigned int *minorNumber)
{
    return nvmlDeviceGetIndex(device, minorNumber);
}

nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t device, int *major, int *minor)
{
    struct cudaDeviceProp p;
    nvmlReturn_t r = props(device, &p);

    if (r)
        return r;
    if (!major || !minor)
        return NVML_ERROR_INVALID_ARGUMENT;
    *major = p.major;
    *minor = p.minor;
    return NVML_SUCCESS;
}

/* busIdLegacy is the runtime's cudaDeviceGetPCIBusId string (a 4-digit domain); busId is
 * the same address with NVML's 8-digit domain.  The PCI vendor is NVIDIA's (0x10de); the
 * product and subsystem ids are not carried by Tandem's protocol and read 0. */
nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t *pci)
{
    int ordinal = 0, v[3] = { 0 };
    static const enum cudaDeviceAttr attrs[3] = { cudaDevAttrPciDomainId, cudaDevAttrPciBusId, cudaDevAttrPciDeviceId };
    nvmlReturn_t r = tdm_nvml_device(device, &ordinal);

    if (r)
        return r;
    if (!pci)
        return NVML_ERROR_INVALID_ARGUMENT;
    for (int i = 0; i < 3 && !r; i++)
        r = nvml_of(cudaDeviceGetAttribute(&v[i], attrs[i], ordinal));
    if (r)
        return r;
    memset(pci, 0, sizeof(*pci));
    r = nvml_of(cudaDeviceGetPCIBusId(pci->busIdLegacy, (int)sizeof(pci->busIdLegacy), ordinal));
    if (r)
        return r;
    pci->domain = (unsigned)v[0];
    pci->bus = (unsigned)v[1];
    pci->device = (unsigned)v[2];
    pci->pciDeviceId = 0x10deu;
    snprintf(pci->busId, sizeof(pci->busId), "%08x:%02x:%02x.0", pci->domain, pci->bus, pci->device);
    return NVML_SUCCESS;
}

/* ---- state ---- */

/* The numbers of nvmlComputeMode_t are cudaComputeMode's. */
nvmlReturn_t nvmlDeviceGetComputeMode(nvmlDevice_t device, nvmlComputeMode_t *mode)
{
    int ordinal = 0, m = 0;
    nvmlReturn_t r = tdm_nvml_device(device, &ordinal);

    if (r)
        return r;
    if (!mode)
        return NVML_ERROR_INVALID_ARGUMENT;
    if ((r = nvml_of(cudaDeviceGetAttribute(&m, cudaDevAttrComputeMode, ordinal))))
        return r;
    *mode = (nvmlComputeMode_t)m;
    return NVML_SUCCESS;
}

/* Enabled: the server holds the device open from its start to its end, whatever the guest's
 * programs do, which is what persistence mode provides (the device is not set up again for
 * each program). */
nvmlReturn_t nvmlDeviceGetPersistenceMode(nvmlDevice_t device, nvmlEnableState_t *mode)
{
    int ordinal = 0;
    nvmlReturn_t r = tdm_nvml_device(device, &ordinal);

    if (r)
        return r;
    if (!mode)
        return NVML_ERROR_INVALID_ARGUMENT;
    *mode = NVML_FEATURE_ENABLED;
    return NVML_SUCCESS;
}

/* The session's view, as cudaMemGetInfo answers it: total and free of the server's device;
 * the rest is used (by this guest, others and the server's own context alike). */
static nvmlReturn_t memory(nvmlDevice_t device, unsigned long long *total, unsigned long long *free_,
                           unsigned long long *used)
{
    size_t f = 0, t = 0;
    int ordinal = 0;
    nvmlReturn_t r = tdm_nvml_device(device, &ordinal);

    if (r)
        return r;
    if ((r = nvml_of(cudaMemGetInfo(&f, &t))))
        return r;
    *total = t;
    *free_ = f;
    *used = t >= f ? t - f : 0;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *mem)
{
    int ordinal = 0;
    nvmlReturn_t r = tdm_nvml_device(device, &ordinal);

    if (r)
        return r;
    if (!mem)
        return NVML_ERROR_INVALID_ARGUMENT;
    return memory(device, &mem->total, &mem->free, &mem->used);
}

/* The versioned struct: its version word must be nvmlMemory_v2.  Memory the driver reserves
 * for itself is part of the server's, which the guest does not see apart: reserved is 0. */
nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device, nvmlMemory_v2_t *mem)
{
    int ordinal = 0;
    nvmlReturn_t r = tdm_nvml_device(device, &ordinal);

    if (r)
        return r;
    if (!mem)
        return NVML_ERROR_INVALID_ARGUMENT;
    /* A version word naming version 1 is NVML_ERROR_FUNCTION_NOT_FOUND, as NVIDIA's library
     * answers it (H100, driver 580.159.04); any other is the documented mismatch. */
    if (mem->version >> 24 == 1)
        return NVML_ERROR_FUNCTION_NOT_FOUND;
    if (mem->version != nvmlMemory_v2)
        return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    mem->reserved = 0;
    return memory(device, &mem->total, &mem->free, &mem->used);
}

/* Processes on the device: none that the guest can see.  The server's process holds the
 * GPU; the guest's own programs are not processes of the host, and other tenants' are not
 * the guest's to know.  An empty list is *infoCount 0 and success at any buffer size. */
static nvmlReturn_t no_processes(nvmlDevice_t device, unsigned int *infoCount)
{
    int ordinal = 0;
    nvmlReturn_t r = tdm_nvml_device(device, &ordinal);

    if (r)
        return r;
    if (!infoCount)
        return NVML_ERROR_INVALID_ARGUMENT;
    *infoCount = 0;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device, unsigned int *infoCount,
                                                     nvmlProcessInfo_t *infos)
{
    (void)infos;
    return no_processes(device, infoCount);
}

/* The older entry points differ in the element layout only, which an empty list never uses. */
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t device, unsigned int *infoCount, void *infos)
{
    (void)infos;
    return no_processes(device, infoCount);
}

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t device, unsigned int *infoCount, void *infos)
{
    (void)infos;
    return no_processes(device, infoCount);
}

nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v3(nvmlDevice_t device, unsigned int *infoCount,
                                                      nvmlProcessInfo_t *infos)
{
    (void)infos;
    return no_processes(device, infoCount);
}

nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v2(nvmlDevice_t device, unsigned int *infoCount, void *infos)
{
    (void)infos;
    return no_processes(device, infoCount);
}

nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses(nvmlDevice_t device, unsigned int *infoCount, void *infos)
{
    (void)infos;
    return no_processes(device, infoCount);
}

nvmlReturn_t nvmlDeviceGetMPSComputeRunningProcesses_v3(nvmlDevice_t device, unsigned int *infoCount,
                                                        nvmlProcessInfo_t *infos)
{
    (void)infos;
    return no_processes(device, infoCount);
}

nvmlReturn_t nvmlDeviceGetMPSComputeRunningProcesses_v2(nvmlDevice_t device, unsigned int *infoCount, void *infos)
{
    (void)infos;
    return no_processes(device, infoCount);
}

nvmlReturn_t nvmlDeviceGetMPSComputeRunningProcesses(nvmlDevice_t device, unsigned int *infoCount, void *infos)
{
    (void)infos;
    return no_processes(device, infoCount);
}

/* Peer access as the runtime layer answers cudaDeviceCanAccessPeer for the pair: a device is
 * not its own peer, NVML_P2P_STATUS_NOT_SUPPORTED as NVIDIA's library answers (H100, driver
 * 580.159.04).  That library also answers an index past the known ones with success,
 * although the reference lists NVML_ERROR_INVALID_ARGUMENT; so does this one. */
nvmlReturn_t nvmlDeviceGetP2PStatus(nvmlDevice_t device1, nvmlDevice_t device2, nvmlGpuP2PCapsIndex_t p2pIndex,
                                    nvmlGpuP2PStatus_t *p2pStatus)
{
    int a = 0, b = 0, can = 0;
    nvmlReturn_t r = tdm_nvml_device(device1, &a);

    if (!r)
        r = tdm_nvml_device(device2, &b);
    if (r)
        return r;
    if (!p2pStatus)
        return NVML_ERROR_INVALID_ARGUMENT;
    if ((r = nvml_of(cudaDeviceCanAccessPeer(&can, a, b))))
        return r;
    *p2pStatus = can ? NVML_P2P_STATUS_OK : NVML_P2P_STATUS_NOT_SUPPORTED;
    return NVML_SUCCESS;
}

/* ---- what the guest cannot see: the GPU is the server's ---- */

/* A query of the device's sensors or counters: the arguments checked as NVML checks them,
 * then NVML_ERROR_NOT_SUPPORTED, as for a GPU without the sensor.  No line is printed: these
 * are answers, polled by monitors, not gaps in Tandem. */
static nvmlReturn_t not_the_guests(nvmlDevice_t device, const void *out)
{
    int ordinal = 0;
    nvmlReturn_t r = tdm_nvml_device(device, &ordinal);

    if (r)
        return r;
    return out ? NVML_ERROR_NOT_SUPPORTED : NVML_ERROR_INVALID_ARGUMENT;
}

/* The GPU's utilization is the whole device's, all tenants together: not the session's, and
 * not the guest's to see. */
nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t *utilization)
{
    return not_the_guests(device, utilization);
}

nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t device, nvmlTemperatureSensors_t sensorType, unsigned int *temp)
{
    nvmlReturn_t r = not_the_guests(device, temp);

    if (r == NVML_ERROR_NOT_SUPPORTED && sensorType != NVML_TEMPERATURE_GPU)
        return NVML_ERROR_INVALID_ARGUMENT;
    return r;
}

nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int *power)
{
    return not_the_guests(device, power);
}

nvmlReturn_t nvmlDeviceGetPowerManagementLimit(nvmlDevice_t device, unsigned int *limit)
{
    return not_the_guests(device, limit);
}

nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t device, unsigned int *limit)
{
    return not_the_guests(device, limit);
}

nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t device, unsigned long long *energy)
{
    return not_the_guests(device, energy);
}

nvmlReturn_t nvmlDeviceGetFanSpeed(nvmlDevice_t device, unsigned int *speed)
{
    return not_the_guests(device, speed);
}

/* NVLink belongs to the host's topology, which the guest does not see (its session has one
 * device, with no link to another of its devices). */
nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t device, unsigned int link, nvmlEnableState_t *isActive)
{
    (void)link;
    return not_the_guests(device, isActive);
}
