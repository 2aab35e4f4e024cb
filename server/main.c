/* tandem-server: serves the CUDA sessions of guests on one GPU. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "listener.h"
#include "server.h"

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
    stop_requested = 1;
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: tandem-server [options]\n"
            "  --backend cuda|sim     device backend (default: cuda if a GPU answers, else an error;\n"
            "                         sim is a SIMULATED GPU for tests and demos)\n"
            "  --device N             GPU ordinal (default 0)\n"
            "  --listen HOST          address to bind (default 127.0.0.1)\n"
            "  --port N               TCP port (default 7710; 0 = any free port)\n"
            "  --port-file PATH       write the bound port to PATH\n"
            "  --arena-base ADDR      logical arena address (default 0x200000000000)\n"
            "  --arena-size BYTES     logical arena size (default 256 GiB; suffixes K M G)\n"
            "  --session-quota BYTES  device memory per session (default: none)\n"
            "  --max-sessions N       refuse connections beyond N (default 256)\n");
}

static int parse_size(const char *s, uint64_t *out)
{
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 0);

    if (errno || end == s)
        return -1;
    switch (*end) {
    case 'K': case 'k': v <<= 10; end++; break;
    case 'M': case 'm': v <<= 20; end++; break;
    case 'G': case 'g': v <<= 30; end++; break;
    default: break;
    }
    if (*end)
        return -1;
    *out = v;
    return 0;
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        { "backend", required_argument, 0, 'b' },   { "device", required_argument, 0, 'd' },
        { "listen", required_argument, 0, 'l' },    { "port", required_argument, 0, 'p' },
        { "port-file", required_argument, 0, 'f' }, { "arena-base", required_argument, 0, 'A' },
        { "arena-size", required_argument, 0, 'S' }, { "session-quota", required_argument, 0, 'q' },
        { "max-sessions", required_argument, 0, 'm' }, { "help", no_argument, 0, 'h' },
        { 0, 0, 0, 0 },
    };
    tdm_server_config cfg = {
        .backend = NULL, .device = 0, .arena_base = TDM_DEFAULT_ARENA_BASE,
        .arena_size = TDM_DEFAULT_ARENA_SIZE, .session_mem_quota = 0, .max_sessions = 256,
    };
    tdm_listener_config lc = { .host = "127.0.0.1", .port = 7710, .port_file = NULL };
    tdm_server srv;
    struct sigaction sa;
    int c, rc;

    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'b': cfg.backend = optarg; break;
        case 'd': cfg.device = atoi(optarg); break;
        case 'l': lc.host = optarg; break;
        case 'p': lc.port = atoi(optarg); break;
        case 'f': lc.port_file = optarg; break;
        case 'm': cfg.max_sessions = atoi(optarg); break;
        case 'A':
            if (parse_size(optarg, &cfg.arena_base)) goto bad;
            break;
        case 'S':
            if (parse_size(optarg, &cfg.arena_size)) goto bad;
            break;
        case 'q':
            if (parse_size(optarg, &cfg.session_mem_quota)) goto bad;
            break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (optind < argc) {
        usage(stderr);
        return 2;
    }

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);

    if (!cfg.backend) {
        cfg.backend = "cuda";
        if (tdm_server_start(&srv, &cfg) != 0) {
            fprintf(stderr, "tandem-server: no usable GPU; start with --backend sim for the simulated GPU\n");
            return 1;
        }
    } else if (tdm_server_start(&srv, &cfg) != 0) {
        return 1;
    }
    fprintf(stderr, "tandem-server: device '%s'%s, arena %#llx + %llu GiB\n", srv.info.name,
            srv.ops->simulated ? " [SIMULATED]" : "", (unsigned long long)cfg.arena_base,
            (unsigned long long)(cfg.arena_size >> 30));
    rc = tdm_listener_run(&srv, &lc, &stop_requested);
    if (rc == 0)
        tdm_server_stop(&srv);
    fprintf(stderr, "tandem-server: stopped\n");
    return rc == 0 ? 0 : 1;
bad:
    fprintf(stderr, "tandem-server: bad size '%s'\n", optarg);
    return 2;
}
