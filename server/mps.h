/* Per-GPU MPS control for tandem-server (docs/faults.md, "MPS control").
 *
 * `--mps start` starts an MPS control daemon for the server's GPU with its
 * own pipe and log directories under a run directory, makes this process an
 * MPS client of it (CUDA_MPS_PIPE_DIRECTORY, set before the backend loads
 * libcuda), and stops it when the server exits.  `--mps attach DIR` joins a
 * daemon already running with pipe directory DIR.  The control binary is
 * found on PATH or in /usr/local/nvidia/bin. */
#ifndef TANDEM_SERVER_MPS_H
#define TANDEM_SERVER_MPS_H

#include <stdbool.h>

typedef struct tdm_mps {
    bool started;           /* we started the daemon and must stop it */
    char control[512];      /* path of nvidia-cuda-mps-control */
    char pipe_dir[512];
    char log_dir[512];
} tdm_mps;

/* Starts a daemon for GPU `device` under run_dir (NULL: $XDG_RUNTIME_DIR/tandem
 * or /tmp/tandem-UID) and sets this process's environment to be its client.
 * If `device` is not 0 the daemon and this process see only that GPU, and
 * *device becomes 0.  0 or -1 with a message on stderr. */
int tdm_mps_start(tdm_mps *m, const char *run_dir, int *device);
/* Joins the daemon whose pipe directory is pipe_dir.  0 or -1 with a message. */
int tdm_mps_attach(tdm_mps *m, const char *pipe_dir);
/* Stops a daemon tdm_mps_start started (echo quit | nvidia-cuda-mps-control
 * with the same environment); nothing for an attached one. */
void tdm_mps_stop(tdm_mps *m);

#endif
