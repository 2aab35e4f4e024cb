#include <criterion/criterion.h>

#include "endpoint.h"

Test(endpoint, parses_the_three_transports)
{
    tdm_endpoint ep;
    char err[200];

    cr_assert_eq(tdm_endpoint_parse("tcp://127.0.0.1:7710", &ep, err, sizeof(err)), 0);
    cr_expect_eq(ep.kind, TDM_EP_TCP);
    cr_expect_str_eq(ep.host, "127.0.0.1");
    cr_expect_eq(ep.port, 7710);
    cr_assert_eq(tdm_endpoint_parse("tcp://[::1]:9", &ep, err, sizeof(err)), 0);
    cr_expect_str_eq(ep.host, "::1");
    cr_expect_eq(ep.port, 9);
    cr_assert_eq(tdm_endpoint_parse("shm:gpu0", &ep, err, sizeof(err)), 0);
    cr_expect_eq(ep.kind, TDM_EP_SHM);
    cr_expect_str_eq(ep.name, "gpu0");
    cr_assert_eq(tdm_endpoint_parse("rdma://gpuhost:7711", &ep, err, sizeof(err)), 0);
    cr_expect_eq(ep.kind, TDM_EP_RDMA);
}

Test(endpoint, refuses_bad_input_with_a_reason)
{
    const char *bad[] = { "", "tcp://", "tcp://host", "tcp://host:", "tcp://host:0", "tcp://host:65536",
                          "tcp://host:12x", "tcp://:80", "shm:", "shm:a/b", "udp://h:1", "tcp://[::1:5" };
    tdm_endpoint ep;
    char err[200];

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        err[0] = 0;
        cr_expect_neq(tdm_endpoint_parse(bad[i], &ep, err, sizeof(err)), 0, "accepted '%s'", bad[i]);
        cr_expect_neq(err[0], 0, "no reason for '%s'", bad[i]);
    }
    cr_expect_neq(tdm_endpoint_parse(NULL, &ep, err, sizeof(err)), 0);
}
