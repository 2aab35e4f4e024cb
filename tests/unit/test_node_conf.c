/* node.conf (orchestrator/node/node_conf.c): rows of config text and the error each must get,
 * "FILE:LINE: what", or the values a good one gives. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "node_conf.h"

#define GOOD_HEAD "node = \"n1\";\nstate_dir = \"/tmp/n1\";\nbackend = \"sim\";\n"
#define GPU0 "gpus = ( { index = 0; base_port = 7710; } );\n"

static int load_text(const char *text, tdm_node_conf *c, char *err, size_t len)
{
    char path[] = "/tmp/test-node-conf-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    int rc = tdm_node_conf_load(path, c, err, len);
    /* the file's name is the test's: compare what follows it */
    if (rc && strncmp(err, path, strlen(path)) == 0)
        memmove(err, err + strlen(path), strlen(err + strlen(path)) + 1);
    unlink(path);
    return rc;
}

typedef struct row {
    const char *text;
    const char *error;           /* after the file name: ":LINE: what" */
} row;

Test(node_conf, every_bad_config_names_its_line)
{
    static const row rows[] = {
        { "state_dir = \"/tmp/x\";\nbackend = \"sim\";\n" GPU0, ":0: 'node' is missing" },
        { GOOD_HEAD "gpus = ( { index = ; } );\n", ":4: syntax error" },
        { GOOD_HEAD, ":0: 'gpus' is missing: a list ( { index = 0; base_port = N; } )" },
        { "node = \"a b\";\nstate_dir = \"/tmp/x\";\nbackend = \"sim\";\n" GPU0,
          ":1: 'node' may hold only letters, digits, - and _ (it names files and servers)" },
        { "node = \"n1\";\nstate_dir = \"rel/dir\";\nbackend = \"sim\";\n" GPU0, ":2: 'state_dir' must be an absolute path" },
        { "node = \"n1\";\nstate_dir = \"/tmp/x\";\nbackend = \"opencl\";\n" GPU0,
          ":3: 'backend' must be \"sim\" or \"cuda\", got \"opencl\"" },
        { GOOD_HEAD "mps = true;\n" GPU0, ":4: 'mps' must be a string" },
        { GOOD_HEAD "mps = \"maybe\";\n" GPU0, ":4: 'mps' must be \"on\" or \"off\", got \"maybe\"" },
        { GOOD_HEAD "listen = \"localhost\";\n" GPU0, ":4: 'listen' must be HOST:PORT, got 'localhost'" },
        { GOOD_HEAD "orchestrator = \"h:70000\";\n" GPU0, ":4: 'orchestrator' must be HOST:PORT, got 'h:70000'" },
        { GOOD_HEAD "telemetry_ms = 5;\n" GPU0, ":4: 'telemetry_ms' must be from 100 to 600000" },
        { GOOD_HEAD "telemetry_ms = \"1s\";\n" GPU0, ":4: 'telemetry_ms' must be an integer" },
        { GOOD_HEAD "leave_servers_running = 1;\n" GPU0, ":4: 'leave_servers_running' must be true or false" },
        { GOOD_HEAD "server_options = \"--sim-wave-us 200\";\n" GPU0,
          ":4: 'server_options' must be a list of strings [\"--opt\", \"value\"]" },
        { GOOD_HEAD "server_options = [\"--sim-wave-us\", 200];\n" GPU0, ":4: mismatched element type in array" },
        { GOOD_HEAD "server_options = (\"--sim-wave-us\",\n 200);\n" GPU0, ":5: 'server_options' element 2 must be a string" },
        { GOOD_HEAD "server_options = [\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\","
                    "\"a\",\"a\",\"a\",\"a\"];\n" GPU0, ":4: 'server_options' may hold at most 16 strings" },
        { GOOD_HEAD "gpus = ();\n", ":4: 'gpus' must list 1 to 16 GPUs" },
        { GOOD_HEAD "gpus = 3;\n", ":4: 'gpus' must be a list ( { ... }, { ... } )" },
        { GOOD_HEAD "gpus = ( { base_port = 7710; } );\n", ":4: a GPU needs its 'index'" },
        { GOOD_HEAD "gpus = ( { index = 0; } );\n", ":4: a GPU needs its 'base_port' (its servers listen from there on)" },
        { GOOD_HEAD "gpus = ( { index = 0; base_port = 7710;\n servers = 9; } );\n", ":5: 'servers' must be from 1 to 8" },
        { GOOD_HEAD "gpus = ( { index = 0; base_port = 7710; },\n { index = 0; base_port = 7800; } );\n",
          ":5: GPU 0 is listed twice" },
        { GOOD_HEAD "gpus = ( { index = 0; base_port = 7710; servers = 2; },\n { index = 1; base_port = 7712; } );\n",
          ":5: the ports of GPU 1 overlap those of GPU 0" },
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        tdm_node_conf c;
        char err[600] = "";
        cr_expect_neq(load_text(rows[i].text, &c, err, sizeof(err)), 0, "row %zu loaded", i);
        cr_expect_str_eq(err, rows[i].error, "row %zu: got \"%s\"", i, err);
    }
}

Test(node_conf, a_missing_file_says_so)
{
    tdm_node_conf c;
    char err[600];

    cr_expect_neq(tdm_node_conf_load("/nonexistent/node.conf", &c, err, sizeof(err)), 0);
    cr_expect_str_eq(err, "/nonexistent/node.conf: No such file or directory");
}

Test(node_conf, defaults_fill_what_is_left_out)
{
    tdm_node_conf c;
    char err[600] = "";

    cr_assert_eq(load_text(GOOD_HEAD GPU0, &c, err, sizeof(err)), 0, "%s", err);
    cr_expect_str_eq(c.host, "n1");
    cr_expect_str_eq(c.listen, "127.0.0.1:7080");
    cr_expect_str_eq(c.orchestrator, "127.0.0.1:7070");
    cr_expect_str_eq(c.server_bin, "");
    cr_expect_not(c.mps);
    cr_expect_eq(c.telemetry_ms, 1000);
    cr_expect_eq(c.restarts_per_minute, 5);
    cr_expect_not(c.leave_servers_running);
    cr_expect_eq(c.ngpus, 1);
    cr_expect_eq(c.gpus[0].servers, 1);
    cr_expect(c.gpus[0].standby);
    cr_expect_str_eq(c.gpus[0].name, "GPU 0");
}

Test(node_conf, the_shipped_example_loads)
{
    tdm_node_conf c;
    char err[600] = "";

    cr_assert_eq(tdm_node_conf_load(TANDEM_SOURCE_DIR "/configs/node.conf", &c, err, sizeof(err)), 0, "%s", err);
    cr_expect_str_eq(c.backend, "sim");
    cr_expect_eq(c.gpus[0].base_port, 7710);
}

Test(node_conf, the_two_gpu_mps_example_loads)
{
    tdm_node_conf c;
    char err[600] = "";

    cr_assert_eq(tdm_node_conf_load(TANDEM_SOURCE_DIR "/configs/node-cuda-mps.conf", &c, err, sizeof(err)), 0, "%s",
                 err);
    cr_expect_str_eq(c.backend, "cuda");
    cr_expect(c.mps);
    cr_expect_eq(c.ngpus, 2);
    cr_expect_eq(c.gpus[1].index, 1);
}
