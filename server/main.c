/* tandem-server: serves the CUDA sessions of guests on one GPU. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "control.h"
#include "device_output.h"
#include "isolate.h"
#include "listener.h"
#include "log.h"
#include "mps.h"
#include "resilience.h"
#include "server.h"
#include "supervise.h"
#include "tenants.h"

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
            "  --shm NAME             also serve guests with TANDEM_SERVER=shm:NAME (shared memory;\n"
            "                         unix socket @tandem-shm-NAME in the abstract namespace)\n"
            "  --arena-base ADDR      logical arena address (default 0x200000000000)\n"
            "  --arena-size BYTES     logical arena size (default 256 GiB; suffixes K M G)\n"
            "  --session-quota BYTES  device memory per session (default: none)\n"
            "  --max-sessions N       refuse connections beyond N (default 256)\n"
            "  --handshake-timeout S  close a connection that sends nothing in its first S seconds\n"
            "                         (default 10; 0 = wait forever): silent connections cannot\n"
            "                         hold the session slots\n"
            "  --session-streams N    live streams per session (default 1024; 0 = no bound): each\n"
            "                         stream has a server thread\n"
            "  --session-events N     live events per session (default 65536; 0 = no bound)\n"
            "  --session-modules N    modules and libraries loaded per session (default 16384;\n"
            "                         0 = no bound)\n"
            "  --session-host-memory BYTES  host memory per session for its code images, kept\n"
            "                         for takeover (default 4G; 0 = no bound)\n"
            "  --host-budget BYTES    host memory all sessions hold together (default: half the\n"
            "                         host's memory; 0 = no bound): past it a load is refused with\n"
            "                         cudaErrorMemoryAllocation instead of the server being OOM-killed\n"
            "  --frame-timeout S      close a connection that stalls in the middle of a call's frame\n"
            "                         for S seconds (default 30; 0 = wait forever)\n"
            "  --idle-timeout S       close a session that sends nothing for S seconds, releasing\n"
            "                         what it held (default 0 = never: CUDA programs may idle for hours)\n"
            "  --tcp-send MODE        how TCP lanes send downloads: plain (default) or splice (the\n"
            "                         sockets refer to the staging's pages instead of copying them;\n"
            "                         docs/protocol.md); default from TANDEM_TCP_SEND\n"
            "  --tenants FILE         serve only guests that present a tenant's token (TANDEM_TOKEN),\n"
            "                         each within its tenant's bounds (docs/security.md); FILE must be\n"
            "                         private to the server's user (mode 600).  Without it: anyone\n"
            "                         who reaches the server\n"
            "  --mps start            start an MPS control daemon for this GPU (own pipe and log\n"
            "                         directories under --mps-run-dir), serve as its client, stop it at exit\n"
            "  --mps attach DIR       serve as a client of the MPS daemon with pipe directory DIR\n"
            "  --mps-run-dir DIR      where --mps start puts its directories\n"
            "                         (default $XDG_RUNTIME_DIR/tandem or /tmp/tandem-UID)\n"
            "  --sim-mps-domain NAME  sim: share a simulated MPS domain with the other sim servers\n"
            "                         of that name: a fatal fault in one kills every client\n"
            "  --standby SOCKET       mirror every session to the standby listening on unix SOCKET;\n"
            "                         when this server dies its guests resume there (docs/takeover.md).\n"
            "                         A lost standby is dialled again until one listens there; with\n"
            "                         --standby-listen it may also come later (a standby's standby)\n"
            "  --standby-listen SOCKET  be a standby: mirror the sessions of active servers that\n"
            "                         connect to unix SOCKET, and resume them when they die\n"
            "  --failback-from SOCKET  fail-back: take the sessions of the server (a standby that\n"
            "                         took them over) whose standby socket is SOCKET; needs\n"
            "                         --standby-listen; each session moves at its guest's next\n"
            "                         synchronizing call, without copying memory\n"
            "  --isolate tenant       with --tenants: each tenant's sessions in a process (an MPS\n"
            "                         client, a CUDA context) of their own, started at the tenant's\n"
            "                         first connection, so that no kernel reaches another tenant's\n"
            "                         memory; this process only routes connections (docs/security.md)\n"
            "  --supervise            run the server in a child process and start a new one when\n"
            "                         the device context is lost (exit status 76): CUDA gives a\n"
            "                         process no new context after a sticky error (docs/health.md);\n"
            "                         use a fixed --port, a new child binds it again\n"
            "  --session-sms N        run each new session's work on N of the GPU's SMs (default: all);\n"
            "                         enforced with green contexts on cuda (docs/sm-shares.md)\n"
            "  --sm-window FIRST:N    this server's shares take only SMs FIRST..FIRST+N-1 of the GPU\n"
            "                         (rounded out to whole SM groups): a VM's SM budget, shared by\n"
            "                         its sessions, apart from other servers' windows (sm-shares.md)\n"
            "  --sim-sms N            sim: the simulated device's SM count (default 132)\n"
            "  --sim-wave-us U        sim: model SM shares: a kernel of B blocks on S SMs completes\n"
            "                         ceil(B/S) * U microseconds after it starts (default 0: off)\n"
            "  --test-share-at-work N:S  testing: a session's SM share becomes S as its Nth launch,\n"
            "                         copy or memset is queued (until the control socket's set_share)\n"
            "  --control PATH         answer the node agent on unix socket PATH (mode 0600): reserve,\n"
            "                         set_share, stats, one JSON object a line (docs/node-agent.md);\n"
            "                         not with --isolate\n"
            "  --crash-after-calls N  testing: die by SIGKILL when about to serve the Nth call\n"
            "  --crash-before-reply   testing: with --crash-after-calls, die once the Nth call was\n"
            "                         served, before its reply is sent\n");
}

/* ---- a process per tenant (issue 16) ---- */
enum {
    OPT_ISOLATE = 1000, OPT_WORKER_OF, OPT_WORKER_FD, OPT_WORKER_INDEX, OPT_WORKER_ENDPOINT, OPT_WORKER_SHM_ENDPOINT,
};
/* ---- SM shares (issue 17) ---- */
enum { OPT_SESSION_SMS = 1700, OPT_SIM_SMS, OPT_SIM_WAVE_US, OPT_TEST_SHARE_AT_WORK, OPT_SM_WINDOW };

/* ---- control plane (issue 17) ---- */
enum { OPT_CONTROL = 1100 };
/* ---- tcp bulk data (issue 14) ---- */
enum { OPT_TCP_SEND = 1400 };

/* Options that are the front's alone: where it listens, how it is supervised, the MPS daemon it
 * starts (its processes inherit the daemon's environment), the GPU (passed on after --mps start
 * chose it), the standby (each tenant's process gets a standby of its own, isolate.h).  Every other option, those added later included, is passed on to each tenant's
 * process as given. */
static bool front_only(int opt)
{
    return opt == OPT_ISOLATE || (opt > 0 && opt < 128 && strchr("lpfsVMRdY", opt) != NULL);
}

/* What --isolate cannot be combined with, said before anything starts. */
static bool check_isolate(const tdm_server_config *cfg, const char *tenants_path, bool supervise)
{
    const char *why = !tenants_path          ? "needs --tenants FILE: a process is started per tenant of the file"
                      : cfg->standby_listen  ? "cannot be a standby (--standby-listen): a standby serves every "
                                               "tenant's sessions in its one process"
                      : cfg->failback_from   ? "cannot take sessions back (--failback-from)"
                      : supervise            ? "starts each tenant's process again itself: leave out --supervise"
                                             : NULL;

    if (why)
        tdm_log("--isolate tenant %s", why);
    return why == NULL;
}

/* The front: it never touches the device; it routes each connection to its tenant's process. */
static int run_front(const tdm_server_config *cfg, tdm_listener_config *lc, char **fwd, int nfwd)
{
    tdm_server front;
    tdm_isolate iso;
    int rc;

    tdm_server_init_front(&front, cfg);
    rc = tdm_isolate_init(&iso, &front, fwd, nfwd, cfg->device, cfg->standby_sock);
    if (rc) {
        tdm_log("--isolate: cannot find this program to start tenants' processes: %s", strerror(-rc));
        return 1;
    }
    lc->route = tdm_isolate_route;
    lc->route_ctx = &iso;
    tdm_log("--isolate tenant: each of the %zu tenant(s) gets a process (a CUDA context) of its own at its first "
            "connection; this process only routes connections", cfg->tenants->n);
    rc = tdm_listener_run(&front, lc, &stop_requested);
    tdm_isolate_stop(&iso);
    tdm_isolate_free(&iso);
    return rc == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        { "backend", required_argument, 0, 'b' },   { "device", required_argument, 0, 'd' },
        { "listen", required_argument, 0, 'l' },    { "port", required_argument, 0, 'p' },
        { "port-file", required_argument, 0, 'f' }, { "arena-base", required_argument, 0, 'A' },
        { "arena-size", required_argument, 0, 'S' }, { "session-quota", required_argument, 0, 'q' },
        { "max-sessions", required_argument, 0, 'm' }, { "help", no_argument, 0, 'h' },
        { "mps", required_argument, 0, 'M' },       { "mps-run-dir", required_argument, 0, 'R' },
        { "sim-mps-domain", required_argument, 0, 'D' }, { "shm", required_argument, 0, 's' },
        { "standby", required_argument, 0, 'Y' },  { "standby-listen", required_argument, 0, 'L' },
        { "crash-after-calls", required_argument, 0, 'C' }, { "failback-from", required_argument, 0, 'F' },
        { "crash-before-reply", no_argument, 0, 'B' }, { "supervise", no_argument, 0, 'V' },
        { "handshake-timeout", required_argument, 0, 'H' }, { "session-streams", required_argument, 0, 'T' },
        { "session-events", required_argument, 0, 'E' }, { "tenants", required_argument, 0, 'N' },
        { "session-modules", required_argument, 0, 'O' }, { "session-host-memory", required_argument, 0, 'U' },
        { "host-budget", required_argument, 0, 'G' },     { "frame-timeout", required_argument, 0, 'W' },
        { "idle-timeout", required_argument, 0, 'I' },     { "tcp-send", required_argument, 0, OPT_TCP_SEND },
        /* ---- a process per tenant (issue 16): --isolate; the rest is how the front starts one ---- */
        { "isolate", required_argument, 0, OPT_ISOLATE },  { "worker-of", required_argument, 0, OPT_WORKER_OF },
        { "worker-fd", required_argument, 0, OPT_WORKER_FD }, { "worker-index", required_argument, 0, OPT_WORKER_INDEX },
        { "worker-endpoint", required_argument, 0, OPT_WORKER_ENDPOINT },
        { "worker-shm-endpoint", required_argument, 0, OPT_WORKER_SHM_ENDPOINT },
        /* ---- SM shares (issue 17) ---- */
        { "session-sms", required_argument, 0, OPT_SESSION_SMS }, { "sim-sms", required_argument, 0, OPT_SIM_SMS },
        { "sim-wave-us", required_argument, 0, OPT_SIM_WAVE_US },
        { "test-share-at-work", required_argument, 0, OPT_TEST_SHARE_AT_WORK },
        { "sm-window", required_argument, 0, OPT_SM_WINDOW },
        { "control", required_argument, 0, OPT_CONTROL },   /* ---- control plane (issue 17) ---- */
        { 0, 0, 0, 0 },
    };
    tdm_server_config cfg = {
        .backend = NULL, .device = 0, .arena_base = TDM_DEFAULT_ARENA_BASE,
        .arena_size = TDM_DEFAULT_ARENA_SIZE, .session_mem_quota = 0, .max_sessions = 256,
        .handshake_timeout_s = 10, .session_streams = 1024, .session_events = 65536,
        .session_modules = 16384, .session_host_memory = 4ull << 30, .host_budget = tdm_default_host_budget(),
        .frame_timeout_s = 30, .idle_timeout_s = 0,
    };
    tdm_listener_config lc = { .host = "127.0.0.1", .port = 7710, .port_file = NULL, .shm_name = NULL,
                               .handoff_fd = -1 };
    tdm_server srv;
    tdm_resilience *resil = NULL;
    tdm_mps mps = { 0 };
    const char *mps_run_dir = NULL;
    bool supervise = false;
    const char *tenants_path = NULL;
    tdm_tenants tenants = { 0 };
    char why[600];
    struct sigaction sa;
    int c, rc, count;
    /* ---- a process per tenant (issue 16) ---- */
    bool isolate = false;
    const char *worker_of = NULL;
    int worker_fd = -1, worker_index = 0, at, nfwd = 0;
    char *fwd[argc + 1];   /* the options a tenant's process takes too: at most all of them */
    static char program[TDM_TENANT_NAME_MAX + 32];
    /* ---- control plane (issue 17) ---- */
    const char *control_path = NULL;
    tdm_control *control = NULL;

    tdm_log_set_program("tandem-server");
    /* ---- tcp bulk data (issue 14): the same variable as the guest's, so one setting measures both ---- */
    const char *send_env = getenv("TANDEM_TCP_SEND");
    if (send_env && *send_env && (tdm_tx_mode_parse(send_env, &cfg.tcp_send) != 0 || cfg.tcp_send == TDM_TX_ZEROCOPY)) {
        tdm_log("TANDEM_TCP_SEND=%s: the server sends 'plain' or 'splice'; plain it is", send_env);
        cfg.tcp_send = TDM_TX_PLAIN;
    }
    /* 2 is how downloads were staged before 2026-12-02: kept to compare (docs/protocol.md). */
    const char *down_env = getenv("TANDEM_TCP_DOWN_BUFS");
    if (down_env && *down_env) {
        char *end;
        unsigned long n = strtoul(down_env, &end, 10);
        if (*end || n < 2 || n > 4)
            tdm_log("TANDEM_TCP_DOWN_BUFS=%s: it takes 2 to 4; 4 it is", down_env);
        else
            cfg.tcp_down_bufs = (unsigned)n;
    }
    for (at = optind; (c = getopt_long(argc, argv, "h", opts, NULL)) != -1; at = optind) {
        switch (c) {
        case 'b': cfg.backend = optarg; break;
        case 'd': cfg.device = atoi(optarg); break;
        case 'l': lc.host = optarg; break;
        case 'p': lc.port = atoi(optarg); break;
        case 'f': lc.port_file = optarg; break;
        case 's': lc.shm_name = optarg; break;
        case 'm': cfg.max_sessions = atoi(optarg); break;
        case 'H':
            cfg.handshake_timeout_s = atoi(optarg);
            if (cfg.handshake_timeout_s < 0) goto bad;
            break;
        case 'T':
            if ((count = atoi(optarg)) < 0) goto bad;
            cfg.session_streams = (uint32_t)count;
            break;
        case 'E':
            if ((count = atoi(optarg)) < 0) goto bad;
            cfg.session_events = (uint32_t)count;
            break;
        /* ---- host resources and time limits (issue 16) ---- */
        case 'O':
            if ((count = atoi(optarg)) < 0) goto bad;
            cfg.session_modules = (uint32_t)count;
            break;
        case 'U':
            if (tdm_parse_size(optarg, &cfg.session_host_memory)) goto bad;
            break;
        case 'G':
            if (tdm_parse_size(optarg, &cfg.host_budget)) goto bad;
            break;
        case 'W':
            if ((count = atoi(optarg)) < 0) goto bad;
            cfg.frame_timeout_s = (uint32_t)count;
            break;
        case 'I':
            if ((count = atoi(optarg)) < 0) goto bad;
            cfg.idle_timeout_s = (uint32_t)count;
            break;
        case OPT_TCP_SEND:
            /* zerocopy gains nothing on loopback (tcp_send.h) and would make each lane wait for the
             * kernel's reports: the server offers plain and splice. */
            if (tdm_tx_mode_parse(optarg, &cfg.tcp_send) != 0 || cfg.tcp_send == TDM_TX_ZEROCOPY) {
                tdm_log("--tcp-send takes 'plain' or 'splice'");
                return 2;
            }
            break;
        case 'A':
            if (tdm_parse_size(optarg, &cfg.arena_base)) goto bad;
            break;
        case 'S':
            if (tdm_parse_size(optarg, &cfg.arena_size)) goto bad;
            break;
        case 'q':
            if (tdm_parse_size(optarg, &cfg.session_mem_quota)) goto bad;
            break;
        case 'D': cfg.sim_mps_domain = optarg; break;
        case 'Y': cfg.standby_sock = optarg; break;
        case 'L': cfg.standby_listen = optarg; break;
        case 'C': cfg.crash_after_calls = atol(optarg); break;
        case 'F': cfg.failback_from = optarg; break;
        case 'B': cfg.crash_before_reply = true; break;
        case 'V': supervise = true; break;
        case 'N': tenants_path = optarg; break;
        case 'R': mps_run_dir = optarg; break;
        case 'M':
            cfg.mps_mode = optarg;
            /* `--mps attach DIR`: the directory is the next word. */
            if (strcmp(optarg, "attach") == 0 && optind < argc && argv[optind][0] != '-')
                cfg.mps_dir = argv[optind++];
            else if (strcmp(optarg, "start") != 0) {
                tdm_log("--mps takes 'start' or 'attach DIR'");
                return 2;
            }
            break;
        case OPT_ISOLATE:
            if (strcmp(optarg, "tenant") != 0) {
                tdm_log("--isolate takes 'tenant' (a process per tenant)");
                return 2;
            }
            isolate = true;
            break;
        /* ---- SM shares (issue 17) ---- */
        case OPT_SESSION_SMS:
            if ((count = atoi(optarg)) < 0) goto bad;
            cfg.session_sms = (unsigned)count;
            break;
        case OPT_SM_WINDOW: {
            unsigned first, n;
            char tail;
            if (sscanf(optarg, "%u:%u%c", &first, &n, &tail) != 2 || n < 1) {
                tdm_log("--sm-window takes FIRST:N (the first SM and how many), not '%s'", optarg);
                return 2;
            }
            cfg.sm_window_first = first;
            cfg.sm_window_sms = n;
            break;
        }
        case OPT_SIM_SMS:
            if ((count = atoi(optarg)) < 1) goto bad;
            cfg.sim_sms = (unsigned)count;
            break;
        case OPT_SIM_WAVE_US:
            if ((count = atoi(optarg)) < 0) goto bad;
            cfg.sim_wave_us = (uint32_t)count;
            break;
        case OPT_TEST_SHARE_AT_WORK: {
            unsigned long long work;
            unsigned sms;
            char end;
            if (sscanf(optarg, "%llu:%u%c", &work, &sms, &end) != 2 || !work || !sms) goto bad;
            cfg.test_share_work = work;
            cfg.test_share_sms = sms;
            break;
        }
        case OPT_WORKER_OF: worker_of = optarg; break;
        case OPT_WORKER_FD: worker_fd = atoi(optarg); break;
        case OPT_WORKER_INDEX: worker_index = atoi(optarg); break;
        case OPT_WORKER_ENDPOINT: lc.endpoint = optarg; break;
        case OPT_WORKER_SHM_ENDPOINT: lc.shm_endpoint = optarg; break;
        case OPT_CONTROL: control_path = optarg; break;   /* ---- control plane (issue 17) ---- */
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
        if (!front_only(c))
            for (int i = at; i < optind; i++)
                fwd[nfwd++] = argv[i];
    }
    if (optind < argc) {
        usage(stderr);
        return 2;
    }

    /* ---- tenants (issue 16) ---- */
    /* Before anything starts: a bad file stops the server instead of serving the wrong guests. */
    if (tenants_path) {
        if (tdm_tenants_load(tenants_path, &tenants, why, sizeof(why)) != 0) {
            tdm_log("--tenants: %s", why);
            return 2;
        }
        cfg.tenants = &tenants;
    }
    if (isolate && !check_isolate(&cfg, tenants_path, supervise))
        return 2;
    /* ---- control plane (issue 17): the front of --isolate has no sessions to report ---- */
    if (isolate && control_path) {
        tdm_log("--control cannot be combined with --isolate tenant yet: the front routes connections and holds "
                "no session, and the tenants' processes have no control sockets (docs/node-agent.md)");
        return 2;
    }
    if (worker_of) {   /* a tenant's process: it serves that tenant only, numbering from its own base */
        if (!tenants_path || tdm_tenants_keep_only(&tenants, worker_of) != 0 || worker_fd < 0 || worker_index < 0) {
            tdm_log("--worker-of is how --isolate starts a tenant's process, with --tenants naming the tenant");
            return 2;
        }
        snprintf(program, sizeof(program), "tandem-server[%s]", worker_of);
        tdm_log_set_program(program);
        cfg.session_id_base = ((uint64_t)worker_index + 1) << TDM_ISOLATE_ID_SHIFT;
        lc.handoff_fd = worker_fd;
    }

    /* A standby keeps one descriptor per imported allocation (to hand it
     * on): allow as many as the system lets this process have. */
    struct rlimit nofile;
    if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur < nofile.rlim_max) {
        nofile.rlim_cur = nofile.rlim_max;
        setrlimit(RLIMIT_NOFILE, &nofile);
    }
    /* Before anything touches the device: the supervisor itself never does. */
    if (supervise && tdm_supervise() != 0)
        return 1;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);

    if (cfg.mps_mode) {
        /* Before the backend loads libcuda: the environment decides whether
         * it becomes an MPS client. */
        if (cfg.backend && strcmp(cfg.backend, "cuda") != 0) {
            tdm_log("--mps needs the cuda backend (the sim backend models MPS with --sim-mps-domain)");
            return 2;
        }
        if (strcmp(cfg.mps_mode, "start") == 0 ? tdm_mps_start(&mps, mps_run_dir, &cfg.device)
                                               : tdm_mps_attach(&mps, cfg.mps_dir))
            return 1;
    }
    if (isolate) {
        rc = run_front(&cfg, &lc, fwd, nfwd);
        tdm_mps_stop(&mps);
        tdm_tenants_free(&tenants);
        tdm_log("stopped");
        return rc;
    }
    if (!cfg.backend) {
        cfg.backend = "cuda";
        if (tdm_server_start(&srv, &cfg) != 0) {
            tdm_log("no usable GPU; start with --backend sim for the simulated GPU");
            tdm_mps_stop(&mps);
            return 1;
        }
    } else if (tdm_server_start(&srv, &cfg) != 0) {
        tdm_mps_stop(&mps);
        return 1;
    }
    /* Before any session: the hooks must see every one. */
    if (tdm_resilience_start(&resil, &srv) != 0) {
        tdm_server_stop(&srv);
        tdm_mps_stop(&mps);
        return 1;
    }
    /* ---- control plane (issue 17): before any session, so HELLO finds the reservations ---- */
    if (control_path && tdm_control_start(&control, &srv, control_path) != 0) {
        tdm_resilience_stop(resil);
        tdm_server_stop(&srv);
        tdm_mps_stop(&mps);
        return 1;
    }
    tdm_log("device '%s'%s, arena %#llx + %llu GiB", srv.info.name, srv.ops->simulated ? " [SIMULATED]" : "",
            (unsigned long long)cfg.arena_base, (unsigned long long)(cfg.arena_size >> 30));
    /* Device printf/assert output goes to the guest whose call flushed it
     * (docs/device-output.md), not into the server's log. */
    if (tdm_device_output_install() != 0)
        tdm_log("cannot route device output to guests: it stays on the server's stdout");
    rc = tdm_listener_run(&srv, &lc, &stop_requested);
    if (rc == 0) {
        tdm_control_stop(control);   /* ---- control plane (issue 17): no session left to take a reservation ---- */
        tdm_resilience_stop(resil);
        tdm_server_stop(&srv);
        tdm_tenants_free(&tenants);   /* no session is left to point at it */
    }
    /* After the backend let go of the GPU: the daemon's client is gone. */
    tdm_mps_stop(&mps);
    tdm_log("stopped");
    return rc == 0 ? 0 : 1;
bad:
    tdm_log("bad size '%s'", optarg);
    return 2;
}
