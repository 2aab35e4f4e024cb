/* Must not compile: the session core cannot see resilience (its headers are
 * not on the core's include path).  tests/CMakeLists.txt builds this in the
 * core's context and passes only when the header is missing. */
#include "session.h"
#include "takeover_state.h"
