/* Device identity for a session's one device (docs/runtime-api.md,
 * "Device identity"): choosing a device, its PCI bus id, and peer access,
 * which one device never has (there is no other device to reach). */
#include <stdio.h>
#include <string.h>

#include "guest.h"

static cudaError_t device_in_range(int device)
{
    int n = 0;
    cudaError_t err = cudaGetDeviceCount(&n);

    if (err)
        return err;
    return device >= 0 && device < n ? cudaSuccess : cudaErrorInvalidDevice;
}

/* Every device matches some of any property set; with one device the
 * closest is device 0. */
cudaError_t cudaChooseDevice(int *device, const struct cudaDeviceProp *prop)
{
    cudaError_t err;

    if (!device || !prop)
        return tdm_ret(cudaErrorInvalidValue);
    err = device_in_range(0);
    if (!err)
        *device = 0;
    return tdm_ret(err);
}

cudaError_t cudaDeviceGetPCIBusId(char *pciBusId, int len, int device)
{
    tdm_pci_bus_id_res r;
    cudaError_t err;

    if (!pciBusId || len <= 0)
        return tdm_ret(cudaErrorInvalidValue);
    err = device_in_range(device);
    if (err)
        return tdm_ret(err);
    memset(&r, 0, sizeof(r));
    err = tdm_call(TDM_DEVICE_PCI_BUS_ID, NULL, &r);
    if (!err)
        err = (cudaError_t)r.err;
    if (!err) {
        r.id[sizeof(r.id) - 1] = '\0';
        snprintf(pciBusId, (size_t)len, "%s", r.id);
    }
    return tdm_ret(err);
}

/* The three spellings the runtime accepts: domain:bus:device.function,
 * domain:bus:device, bus:device.function (hexadecimal). */
static bool parse_bus_id(const char *s, unsigned *domain, unsigned *bus, unsigned *dev)
{
    unsigned a, b, c, d;
    char end;

    if (sscanf(s, "%x:%x:%x.%x%c", &a, &b, &c, &d, &end) == 4 || sscanf(s, "%x:%x:%x%c", &a, &b, &c, &end) == 3) {
        *domain = a, *bus = b, *dev = c;
        return true;
    }
    if (sscanf(s, "%x:%x.%x%c", &a, &b, &c, &end) == 3) {
        *domain = 0, *bus = a, *dev = b;
        return true;
    }
    return false;
}

cudaError_t cudaDeviceGetByPCIBusId(int *device, const char *pciBusId)
{
    unsigned domain, bus, dev;
    int want[3];
    cudaError_t err;

    if (!device || !pciBusId || !parse_bus_id(pciBusId, &domain, &bus, &dev))
        return tdm_ret(cudaErrorInvalidValue);
    err = cudaDeviceGetAttribute(&want[0], cudaDevAttrPciDomainId, 0);
    if (!err)
        err = cudaDeviceGetAttribute(&want[1], cudaDevAttrPciBusId, 0);
    if (!err)
        err = cudaDeviceGetAttribute(&want[2], cudaDevAttrPciDeviceId, 0);
    if (err)
        return tdm_ret(err);
    if (domain != (unsigned)want[0] || bus != (unsigned)want[1] || dev != (unsigned)want[2])
        return tdm_ret(cudaErrorInvalidDevice);
    *device = 0;
    return cudaSuccess;
}

/* ---- peer access: a device is not its own peer ---- */

cudaError_t cudaDeviceCanAccessPeer(int *canAccessPeer, int device, int peerDevice)
{
    cudaError_t err;

    if (!canAccessPeer)
        return tdm_ret(cudaErrorInvalidValue);
    err = device_in_range(device);
    if (!err)
        err = device_in_range(peerDevice);
    if (!err)
        *canAccessPeer = 0;
    return tdm_ret(err);
}

cudaError_t cudaDeviceGetP2PAttribute(int *value, enum cudaDeviceP2PAttr attr, int srcDevice, int dstDevice)
{
    cudaError_t err;

    (void)attr;
    if (!value)
        return tdm_ret(cudaErrorInvalidValue);
    err = device_in_range(srcDevice);
    if (!err)
        err = device_in_range(dstDevice);
    /* Source and destination must be two devices. */
    if (!err && srcDevice == dstDevice)
        err = cudaErrorInvalidDevice;
    return tdm_ret(err);
}

cudaError_t cudaDeviceEnablePeerAccess(int peerDevice, unsigned int flags)
{
    cudaError_t err;

    if (flags != 0)
        return tdm_ret(cudaErrorInvalidValue);
    err = device_in_range(peerDevice);
    /* The only device in range is the current one, which is no peer of
     * itself: the driver's answer on one GPU (H100, driver 580). */
    return tdm_ret(err ? err : cudaErrorPeerAccessUnsupported);
}

cudaError_t cudaDeviceDisablePeerAccess(int peerDevice)
{
    cudaError_t err = device_in_range(peerDevice);

    return tdm_ret(err ? err : cudaErrorPeerAccessNotEnabled);
}

/* No GPUDirect RDMA mapping reaches a session's memory through Tandem, so
 * there is nothing to wait for; the arguments and the device's support are
 * checked as the driver checks them. */
cudaError_t cudaDeviceFlushGPUDirectRDMAWrites(enum cudaFlushGPUDirectRDMAWritesTarget target,
                                               enum cudaFlushGPUDirectRDMAWritesScope scope)
{
    int options = 0;
    cudaError_t err;

    if (target != cudaFlushGPUDirectRDMAWritesTargetCurrentDevice ||
        (scope != cudaFlushGPUDirectRDMAWritesToOwner && scope != cudaFlushGPUDirectRDMAWritesToAllDevices))
        return tdm_ret(cudaErrorInvalidValue);
    err = cudaDeviceGetAttribute(&options, cudaDevAttrGPUDirectRDMAFlushWritesOptions, 0);
    if (err)
        return err;
    return tdm_ret(options & cudaFlushGPUDirectRDMAWritesOptionHost ? cudaSuccess : cudaErrorNotSupported);
}
