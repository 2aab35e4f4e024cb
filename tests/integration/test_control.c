/* The server's control socket (issue 17, docs/node-agent.md) against a real
 * `tandem-server --backend sim --control PATH`: answers per the ADR, bad lines refused without
 * harm to a guest's session, its bounds, and stats that follow a guest's calls. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "background.h"
#include "control_client.h"
#include "harness.h"
#include "raw_calls.h"
#include "transport.h"

static th_server srv;
static char ctl[108];
static char answer[1 << 16];

static void start(void)
{
    snprintf(ctl, sizeof(ctl), "/tmp/tandem-ctl-%d-%ld.sock", (int)getpid(), random());
    const char *extra[] = { "--control", ctl, NULL };
    th_server_start(&srv, extra);
}

static void stop(void)
{
    cr_expect_eq(th_server_stop(&srv), 0, "the server did not stop cleanly; see %s", srv.log);
    cr_expect_neq(access(ctl, F_OK), 0, "the control socket file stays after the stop");
}

TestSuite(control, .init = start, .fini = stop, .timeout = 60);

static long long int_field(json_object *o, const char *key)
{
    json_object *v;

    cr_assert(json_object_object_get_ex(o, key, &v), "no \"%s\" in %s", key, json_object_to_json_string(o));
    return (long long)json_object_get_int64(v);
}

Test(control, the_socket_is_the_agents_alone)
{
    struct stat st;

    cr_assert_eq(stat(ctl, &st), 0);
    cr_expect(S_ISSOCK(st.st_mode));
    cr_expect_eq(st.st_mode & 0777, 0600, "mode %o", st.st_mode & 0777);
}

Test(control, reserve_then_stats_answer_per_the_adr)
{
    int fd = th_control_connect(ctl);

    th_control_ask(fd, "{\"op\":\"reserve\",\"placement\":\"p1\",\"tenant\":\"alice\",\"sm\":8,\"memory_mib\":512}",
                   answer, sizeof(answer));
    cr_expect_str_eq(answer, "{\"ok\":true}");
    th_control_ask(fd, "{\"op\":\"stats\"}", answer, sizeof(answer));
    json_object *o = json_tokener_parse(answer);
    cr_assert_not_null(o, "%s", answer);
    cr_expect_gt(int_field(o, "sms"), 0);
    cr_expect_eq(int_field(o, "memory_used_mib"), 0);
    cr_expect_eq(int_field(o, "takeovers"), 0);
    cr_expect_eq(json_object_array_length(json_object_object_get(o, "sessions")), 0);
    json_object_put(o);
    close(fd);
}

Test(control, set_share_names_what_is_missing)
{
    int fd = th_control_connect(ctl);
    th_control_ask(fd, "{\"op\":\"set_share\",\"placement\":\"nobody\",\"sm\":4}", answer, sizeof(answer));
    cr_expect_str_eq(answer, "{\"ok\":false,\"error\":\"no session of placement nobody on this server\"}");
    close(fd);
}

/* Bad lines on the control socket while a guest works: each refused, the session unharmed. */
Test(control, bad_lines_never_harm_a_session)
{
    tdm_transport *t = th_guest_open(srv.endpoint, "control-victim");
    static const char *const bad[] = { "garbage", "{\"op\":\"reserve\"}", "{\"op\":\"stats\",\"all\":1}",
                                       "[]", "{\"op\":\"set_share\",\"placement\":\"x y\",\"sm\":1}", "\"stats\"" };
    int fd = th_control_connect(ctl);

    th_raw_malloc(t, 1 << 20);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        cr_assert_gt(th_control_ask(fd, bad[i], answer, sizeof(answer)), 0, "no answer to %s", bad[i]);
        cr_expect(strncmp(answer, "{\"ok\":false,\"error\":\"", 21) == 0, "%s -> %s", bad[i], answer);
    }
    /* the same connection still answers, and so does the guest's session */
    th_control_ask(fd, "{\"op\":\"stats\"}", answer, sizeof(answer));
    cr_expect(strncmp(answer, "{\"ok\":true", 10) == 0, "%s", answer);
    th_raw_malloc(t, 1 << 20);
    close(fd);
    t->ops->close(t);
}

Test(control, a_line_past_the_bound_closes_only_its_connection)
{
    static char huge[8192];
    int fd = th_control_connect(ctl);

    memset(huge, 'x', sizeof(huge));
    /* the server may close before all of it is sent: what it answered is read all the same */
    send(fd, huge, sizeof(huge), MSG_NOSIGNAL);
    cr_assert_gt(th_control_read(fd, answer, sizeof(answer)), 0);
    cr_expect_str_eq(answer, "{\"ok\":false,\"error\":\"line longer than 4096 bytes: connection closed\"}");
    close(fd);
    json_object_put(th_control_stats(ctl));   /* a new connection is served */
}

Test(control, connections_are_bounded)
{
    int fds[9];

    for (int i = 0; i < 8; i++) {
        fds[i] = th_control_connect(ctl);
        cr_assert_gt(th_control_ask(fds[i], "{\"op\":\"stats\"}", answer, sizeof(answer)), 0, "connection %d", i);
    }
    /* the ninth hears why at once, and is closed */
    fds[8] = th_control_connect(ctl);
    cr_assert_gt(th_control_read(fds[8], answer, sizeof(answer)), 0);
    cr_expect_str_eq(answer, "{\"ok\":false,\"error\":\"too many control connections (at most 8)\"}");
    for (int i = 0; i < 9; i++)
        close(fds[i]);
    usleep(300 * 1000);   /* the server sees them go within a poll */
    json_object_put(th_control_stats(ctl));
}

/* A guest's calls show in stats as they happen: its session listed, its count rising, its
 * memory counted, its latencies reported. */
Test(control, stats_follow_a_guests_calls)
{
    tdm_transport *t = th_guest_open(srv.endpoint, "control-stats");
    long long before, after;

    for (int i = 0; i < 10; i++)
        th_raw_malloc(t, 2 << 20);   /* the sim's granularity: 2 MiB each, whole */
    json_object *o = th_control_stats(ctl);
    json_object *s = th_control_session(o, NULL);
    cr_assert_not_null(s, "no session in %s", json_object_to_json_string(o));
    before = int_field(s, "calls");
    cr_expect_geq(before, 11, "HELLO and 10 mallocs, got %lld", before);
    cr_expect_eq(int_field(s, "memory_mib"), 20, "%s", json_object_to_json_string(o));
    cr_expect_eq(int_field(o, "memory_used_mib"), 20);
    cr_expect_eq(int_field(s, "sm"), int_field(o, "sms"), "without shares a session runs on all SMs");
    json_object *lat = json_object_object_get(s, "latency_us");
    cr_assert_not_null(lat);
    double p50 = json_object_get_double(json_object_object_get(lat, "p50"));
    double p99 = json_object_get_double(json_object_object_get(lat, "p99"));
    cr_expect(p50 > 0 && p99 >= p50, "p50 %f p99 %f", p50, p99);
    json_object_put(o);

    for (int i = 0; i < 20; i++)
        th_raw_malloc(t, 4096);
    o = th_control_stats(ctl);
    after = int_field(th_control_session(o, NULL), "calls");
    cr_expect_eq(after, before + 20, "calls %lld, then %lld", before, after);
    json_object_put(o);

    t->ops->close(t);
    usleep(300 * 1000);
    o = th_control_stats(ctl);
    cr_expect_null(th_control_session(o, NULL), "a closed session is still listed: %s", json_object_to_json_string(o));
    json_object_put(o);
}

/* A guest's kernels show in stats: every 64th launch is timed on the device (the sim: its
 * modelled duration), and stats reports the p50 and p99 of those sampled since the last one. */
Test(control, stats_report_sampled_kernel_latency)
{
    const char *argv[] = { th_example("elastic_probe"), "3", "0", NULL };
    th_bg g;
    long long samples = 0;
    double p50 = 0, p99 = 0;

    th_bg_start(&g, srv.endpoint, argv, NULL, NULL);
    for (int i = 0; i < 100 && samples == 0 && th_bg_alive(&g); i++) {
        usleep(100 * 1000);
        json_object *o = th_control_stats(ctl);
        json_object *s = th_control_session(o, NULL), *k = s ? json_object_object_get(s, "kernel_us") : NULL;
        if (k && int_field(k, "samples") > 0) {
            samples = int_field(k, "samples");
            p50 = json_object_get_double(json_object_object_get(k, "p50"));
            p99 = json_object_get_double(json_object_object_get(k, "p99"));
        }
        json_object_put(o);
    }
    cr_expect_gt(samples, 0, "no sampled kernel in stats while the guest ran its kernels");
    cr_expect(p50 > 0 && p99 >= p50, "kernel p50 %f us, p99 %f us", p50, p99);
    char out[4096] = "", err[4096] = "";
    cr_expect_eq(th_bg_wait(&g, 30, out, sizeof(out), err, sizeof(err)), 0, "elastic_probe: %s %s", out, err);
    cr_expect(strstr(out, "ok") != NULL, "elastic_probe: %s", out);
}

Test(control, a_second_server_on_a_live_socket_is_refused)
{
    th_result r;
    const char *argv[] = { th_bin("tandem-server"), "--backend", "sim", "--port", "0", "--control", ctl, NULL };

    th_run(argv, 20, &r);
    cr_expect_neq(r.status, 0);
    cr_expect(strstr(r.err, "another process answers on that socket") != NULL, "%s", r.err);
}

Test(control, control_with_isolate_is_refused)
{
    th_result r;
    const char *argv[] = { th_bin("tandem-server"), "--backend", "sim", "--isolate", "tenant", "--tenants",
                           "/nonexistent", "--control", ctl, NULL };

    th_run(argv, 20, &r);
    cr_expect_eq(r.status, 2);
}
