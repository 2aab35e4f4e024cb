/* tandem-orchestrator --config FILE [--listen HOST:PORT] [--state-dir DIR] [--tenants FILE]
 * Places guests on GPU servers, steers their SM shares and answers the control-plane API
 * (docs/orchestrator.md, docs/adr/0002-control-plane.md). */
#include <curl/curl.h>
#include <errno.h>
#include <getopt.h>
#include <microhttpd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "clock.h"
#include "log.h"
#include "orch_daemon.h"

static volatile sig_atomic_t stop_requested;   /* a signal is the process's, once */

static void on_signal(int sig)
{
    (void)sig;
    stop_requested = 1;
}

static void usage(void)
{
    fprintf(stderr, "usage: tandem-orchestrator --config FILE [--listen HOST:PORT] [--state-dir DIR] "
                    "[--tenants FILE]\n");
}

static int parse_args(int argc, char **argv, orch_daemon *d)
{
    static const struct option opts[] = { { "config", required_argument, NULL, 'c' },
                                          { "listen", required_argument, NULL, 'l' },
                                          { "state-dir", required_argument, NULL, 's' },
                                          { "tenants", required_argument, NULL, 't' },
                                          { "help", no_argument, NULL, 'h' },
                                          { NULL, 0, NULL, 0 } };
    const char *config = NULL, *listen = NULL, *state = NULL, *tenants = NULL;
    char err[1024];
    int c;

    while ((c = getopt_long(argc, argv, "c:l:s:t:h", opts, NULL)) != -1) {
        switch (c) {
        case 'c': config = optarg; break;
        case 'l': listen = optarg; break;
        case 's': state = optarg; break;
        case 't': tenants = optarg; break;
        default: usage(); return -1;
        }
    }
    if (!config || optind != argc) {
        usage();
        return -1;
    }
    if (orch_config_load(config, &d->cfg, err, sizeof(err)) != 0) {
        tdm_log("%s", err);
        return -1;
    }
    /* The command line wins over the file: a test or a second instance reuses one config. */
    if (listen)
        snprintf(d->cfg.listen, sizeof(d->cfg.listen), "%s", listen);
    if (state)
        snprintf(d->cfg.state_dir, sizeof(d->cfg.state_dir), "%s", state);
    if (tenants)
        snprintf(d->cfg.tenants_file, sizeof(d->cfg.tenants_file), "%s", tenants);
    return 0;
}

static int start(orch_daemon *d)
{
    char why[1024];
    int nd = 0;

    if (orch_tenants_load(d->cfg.tenants_file, &d->tenants, why, sizeof(why)) != 0) {
        tdm_log("%s", why);
        return -1;
    }
    if (mkdir(d->cfg.state_dir, 0700) != 0 && errno != EEXIST) {
        tdm_log("state_dir %s: %s", d->cfg.state_dir, strerror(errno));
        return -1;
    }
    d->cluster = calloc(1, sizeof(*d->cluster));
    d->decisions = calloc((size_t)d->cfg.decisions_kept, sizeof(*d->decisions));
    if (!d->cluster || !d->decisions) {
        tdm_log("out of memory");
        return -1;
    }
    if (orch_store_open(d->cfg.state_dir, &d->store, why, sizeof(why)) != 0) {
        tdm_log("%s", why);
        return -1;
    }
    if (orch_store_load(d->store, d->cluster, tdm_now_ms(), d->decisions, d->cfg.decisions_kept, &nd) != 0) {
        tdm_log("%s/orchestrator.db: %s", d->cfg.state_dir, orch_store_error(d->store));
        return -1;
    }
    d->ndecisions = nd;
    tdm_log("loaded %d nodes, %d placements, %d decisions from %s/orchestrator.db", d->cluster->nnodes,
            d->cluster->nplacements, nd, d->cfg.state_dir);
    return 0;
}

int main(int argc, char **argv)
{
    static orch_daemon d;   /* large (the VMs, the tenants): not on the stack */
    struct MHD_Daemon *mhd = NULL;
    char why[512];
    int rc = 1;

    tdm_log_set_program("tandem-orchestrator");
    pthread_mutex_init(&d.lock, NULL);
    if (parse_args(argc, argv, &d) != 0)
        return 2;
    curl_global_init(CURL_GLOBAL_DEFAULT);
    signal(SIGPIPE, SIG_IGN);
    signal(SIGTERM, on_signal);
    signal(SIGINT, on_signal);
    if (start(&d) != 0)
        goto out;
    if (!(mhd = orch_http_start(&d, why, sizeof(why)))) {
        tdm_log("%s", why);
        goto out;
    }
    tdm_log("listening on %s", d.cfg.listen);
    while (!stop_requested) {
        struct timespec ts = { 0, 100 * 1000 * 1000 };
        nanosleep(&ts, NULL);
        pthread_mutex_lock(&d.lock);
        orch_check_lost(&d, tdm_now_ms());
        pthread_mutex_unlock(&d.lock);
    }
    tdm_log("stopping");
    rc = 0;
out:
    if (mhd)
        MHD_stop_daemon(mhd);
    orch_store_close(d.store);
    orch_tenants_clear(&d.tenants);
    free(d.cluster);
    free(d.decisions);
    orch_agent_conns_close(&d);
    curl_global_cleanup();
    return rc;
}
