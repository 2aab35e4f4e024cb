/* The client: the process's session with a Tandem server.  It connects on
 * first use and makes the calls; what a takeover needs (journal, standby,
 * resume) is resume/'s, told what happens through tdm_resume_on(). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "call_profile.h"
#include "calls.h"
#include "conn.h"
#include "func_state.h"
#include "guest.h"
#include "log.h"
#include "onboard.h"
#include "resume/resume.h"
#include "transport.h"

#define DEFAULT_SERVER "tcp://127.0.0.1:7710"

typedef struct tdm_client {
    /* Serializes every use of the connection: the transports carry one
     * call at a time. */
    pthread_mutex_t lock;
    tdm_conn conn;
    tdm_hello_info hello;
    tdm_resume resume;
    /* ---- ipc (issue 14): fork ---- */
    bool forked;           /* a child forked from a process that had a session (docs/ipc.md) */
    /* The session was closed at exit: a library's own exit handlers that run later (cuBLAS
     * unloads its modules) get the driver's "deinitialized", not a new session each. */
    bool closed_at_exit;
    /* ---- on-boarding (issue 17) ---- */
    tdm_place_answer placed;   /* where the orchestrator placed the session, with TANDEM_ORCHESTRATOR */
    /* ---- profiling (issue 15) ---- */
    tdm_call_profile *profile; /* TANDEM_PROFILE=FILE, else NULL */
    /* What tdm_session_devices answers without the lock (atomic): the session's devices while
     * it has a transport, 0 otherwise; published at every unlock (client_unlock), after
     * region: the transport's shm region then (NULL for another transport), for tdm_shm. */
    int devices;
    const struct tdm_shm_region *region;
} tdm_client;

/* What the standby must be told again after a takeover (MIRROR_REREGISTER in calls.def):
 * the program's pinned memory in the shm region and where kernels reach it by address, the
 * attributes it set on its functions. */
static int reregister(tdm_transport *t)
{
    int rc = tdm_host_reregister(t);

    return rc == TDM_T_OK ? tdm_func_settings_reregister(t) : rc;
}

static const tdm_resume_program program = {
    .holds_allocation = tdm_allocs_holds,
    .holds_handle = tdm_live_handle_held,
    .reregister = reregister,
};

/* The process has one session, as it has one CUDA runtime: one client,
 * created at first use. */
static tdm_client the_client;
static pthread_once_t the_client_once = PTHREAD_ONCE_INIT;

/* ---- ipc (issue 14): fork ---- */
/* In a child of fork, the parent's connection is not the child's: every
 * byte it sent would land in the parent's session.  Its descriptors are
 * close-on-exec (a child that execs starts clean, as simpleIPC's do); one
 * that does not exec has CUDA refused, as natively (cudaErrorInitialization-
 * Error) when the parent had a session, and its own session otherwise.
 * The transport is left as it is, never closed here: closing would flush
 * and signal on the parent's connection. */
static void fork_child(void)
{
    pthread_mutex_init(&the_client.lock, NULL);
    __atomic_store_n(&the_client.devices, 0, __ATOMIC_RELEASE);
    if (the_client.conn.t || the_client.conn.broken) {
        the_client.conn.t = NULL;
        the_client.conn.broken = false;
        the_client.forked = true;
    }
}

static void client_init(void)
{
    pthread_mutex_init(&the_client.lock, NULL);
    tdm_resume_init(&the_client.resume, &program);
    the_client.profile = tdm_call_profile_open();
    pthread_atfork(NULL, NULL, fork_child);
}

static tdm_client *client(void)
{
    pthread_once(&the_client_once, client_init);
    return &the_client;
}

/* Every unlock of the client: first the state the lock-free readers see (tdm_session_devices).
 * Every change of the transport is made under the lock, so a reader sees the state as of the
 * last unlock, as if it had run just before the holder took the lock. */
static void client_unlock(tdm_client *cl)
{
    int n = cl->conn.t && !cl->closed_at_exit ? cl->hello.device_count : 0;

    __atomic_store_n(&cl->region, n ? tdm_transport_shm_region(cl->conn.t) : NULL, __ATOMIC_RELAXED);
    __atomic_store_n(&cl->devices, n, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&cl->lock);
}

int tdm_session_devices(void)
{
    return __atomic_load_n(&the_client.devices, __ATOMIC_ACQUIRE);
}

/* The connection is gone during `call`: the line names the call and what the transport met. */
static cudaError_t lost(tdm_conn *c, const tdm_call_info *call)
{
    char why[600];

    snprintf(why, sizeof(why), "lost the connection to the Tandem server (during %s%s%s): %s", call->name,
             c->t && c->t->why[0] ? ": " : "", c->t ? c->t->why : "", TDM_CONN_LOST_HINT);
    return tdm_conn_fail(c, why);
}

static int resume_on(tdm_client *cl, tdm_resume_event e)
{
    return tdm_resume_on(&cl->resume, &cl->conn, &e);
}

static void close_at_exit(void)
{
    tdm_client *cl = client();

    /* ---- host callbacks (issue 14) ---- */
    /* A callback that exits holds its own stream: the synchronize below
     * would never end.  Hang up; the server releases the session's
     * streams.  Otherwise that synchronize must not find a stream held. */
    if (tdm_callbacks_on_thread()) {
        pthread_mutex_lock(&cl->lock);
        if (cl->conn.t)
            cl->conn.t->ops->close(cl->conn.t);
        cl->conn.t = NULL;
        cl->closed_at_exit = true;
        client_unlock(cl);
        return;
    }
    tdm_callbacks_wait_idle();
    pthread_mutex_lock(&cl->lock);
    cl->closed_at_exit = true;
    if (cl->conn.t) {
        /* One round trip so every queued one-way call has been taken by the
         * server before the process goes: the program may exit without a
         * final synchronize. */
        int err = 0;
        tdm_conn_call(&cl->conn, TDM_DEVICE_SYNCHRONIZE, NULL, &err);
        /* What the kernels printed reaches the program before it goes, as
         * CUDA flushes device output when the context is torn down. */
        if (tdm_output_flag_take_err(&err)) {
            tdm_output_res r;

            memset(&r, 0, sizeof(r));
            if (tdm_conn_call(&cl->conn, TDM_OUTPUT_FETCH, NULL, &r) == 0 && r.err == 0)
                tdm_output_write(&r);
            xdr_free((xdrproc_t)xdr_tdm_output_res, (char *)&r);
        }
        cl->conn.t->ops->close(cl->conn.t);
        cl->conn.t = NULL;
    }
    tdm_call_profile_close(cl->profile);
    cl->profile = NULL;
    client_unlock(cl);
}

/* Why the server at ep answered HELLO with err, for the program's user; and what the program's
 * calls get from now on.  Each refusal has a message of its own (issue 16): a guest must tell a
 * missing credential from a full server and from a mismatched build. */
static void refusal(tdm_conn *c, const char *ep, int err, char *msg, size_t len)
{
    switch (err) {
    case cudaErrorNoDevice:
        /* As natively for a user the device nodes do not let in. */
        c->lost_err = cudaErrorNoDevice;
        snprintf(msg, len, "the server at %s refused the credential%s: set TANDEM_TOKEN (or TANDEM_TOKEN_FILE) to "
                 "the tenant's token", ep, c->token.len ? "" : " (none was given)");
        break;
    case cudaErrorDevicesUnavailable:
        c->lost_err = cudaErrorDevicesUnavailable;
        snprintf(msg, len, "the server at %s refused the session: the tenant has as many sessions open as it may "
                 "(its max_sessions; the server's log names the limit)", ep);
        break;
    case cudaErrorSystemNotReady:
        /* A front (--isolate tenant) that could not start or reach the tenant's own process. */
        c->lost_err = cudaErrorSystemNotReady;
        snprintf(msg, len, "the server at %s could not start the tenant's server process (its log says why, "
                 "e.g. an MPS daemon refusing new clients, or too many restarts in a minute)", ep);
        break;
    case cudaErrorInsufficientDriver:
        snprintf(msg, len, "the server at %s refused the session: it speaks another protocol version (guest "
                 "library and server of different builds)", ep);
        break;
    default:
        snprintf(msg, len, "the server at %s refused the session (cudaError %d; its log says why)", ep, err);
        break;
    }
}

static cudaError_t connect_locked(tdm_client *cl)
{
    tdm_conn *c = &cl->conn;
    const char *ep;
    char err[400], msg[800];
    tdm_hello_args a = { 0 };
    tdm_hello_res r;
    char name[64];

    if (c->t)   /* every call but the first: nothing more here (no getenv) */
        return cudaSuccess;
    ep = getenv("TANDEM_SERVER");
    if (cl->closed_at_exit)
        return cudaErrorCudartUnloading;
    if (c->broken)
        return tdm_conn_lost_error(c);
    if (cl->forked) {  /* ---- ipc (issue 14) ---- */
        c->lost_err = cudaErrorInitializationError;
        return tdm_conn_fail(c, "this process was forked from one with a Tandem session and did not exec: "
                                "CUDA cannot be used here (as natively: initialization error)");
    }
    /* ---- on-boarding (issue 17): the orchestrator names the server and the placement key ---- */
    if (tdm_onboard_wanted()) {
        if (tdm_onboard(&c->token, &cl->placed, msg, sizeof(msg)) != 0) {
            c->lost_err = cudaErrorNoDevice;   /* as natively with no device to use */
            return tdm_conn_fail(c, msg);
        }
        ep = cl->placed.endpoint;
        snprintf(c->placement, sizeof(c->placement), "%s", cl->placed.placement);
        if (getenv("TANDEM_QUIET") == NULL)
            tdm_log("placed by the orchestrator: placement %s on %s%s%s (rule %s)", cl->placed.placement, ep,
                    cl->placed.node[0] ? ", node " : "", cl->placed.node, cl->placed.rule[0] ? cl->placed.rule : "?");
    }
    if (!ep || !*ep)
        ep = DEFAULT_SERVER;
    /* ---- tenants (issue 16) ---- */
    if (tdm_guest_token_load(&c->token, err, sizeof(err)) != 0) {
        c->lost_err = cudaErrorNoDevice;
        snprintf(msg, sizeof(msg), "cannot connect to the Tandem server at %s: %s", ep, err);
        return tdm_conn_fail(c, msg);
    }
    if (tdm_transport_open(ep, &c->t, err, sizeof(err)) != 0) {
        snprintf(msg, sizeof(msg), "cannot reach the Tandem server at %s: %s", ep, err);
        return tdm_conn_fail(c, msg);
    }
    snprintf(name, sizeof(name), "pid-%d", (int)getpid());
    a.proto_version = TDM_PROTO_VERSION;
    a.pid = (int)getpid();
    a.client = name;
    a.resume_policy = tdm_resume_policy_wanted();
    a.token = tdm_guest_token_wire(&c->token);
    a.placement = tdm_conn_placement(c);   /* ---- on-boarding (issue 17) ---- */
    memset(&r, 0, sizeof(r));
    if (tdm_conn_call(c, TDM_HELLO, &a, &r) != 0) {
        c->t->ops->close(c->t);
        c->t = NULL;
        snprintf(msg, sizeof(msg),
                 "the server at %s did not answer the Tandem handshake (a server at its --max-sessions "
                 "limit or stopping closes new connections; its log says which)", ep);
        return tdm_conn_fail(c, msg);
    }
    if (r.err) {
        int refused = r.err;

        xdr_free((xdrproc_t)xdr_tdm_hello_res, (char *)&r);
        c->t->ops->close(c->t);
        c->t = NULL;
        refusal(c, ep, refused, msg, sizeof(msg));
        return tdm_conn_fail(c, msg);
    }
    c->session = r.session_id;
    snprintf(cl->hello.backend, sizeof(cl->hello.backend), "%s", r.backend ? r.backend : "?");
    cl->hello.simulated = r.simulated;
    cl->hello.device_count = r.device_count;
    cl->hello.driver_version = r.driver_version;
    cl->hello.arena_base = r.arena_base;
    cl->hello.arena_size = r.arena_size;
    resume_on(cl, (tdm_resume_event){ .kind = TDM_RESUME_HELLO, .hello = &r, .policy = a.resume_policy });
    xdr_free((xdrproc_t)xdr_tdm_hello_res, (char *)&r);
    if (cl->hello.simulated && getenv("TANDEM_QUIET") == NULL)
        tdm_log("connected to %s (backend %s: SIMULATED GPU, not a real device)", ep, cl->hello.backend);
    atexit(close_at_exit);
    return cudaSuccess;
}

cudaError_t tdm_connect(void)
{
    tdm_client *cl = client();
    cudaError_t err;

    pthread_mutex_lock(&cl->lock);
    err = connect_locked(cl);
    client_unlock(cl);
    return err;
}

const tdm_hello_info *tdm_hello(void)
{
    return &client()->hello;
}

/* ---- host callbacks (issue 14) ---- */
/* Takes the lock to send call, once no pending host callback could make
 * the server wait with it (callbacks.c). */
static void lock_for(tdm_client *cl, const tdm_call_info *call)
{
    pthread_mutex_lock(&cl->lock);
    while (tdm_callbacks_must_wait(call)) {
        client_unlock(cl);
        tdm_callbacks_wait_idle();
        pthread_mutex_lock(&cl->lock);
    }
}

/* A synchronous call of `call`, its reply decoded by xres. */
static cudaError_t call_decode(const tdm_call_info *call, void *args, xdrproc_t xres, void *res)
{
    tdm_client *cl = client();
    tdm_conn *c = &cl->conn;
    cudaError_t err;
    bool output = false;
    uint64_t t0 = tdm_call_profile_now(cl->profile);
    int rc;

    /* ---- host callbacks (issue 14) ---- */
    if (tdm_callbacks_refuse(call))
        return cudaErrorNotPermitted;
    /* ---- pinned memory by its host pointer (issue 14) ---- */
    if (call->progress == TDM_PROGRESS_SHOWN)
        tdm_coherent_before_wait();
    lock_for(cl, call);
    err = connect_locked(cl);
    if (err)
        goto out;
    resume_on(cl, (tdm_resume_event){ .kind = TDM_RESUME_SENDING, .call = call });
    if (!c->t) {
        err = tdm_conn_lost_error(c);
        goto out;
    }
    rc = c->t->ops->call(c->t, call->proc, call->xargs, args, xres, res);
    if (rc == TDM_T_OK)
        output = tdm_output_flag_take(call, res);
    /* The server is gone: resume on its standby and send the call again
     * there.  That server may die too before it answers (a faulting
     * session's replay kills it): then on to its own standby. */
    for (int again = 0;
         rc == TDM_T_BROKEN && resume_on(cl, (tdm_resume_event){ .kind = TDM_RESUME_LOST, .attempt = again }) == 0;
         again++) {
        rc = c->t->ops->call(c->t, call->proc, call->xargs, args, xres, res);
        if (rc == TDM_T_OK) {
            output = tdm_output_flag_take(call, res);
            resume_on(cl, (tdm_resume_event){ .kind = TDM_RESUME_RESENT, .call = call, .args = args, .res = res });
        }
    }
    if (rc == TDM_T_REJECTED)
        err = cudaErrorInvalidValue;
    else if (rc != TDM_T_OK)
        err = lost(c, call);
    else
        resume_on(cl, (tdm_resume_event){ .kind = TDM_RESUME_ANSWERED, .call = call, .args = args, .res = res });
out:
    client_unlock(cl);
    /* Before the call returns to the program: its next line comes after
     * what its kernels printed. */
    if (output)
        tdm_output_fetch();
    /* A graph launched since may have written host memory through server
     * staging: the program sees it once a call shows its work progressed. */
    if (call->progress == TDM_PROGRESS_SHOWN && tdm_graph_host_fetch_due())
        tdm_graph_host_fetch();
    if (call->progress == TDM_PROGRESS_SHOWN)   /* ---- pinned memory by its host pointer (issue 14) ---- */
        tdm_coherent_after_wait();
    tdm_call_profile_add(cl->profile, call, t0);
    return err;
}

/* A procedure the table does not have is refused, as the server would. */
cudaError_t tdm_call_decode(uint32_t proc, void *args, xdrproc_t xres, void *res)
{
    const tdm_call_info *call = tdm_call_find(proc);

    return call ? call_decode(call, args, xres, res) : cudaErrorInvalidValue;
}

cudaError_t tdm_call(uint32_t proc, void *args, void *res)
{
    const tdm_call_info *call = tdm_call_find(proc);

    return call ? call_decode(call, args, call->xres, res) : cudaErrorInvalidValue;
}

/* copy_bytes: the whole copy an upload piece belongs to (0: none); more:
 * pieces of it follow (transport.h). */
static cudaError_t post(uint32_t proc, void *args, uint64_t copy_bytes, bool more)
{
    const tdm_call_info *call = tdm_call_find(proc);
    tdm_client *cl = client();
    tdm_conn *c = &cl->conn;
    cudaError_t err;
    uint64_t t0 = tdm_call_profile_now(cl->profile);
    int rc;

    if (!call)
        return cudaErrorInvalidValue;
    /* ---- host callbacks (issue 14) ---- */
    if (tdm_callbacks_refuse(call))
        return cudaErrorNotPermitted;
    lock_for(cl, call);
    err = connect_locked(cl);
    if (err)
        goto out;
    resume_on(cl, (tdm_resume_event){
                      .kind = TDM_RESUME_POSTING, .call = call, .args = args, .piece = copy_bytes != 0 });
    /* The protection check before it may have found the server gone and the session lost. */
    if (!c->t) {
        err = tdm_conn_lost_error(c);
        goto out;
    }
    rc = copy_bytes && c->t->ops->post_piece ? c->t->ops->post_piece(c->t, proc, call->xargs, args, copy_bytes, more)
                                             : c->t->ops->post(c->t, proc, call->xargs, args);
    /* The journal holds this call too: the replay sends it. */
    if (rc != TDM_T_OK && resume_on(cl, (tdm_resume_event){ .kind = TDM_RESUME_LOST }) != 0)
        err = lost(c, call);
    else
        resume_on(cl, (tdm_resume_event){ .kind = TDM_RESUME_POSTED });
out:
    client_unlock(cl);
    tdm_call_profile_add(cl->profile, call, t0);
    return err;
}

cudaError_t tdm_post(uint32_t proc, void *args)
{
    return post(proc, args, 0, false);
}

cudaError_t tdm_post_piece(uint32_t proc, void *args, uint64_t copy_bytes, bool more)
{
    return post(proc, args, copy_bytes, more);
}

const struct tdm_shm_region *tdm_shm(void)
{
    tdm_client *cl = client();
    const struct tdm_shm_region *r = NULL;

    /* Connected (every launch asks, tdm_host_map_kernel_args): as of the last unlock. */
    if (__atomic_load_n(&cl->devices, __ATOMIC_ACQUIRE) > 0)
        return __atomic_load_n(&cl->region, __ATOMIC_RELAXED);

    pthread_mutex_lock(&cl->lock);
    if (connect_locked(cl) == cudaSuccess)
        r = tdm_transport_shm_region(cl->conn.t);
    client_unlock(cl);
    return r;
}

void tdm_shm_chunk_reuse(uint32_t chunk)
{
    tdm_client *cl = client();

    pthread_mutex_lock(&cl->lock);
    resume_on(cl, (tdm_resume_event){ .kind = TDM_RESUME_CHUNK_REUSE, .chunk = chunk });
    client_unlock(cl);
}

cudaError_t tdm_shm_wait_copy(uint32_t slot, uint32_t ticket, int *err)
{
    tdm_client *cl = client();
    tdm_conn *c = &cl->conn;
    cudaError_t rc = cudaSuccess;
    tdm_transport *t;
    uint64_t t0 = tdm_call_profile_now(cl->profile);
    unsigned gen;
    int w;

    /* Not under the lock: the server may need further calls of another
     * thread to get there, and waiting touches no ring. */
    for (;;) {
        pthread_mutex_lock(&cl->lock);
        t = c->t;
        gen = c->gen;
        client_unlock(cl);
        w = t ? tdm_transport_shm_wait_slot(t, slot, ticket, err) : TDM_T_BROKEN;
        if (w == TDM_T_OK)
            break;
        if (w == TDM_T_REJECTED)
            return cudaErrorInvalidValue;
        /* The server is gone: resume on the standby (unless another thread
         * did meanwhile), whose replay completes the copy; then wait again. */
        pthread_mutex_lock(&cl->lock);
        if (gen == c->gen && (!c->t || resume_on(cl, (tdm_resume_event){ .kind = TDM_RESUME_LOST }) != 0))
            rc = tdm_conn_fail(c, "lost the connection to the Tandem server: " TDM_CONN_LOST_HINT);
        client_unlock(cl);
        if (rc)
            return rc;
    }
    tdm_call_profile_add_copy_wait(cl->profile, t0);
    bool output = tdm_output_flag_take_err(err);
    pthread_mutex_lock(&cl->lock);
    resume_on(cl, (tdm_resume_event){ .kind = TDM_RESUME_COPY_DONE, .slot = slot, .ticket = ticket, .err = *err });
    client_unlock(cl);
    if (output)
        tdm_output_fetch();
    return rc;
}

cudaError_t tdm_call_err(uint32_t proc, void *args)
{
    int res = 0;
    cudaError_t err = tdm_call(proc, args, &res);

    return err ? err : (cudaError_t)res;
}
