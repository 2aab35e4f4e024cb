#include "log.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* The program's name: set once at start-up, read by every thread after.
 * A process has one name, so one variable is what it really has once. */
static const char *program = "tandem";

void tdm_log_set_program(const char *name)
{
    if (name && *name)
        program = name;
}

/* "<who>: [session N: ]<message>\n", in one write. */
static void emit(const char *who, uint64_t session, int has_session, const char *fmt, va_list ap)
{
    char line[1024];
    int n;

    if (has_session)
        n = snprintf(line, sizeof(line), "%s: session %llu: ", who, (unsigned long long)session);
    else
        n = snprintf(line, sizeof(line), "%s: ", who);
    if (n < 0)
        return;
    if ((size_t)n < sizeof(line) - 1) {
        int m = vsnprintf(line + n, sizeof(line) - 1 - (size_t)n, fmt, ap);
        if (m > 0)
            n += m;
    }
    if ((size_t)n > sizeof(line) - 2)
        n = (int)sizeof(line) - 2;   /* cut: keep the newline */
    line[n++] = '\n';
    /* One write: a line is never split between threads.  A failed write to
     * stderr has nowhere to be reported. */
    if (write(STDERR_FILENO, line, (size_t)n) < 0)
        return;
}

void tdm_vlog(uint64_t session, int has_session, const char *fmt, va_list ap)
{
    emit(program, session, has_session, fmt, ap);
}

void tdm_log_from(const char *who, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    emit(who, 0, 0, fmt, ap);
    va_end(ap);
}

void tdm_log(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    tdm_vlog(0, 0, fmt, ap);
    va_end(ap);
}

void tdm_log_session(uint64_t session, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    tdm_vlog(session, 1, fmt, ap);
    va_end(ap);
}
