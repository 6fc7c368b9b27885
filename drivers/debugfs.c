// SPDX-License-Identifier: GPL-2.0
/*
 * debugfs: /sys/kernel/debug/ibpost/, root only.
 *
 *   devices         one line per device ibpost holds: "<name> qps <n>"
 *   <ibdev>/stats   the device's counters, "key value" lines: QPs, and
 *                   per queue kind the sums over its live QPs and those
 *                   destroyed since the device appeared
 *   <ibdev>/qps     one line per QP: "qpn <n> type <RC|UD> sq <used>/<depth>
 *                   rq <used>/<depth>"
 *   <ibdev>/qp<n>   the QP's counters, "key value" lines: state, slots in
 *                   use, and per queue posted, completed, flushed, failed,
 *                   forced signals and refusals by errno
 *
 * Serialization: the device list is read under ibpost_dev_lock, a device's
 * QP list under its qp_lock. A device's directory is removed during its
 * removal, before its QPs are torn down.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/seq_file.h>
#include "qp_core.h"

static struct dentry *ibpost_debugfs_root;

static int devices_show(struct seq_file *m, void *unused)
{
	ibpost_show_devs(m);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(devices);

static int qps_show(struct seq_file *m, void *unused)
{
	struct ibpost_dev *dev = m->private;
	struct ibpost_qp *qp;

	mutex_lock(&dev->qp_lock);
	list_for_each_entry(qp, &dev->qps, node) {
		if (!READ_ONCE(qp->rqp.ibqp))
			continue;
		seq_printf(m, "qpn %u type %s sq %u/%u rq %u/%u\n",
			   qp->rqp.qpn,
			   qp->attr.qp_type == IB_QPT_UD ? "UD" : "RC",
			   READ_ONCE(qp->sq.head) - READ_ONCE(qp->sq.tail),
			   qp->sq.depth,
			   READ_ONCE(qp->rq.head) - READ_ONCE(qp->rq.tail),
			   qp->rq.depth);
	}
	mutex_unlock(&dev->qp_lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(qps);

static const char *const ibpost_state_names[] = {
	[IB_QPS_RESET] = "RESET", [IB_QPS_INIT] = "INIT", [IB_QPS_RTR] = "RTR",
	[IB_QPS_RTS] = "RTS", [IB_QPS_SQD] = "SQD", [IB_QPS_SQE] = "SQE",
	[IB_QPS_ERR] = "ERR",
};

/* A queue's counters and slots in use, consistent with each other. */
static u32 ibpost_queue_snapshot(struct ibpost_queue *q,
				 struct ibpost_stats *st)
{
	u32 used;
	unsigned long flags;

	spin_lock_irqsave(&q->lock, flags);
	*st = q->stats;
	used = q->head - q->tail;
	spin_unlock_irqrestore(&q->lock, flags);
	return used;
}

/*
 * Add a queue's counters @st to the sums @sum: a device's, shown here, or
 * those of its retired QPs (qp.c).
 */
void ibpost_stats_add(struct ibpost_stats *sum, const struct ibpost_stats *st)
{
	sum->posted += st->posted;
	sum->completed += st->completed;
	sum->flushed += st->flushed;
	sum->failed += st->failed;
	sum->forced_signals += st->forced_signals;
	sum->refused.einval += st->refused.einval;
	sum->refused.enomem += st->refused.enomem;
	sum->refused.enotconn += st->refused.enotconn;
	sum->refused.enodev += st->refused.enodev;
	sum->refused.other += st->refused.other;
}

static void ibpost_show_stats(struct seq_file *m, const char *pfx,
			      const struct ibpost_stats *st, u32 used,
			      bool is_send)
{
	seq_printf(m, "%s_in_use %u\n", pfx, used);
	seq_printf(m, "%s_posted %llu\n%s_completed %llu\n", pfx, st->posted,
		   pfx, st->completed);
	seq_printf(m, "%s_flushed %llu\n%s_failed %llu\n", pfx, st->flushed,
		   pfx, st->failed);
	if (is_send)
		seq_printf(m, "%s_forced_signals %llu\n", pfx,
			   st->forced_signals);
	seq_printf(m, "%s_refused_einval %llu\n%s_refused_enomem %llu\n",
		   pfx, st->refused.einval, pfx, st->refused.enomem);
	seq_printf(m, "%s_refused_enotconn %llu\n%s_refused_enodev %llu\n",
		   pfx, st->refused.enotconn, pfx, st->refused.enodev);
	seq_printf(m, "%s_refused_other %llu\n", pfx, st->refused.other);
}

static void ibpost_show_queue(struct seq_file *m, struct ibpost_queue *q,
			      const char *pfx)
{
	struct ibpost_stats st;
	u32 used = ibpost_queue_snapshot(q, &st);

	seq_printf(m, "%s_depth %u\n", pfx, q->depth);
	ibpost_show_stats(m, pfx, &st, used, q->is_send);
}

static int stats_show(struct seq_file *m, void *unused)
{
	struct ibpost_dev *dev = m->private;
	struct ibpost_stats sum[2], st;
	u32 used[2] = {};
	struct ibpost_qp *qp;

	mutex_lock(&dev->qp_lock);
	sum[0] = dev->retired[0];
	sum[1] = dev->retired[1];
	list_for_each_entry(qp, &dev->qps, node) {
		used[0] += ibpost_queue_snapshot(&qp->sq, &st);
		ibpost_stats_add(&sum[0], &st);
		used[1] += ibpost_queue_snapshot(&qp->rq, &st);
		ibpost_stats_add(&sum[1], &st);
	}
	seq_printf(m, "qps %u\n", dev->nr_qps);
	mutex_unlock(&dev->qp_lock);
	ibpost_show_stats(m, "send", &sum[0], used[0], true);
	ibpost_show_stats(m, "recv", &sum[1], used[1], false);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(stats);

static int qp_show(struct seq_file *m, void *unused)
{
	struct ibpost_qp *qp = m->private;
	enum ib_qp_state state = READ_ONCE(qp->rqp.state);

	seq_printf(m, "type %s\nstate %s\n",
		   qp->attr.qp_type == IB_QPT_UD ? "UD" : "RC",
		   state < ARRAY_SIZE(ibpost_state_names) ?
		   ibpost_state_names[state] : "?");
	ibpost_show_queue(m, &qp->sq, "send");
	ibpost_show_queue(m, &qp->rq, "recv");
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(qp);

/* dev->debugfs, under qp_lock, is the device's directory until removal. */
void ibpost_debugfs_add_qp(struct ibpost_qp *qp)
{
	char name[24];

	lockdep_assert_held(&qp->dev->qp_lock);
	if (!qp->dev->debugfs)
		return;
	snprintf(name, sizeof(name), "qp%u", qp->rqp.ibqp->qp_num);
	qp->debugfs = debugfs_create_file(name, 0400, qp->dev->debugfs, qp,
					  &qp_fops);
}

void ibpost_debugfs_remove_qp(struct ibpost_qp *qp)
{
	lockdep_assert_held(&qp->dev->qp_lock);
	debugfs_remove(qp->debugfs);
	qp->debugfs = NULL;
}

void ibpost_debugfs_add_dev(struct ibpost_dev *dev)
{
	dev->debugfs = debugfs_create_dir(dev->name, ibpost_debugfs_root);
	debugfs_create_file("qps", 0400, dev->debugfs, dev, &qps_fops);
	debugfs_create_file("stats", 0400, dev->debugfs, dev, &stats_fops);
}

/*
 * The device's directory follows a rename, so that a later device of the
 * old name gets its own. A failed rename (a directory of the new name
 * left by nobody) keeps the old one: the files still work.
 */
void ibpost_debugfs_rename_dev(struct ibpost_dev *dev, const char *name)
{
	struct dentry *d;

	mutex_lock(&dev->qp_lock);
	if (!IS_ERR_OR_NULL(dev->debugfs)) {
		d = debugfs_rename(ibpost_debugfs_root, dev->debugfs,
				   ibpost_debugfs_root, name);
		if (IS_ERR(d))
			pr_warn_ratelimited("%s: debugfs directory keeps its old name: %pe\n",
					    name, d);
	}
	mutex_unlock(&dev->qp_lock);
}

void ibpost_debugfs_remove_dev(struct ibpost_dev *dev)
{
	struct dentry *dir;
	struct ibpost_qp *qp;

	/*
	 * The QP files go with the directory: forget them first. The
	 * directory itself is removed without qp_lock, which its "qps"
	 * reader takes (removal waits for readers).
	 */
	mutex_lock(&dev->qp_lock);
	list_for_each_entry(qp, &dev->qps, node)
		ibpost_debugfs_remove_qp(qp);
	dir = dev->debugfs;
	dev->debugfs = NULL;
	mutex_unlock(&dev->qp_lock);
	debugfs_remove_recursive(dir);
}

void ibpost_debugfs_init(void)
{
	ibpost_debugfs_root = debugfs_create_dir(KBUILD_MODNAME, NULL);
	debugfs_create_file("devices", 0400, ibpost_debugfs_root, NULL,
			    &devices_fops);
	ibpost_fault_init(ibpost_debugfs_root);
}

void ibpost_debugfs_exit(void)
{
	ibpost_fault_exit();
	debugfs_remove_recursive(ibpost_debugfs_root);
	ibpost_debugfs_root = NULL;
}
