// SPDX-License-Identifier: MIT
/* decision_log.c - see decision_log.h. */
#include "decision_log.h"

void tandem_log_init(struct tandem_log *log)
{
	memset(log, 0, sizeof(*log));
	log->next_seq = 1;
}

u64 tandem_log_add(struct tandem_log *log, const struct tandem_log_entry *e)
{
	struct tandem_counters *c = &log->c;
	struct tandem_log_entry *slot;
	u64 seq = log->next_seq++;

	c->faults_seen++;
	if (e->action < TANDEM_ACT_COUNT) {
		c->actions[e->action]++;
		c->latency_sum_ns[e->action] += e->latency_ns;
		if (e->latency_ns > c->latency_max_ns[e->action])
			c->latency_max_ns[e->action] = e->latency_ns;
	}
	if (e->scenario < TANDEM_SCN_COUNT)
		c->scenarios[e->scenario]++;
	if (e->action == TANDEM_ACT_STOCK && e->stock_reason < TANDEM_STOCK_COUNT)
		c->stock_reasons[e->stock_reason]++;

	slot = &log->ring[(seq - 1) % TANDEM_RING_SIZE];
	*slot = *e;
	slot->seq = seq;
	return seq;
}

u32 tandem_log_count(const struct tandem_log *log)
{
	u64 n = log->next_seq - 1;

	return n < TANDEM_RING_SIZE ? (u32)n : TANDEM_RING_SIZE;
}

const struct tandem_log_entry *tandem_log_at(const struct tandem_log *log, u32 i)
{
	u32 n = tandem_log_count(log);
	u64 first = log->next_seq - n; /* seq of the oldest held entry */

	if (i >= n)
		return NULL;
	return &log->ring[(first + i - 1) % TANDEM_RING_SIZE];
}
