/* SPDX-License-Identifier: MIT */
/*
 * decision_log.h - counters and a fixed ring of the most recent decisions,
 * what sysfs/debugfs show.  Caller locks.
 */
#ifndef TANDEM_DECISION_LOG_H
#define TANDEM_DECISION_LOG_H

#include "tandem_compat.h"
#include "fault_policy.h"

#define TANDEM_RING_SIZE 64

struct tandem_log_entry {
	u64 seq;		/* 1-based, monotonically increasing */
	u64 time_ns;		/* when the fault was handled (clock of caller) */
	u64 address;
	u64 instance_ptr;
	u64 latency_ns;		/* hook entry -> mechanism done, kill queued */
	s32 pid;		/* client killed, 0 if none */
	u8 action;
	u8 scenario;
	u8 stock_reason;
	u8 engine;
};

struct tandem_counters {
	u64 faults_seen;
	u64 actions[TANDEM_ACT_COUNT];
	u64 scenarios[TANDEM_SCN_COUNT];
	u64 stock_reasons[TANDEM_STOCK_COUNT];
	u64 kills_queued;
	u64 kills_done;
	u64 kills_failed;	/* owner already gone */
	u64 latency_sum_ns[TANDEM_ACT_COUNT];
	u64 latency_max_ns[TANDEM_ACT_COUNT];
};

struct tandem_log {
	u64 next_seq;
	struct tandem_counters c;
	struct tandem_log_entry ring[TANDEM_RING_SIZE];
};

void tandem_log_init(struct tandem_log *log);
/* Count e and store it in the ring, overwriting the oldest; returns its seq. */
u64 tandem_log_add(struct tandem_log *log, const struct tandem_log_entry *e);
/* Number of entries currently held (<= TANDEM_RING_SIZE). */
u32 tandem_log_count(const struct tandem_log *log);
/* i-th held entry, oldest first; NULL if out of range. */
const struct tandem_log_entry *tandem_log_at(const struct tandem_log *log, u32 i);

#endif /* TANDEM_DECISION_LOG_H */
