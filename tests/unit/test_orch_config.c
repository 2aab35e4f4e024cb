/* orchestrator.conf and vms.conf (orchestrator/daemon/config.c): a table of bad configs, each
 * refused with "FILE:LINE: what"; the example configs in configs/ load. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "orch_config.h"
#include "orch_tenants.h"

#define GOOD_HEAD "state_dir = \"/tmp/x\";\ntenants_file = \"t.ini\";\nvms = \"vms.conf\";\n"
#define GOOD_VMS "vms = ( { name = \"a\"; sm_budget = 8; memory_mib = 100; } );\n"

typedef struct row {
    const char *name;
    const char *conf;      /* orchestrator.conf */
    const char *vms;       /* vms.conf */
    const char *want;      /* the error must contain this ("FILE:LINE: what"); NULL: loads */
} row;

static const row rows[] = {
    { "good_config_loads", GOOD_HEAD, GOOD_VMS, NULL },
    { "syntax_error_names_its_line", GOOD_HEAD "policies = {\n  x = ;\n};\n", GOOD_VMS, "orchestrator.conf:5: " },
    { "unknown_key_is_refused", GOOD_HEAD "listn = \"1:2\";\n", GOOD_VMS, "orchestrator.conf:4: unknown key 'listn'" },
    { "missing_state_dir_is_refused", "tenants_file = \"t\";\nvms = \"v\";\n", GOOD_VMS, "'state_dir' is missing" },
    { "listen_without_port_is_refused", GOOD_HEAD "listen = \"localhost\";\n", GOOD_VMS,
      "orchestrator.conf:4: listen 'localhost' is not HOST:PORT" },
    { "string_where_number_is_refused", GOOD_HEAD "policies = {\n telemetry_interval_ms = \"1s\";\n};\n", GOOD_VMS,
      "orchestrator.conf:5: 'telemetry_interval_ms' must be an integer" },
    { "out_of_range_policy_is_refused", GOOD_HEAD "policies = {\n telemetry_interval_ms = 1;\n};\n", GOOD_VMS,
      "orchestrator.conf:5: 'telemetry_interval_ms' is 1: it must be 50 to 600000" },
    { "lost_timeout_not_over_interval_is_refused",
      GOOD_HEAD "policies = {\n telemetry_interval_ms = 1000;\n node_lost_timeout_ms = 500;\n};\n", GOOD_VMS,
      "orchestrator.conf:6: node_lost_timeout_ms (500) must be longer" },
    { "default_upper_not_above_lower_is_refused",
      GOOD_HEAD "defaults = {\n latency_upper_ms = 5.0;\n latency_lower_ms = 5.0;\n};\n", GOOD_VMS,
      "orchestrator.conf:4: latency_upper_ms (5) must be above latency_lower_ms (5)" },
    { "unknown_default_is_refused", GOOD_HEAD "defaults = {\n sm_core = 4;\n};\n", GOOD_VMS,
      "orchestrator.conf:5: unknown key 'sm_core'" },
    { "missing_vms_file_is_named", "state_dir = \"/tmp/x\";\ntenants_file = \"t.ini\";\nvms = \"nope.conf\";\n", NULL,
      "nope.conf: No such file or directory" },
    { "vm_without_budget_is_refused", GOOD_HEAD, "vms = (\n { name = \"a\"; memory_mib = 100; }\n);\n",
      "vms.conf:2: VM a has no 'sm_budget'" },
    { "vm_bad_mode_is_refused", GOOD_HEAD,
      "vms = (\n { name = \"a\"; sm_budget = 8; memory_mib = 100;\n   mode = \"shared\"; }\n);\n",
      "vms.conf:3: mode 'shared' is not vm-dedicated or app-scoped" },
    { "vm_twice_is_refused", GOOD_HEAD,
      "vms = (\n { name = \"a\"; sm_budget = 8; memory_mib = 100; },\n { name = \"a\"; sm_budget = 8; memory_mib = 1; }\n);\n",
      "vms.conf:3: VM a appears twice" },
    { "vm_gpu_without_node_is_refused", GOOD_HEAD,
      "vms = (\n { name = \"a\"; sm_budget = 8; memory_mib = 100;\n   gpu = { index = 0; }; }\n);\n",
      "vms.conf:3: 'node' is missing" },
    { "vm_negative_budget_is_refused", GOOD_HEAD, "vms = (\n { name = \"a\";\n sm_budget = -3; memory_mib = 1; }\n);\n",
      "vms.conf:3: 'sm_budget' is -3: it must be 1 to 100000" },
    { "vm_affinity_not_names_is_refused", GOOD_HEAD,
      "vms = (\n { name = \"a\"; sm_budget = 8; memory_mib = 1;\n affinity = [ 1, 2 ]; }\n);\n",
      "vms.conf:3: 'affinity' entry 1 is not a node name" },
    { "vms_not_a_list_is_refused", GOOD_HEAD, "vms = 3;\n", "vms.conf:1: 'vms' must be a list" },
};

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    cr_assert(f, "%s", path);
    fputs(text, f);
    fclose(f);
}

Test(orch_config, table_of_bad_configs)
{
    char dir[] = "/tmp/orch-conf-XXXXXX";
    cr_assert(mkdtemp(dir));
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        char conf[256], vms[256], err[512] = "";
        static orch_config cfg;
        snprintf(conf, sizeof(conf), "%s/orchestrator.conf", dir);
        snprintf(vms, sizeof(vms), "%s/vms.conf", dir);
        unlink(vms);
        write_file(conf, rows[i].conf);
        if (rows[i].vms)
            write_file(vms, rows[i].vms);
        int rc = orch_config_load(conf, &cfg, err, sizeof(err));
        if (!rows[i].want) {
            cr_assert_eq(rc, 0, "%s: %s", rows[i].name, err);
            continue;
        }
        cr_assert_neq(rc, 0, "%s: loaded", rows[i].name);
        cr_assert(strstr(err, rows[i].want), "%s: '%s' does not contain '%s'", rows[i].name, err, rows[i].want);
        cr_assert(strncmp(err, dir, strlen(dir)) == 0, "%s: '%s' does not start with the file", rows[i].name, err);
    }
}

Test(orch_config, example_configs_load)
{
    static orch_config cfg;
    char err[512] = "";
    int rc = orch_config_load(TANDEM_SOURCE_DIR "/configs/orchestrator.conf", &cfg, err, sizeof(err));
    cr_assert_eq(rc, 0, "%s", err);
    cr_assert_str_eq(cfg.listen, "127.0.0.1:7070");
    cr_assert_eq(cfg.nvms, 3);
    cr_assert(strstr(cfg.tenants_file, "/configs/tenants.example.ini"), "%s", cfg.tenants_file);
    const orch_vm *t = orch_config_vm(&cfg, "training");
    cr_assert(t);
    cr_assert_str_eq(t->gpu_node, "node1");
    cr_assert_eq(t->gpu_index, 0);
    cr_assert_eq(cfg.defaults.sample_count, 5);
}

/* The tenants file: tokens checked in constant time, unreadable-by-others required. */
Test(orch_config, tenants_file_tokens)
{
    char path[] = "/tmp/orch-tenants-XXXXXX";
    int fd = mkstemp(path);
    static orch_tenants ts;
    char why[512] = "";
    cr_assert(fd >= 0);
    const char *text = "[alice]\ntoken = alice-secret-0123456789\nsession_quota = 1G\n[bob]\ntoken = bob-secret-0123456789ab\n";
    cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    cr_assert_eq(orch_tenants_load(path, &ts, why, sizeof(why)), 0, "%s", why);
    cr_assert(orch_tenants_check(&ts, "alice", "alice-secret-0123456789"));
    cr_assert(!orch_tenants_check(&ts, "alice", "bob-secret-0123456789ab"), "another tenant's token");
    cr_assert(!orch_tenants_check(&ts, "alice", "alice-secret-012345678"), "a prefix");
    cr_assert(!orch_tenants_check(&ts, "carol", "alice-secret-0123456789"), "an unknown tenant");
    chmod(path, 0644);
    cr_assert_neq(orch_tenants_load(path, &ts, why, sizeof(why)), 0);
    cr_assert(strstr(why, "mode 600"), "%s", why);
    chmod(path, 0600);
    FILE *f = fopen(path, "w");
    fputs("[alice]\ntoken = short\n", f);
    fclose(f);
    cr_assert_neq(orch_tenants_load(path, &ts, why, sizeof(why)), 0);
    cr_assert(strstr(why, ":2: the token of tenant alice has 5 characters"), "%s", why);
    unlink(path);
}
