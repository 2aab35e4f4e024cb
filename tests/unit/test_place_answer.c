/* On-boarding's parsers (guest-lib/onboard_*.c, issue 17): the orchestrator's answer to POST
 * /v1/place, which is untrusted (every bad one refused for its own reason); TANDEM_ORCHESTRATOR
 * as a URL; the request's JSON carrying only the variables set. */
#include <criterion/criterion.h>
#include <json-c/json.h>
#include <string.h>

#include "onboard.h"

#define GOOD "{\"placement\":\"p-42\",\"node\":\"node1\",\"gpu\":0,\"server\":\"node1-gpu0-a\"," \
             "\"endpoint\":\"tcp://10.0.0.2:7710\",\"standby\":\"tcp://10.0.0.2:7711\",\"transport\":\"tcp\"," \
             "\"sm\":16,\"memory_mib\":4096,\"rule\":\"default\"}"

typedef struct answer_row {
    long status;
    const char *body;
    const char *why;      /* NULL: accepted; else in the error */
} answer_row;

static const answer_row rows[] = {
    { 200, GOOD, NULL },
    { 200, "{\"placement\":\"k\",\"endpoint\":\"shm:tandem-node1-0\",\"transport\":\"shm\"}", NULL },
    { 200, "{\"placement\":\"k\",\"endpoint\":\"tcp://h:1\",\"transport\":\"tcp\",\"standby\":null}", NULL },
    { 200, "{\"placement\":\"a:b.c_d-1\",\"endpoint\":\"tcp://h:1\",\"transport\":\"tcp\",\"standby\":\"\"}", NULL },
    /* refusals: the orchestrator's text, made printable and cut short */
    { 403, "{\"error\":\"tenant alice: bad token\"}", "refused the placement (HTTP 403): tenant alice: bad token" },
    { 503, "{\"error\":\"no GPU has 64 SMs free\"}", "refused the placement (HTTP 503): no GPU has 64 SMs free" },
    { 500, "<html>oops</html>", "refused the placement (HTTP 500) without an error text" },
    { 404, "", "refused the placement (HTTP 404) without an error text" },
    { 400, "{\"error\":\"line1\\nline2\\u001b[31m\"}", "refused the placement (HTTP 400): line1?line2?[31m" },
    { 400, "{\"error\":42}", "refused the placement (HTTP 400) without an error text" },
    /* malformed answers */
    { 200, "", "gave a malformed answer: no JSON" },
    { 200, "{\"placement\":", "gave a malformed answer: no JSON" },
    { 200, GOOD "x", "gave a malformed answer: no JSON" },
    { 200, "[1,2]", "gave a malformed answer: not a JSON object" },
    { 200, "\"tcp://h:1\"", "gave a malformed answer: not a JSON object" },
    { 200, "[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]", "gave a malformed answer: no JSON" },
    { 201, GOOD, "gave a malformed answer: HTTP 201, not 200" },
    { 200, "{\"endpoint\":\"tcp://h:1\",\"transport\":\"tcp\"}", "it has no \"placement\"" },
    { 200, "{\"placement\":null,\"endpoint\":\"tcp://h:1\",\"transport\":\"tcp\"}", "it has no \"placement\"" },
    { 200, "{\"placement\":\"k\",\"transport\":\"tcp\"}", "it has no \"endpoint\"" },
    { 200, "{\"placement\":\"k\",\"endpoint\":\"tcp://h:1\"}", "it has no \"transport\"" },
    { 200, "{\"placement\":7,\"endpoint\":\"tcp://h:1\",\"transport\":\"tcp\"}", "\"placement\" is not a string" },
    { 200, "{\"placement\":\"k\",\"endpoint\":[\"tcp://h:1\"],\"transport\":\"tcp\"}", "\"endpoint\" is not a string" },
    { 200, "{\"placement\":\"\",\"endpoint\":\"tcp://h:1\",\"transport\":\"tcp\"}", "\"placement\" is not 1 to 128" },
    { 200, "{\"placement\":\"k/../x\",\"endpoint\":\"tcp://h:1\",\"transport\":\"tcp\"}", "\"placement\" is not 1 to 128" },
    { 200, "{\"placement\":\"k 1\",\"endpoint\":\"tcp://h:1\",\"transport\":\"tcp\"}", "\"placement\" holds a space" },
    { 200, "{\"placement\":\"k\\u0000x\",\"endpoint\":\"tcp://h:1\",\"transport\":\"tcp\"}", "holds a NUL" },
    { 200, "{\"placement\":\"k\",\"endpoint\":\"tcp://h:1\",\"transport\":\"rdma\"}", "\"transport\" is neither" },
    { 200, "{\"placement\":\"k\",\"endpoint\":\"shm:x\",\"transport\":\"tcp\"}", "\"endpoint\" shm:x is no tcp endpoint" },
    { 200, "{\"placement\":\"k\",\"endpoint\":\"tcp://\",\"transport\":\"tcp\"}", "is no tcp endpoint" },
    { 200, "{\"placement\":\"k\",\"endpoint\":\"tcp://h:1\",\"transport\":\"shm\"}", "is no shm endpoint" },
    { 200, "{\"placement\":\"k\",\"endpoint\":\"tcp://h:1\",\"transport\":\"tcp\",\"standby\":\"h:2\"}",
      "\"standby\" h:2 is no endpoint" },
    { 200, "{\"placement\":\"k\",\"endpoint\":\"tcp://h:1\",\"transport\":\"tcp\",\"standby\":5}",
      "\"standby\" is not a string" },
    { 200, "{\"placement\":\"k\",\"endpoint\":\"tcp://h:1\",\"transport\":\"tcp\",\"node\":{}}", "\"node\" is not a string" },
    { 200, "{\"placement\":\"k\",\"endpoint\":\"tcp://h:1\",\"transport\":\"tcp\",\"sm\":-1}",
      "\"sm\" is not a whole number from 0" },
    { 200, "{\"placement\":\"k\",\"endpoint\":\"tcp://h:1\",\"transport\":\"tcp\",\"memory_mib\":\"4GB\"}",
      "\"memory_mib\" is not a whole number from 0" },
    { 200, "{\"placement\":\"k\",\"endpoint\":\"tcp://h:1\",\"transport\":\"tcp\",\"gpu\":0.5}",
      "\"gpu\" is not a whole number from 0" },
};

Test(place_answer, each_answer_is_accepted_or_refused_for_its_own_reason)
{
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        tdm_place_answer a;
        char why[512] = "";
        int rc = tdm_place_answer_parse(rows[i].status, rows[i].body, strlen(rows[i].body), &a, why, sizeof(why));

        if (!rows[i].why) {
            cr_expect_eq(rc, 0, "row %zu refused: %s", i, why);
            continue;
        }
        cr_expect_eq(rc, -1, "row %zu (%s) accepted", i, rows[i].body);
        cr_expect(strstr(why, rows[i].why) != NULL, "row %zu: '%s' does not say '%s'", i, why, rows[i].why);
    }
}

/* The placement key must not run past the protocol's bound; the endpoint not past the guest's. */
Test(place_answer, overlong_fields_and_answers_are_refused)
{
    char key[TDM_MAX_PLACEMENT + 2], ep[TDM_ONBOARD_ENDPOINT_MAX + 8], body[1024];
    char *huge = malloc(TDM_ONBOARD_ANSWER_MAX + 2);
    tdm_place_answer a;
    char why[512] = "";

    memset(key, 'k', sizeof(key) - 1);
    key[sizeof(key) - 1] = 0;     /* TDM_MAX_PLACEMENT + 1 bytes */
    snprintf(body, sizeof(body), "{\"placement\":\"%s\",\"endpoint\":\"tcp://h:1\",\"transport\":\"tcp\"}", key);
    cr_expect_eq(tdm_place_answer_parse(200, body, strlen(body), &a, why, sizeof(why)), -1);
    cr_expect(strstr(why, "\"placement\" is longer than 128 bytes") != NULL, "%s", why);
    key[TDM_MAX_PLACEMENT] = 0;   /* exactly the bound */
    snprintf(body, sizeof(body), "{\"placement\":\"%s\",\"endpoint\":\"tcp://h:1\",\"transport\":\"tcp\"}", key);
    cr_expect_eq(tdm_place_answer_parse(200, body, strlen(body), &a, why, sizeof(why)), 0, "%s", why);
    cr_expect_eq(strlen(a.placement), TDM_MAX_PLACEMENT);
    memset(ep, 'h', sizeof(ep) - 1);
    memcpy(ep, "tcp://", 6);
    ep[sizeof(ep) - 1] = 0;
    snprintf(body, sizeof(body), "{\"placement\":\"k\",\"endpoint\":\"%s\",\"transport\":\"tcp\"}", ep);
    cr_expect_eq(tdm_place_answer_parse(200, body, strlen(body), &a, why, sizeof(why)), -1);
    cr_expect(strstr(why, "\"endpoint\" is longer than 255 bytes") != NULL, "%s", why);
    memset(huge, ' ', TDM_ONBOARD_ANSWER_MAX + 1);
    huge[0] = '{';
    huge[TDM_ONBOARD_ANSWER_MAX] = '}';
    cr_expect_eq(tdm_place_answer_parse(200, huge, TDM_ONBOARD_ANSWER_MAX + 1, &a, why, sizeof(why)), -1);
    cr_expect(strstr(why, "longer than 65536 bytes") != NULL, "%s", why);
    free(huge);
}

Test(place_answer, a_good_answer_gives_key_endpoint_standby_and_where)
{
    tdm_place_answer a;
    char why[256] = "";

    cr_assert_eq(tdm_place_answer_parse(200, GOOD, strlen(GOOD), &a, why, sizeof(why)), 0, "%s", why);
    cr_expect_str_eq(a.placement, "p-42");
    cr_expect_str_eq(a.endpoint, "tcp://10.0.0.2:7710");
    cr_expect_str_eq(a.standby, "tcp://10.0.0.2:7711");
    cr_expect_str_eq(a.transport, "tcp");
    cr_expect_str_eq(a.node, "node1");
    cr_expect_str_eq(a.server, "node1-gpu0-a");
    cr_expect_str_eq(a.rule, "default");
}

typedef struct url_row {
    const char *hostport;
    const char *url;      /* NULL: refused */
} url_row;

Test(place_answer, tandem_orchestrator_is_host_colon_port)
{
    static const url_row urls[] = {
        { "127.0.0.1:7070", "http://127.0.0.1:7070/v1/place" },
        { "orch.cluster-1.example:80", "http://orch.cluster-1.example:80/v1/place" },
        { "[::1]:7070", "http://[::1]:7070/v1/place" },
        { "localhost", NULL },          { "localhost:", NULL },   { ":7070", NULL },
        { "host:0", NULL },             { "host:65536", NULL },   { "host:-1", NULL },
        { "host:70x", NULL },           { "http://h:1", NULL },   { "h/x:1", NULL },
        { "user@h:1", NULL },           { "[::1]7070", NULL },    { "[::1", NULL },
        { "h :1", NULL },
    };

    for (size_t i = 0; i < sizeof(urls) / sizeof(urls[0]); i++) {
        char url[512] = "", why[256] = "";
        int rc = tdm_onboard_url(urls[i].hostport, url, sizeof(url), why, sizeof(why));

        if (urls[i].url) {
            cr_expect_eq(rc, 0, "%s refused: %s", urls[i].hostport, why);
            cr_expect_str_eq(url, urls[i].url);
        } else {
            cr_expect_eq(rc, -1, "%s accepted as %s", urls[i].hostport, url);
            cr_expect(strncmp(why, "TANDEM_ORCHESTRATOR=", 20) == 0 && strstr(why, urls[i].hostport),
                      "'%s' does not name the variable and value", why);
        }
    }
}

/* The request carries what was set and nothing else: absent variables are the tenant's. */
Test(place_answer, the_request_carries_the_variables_set_and_nothing_else)
{
    tdm_guest_token tok = { .bytes = "alice-\"token\"", .len = 13 };
    tdm_place_request r = { .tenant = "alice", .token = &tok, .host = "vm1" };
    json_object *o, *app, *v;
    char *text;

    r.app.has_sm_cores = true;
    r.app.sm_cores = 16;
    r.app.has_latency_upper = true;
    r.app.latency_upper_ms = 12.5;
    r.app.has_affinity = true;
    r.app.naffinity = 2;
    strcpy(r.app.affinity[0], "node1");
    strcpy(r.app.affinity[1], "node2");
    r.app.affinity_transport = TDM_APP_TRANSPORT_SHM;
    text = tdm_place_request_json(&r);
    cr_assert_not_null(text);
    o = json_tokener_parse(text);
    cr_assert_not_null(o, "not JSON: %s", text);
    cr_expect(json_object_object_get_ex(o, "token", &v) && strcmp(json_object_get_string(v), "alice-\"token\"") == 0);
    cr_expect(json_object_object_get_ex(o, "tenant", &v) && strcmp(json_object_get_string(v), "alice") == 0);
    cr_expect(json_object_object_get_ex(o, "host", &v) && strcmp(json_object_get_string(v), "vm1") == 0);
    cr_assert(json_object_object_get_ex(o, "app", &app));
    cr_expect_eq(json_object_object_length(app), 4, "app holds more than was set: %s", text);
    cr_expect(json_object_object_get_ex(app, "sm_cores", &v) && json_object_get_int(v) == 16);
    cr_expect(json_object_object_get_ex(app, "latency_upper_ms", &v) && json_object_get_double(v) == 12.5);
    cr_expect(json_object_object_get_ex(app, "affinity", &v) && json_object_array_length(v) == 2);
    cr_expect(json_object_object_get_ex(app, "affinity_transport", &v) && strcmp(json_object_get_string(v), "shm") == 0);
    json_object_put(o);
    free(text);
    /* Nothing set: an empty app. */
    memset(&r.app, 0, sizeof(r.app));
    text = tdm_place_request_json(&r);
    o = json_tokener_parse(text);
    cr_assert(json_object_object_get_ex(o, "app", &app));
    cr_expect_eq(json_object_object_length(app), 0, "%s", text);
    json_object_put(o);
    free(text);
}
