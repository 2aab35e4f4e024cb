/* tests/integration/control_client.h */
#include "control_client.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int th_control_connect(const char *path)
{
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    const struct timeval patience = { 5, 0 };

    cr_assert_geq(fd, 0);
    snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
    cr_assert_eq(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0, "no control socket at %s", path);
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &patience, sizeof(patience));
    return fd;
}

int th_control_ask(int fd, const char *line, char *out, size_t len)
{
    size_t n = strlen(line);

    if (send(fd, line, n, MSG_NOSIGNAL) != (ssize_t)n || send(fd, "\n", 1, MSG_NOSIGNAL) != 1)
        return -1;
    return th_control_read(fd, out, len);
}

int th_control_read(int fd, char *out, size_t len)
{
    size_t got = 0;

    while (got + 1 < len) {
        ssize_t r = recv(fd, out + got, 1, 0);
        if (r <= 0)
            return -1;
        if (out[got] == '\n')
            break;
        got++;
    }
    out[got] = '\0';
    return (int)got;
}

json_object *th_control_stats(const char *path)
{
    static char answer[1 << 16];
    int fd = th_control_connect(path);

    cr_assert_gt(th_control_ask(fd, "{\"op\":\"stats\"}", answer, sizeof(answer)), 0);
    close(fd);
    json_object *o = json_tokener_parse(answer);
    cr_assert_not_null(o, "stats answer is not JSON: %s", answer);
    return o;
}

json_object *th_control_session(json_object *stats, const char *key)
{
    json_object *list, *p;

    if (!json_object_object_get_ex(stats, "sessions", &list))
        return NULL;
    for (size_t i = 0; i < json_object_array_length(list); i++) {
        json_object *s = json_object_array_get_idx(list, i);
        if (!key || (json_object_object_get_ex(s, "placement", &p) && p &&
                     strcmp(json_object_get_string(p), key) == 0))
            return s;
    }
    return NULL;
}
