/* The server's procedure table as the frame harnesses serve it: every
 * procedure of proto/calls.def (read through tdm_calls, never listed here)
 * with its real argument decoder, a handler that does nothing, and an empty
 * result.  What is fuzzed is everything before the handler (the call
 * message, the arguments, the transport) and the reply's encoding; the
 * handlers themselves need a device and a session. */
#ifndef TANDEM_FUZZ_PROGRAM_H
#define TANDEM_FUZZ_PROGRAM_H

#include "rpc_server.h"

/* The program, built on first use from tdm_calls. */
const tdm_rpc_program *fuzz_program(void);

#endif
