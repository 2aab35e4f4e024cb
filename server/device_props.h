/* What a server tells guests about its device: the backend's attributes,
 * with Tandem's deliberate differences applied (docs/device-properties.md). */
#ifndef TANDEM_SERVER_DEVICE_PROPS_H
#define TANDEM_SERVER_DEVICE_PROPS_H

#include "backend.h"

/* Overwrites the attributes Tandem deliberately reports differently from
 * the device, so that cudaDeviceGetAttribute and cudaGetDeviceProperties
 * (built from the same attributes) agree with each other and with what
 * the server serves. */
void tdm_device_props_apply(tdm_device_info *info);

#endif
