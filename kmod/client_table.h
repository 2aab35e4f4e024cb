/* SPDX-License-Identifier: MIT */
/*
 * client_table.h - channel instance pointer -> owning process.
 *
 * An MMU fault packet names the faulting channel by its instance block
 * address, which is the one piece of per-client identity a fault carries
 * (paper, Insight #1).  With the UVM glue the owner comes from UVM's own
 * user-channel registration; the table here backs the test interface and is
 * the policy for matching: exact instance-block match only, never "closest",
 * because a wrong match kills an innocent client.  Caller locks.
 */
#ifndef TANDEM_CLIENT_TABLE_H
#define TANDEM_CLIENT_TABLE_H

#include "tandem_compat.h"

#define TANDEM_CLIENT_MAX 64
/* Instance blocks are 4 KiB aligned; low bits of a packet's pointer are noise. */
#define TANDEM_INST_ALIGN ((u64)4096)

struct tandem_client {
	u64 instance_ptr;
	s32 pid;		/* thread-group id of the owner */
};

struct tandem_client_table {
	u32 count;
	struct tandem_client entry[TANDEM_CLIENT_MAX];
};

void tandem_clients_init(struct tandem_client_table *t);
/*
 * Register pid as the owner of instance_ptr.  Re-registering the same
 * pointer for the same pid is a no-op; for another pid it is -EEXIST (a
 * channel has one owner).  -ENOSPC when full, -EINVAL for pid <= 0 or ptr 0.
 */
int tandem_clients_add(struct tandem_client_table *t, u64 instance_ptr, s32 pid);
/* Remove every entry of pid (process exit).  Returns how many. */
u32 tandem_clients_remove_pid(struct tandem_client_table *t, s32 pid);
/* Remove the entry of one channel (channel destroyed).  0 or -ENOENT. */
int tandem_clients_remove_inst(struct tandem_client_table *t, u64 instance_ptr);
/* Owner of instance_ptr, or 0 if unknown. */
s32 tandem_clients_lookup(const struct tandem_client_table *t, u64 instance_ptr);

#endif /* TANDEM_CLIENT_TABLE_H */
