/* Talking to a tandem-server's control socket from a test (issue 17): one JSON line out, one
 * in, parsed with json-c. */
#ifndef TANDEM_TEST_CONTROL_CLIENT_H
#define TANDEM_TEST_CONTROL_CLIENT_H

#include <json-c/json.h>
#include <stddef.h>

/* A connection to the control socket at path; the test fails if there is none. */
int th_control_connect(const char *path);
/* Sends line (a newline is added) and reads the answer line into out; its length, or -1
 * when the server closed the connection. */
int th_control_ask(int fd, const char *line, char *out, size_t len);
/* Reads one line (without its newline) into out; its length, or -1 at the end. */
int th_control_read(int fd, char *out, size_t len);
/* The answer to `{"op":"stats"}` on a fresh connection, parsed (the caller puts it). */
json_object *th_control_stats(const char *path);
/* The first session of a stats answer whose "placement" is key (NULL: any session), or NULL. */
json_object *th_control_session(json_object *stats, const char *key);

#endif
