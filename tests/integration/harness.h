/* Test harness: starts a real tandem-server process and runs programs
 * against it, as a user would. */
#ifndef TANDEM_TEST_HARNESS_H
#define TANDEM_TEST_HARNESS_H

#include <stddef.h>
#include <sys/types.h>

typedef struct th_server {
    pid_t pid;
    int port;
    char endpoint[64];
    char shm_name[64];       /* the server also serves shm:shm_name */
    char shm_endpoint[80];
    char log[256];       /* the server's stderr and stdout */
} th_server;

/* Starts `tandem-server --backend sim --port 0 --shm NAME` (a name unique to
 * this server) plus extra args (NULL-ended).
 * Fails the test if it does not come up within 10 s. */
void th_server_start(th_server *s, const char *const *extra_args);
/* SIGTERM, then waits; returns the exit status (0 = clean stop). */
int th_server_stop(th_server *s);
/* True if the server's log contains text. */
int th_server_log_has(const th_server *s, const char *text);
/* How many times text is in the server's log. */
int th_server_log_count(const th_server *s, const char *text);
/* The first line of the server's log that contains text, copied to out;
 * "" when there is none.  Returns what to print. */
const char *th_server_log_line(const th_server *s, const char *text, char *out, size_t len);

typedef struct th_result {
    int status;          /* exit code, or 128+signal */
    char out[16384];
    char err[16384];
} th_result;

/* Runs argv with the guest library and TANDEM_SERVER=endpoint, capturing
 * stdout and stderr; kills it after timeout_s. */
void th_run_guest(const char *endpoint, const char *const *argv, int timeout_s, th_result *r);
/* The same with Tandem's libcuda.so.1 (build/lib/driver) first on the library path: a
 * program of the Driver API, or one whose CUDA runtime is NVIDIA's (linked statically),
 * whose driver is then Tandem's (issue 15). */
void th_run_driver_guest(const char *endpoint, const char *const *argv, int timeout_s, th_result *r);
/* A guest speaking the protocol directly: a transport to endpoint with its
 * session opened (TDM_HELLO) as client `name`; the test fails if it cannot,
 * or if the server says it is simulated when it is not (or the reverse). */
struct tdm_transport;
struct tdm_transport *th_guest_open(const char *endpoint, const char *name);
/* The same presenting a tenant's token (NULL: none): the server's answer to HELLO (0: *out is
 * the open transport; otherwise *out is NULL and the connection closed). */
int th_guest_hello(const char *endpoint, const char *name, const char *token, struct tdm_transport **out);
/* Runs argv plainly. */
void th_run(const char *const *argv, int timeout_s, th_result *r);

/* The backend under test: $TANDEM_TEST_BACKEND, default "sim" (CI has no
 * GPU); "cuda" runs the same suites on a GPU host. */
const char *th_backend(void);
int th_simulated(void);

/* Paths from the build ($TANDEM_TEST_BUILD_DIR overrides the build's own
 * path, for a build carried to another machine). */
const char *th_build_dir(void);
const char *th_bin(const char *name);      /* build/bin/NAME */
const char *th_example(const char *name);  /* build/examples/NAME */

#endif
