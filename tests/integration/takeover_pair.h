/* A standby and an active server mirrored to it, as the takeover tests use
 * them (test_takeover.c over TCP, test_takeover_shm.c over shm).  Both
 * serve shm too (th_server_start), so a guest may reach either over TCP
 * (endpoint) or shm (shm_endpoint). */
#ifndef TANDEM_TEST_TAKEOVER_PAIR_H
#define TANDEM_TEST_TAKEOVER_PAIR_H

#include <stdbool.h>
#include <stddef.h>

#include "harness.h"

typedef struct th_pair {
    char sock[128];            /* the standby's mirror socket */
    th_server standby, active;
} th_pair;

/* Extra arguments for each (NULL-ended, may be NULL). */
void th_pair_start(th_pair *p, const char *const *standby_extra, const char *const *active_extra);
/* Stops both (the active may have crashed: any status); returns the
 * standby's exit status (0: a clean stop, under ASan without leaks). */
int th_pair_stop(th_pair *p);

/* Skips the test unless the backend is the sim (a GPU host runs
 * tests/gpu/run-takeover-gpu.sh). */
void th_require_sim(void);
/* The host reference output of an example (example-reference). */
void th_reference_of(const char *example, char *out, size_t cap);

/* The output of argv on a plain server (no standby, no fault), its guest
 * on shm or TCP: what a run with a takeover must print.  Asserts it ran. */
void th_fault_free_output(const char *const *argv, bool shm, char *out, size_t cap);
/* Starts p with its active dying at call crash_at_call, and runs example
 * there (on shm or TCP) with TANDEM_RESUME=policy. */
void th_pair_run_with_policy(th_pair *p, bool shm, const char *policy, const char *example,
                             const char *crash_at_call, th_result *r);

/* Sends TDM_RESUME for session 1 with a guessed token to endpoint (tcp or
 * shm); true when the server refused it. */
bool th_guessed_resume_refused(const char *endpoint);

#endif
