#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "guest.h"
#include "xdr_extra.h"
#include "transport.h"

#define DEFAULT_SERVER "tcp://127.0.0.1:7710"

static pthread_mutex_t conn_lock = PTHREAD_MUTEX_INITIALIZER;
static tdm_transport *conn;
static tdm_hello_info hello;
static bool broken;

static void close_at_exit(void)
{
    pthread_mutex_lock(&conn_lock);
    if (conn) {
        /* One round trip so every queued one-way call has been taken by the
         * server before the process goes: the program may exit without a
         * final synchronize. */
        int err = 0;
        conn->ops->call(conn, TDM_DEVICE_SYNCHRONIZE, (xdrproc_t)tdm_xdr_void, NULL, (xdrproc_t)xdr_int, &err);
        conn->ops->close(conn);
        conn = NULL;
    }
    pthread_mutex_unlock(&conn_lock);
}

static cudaError_t fail_locked(const char *what)
{
    if (!broken)
        fprintf(stderr, "tandem: %s\n", what);
    broken = true;
    return cudaErrorDevicesUnavailable;
}

static cudaError_t connect_locked(void)
{
    const char *ep = getenv("TANDEM_SERVER");
    char err[400], msg[600];
    tdm_hello_args a = { 0 };
    tdm_hello_res r;
    char name[64];

    if (conn)
        return cudaSuccess;
    if (broken)
        return cudaErrorDevicesUnavailable;
    if (!ep || !*ep)
        ep = DEFAULT_SERVER;
    if (tdm_transport_open(ep, &conn, err, sizeof(err)) != 0) {
        snprintf(msg, sizeof(msg), "cannot reach the Tandem server at %s: %s", ep, err);
        return fail_locked(msg);
    }
    snprintf(name, sizeof(name), "pid-%d", (int)getpid());
    a.proto_version = TDM_PROTO_VERSION;
    a.pid = (int)getpid();
    a.client = name;
    memset(&r, 0, sizeof(r));
    if (conn->ops->call(conn, TDM_HELLO, (xdrproc_t)xdr_tdm_hello_args, &a, (xdrproc_t)xdr_tdm_hello_res, &r) != 0) {
        conn->ops->close(conn);
        conn = NULL;
        snprintf(msg, sizeof(msg), "the server at %s did not answer the Tandem handshake", ep);
        return fail_locked(msg);
    }
    if (r.err) {
        xdr_free((xdrproc_t)xdr_tdm_hello_res, (char *)&r);
        conn->ops->close(conn);
        conn = NULL;
        snprintf(msg, sizeof(msg), "the server at %s refused the session (protocol mismatch?)", ep);
        return fail_locked(msg);
    }
    hello.session_id = r.session_id;
    snprintf(hello.backend, sizeof(hello.backend), "%s", r.backend ? r.backend : "?");
    hello.simulated = r.simulated;
    hello.device_count = r.device_count;
    hello.driver_version = r.driver_version;
    hello.arena_base = r.arena_base;
    hello.arena_size = r.arena_size;
    xdr_free((xdrproc_t)xdr_tdm_hello_res, (char *)&r);
    if (hello.simulated && getenv("TANDEM_QUIET") == NULL)
        fprintf(stderr, "tandem: connected to %s (backend %s: SIMULATED GPU, not a real device)\n", ep,
                hello.backend);
    atexit(close_at_exit);
    return cudaSuccess;
}

cudaError_t tdm_connect(void)
{
    cudaError_t err;

    pthread_mutex_lock(&conn_lock);
    err = connect_locked();
    pthread_mutex_unlock(&conn_lock);
    return err;
}

const tdm_hello_info *tdm_hello(void)
{
    return &hello;
}

cudaError_t tdm_call(uint32_t proc, xdrproc_t xargs, void *args, xdrproc_t xres, void *res)
{
    cudaError_t err;

    pthread_mutex_lock(&conn_lock);
    err = connect_locked();
    if (!err) {
        int rc = conn->ops->call(conn, proc, xargs, args, xres, res);
        if (rc == TDM_T_REJECTED)
            err = cudaErrorInvalidValue;
        else if (rc != TDM_T_OK)
            err = fail_locked("lost the connection to the Tandem server");
    }
    pthread_mutex_unlock(&conn_lock);
    return err;
}

cudaError_t tdm_post(uint32_t proc, xdrproc_t xargs, void *args)
{
    cudaError_t err;

    pthread_mutex_lock(&conn_lock);
    err = connect_locked();
    if (!err && conn->ops->post(conn, proc, xargs, args) != TDM_T_OK)
        err = fail_locked("lost the connection to the Tandem server");
    pthread_mutex_unlock(&conn_lock);
    return err;
}

const struct tdm_shm_region *tdm_shm(void)
{
    const struct tdm_shm_region *r = NULL;

    pthread_mutex_lock(&conn_lock);
    if (connect_locked() == cudaSuccess)
        r = tdm_transport_shm_region(conn);
    pthread_mutex_unlock(&conn_lock);
    return r;
}

cudaError_t tdm_shm_wait_copy(uint32_t slot, uint32_t ticket, int *err)
{
    tdm_transport *t;
    cudaError_t rc = cudaSuccess;

    /* Not under conn_lock: the server may need further calls of another
     * thread to get there, and waiting touches no ring. */
    pthread_mutex_lock(&conn_lock);
    t = conn;
    pthread_mutex_unlock(&conn_lock);
    if (!t || tdm_transport_shm_wait_slot(t, slot, ticket, err) != TDM_T_OK) {
        pthread_mutex_lock(&conn_lock);
        rc = fail_locked("lost the connection to the Tandem server");
        pthread_mutex_unlock(&conn_lock);
    }
    return rc;
}

cudaError_t tdm_call_err(uint32_t proc, xdrproc_t xargs, void *args)
{
    int res = 0;
    cudaError_t err = tdm_call(proc, xargs, args, (xdrproc_t)xdr_int, &res);

    return err ? err : (cudaError_t)res;
}
