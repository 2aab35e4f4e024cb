/* tandem-node's state file (orchestrator/node/node_state.c): what one run writes, the next
 * reads back for the same servers; a damaged or foreign file adopts nothing. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "node_state.h"

static void plan(tdm_node_servers *s)
{
    tdm_node_conf c = { .node = "n1", .state_dir = "/tmp/st", .ngpus = 2 };

    c.gpus[0] = (tdm_node_gpu){ .index = 0, .servers = 2, .standby = true, .base_port = 7710 };
    c.gpus[1] = (tdm_node_gpu){ .index = 1, .servers = 1, .standby = false, .base_port = 7800 };
    cr_assert_eq(tdm_node_servers_plan(&c, s), 0);
}

Test(node_state, the_plan_names_servers_ports_and_sockets)
{
    tdm_node_servers s;

    plan(&s);
    cr_assert_eq(s.n, 5);
    cr_expect_str_eq(s.list[0].id, "n1-gpu0-s0");
    cr_expect_str_eq(s.list[1].id, "n1-gpu0-s0-sb");
    cr_expect_eq(s.list[1].port, 7711);
    cr_expect_eq(s.list[2].port, 7712);
    cr_expect_str_eq(s.list[0].standby_id, "n1-gpu0-s0-sb");
    cr_expect_str_eq(s.list[0].mirror, s.list[1].mirror);
    cr_expect_str_eq(s.list[1].control, "/tmp/st/n1-gpu0-s0-sb.ctl");
    cr_expect_str_eq(s.list[4].id, "n1-gpu1-s0");
    cr_expect_str_eq(s.list[4].mirror, "");
}

Test(node_state, pids_survive_a_round_trip)
{
    tdm_node_servers a, b;
    char path[] = "/tmp/test-node-state-XXXXXX", why[300];
    close(mkstemp(path));

    plan(&a);
    for (int i = 0; i < a.n; i++)
        a.list[i].pid = 1000 + i;
    a.list[3].pid = 0;   /* one not running */
    cr_assert_eq(tdm_node_state_save(path, &a, "127.0.0.1"), 0);
    plan(&b);
    cr_assert_eq(tdm_node_state_load(path, &b, why, sizeof(why)), 0);
    for (int i = 0; i < a.n; i++)
        cr_expect_eq(b.list[i].pid, a.list[i].pid, "server %s", a.list[i].id);
    unlink(path);
}

typedef struct row {
    const char *text;
    int rc;
    int pid0;                    /* the pid n1-gpu0-s0 gets */
} row;

Test(node_state, damaged_or_foreign_files_adopt_nothing)
{
    static const row rows[] = {
        { "", -22, 0 },
        { "not json", -22, 0 },
        { "{\"servers\":3}", -22, 0 },
        { "{\"servers\":[{\"id\":\"n1-gpu0-s0\",\"pid\":\"12\"}]}", 0, 0 },      /* a pid that is not a number */
        { "{\"servers\":[{\"id\":\"n1-gpu0-s0\",\"pid\":-5}]}", 0, 0 },
        { "{\"servers\":[{\"id\":\"other-node\",\"pid\":77}]}", 0, 0 },           /* not a server of this plan */
        { "{\"servers\":[{\"id\":\"n1-gpu0-s0\",\"pid\":77}]}", 0, 77 },
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        char path[] = "/tmp/test-node-state-XXXXXX", why[300];
        int fd = mkstemp(path);
        tdm_node_servers s;
        cr_assert_eq(write(fd, rows[i].text, strlen(rows[i].text)), (ssize_t)strlen(rows[i].text));
        close(fd);
        plan(&s);
        s.list[0].pid = 999;   /* whatever was there is replaced by what the file says */
        cr_expect_eq(tdm_node_state_load(path, &s, why, sizeof(why)), rows[i].rc, "row %zu", i);
        cr_expect_eq(s.list[0].pid, rows[i].pid0, "row %zu", i);
        unlink(path);
    }
}

Test(node_state, no_file_is_a_first_start)
{
    tdm_node_servers s;
    char why[300];

    plan(&s);
    cr_expect_eq(tdm_node_state_load("/nonexistent/node.state", &s, why, sizeof(why)), -2);
}
