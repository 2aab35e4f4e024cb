/* The control socket's requests (server/control/control_ops.c): each row is a line as a client
 * sends it and the answer it must get; a fake target stands for the server, so every good and
 * bad line is checked without one, and a refused line must leave the target untouched. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "control_ops.h"

typedef struct fake {
    int stats_calls, share_calls;
    char share_key[TDM_PLACEMENT_KEY_MAX];
    int share_sm;
} fake;

static void fake_stats(void *ctx, json_object *answer)
{
    ((fake *)ctx)->stats_calls++;
    json_object_object_add(answer, "sms", json_object_new_int(16));
    json_object_object_add(answer, "sessions", json_object_new_array());
}

/* Placement "running" has a session; any other is unknown. */
static int fake_share(void *ctx, const char *placement, int *sm, uint64_t *applied_us, char *why, size_t whylen)
{
    fake *f = ctx;

    f->share_calls++;
    snprintf(f->share_key, sizeof(f->share_key), "%s", placement);
    f->share_sm = *sm;
    if (strcmp(placement, "running") != 0) {
        snprintf(why, whylen, "no session of placement %s", placement);
        return -2;
    }
    *applied_us = 7;
    return 0;
}

typedef struct row {
    const char *line;
    const char *answer;          /* exactly */
    int reservations;            /* in the table after the line */
} row;

static const row rows[] = {
    { "{\"op\":\"stats\"}", "{\"ok\":true,\"sms\":16,\"sessions\":[]}", 0 },
    { "  {\"op\":\"stats\"}\r", "{\"ok\":true,\"sms\":16,\"sessions\":[]}", 0 },
    { "{\"op\":\"reserve\",\"placement\":\"p-1\",\"tenant\":\"alice\",\"sm\":8,\"memory_mib\":1024}",
      "{\"ok\":true}", 1 },
    /* the same key again replaces (a retried reserve), it does not add */
    { "{\"op\":\"reserve\",\"placement\":\"p-1\",\"tenant\":\"alice\",\"sm\":4,\"memory_mib\":0}", "{\"ok\":true}", 1 },
    { "{\"op\":\"set_share\",\"placement\":\"running\",\"sm\":4}", "{\"ok\":true,\"sm\":4,\"applied_us\":7}", 0 },
    { "{\"op\":\"set_share\",\"placement\":\"gone\",\"sm\":4}",
      "{\"ok\":false,\"error\":\"no session of placement gone\"}", 0 },
    /* bad lines */
    { "", "{\"ok\":false,\"error\":\"not JSON: the object is not complete\"}", 0 },
    { "garbage", "{\"ok\":false,\"error\":\"not JSON: unexpected character\"}", 0 },
    { "{\"op\":\"stats\"", "{\"ok\":false,\"error\":\"not JSON: the object is not complete\"}", 0 },
    { "{\"op\":\"stats\"} {\"op\":\"stats\"}",
      "{\"ok\":false,\"error\":\"one JSON object a line, and nothing after it\"}", 0 },
    { "[\"stats\"]", "{\"ok\":false,\"error\":\"a request is a JSON object\"}", 0 },
    { "{}", "{\"ok\":false,\"error\":\"\\\"op\\\" must be a string: reserve, set_share or stats\"}", 0 },
    { "{\"op\":3}", "{\"ok\":false,\"error\":\"\\\"op\\\" must be a string: reserve, set_share or stats\"}", 0 },
    { "{\"op\":\"reboot\"}", "{\"ok\":false,\"error\":\"unknown op (have: reserve, set_share, stats)\"}", 0 },
    { "{\"op\":\"stats\",\"verbose\":true}", "{\"ok\":false,\"error\":\"\\\"verbose\\\" is not a field of op stats\"}", 0 },
    { "{\"op\":\"reserve\",\"tenant\":\"alice\",\"sm\":8,\"memory_mib\":1}",
      "{\"ok\":false,\"error\":\"\\\"placement\\\" must be a string\"}", 0 },
    { "{\"op\":\"reserve\",\"placement\":\"\",\"tenant\":\"alice\",\"sm\":8,\"memory_mib\":1}",
      "{\"ok\":false,\"error\":\"\\\"placement\\\" must have 1 to 128 characters\"}", 0 },
    { "{\"op\":\"reserve\",\"placement\":\"012345678901234567890123456789012345678901234567890123456789012301234567890123456789012345678901234567890123456789012345678901239\","
      "\"tenant\":\"alice\",\"sm\":8,\"memory_mib\":1}",
      "{\"ok\":false,\"error\":\"\\\"placement\\\" must have 1 to 128 characters\"}", 0 },
    { "{\"op\":\"reserve\",\"placement\":\"a b\",\"tenant\":\"alice\",\"sm\":8,\"memory_mib\":1}",
      "{\"ok\":false,\"error\":\"\\\"placement\\\" may hold only letters, digits and . _ : -\"}", 0 },
    { "{\"op\":\"reserve\",\"placement\":\"a\\u0000b\",\"tenant\":\"alice\",\"sm\":8,\"memory_mib\":1}",
      "{\"ok\":false,\"error\":\"\\\"placement\\\" must have 1 to 128 characters\"}", 0 },
    { "{\"op\":\"reserve\",\"placement\":\"k\",\"tenant\":\"../x\",\"sm\":8,\"memory_mib\":1}",
      "{\"ok\":false,\"error\":\"\\\"tenant\\\" may hold only letters, digits and . _ : -\"}", 0 },
    { "{\"op\":\"reserve\",\"placement\":\"k\",\"tenant\":\"alice\",\"sm\":0,\"memory_mib\":1}",
      "{\"ok\":false,\"error\":\"\\\"sm\\\" must be from 1 to 16\"}", 0 },
    { "{\"op\":\"reserve\",\"placement\":\"k\",\"tenant\":\"alice\",\"sm\":17,\"memory_mib\":1}",
      "{\"ok\":false,\"error\":\"\\\"sm\\\" must be from 1 to 16\"}", 0 },
    { "{\"op\":\"reserve\",\"placement\":\"k\",\"tenant\":\"alice\",\"sm\":\"8\",\"memory_mib\":1}",
      "{\"ok\":false,\"error\":\"\\\"sm\\\" must be an integer\"}", 0 },
    { "{\"op\":\"reserve\",\"placement\":\"k\",\"tenant\":\"alice\",\"sm\":8.5,\"memory_mib\":1}",
      "{\"ok\":false,\"error\":\"\\\"sm\\\" must be an integer\"}", 0 },
    { "{\"op\":\"reserve\",\"placement\":\"k\",\"tenant\":\"alice\",\"sm\":8,\"memory_mib\":-1}",
      "{\"ok\":false,\"error\":\"\\\"memory_mib\\\" must be from 0 to 1073741824\"}", 0 },
    { "{\"op\":\"reserve\",\"placement\":\"k\",\"tenant\":\"alice\",\"sm\":8,\"memory_mib\":99999999999999999999}",
      "{\"ok\":false,\"error\":\"\\\"memory_mib\\\" must be from 0 to 1073741824\"}", 0 },
    { "{\"op\":\"reserve\",\"placement\":\"k\",\"tenant\":\"alice\",\"sm\":8,\"memory_mib\":1,\"extra\":1}",
      "{\"ok\":false,\"error\":\"\\\"extra\\\" is not a field of op reserve\"}", 0 },
    { "{\"op\":\"set_share\",\"placement\":\"running\",\"sm\":99}",
      "{\"ok\":false,\"error\":\"\\\"sm\\\" must be from 1 to 16\"}", 0 },
    { "{\"op\":\"set_share\",\"placement\":\"running\"}", "{\"ok\":false,\"error\":\"\\\"sm\\\" must be an integer\"}", 0 },
};

static void check_row(const row *r, bool fresh_table)
{
    tdm_reservations table;
    fake f = { 0 };
    tdm_control_target t = { .ctx = &f, .sms = 16, .stats = fake_stats, .set_share = fake_share };

    cr_assert_eq(tdm_reservations_init(&table, 4, 0), 0);
    t.reservations = &table;
    if (!fresh_table) {   /* the row about a repeated key: the first reserve is there already */
        tdm_reservation first = { .placement = "p-1", .tenant = "alice", .sm = 8, .memory_mib = 1024 };
        cr_assert_eq(tdm_reservations_put(&table, &first), 0);
    }
    char *got = tdm_control_answer(&t, r->line, strlen(r->line));
    cr_assert_not_null(got);
    cr_expect_str_eq(got, r->answer, "line %s", r->line);
    cr_expect_eq((int)tdm_reservations_count(&table), r->reservations, "line %s: reservations", r->line);
    /* A refused line does nothing: no share asked for, unless the share itself refused. */
    if (strstr(r->answer, "\"ok\":false") && !strstr(r->answer, "no session"))
        cr_expect_eq(f.share_calls, 0, "line %s reached the share function", r->line);
    free(got);
    tdm_reservations_destroy(&table);
}

Test(control_ops, every_line_gets_its_answer)
{
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
        check_row(&rows[i], !(i == 3));
}

Test(control_ops, a_line_with_a_nul_byte_is_refused)
{
    tdm_reservations table;
    fake f = { 0 };
    tdm_control_target t = { .ctx = &f, .sms = 16, .stats = fake_stats, .set_share = fake_share };
    const char line[] = "{\"op\":\"stats\"}\0{\"op\":\"stats\"}";

    cr_assert_eq(tdm_reservations_init(&table, 4, 0), 0);
    t.reservations = &table;
    char *got = tdm_control_answer(&t, line, sizeof(line) - 1);
    cr_expect_str_eq(got, "{\"ok\":false,\"error\":\"a NUL byte in the line\"}");
    cr_expect_eq(f.stats_calls, 0);
    free(got);
    tdm_reservations_destroy(&table);
}

Test(control_ops, reserve_stores_what_the_line_said)
{
    tdm_reservations table;
    tdm_reservation r;
    fake f = { 0 };
    tdm_control_target t = { .ctx = &f, .sms = 16, .stats = fake_stats, .set_share = fake_share };
    const char *line = "{\"op\":\"reserve\",\"placement\":\"k.1\",\"tenant\":\"bob\",\"sm\":12,\"memory_mib\":2048}";

    cr_assert_eq(tdm_reservations_init(&table, 4, 0), 0);
    t.reservations = &table;
    free(tdm_control_answer(&t, line, strlen(line)));
    cr_assert_eq(tdm_reservations_take(&table, "k.1", &r), 0);
    cr_expect_str_eq(r.tenant, "bob");
    cr_expect_eq(r.sm, 12);
    cr_expect_eq(r.memory_mib, 2048);
    tdm_reservations_destroy(&table);
}

Test(control_ops, a_full_table_refuses_a_new_key)
{
    tdm_reservations table;
    fake f = { 0 };
    tdm_control_target t = { .ctx = &f, .sms = 16, .stats = fake_stats, .set_share = fake_share };
    char line[200];

    cr_assert_eq(tdm_reservations_init(&table, 2, 0), 0);
    t.reservations = &table;
    for (int i = 0; i < 3; i++) {
        snprintf(line, sizeof(line), "{\"op\":\"reserve\",\"placement\":\"k%d\",\"tenant\":\"a\",\"sm\":1,\"memory_mib\":1}", i);
        char *got = tdm_control_answer(&t, line, strlen(line));
        cr_expect_str_eq(got, i < 2 ? "{\"ok\":true}"
                                    : "{\"ok\":false,\"error\":\"the reservation table is full: 2 reservations wait "
                                      "for their guests already\"}");
        free(got);
    }
    tdm_reservations_destroy(&table);
}
