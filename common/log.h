/* One logging call for every layer.  Deep code returns errors as values;
 * the place that decides what a failure means logs it, once, through here,
 * so every line names its program and, where there is one, its session.
 *
 * A line is "<program>: [session N: ]<message>\n" on stderr, written with
 * one write(2) so lines of concurrent threads never interleave. */
#ifndef TANDEM_COMMON_LOG_H
#define TANDEM_COMMON_LOG_H

#include <stdarg.h>
#include <stdint.h>

/* The program name every line starts with ("tandem-server", "tandem");
 * set once at start-up, before any thread logs.  Default "tandem". */
void tdm_log_set_program(const char *name);

/* A line with no session. */
void tdm_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A line about session `session` (its id as the server numbers it). */
void tdm_log_session(uint64_t session, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void tdm_vlog(uint64_t session, int has_session, const char *fmt, va_list ap);
/* A line from a part that names itself whatever program it runs in, as the
 * server's backends do ("tandem-server[sim]"): "<who>: <message>\n". */
void tdm_log_from(const char *who, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
