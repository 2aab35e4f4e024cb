// SPDX-License-Identifier: GPL-2.0
/*
 * tandem_uvm_isolate_fs.c - read-only views of the isolator:
 *   /sys/module/tandem_uvm_isolate/parameters/enabled   (rw run-time switch)
 *   /sys/module/tandem_uvm_isolate/stats/<counter>      (one number each)
 *   /sys/kernel/debug/tandem_uvm_isolate/stats          (all counters)
 *   /sys/kernel/debug/tandem_uvm_isolate/decisions      (recent decisions)
 *   /sys/kernel/debug/tandem_uvm_isolate/pool           (dummy pool)
 */
#include <linux/module.h>
#include <linux/debugfs.h>
#include <linux/seq_file.h>
#include <linux/sysfs.h>
#include <linux/kobject.h>
#include <linux/mm.h>
#include "tandem_uvm_isolate.h"

static int stats_show(struct seq_file *m, void *v)
{
	struct tandem_counters c;
	unsigned int i;

	mutex_lock(&tandem_iso.lock);
	c = tandem_iso.log.c;
	mutex_unlock(&tandem_iso.lock);

	seq_printf(m, "enabled %d\n", READ_ONCE(tandem_iso_enabled));
	seq_printf(m, "faults_seen %llu\n", c.faults_seen);
	for (i = 0; i < TANDEM_ACT_COUNT; i++) {
		u64 n = c.actions[i];

		seq_printf(m, "action %s count %llu lat_avg_ns %llu lat_max_ns %llu\n",
			   tandem_action_name(i), n,
			   n ? c.latency_sum_ns[i] / n : 0, c.latency_max_ns[i]);
	}
	for (i = 0; i < TANDEM_SCN_COUNT; i++)
		seq_printf(m, "scenario %s %llu\n", tandem_scenario_name(i), c.scenarios[i]);
	for (i = 1; i < TANDEM_STOCK_COUNT; i++)
		seq_printf(m, "stock_reason %s %llu\n", tandem_stock_reason_name(i),
			   c.stock_reasons[i]);
	seq_printf(m, "kills_queued %llu\nkills_done %llu\nkills_failed %llu\n",
		   c.kills_queued, c.kills_done, c.kills_failed);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(stats);

static int decisions_show(struct seq_file *m, void *v)
{
	u32 i, n;

	seq_puts(m, "# seq time_ns address instance_ptr engine scenario mechanism pid latency_ns stock_reason\n");
	mutex_lock(&tandem_iso.lock);
	n = tandem_log_count(&tandem_iso.log);
	for (i = 0; i < n; i++) {
		const struct tandem_log_entry *e = tandem_log_at(&tandem_iso.log, i);

		seq_printf(m, "%llu %llu 0x%llx 0x%llx %s %s %s %d %llu %s\n",
			   e->seq, e->time_ns, e->address, e->instance_ptr,
			   tandem_engine_name(e->engine),
			   tandem_scenario_name(e->scenario),
			   tandem_action_name(e->action), e->pid, e->latency_ns,
			   tandem_stock_reason_name(e->stock_reason));
	}
	mutex_unlock(&tandem_iso.lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(decisions);

static int pool_show(struct seq_file *m, void *v)
{
	struct tandem_pool *p = &tandem_iso.pool;
	unsigned int c, i;

	mutex_lock(&tandem_iso.lock);
	for (c = 0; c < TANDEM_POOL_NCLASSES; c++) {
		u64 size = tandem_pool_class_size(c);

		seq_printf(m, "class %llu installs %llu releases %llu scrubs %llu exhausted %llu\n",
			   size, p->stats.installs[c], p->stats.releases[c],
			   p->stats.scrubs[c], p->stats.exhausted[c]);
		for (i = 0; i < p->nslots[c]; i++)
			seq_printf(m, "page %llu pfn 0x%lx refs %u nonzero %llu\n", size,
				   page_to_pfn(virt_to_page(p->slot[c][i].page)), p->slot[c][i].refs,
				   tandem_pool_nonzero_bytes(p->slot[c][i].page, size));
	}
	mutex_unlock(&tandem_iso.lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(pool);

/* sysfs: one value per file, for monitoring agents that do not mount debugfs. */
static u64 counter_value(const char *name)
{
	struct tandem_counters *c = &tandem_iso.log.c;
	u64 v = 0;

	mutex_lock(&tandem_iso.lock);
	if (!strcmp(name, "faults_seen"))
		v = c->faults_seen;
	else if (!strcmp(name, "ignored"))
		v = c->actions[TANDEM_ACT_IGNORE];
	else if (!strcmp(name, "stock"))
		v = c->actions[TANDEM_ACT_STOCK];
	else if (!strcmp(name, "m1"))
		v = c->actions[TANDEM_ACT_M1];
	else if (!strcmp(name, "m2"))
		v = c->actions[TANDEM_ACT_M2];
	else if (!strcmp(name, "m3"))
		v = c->actions[TANDEM_ACT_M3];
	else if (!strcmp(name, "kills_done"))
		v = c->kills_done;
	mutex_unlock(&tandem_iso.lock);
	return v;
}

/* The module kobject dispatches through struct module_attribute, not kobj_attribute. */
static ssize_t counter_show(struct module_attribute *a, struct module_kobject *mk, char *buf)
{
	return sysfs_emit(buf, "%llu\n", counter_value(a->attr.name));
}

#define TANDEM_COUNTER_ATTR(n) \
	static struct module_attribute attr_##n = __ATTR(n, 0444, counter_show, NULL)
TANDEM_COUNTER_ATTR(faults_seen);
TANDEM_COUNTER_ATTR(ignored);
TANDEM_COUNTER_ATTR(stock);
TANDEM_COUNTER_ATTR(m1);
TANDEM_COUNTER_ATTR(m2);
TANDEM_COUNTER_ATTR(m3);
TANDEM_COUNTER_ATTR(kills_done);

static struct attribute *stats_attrs[] = {
	&attr_faults_seen.attr, &attr_ignored.attr, &attr_stock.attr,
	&attr_m1.attr, &attr_m2.attr, &attr_m3.attr, &attr_kills_done.attr,
	NULL,
};

static const struct attribute_group stats_group = {
	.name = "stats",
	.attrs = stats_attrs,
};

int tandem_iso_fs_init(void)
{
	struct dentry *dir;
	int err;

	err = sysfs_create_group(&THIS_MODULE->mkobj.kobj, &stats_group);
	if (err)
		return err;

	/* debugfs failures are not fatal: the isolator works without its views. */
	dir = debugfs_create_dir(KBUILD_MODNAME, NULL);
	tandem_iso.dbg_dir = IS_ERR(dir) ? NULL : dir;
	if (!tandem_iso.dbg_dir)
		return 0;
	debugfs_create_file("stats", 0444, dir, NULL, &stats_fops);
	debugfs_create_file("decisions", 0444, dir, NULL, &decisions_fops);
	debugfs_create_file("pool", 0444, dir, NULL, &pool_fops);

	if (tandem_iso_test_iface) {
		err = tandem_iso_test_init(dir);
		if (err)
			goto out_err;
	}
	return 0;

out_err:
	debugfs_remove_recursive(dir);
	tandem_iso.dbg_dir = NULL;
	sysfs_remove_group(&THIS_MODULE->mkobj.kobj, &stats_group);
	return err;
}

void tandem_iso_fs_exit(void)
{
	/* Remove the files first so no reader or injector is inside the module. */
	debugfs_remove_recursive(tandem_iso.dbg_dir);
	tandem_iso.dbg_dir = NULL;
	if (tandem_iso_test_iface)
		tandem_iso_test_exit();
	sysfs_remove_group(&THIS_MODULE->mkobj.kobj, &stats_group);
}
