/* The integration test's HTTP client (libcurl): one request, its status and body. */
#ifndef TANDEM_TEST_ORCH_HTTP_CLIENT_H
#define TANDEM_TEST_ORCH_HTTP_CLIENT_H

/* GET (body NULL) or POST body to url; the answer's text (malloc'd, caller frees) in *text.
 * The HTTP status, or -1 when nothing answered. */
long http_call(const char *url, const char *body, char **text);

#endif
