/* The server's per-session device output buffer (server/device_output.c):
 * pieces in write order, consecutive writes to one stream coalesced, a
 * bound in bytes and in pieces beyond which writes are dropped and counted
 * (all of them until the next take, as the driver's full FIFO),
 * and a take that empties it.  And the routing stream: a write made while
 * a thread serves a session lands in that session's buffer. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "device_output.h"

typedef struct step {
    int fd;
    const char *text;
} step;

typedef struct buffer_case {
    const char *name;
    size_t max_bytes, max_pieces;
    step writes[6];
    /* After taking: the pieces as "fd:text|fd:text|", and the bytes dropped. */
    const char *pieces;
    uint64_t dropped;
} buffer_case;

static const buffer_case cases[] = {
    { "empty", 64, 4, { { 0 } }, "", 0 },
    { "one write", 64, 4, { { 1, "hello\n" } }, "1:hello\n|", 0 },
    { "same stream coalesces", 64, 4, { { 1, "a" }, { 1, "b" }, { 1, "c\n" } }, "1:abc\n|", 0 },
    { "streams keep their order", 64, 4, { { 1, "out1 " }, { 2, "err " }, { 1, "out2" } }, "1:out1 |2:err |1:out2|", 0 },
    /* Once full, everything is dropped until taken, as the driver's FIFO. */
    { "bytes beyond the bound are dropped", 8, 4, { { 1, "12345" }, { 1, "6789" }, { 1, "abc" } }, "1:12345|", 7 },
    { "a write that does not fit whole is dropped whole", 4, 4, { { 1, "12345" } }, "", 5 },
    { "pieces beyond the bound are dropped", 64, 2, { { 1, "a" }, { 2, "b" }, { 1, "c" }, { 2, "d" } }, "1:a|2:b|", 2 },
};

static void render(tdm_output_piece *v, size_t n, char *out, size_t cap)
{
    out[0] = 0;
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(out);
        snprintf(out + len, cap - len, "%d:%.*s|", v[i].fd, (int)v[i].len, v[i].bytes);
        free(v[i].bytes);
    }
    free(v);
}

Test(device_output, buffer_cases)
{
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        const buffer_case *bc = &cases[c];
        tdm_device_output *o;
        tdm_output_piece *v;
        size_t n;
        uint64_t dropped;
        char got[256];

        cr_assert_eq(tdm_device_output_create(7, bc->max_bytes, bc->max_pieces, &o), 0);
        for (int i = 0; i < 6 && bc->writes[i].text; i++)
            tdm_device_output_append(o, bc->writes[i].fd, bc->writes[i].text, strlen(bc->writes[i].text));
        cr_expect_eq(tdm_device_output_pending(o), bc->writes[0].text != NULL, "%s: pending", bc->name);
        tdm_device_output_take(o, &v, &n, &dropped);
        render(v, n, got, sizeof(got));
        cr_expect_str_eq(got, bc->pieces, "%s: pieces %s, expected %s", bc->name, got, bc->pieces);
        cr_expect_eq(dropped, bc->dropped, "%s: dropped %llu, expected %llu", bc->name, (unsigned long long)dropped,
                     (unsigned long long)bc->dropped);
        /* Taken: empty again, and room again. */
        cr_expect(!tdm_device_output_pending(o), "%s: still pending after the take", bc->name);
        tdm_device_output_take(o, &v, &n, &dropped);
        cr_expect_eq(n, 0);
        cr_expect_eq(dropped, 0);
        free(v);
        tdm_device_output_destroy(o);
    }
}

typedef struct served_write {
    tdm_device_output *o;
    const char *text;
} served_write;

static void *write_serving(void *arg)
{
    served_write *w = arg;

    tdm_device_output_serve(w->o);
    printf("%s", w->text);
    fputs("[err]", stderr);
    tdm_device_output_serve(NULL);
    return NULL;
}

/* Two threads serving two sessions write through the process's stdout
 * and stderr at once: each session's buffer holds only its own. */
Test(device_output, writes_go_to_the_session_the_thread_serves)
{
    tdm_device_output *a, *b;
    served_write wa, wb;
    pthread_t ta, tb;
    tdm_output_piece *v;
    size_t n;
    uint64_t dropped;
    char got[256];

    cr_assert_eq(tdm_device_output_install(), 0);
    cr_assert_eq(tdm_device_output_create(1, 1 << 20, 64, &a), 0);
    cr_assert_eq(tdm_device_output_create(2, 1 << 20, 64, &b), 0);
    wa = (served_write){ a, "session one\n" };
    wb = (served_write){ b, "session two\n" };
    pthread_create(&ta, NULL, write_serving, &wa);
    pthread_create(&tb, NULL, write_serving, &wb);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    tdm_device_output_take(a, &v, &n, &dropped);
    render(v, n, got, sizeof(got));
    cr_expect_str_eq(got, "1:session one\n|2:[err]|");
    tdm_device_output_take(b, &v, &n, &dropped);
    render(v, n, got, sizeof(got));
    cr_expect_str_eq(got, "1:session two\n|2:[err]|");
    tdm_device_output_destroy(a);
    tdm_device_output_destroy(b);
}
