/* A fake node agent for the orchestrator's integration test: a libmicrohttpd server in the test
 * process that answers POST /v1/reserve and /v1/share as the ADR says and records each call. */
#ifndef TANDEM_TEST_FAKE_AGENT_H
#define TANDEM_TEST_FAKE_AGENT_H

#include <pthread.h>

#define FAKE_AGENT_MAX_CALLS 256

typedef struct fake_call {
    char path[32];
    char body[512];
} fake_call;

typedef struct fake_agent {
    struct MHD_Daemon *mhd;
    int port;
    pthread_mutex_t lock;
    fake_call calls[FAKE_AGENT_MAX_CALLS];
    int ncalls;
} fake_agent;

/* Starts it on a free loopback port: 0, or -1. */
int fake_agent_start(fake_agent *a);
void fake_agent_stop(fake_agent *a);
/* How many calls to path were made whose body contains needle (NULL: any). */
int fake_agent_count(fake_agent *a, const char *path, const char *needle);

#endif
