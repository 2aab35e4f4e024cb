/* The tenants file and the token check (issue 16, server/front/tenants*.c): what a file must be
 * to be loaded, what each bad one is refused for, and that a token matches only itself. */
#include <criterion/criterion.h>
#include <driver_types.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "session.h"
#include "tenants.h"

static char dir[64], path[128], token_path[128];

static void write_file(const char *p, const char *text, mode_t mode)
{
    FILE *f = fopen(p, "w");

    cr_assert(f != NULL);
    fputs(text, f);
    fclose(f);
    cr_assert_eq(chmod(p, mode), 0);
}

static void setup(void)
{
    snprintf(dir, sizeof(dir), "/tmp/tandem-tenants-unit-XXXXXX");
    cr_assert(mkdtemp(dir) != NULL);
    snprintf(path, sizeof(path), "%s/tenants.ini", dir);
    snprintf(token_path, sizeof(token_path), "%s/token", dir);
}

static void teardown(void)
{
    unlink(path);
    unlink(token_path);
    rmdir(dir);
}

TestSuite(tenants_file, .init = setup, .fini = teardown);

Test(tenants_file, a_good_file_gives_each_tenant_its_token_and_overrides)
{
    tdm_tenants ts;
    char why[400] = "", text[512];

    write_file(token_path, "bob-token-from-a-file-000\n", 0600);
    snprintf(text, sizeof(text),
             "# comment\n[alice]\ntoken = alice-token-0123456789\nsession_quota = 2G\nsession_streams = 8\n"
             "max_sessions = 3\nuid = 1234\n\n[bob]\ntoken_file = %s\nsession_events = 0\n",
             token_path);
    write_file(path, text, 0600);
    cr_assert_eq(tdm_tenants_load(path, &ts, why, sizeof(why)), 0, "%s", why);
    cr_assert_eq(ts.n, 2);
    cr_expect_str_eq(ts.v[0].name, "alice");
    cr_expect_eq(ts.v[0].token_len, strlen("alice-token-0123456789"));
    cr_expect(ts.v[0].has_quota && ts.v[0].bounds.mem_quota == 2ull << 30);
    cr_expect(ts.v[0].has_streams && ts.v[0].bounds.streams == 8);
    cr_expect(!ts.v[0].has_events, "alice's events were not left to the server's default");
    cr_expect_eq(ts.v[0].max_sessions, 3);
    cr_expect_eq(ts.v[0].uid, 1234);
    cr_expect_str_eq(ts.v[1].name, "bob");
    cr_expect(tdm_tenant_token_matches(&ts.v[1], "bob-token-from-a-file-000", 25), "token_file's line without its newline");
    cr_expect(ts.v[1].has_events && ts.v[1].bounds.events == 0, "an explicit 0 lifts the bound");
    cr_expect_eq(ts.v[1].max_sessions, 0);
    cr_expect_eq(ts.v[1].uid, -1);
    tdm_tenants_free(&ts);
}

/* ---- host resources and time limits (issue 16) ---- */
Test(tenants_file, the_host_resource_keys_override_their_defaults_and_set_the_tenants_totals)
{
    tdm_tenants ts;
    char why[400] = "";

    write_file(path, "[alice]\ntoken = alice-token-0123456789\nsession_modules = 64\nsession_host_memory = 512M\n"
               "idle_timeout = 3600\ntenant_memory = 80G\ntenant_host_memory = 2G\n\n"
               "[bob]\ntoken = bob-token-0123456789ab\n", 0600);
    cr_assert_eq(tdm_tenants_load(path, &ts, why, sizeof(why)), 0, "%s", why);
    cr_expect(ts.v[0].has_modules && ts.v[0].bounds.modules == 64);
    cr_expect(ts.v[0].has_host_memory && ts.v[0].bounds.host_memory == 512ull << 20);
    cr_expect(ts.v[0].has_idle_timeout && ts.v[0].bounds.idle_timeout_s == 3600);
    cr_expect_eq(ts.v[0].usage.mem_limit, 80ull << 30);
    cr_expect_eq(ts.v[0].usage.host_limit, 2ull << 30);
    cr_expect(!ts.v[1].has_modules && !ts.v[1].has_host_memory && !ts.v[1].has_idle_timeout,
              "bob's bounds were not left to the server's defaults");
    cr_expect_eq(ts.v[1].usage.mem_limit, 0, "bob's total has a bound it was not given");
    tdm_tenants_free(&ts);
}

Test(tenants_file, each_bad_file_is_refused_for_its_own_reason)
{
    static const struct {
        const char *text;
        mode_t mode;
        const char *says;
    } cases[] = {
        { "[a]\ntoken = aaaaaaaaaaaaaaaa\n", 0640, "group and others must have no access" },
        { "[a]\ntoken = aaaaaaaaaaaaaaaa\n", 0604, "group and others must have no access" },
        { "token = aaaaaaaaaaaaaaaa\n", 0600, "line 1: a key outside any [tenant] section" },
        { "[a b]\ntoken = aaaaaaaaaaaaaaaa\n", 0600, "line 2: tenant name [a b]" },
        { "[a]\ntoken = aaaaaaaaaaaaaaaa\nno equals sign\n", 0600, "line 3: not '[tenant]'" },
        { "[a]\ntoken = aaaaaaaaaaaaaaaa\nsession_quota = lots\n", 0600, "line 3: tenant [a]: session_quota 'lots' is not a size" },
        { "[a]\ntoken = aaaaaaaaaaaaaaaa\nsession_events = -1\n", 0600, "line 3: tenant [a]: session_events '-1' is not a count" },
        { "[a]\ntoken = aaaaaaaaaaaaaaaa\nmax_sessions = 2x\n", 0600, "line 3: tenant [a]: max_sessions '2x' is not a count" },
        { "[a]\ntoken = aaaaaaaaaaaaaaaa\nuid = no-such-user-here\n", 0600, "line 3: tenant [a]: uid 'no-such-user-here'" },
        { "[a]\ntoken = aaaaaaaaaaaaaaaa\ncolour = blue\n", 0600, "line 3: unknown key 'colour'" },
        /* ---- host resources and time limits (issue 16) ---- */
        { "[a]\ntoken = aaaaaaaaaaaaaaaa\ntenant_memory = lots\n", 0600, "line 3: tenant [a]: tenant_memory 'lots' is not a size" },
        { "[a]\ntoken = aaaaaaaaaaaaaaaa\nsession_host_memory = 1T\n", 0600, "session_host_memory '1T' is not a size" },
        { "[a]\ntoken = aaaaaaaaaaaaaaaa\nidle_timeout = soon\n", 0600, "idle_timeout 'soon' is not a count" },
        { "[a]\ntoken = aaaaaaaaaaaaaaaa\nsession_modules = -2\n", 0600, "session_modules '-2' is not a count" },
        { "[a]\ntoken = aaaaaaaaaaaaaaaa\ntoken = bbbbbbbbbbbbbbbb\n", 0600, "line 3: tenant [a] gives 'token' a second time" },
        { "[a]\ntoken = aaaaaaaaaaaaaaaa\ntoken_file = /x\n", 0600, "line 3: tenant [a] gives 'token_file' a second time" },
        { "[a]\ntoken = short\n", 0600, "line 2: the token of tenant a has 5 characters" },
        { "[a]\ntoken = aaaaaaaa\x01" "aaaaaaaaa\n", 0600, "line 2: the token of tenant a has a character" },
        { "[a]\ntoken_file = relative/path\n", 0600, "line 2: token_file of tenant a must be an absolute path" },
        { "[a]\ntoken_file = /nonexistent/tandem-token\n", 0600, "line 2: cannot open /nonexistent/tandem-token" },
        { "[a]\nsession_streams = 4\n[b]\ntoken = bbbbbbbbbbbbbbbb\n", 0600, "line 4: tenant [a] (before this line) has no token" },
        { "[a]\ntoken = aaaaaaaaaaaaaaaa\n[b]\ntoken = bbbbbbbbbbbbbbbb\n[a]\nsession_streams = 1\n", 0600,
          "line 6: tenant [a] appears twice" },
        { "[a]\nsession_streams = 4\n", 0600, "tenant [a] has no token or token_file" },
        { "[a]\ntoken = aaaaaaaaaaaaaaaa\n[b]\ntoken = aaaaaaaaaaaaaaaa\n", 0600, "tenants [a] and [b] have the same token" },
        { "; nobody\n", 0600, "names no tenant" },
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        tdm_tenants ts;
        char why[400] = "";

        write_file(path, cases[i].text, cases[i].mode);
        cr_expect_eq(tdm_tenants_load(path, &ts, why, sizeof(why)), -1, "case %zu was loaded", i);
        cr_expect(strstr(why, cases[i].says) != NULL, "case %zu: expected '%s', got '%s'", i, cases[i].says, why);
        cr_expect_eq(ts.v, NULL, "case %zu kept tenants after a refusal", i);
    }
}

Test(tenants_file, a_token_file_others_can_read_is_refused)
{
    tdm_tenants ts;
    char why[400] = "", text[256];

    write_file(token_path, "bob-token-from-a-file-000\n", 0644);
    snprintf(text, sizeof(text), "[bob]\ntoken_file = %s\n", token_path);
    write_file(path, text, 0600);
    cr_expect_eq(tdm_tenants_load(path, &ts, why, sizeof(why)), -1);
    cr_expect(strstr(why, "line 2:") && strstr(why, "group and others must have no access"), "%s", why);
}

/* The comparison itself: only the very token matches, whatever part of it a guess has right. */
Test(tenants_file, a_token_matches_only_itself)
{
    static const char stored[] = "0123456789abcdefXYZ";
    static const struct {
        const char *given;
        uint32_t len;
        bool matches;
        const char *what;
    } cases[] = {
        { "0123456789abcdefXYZ", 19, true, "the same token" },
        { "1123456789abcdefXYZ", 19, false, "the first byte differs" },
        { "0123456789abcdefXYz", 19, false, "the last byte differs" },
        { "0123456789abcdefXY", 18, false, "a prefix" },
        { "0123456789abcdefXYZW", 20, false, "the token and one more byte" },
        { "0123456789abcdefXYZ\0", 20, false, "the token and a NUL (padding must not hide the length)" },
        { "", 0, false, "no token" },
    };
    tdm_tenant t;

    memset(&t, 0, sizeof(t));
    memcpy(t.token, stored, strlen(stored));
    t.token_len = (uint32_t)strlen(stored);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        cr_expect_eq(tdm_tenant_token_matches(&t, cases[i].given, cases[i].len), cases[i].matches, "%s",
                     cases[i].what);
    /* A tenant with no token (never loaded so) matches nothing, not even an empty token. */
    memset(&t, 0, sizeof(t));
    cr_expect(!tdm_tenant_token_matches(&t, "", 0));
}

Test(tenants_file, the_longest_token_is_compared_whole)
{
    tdm_tenant t;
    char given[TDM_MAX_TOKEN];

    memset(&t, 0, sizeof(t));
    memset(t.token, 'k', sizeof(t.token));
    t.token_len = TDM_MAX_TOKEN;
    memset(given, 'k', sizeof(given));
    cr_expect(tdm_tenant_token_matches(&t, given, sizeof(given)));
    given[TDM_MAX_TOKEN - 1] = 'j';
    cr_expect(!tdm_tenant_token_matches(&t, given, sizeof(given)), "the last byte was not compared");
}

/* Admission: the tenant's overrides or the server's defaults, and max_sessions counted. */
Test(tenants_file, admission_applies_the_tenants_bounds_and_counts_its_sessions)
{
    tdm_tenants ts;
    tdm_server srv;
    tdm_session *s[3];
    char why[400] = "";
    tdm_token alice = { 22, "alice-token-0123456789" }, none = { 0, NULL }, wrong = { 22, "alice-token-0123456788" };

    write_file(path, "[alice]\ntoken = alice-token-0123456789\nsession_streams = 8\nmax_sessions = 2\n", 0600);
    cr_assert_eq(tdm_tenants_load(path, &ts, why, sizeof(why)), 0, "%s", why);
    memset(&srv, 0, sizeof(srv));
    srv.cfg = (tdm_server_config){ .session_mem_quota = 1 << 20, .session_streams = 100, .session_events = 50,
                                   .tenants = &ts };
    for (int i = 0; i < 3; i++) {
        s[i] = calloc(1, sizeof(*s[i]));
        s[i]->srv = &srv;
        s[i]->peer_uid = -1;
    }
    cr_expect(!tdm_tenants_allow_call(s[0], TDM_MALLOC), "a call before the credential was allowed");
    cr_expect(tdm_tenants_allow_call(s[0], TDM_HELLO));
    cr_expect_eq(tdm_tenants_admit(&ts, s[0], &none), cudaErrorNoDevice);
    cr_expect_eq(tdm_tenants_admit(&ts, s[0], &wrong), cudaErrorNoDevice);
    cr_expect_eq(tdm_tenants_admit(&ts, s[0], &alice), 0);
    cr_expect(tdm_tenants_allow_call(s[0], TDM_MALLOC));
    cr_expect_eq(s[0]->bounds.streams, 8, "alice's own stream bound");
    cr_expect_eq(s[0]->bounds.events, 50, "the server's event bound");
    cr_expect_eq(s[0]->bounds.mem_quota, 1 << 20, "the server's quota");
    cr_expect_eq(tdm_tenants_admit(&ts, s[0], &alice), 0, "a second HELLO counted twice");
    cr_expect_eq(tdm_tenants_admit(&ts, s[1], &alice), 0);
    cr_expect_eq(tdm_tenants_admit(&ts, s[2], &alice), cudaErrorDevicesUnavailable, "a third session at max_sessions 2");
    tdm_tenants_release(s[1]);
    cr_expect_eq(tdm_tenants_admit(&ts, s[2], &alice), 0, "a released session still counted");
    s[2]->peer_uid = 4321;
    ts.v[0].uid = 1234;
    tdm_tenants_release(s[2]);
    cr_expect_eq(tdm_tenants_admit(&ts, s[2], &alice), cudaErrorNoDevice, "an shm guest of another user was admitted");
    for (int i = 0; i < 3; i++) {
        tdm_tenants_release(s[i]);
        free(s[i]);
    }
    cr_expect_eq(atomic_load(&ts.v[0].live), 0);
    tdm_tenants_free(&ts);
}
