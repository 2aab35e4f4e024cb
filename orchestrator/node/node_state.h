/* The agent's state file (state_dir/node.state, JSON): the pid and endpoints of each server it
 * started, so that an agent started again adopts the servers still running instead of starting
 * them twice.  Written whole to a temporary file and renamed: never half written. */
#ifndef TANDEM_NODE_STATE_H
#define TANDEM_NODE_STATE_H

#include <stddef.h>

#include "node_servers.h"

/* Writes the servers' ids, pids and endpoints.  0 or -errno. */
int tdm_node_state_save(const char *path, const tdm_node_servers *s, const char *server_host);
/* For each server of s whose id the file lists, sets its pid as recorded (0 otherwise).
 * Servers the file lists that s does not plan are ignored (node.conf changed).  0, -ENOENT when
 * there is no file, or -EINVAL with why (a damaged file: the agent starts afresh). */
int tdm_node_state_load(const char *path, tdm_node_servers *s, char *why, size_t whylen);

#endif
