// SPDX-License-Identifier: MIT
/* client_table.c - see client_table.h. */
#include "client_table.h"

static u64 inst_key(u64 instance_ptr)
{
	return instance_ptr & ~(TANDEM_INST_ALIGN - 1);
}

void tandem_clients_init(struct tandem_client_table *t)
{
	memset(t, 0, sizeof(*t));
}

int tandem_clients_add(struct tandem_client_table *t, u64 instance_ptr, s32 pid)
{
	u64 key = inst_key(instance_ptr);
	u32 i;

	if (pid <= 0 || key == 0)
		return -EINVAL;
	for (i = 0; i < t->count; i++) {
		if (t->entry[i].instance_ptr != key)
			continue;
		return t->entry[i].pid == pid ? 0 : -EEXIST;
	}
	if (t->count >= TANDEM_CLIENT_MAX)
		return -ENOSPC;
	t->entry[t->count].instance_ptr = key;
	t->entry[t->count].pid = pid;
	t->count++;
	return 0;
}

u32 tandem_clients_remove_pid(struct tandem_client_table *t, s32 pid)
{
	u32 i = 0, removed = 0;

	while (i < t->count) {
		if (t->entry[i].pid == pid) {
			/* Order does not matter: move the last entry into the hole. */
			t->entry[i] = t->entry[t->count - 1];
			t->count--;
			removed++;
		} else {
			i++;
		}
	}
	return removed;
}

int tandem_clients_remove_inst(struct tandem_client_table *t, u64 instance_ptr)
{
	u64 key = inst_key(instance_ptr);
	u32 i;

	for (i = 0; i < t->count; i++) {
		if (t->entry[i].instance_ptr != key)
			continue;
		t->entry[i] = t->entry[t->count - 1];
		t->count--;
		return 0;
	}
	return -ENOENT;
}

s32 tandem_clients_lookup(const struct tandem_client_table *t, u64 instance_ptr)
{
	u64 key = inst_key(instance_ptr);
	u32 i;

	if (key == 0)
		return 0;
	for (i = 0; i < t->count; i++)
		if (t->entry[i].instance_ptr == key)
			return t->entry[i].pid;
	return 0;
}
