#include "transport.h"

#include <stdio.h>

#include "endpoint.h"

int tdm_transport_open(const char *endpoint, tdm_transport **out, char *err, size_t errlen)
{
    tdm_endpoint ep;

    if (tdm_endpoint_parse(endpoint, &ep, err, errlen) != 0)
        return -1;
    switch (ep.kind) {
    case TDM_EP_TCP:
        return tdm_transport_tcp_open(ep.host, ep.port, out, err, errlen);
    case TDM_EP_SHM:
        return tdm_transport_shm_open(ep.name, out, err, errlen);
    case TDM_EP_RDMA:
        snprintf(err, errlen, "the rdma transport is not available in this build");
        return -1;
    }
    snprintf(err, errlen, "unknown endpoint kind");
    return -1;
}
