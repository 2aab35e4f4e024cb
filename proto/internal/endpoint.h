/* Parsing of endpoint strings: tcp://HOST:PORT, shm:NAME, rdma://HOST:PORT. */
#ifndef TANDEM_PROTO_ENDPOINT_H
#define TANDEM_PROTO_ENDPOINT_H

#include <stddef.h>

typedef enum { TDM_EP_TCP, TDM_EP_SHM, TDM_EP_RDMA } tdm_endpoint_kind;

typedef struct tdm_endpoint {
    tdm_endpoint_kind kind;
    char host[256];   /* tcp, rdma; IPv6 literals without brackets */
    int port;         /* tcp, rdma */
    char name[256];   /* shm */
} tdm_endpoint;

/* 0 on success; otherwise -1 and a one-line reason in err. */
int tdm_endpoint_parse(const char *text, tdm_endpoint *out, char *err, size_t errlen);

#endif
