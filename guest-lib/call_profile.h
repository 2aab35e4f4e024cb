/* Where a program's time goes in the guest library's calls (TANDEM_PROFILE=FILE, issue 15):
 * per procedure of proto/calls.def, how often it was sent and how long the program waited in
 * it, written to FILE when the session closes.  Meant for finding the round trips that make a
 * remoted program slower than native (docs/benchmarks.md, "Profiling a guest"). */
#ifndef TANDEM_CALL_PROFILE_H
#define TANDEM_CALL_PROFILE_H

#include <stdint.h>

#include "calls.h"

typedef struct tdm_call_profile tdm_call_profile;

/* A profile when TANDEM_PROFILE names a file, else NULL (and every other function is a no-op). */
tdm_call_profile *tdm_call_profile_open(void);
/* Now, in the profile's clock (0 without a profile: the clock is not read). */
uint64_t tdm_call_profile_now(const tdm_call_profile *p);
/* One call of `call` that the program waited in since t0. */
void tdm_call_profile_add(tdm_call_profile *p, const tdm_call_info *call, uint64_t t0);
/* A wait for an shm copy's completion slot since t0 (copies are one-way posts plus this wait). */
void tdm_call_profile_add_copy_wait(tdm_call_profile *p, uint64_t t0);
/* Writes the table to the file, sorted by time waited, and frees the profile. */
void tdm_call_profile_close(tdm_call_profile *p);

#endif
