// SPDX-License-Identifier: GPL-2.0
/*
 * debugfs: /sys/kernel/debug/ibpost/, root only.
 *
 *   devices         one line per device ibpost holds: "<name> qps <n>"
 *   <ibdev>/qps     one line per QP: "qpn <n> type <RC|UD> sq <used>/<depth>
 *                   rq <used>/<depth>"
 *
 * Serialization: the device list is read under the client lock, a device's
 * QP list under its qp_lock. A device's directory is removed during its
 * removal, before its QPs are torn down.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/seq_file.h>
#include "ibpost_internal.h"

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
		if (!qp->ibqp)
			continue;
		seq_printf(m, "qpn %u type %s sq %u/%u rq %u/%u\n",
			   qp->ibqp->qp_num,
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

void ibpost_debugfs_add_dev(struct ibpost_dev *dev)
{
	dev->debugfs = debugfs_create_dir(dev->name, ibpost_debugfs_root);
	debugfs_create_file("qps", 0400, dev->debugfs, dev, &qps_fops);
}

void ibpost_debugfs_remove_dev(struct ibpost_dev *dev)
{
	debugfs_remove_recursive(dev->debugfs);
	dev->debugfs = NULL;
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
