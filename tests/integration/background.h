/* A guest program running in the background through the guest library
 * (a victim beside a fault, a session whose server dies), with its stdout
 * and stderr in files. */
#ifndef TANDEM_TEST_BACKGROUND_H
#define TANDEM_TEST_BACKGROUND_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

typedef struct th_bg {
    pid_t pid;
    char out[256], err[256];   /* stdout and stderr files */
} th_bg;

double th_now(void);
/* BUILD/faults/NAME: the fault triggers and the victim. */
const char *th_fault_bin(const char *name);

/* Starts argv with the guest library and TANDEM_SERVER=endpoint plus env
 * (NAME=VALUE strings, NULL-ended, may be NULL).  When ready_text is not
 * NULL, waits (up to 20 s) until stdout shows it; fails the test if the
 * program ends first. */
void th_bg_start(th_bg *b, const char *endpoint, const char *const *argv, const char *const *env,
                 const char *ready_text);
bool th_bg_alive(const th_bg *b);
/* Waits for it (SIGKILL after timeout_s, then -1); exit status or 128+signal.
 * Its stdout and stderr go to out/err (either may be NULL); the files are
 * removed. */
int th_bg_wait(th_bg *b, int timeout_s, char *out, size_t outcap, char *err, size_t errcap);

#endif
