// SPDX-License-Identifier: GPL-2.0
/*
 * ibpost_traffic: a test consumer that keeps WRs in flight on a device
 * while it is removed, for the guest's removal-cycle scenario.
 *
 * As an ibpost_client it starts, on every device named by the parameter
 * ibdev (rxe1 unless told), a thread that connects three RC pairs with
 * registered buffers (loopback on InfiniBand and RoCE, rdma_cm to the
 * device's own address on iWARP: cm_connect.c) and then posts chains of
 * signaled RDMA WRITEs and SENDs (receives posted ahead) without pause.
 * Its remove callback only counts: the thread keeps posting through the
 * removal (its posts must start failing with -ENODEV), and the QPs are
 * left to ibpost, which must return every outstanding context flushed.
 *
 * Reading /sys/kernel/debug/ibpost_traffic (root only) prints, for a
 * device still there, how far its thread got:
 *
 *   <ibdev> live posted P setup S
 *
 * (S: 0 once the pairs are connected, else the error), and finishes the
 * devices that went away (stops the thread, checks a last post, destroys
 * the QPs), one line each:
 *
 *   <ibdev> posted P returned R flushed F removes N post_after E
 *
 * where every posted context came back exactly once when P == R.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <rdma/ibpost.h>
#include "cm_connect.h"

#define PAIRS	3
#define BUFLEN	4096

static char *tr_ibdev = "rxe1";
module_param_named(ibdev, tr_ibdev, charp, 0444);
MODULE_PARM_DESC(ibdev, "the device to keep traffic on (default rxe1)");

struct tr_pair {
	struct ibpost_qp *a, *b;
	struct ibpost_test_cm *cm;	/* iWARP: the pair's rdma_cm ids */
	void *abuf, *bbuf, *wbuf;
	struct ibpost_mr *amr, *bmr, *wmr;
};

struct tr_dev {
	struct list_head node;
	struct ibpost_dev *dev;
	char name[IB_DEVICE_NAME_MAX];
	struct tr_pair pair[PAIRS];
	struct task_struct *thread;
	atomic64_t posted, returned, flushed;
	atomic_t removes;
	int setup;	/* -EINPROGRESS, then 0 or the pairs' error */
	int post_after;
};

static LIST_HEAD(tr_devs);
static DEFINE_MUTEX(tr_lock);
static struct dentry *tr_debugfs;

static void tr_done(struct ibpost_qp *qp, void *context,
		    const struct ib_wc *wc)
{
	struct tr_dev *t = ibpost_qp_priv(qp);

	atomic64_inc(&t->returned);
	if (wc->status == IB_WC_WR_FLUSH_ERR)
		atomic64_inc(&t->flushed);
}

static void tr_pair_free(struct tr_pair *p)
{
	ibpost_qp_destroy(p->a);
	ibpost_qp_destroy(p->b);
	if (!IS_ERR_OR_NULL(p->amr))
		ibpost_dereg_mr(p->amr);
	if (!IS_ERR_OR_NULL(p->bmr))
		ibpost_dereg_mr(p->bmr);
	if (!IS_ERR_OR_NULL(p->wmr))
		ibpost_dereg_mr(p->wmr);
	kfree(p->abuf);
	kfree(p->bbuf);
	kfree(p->wbuf);
	ibpost_test_cm_free(p->cm);
}

static int tr_pair_init(struct tr_dev *t, struct tr_pair *p)
{
	struct ibpost_qp_attr attr = {
		.qp_type = IB_QPT_RC,
		.max_send_wr = 32, .max_recv_wr = 32,
		.max_send_sge = 1, .max_recv_sge = 1,
		.send_done = tr_done, .recv_done = tr_done,
		.priv = t,
	};
	int ret;

	ret = ibpost_test_connect_pair(t->dev, &attr, &attr, &p->a, &p->b,
				       &p->cm);
	if (ret)
		return ret;
	p->abuf = kzalloc(BUFLEN, GFP_KERNEL);
	p->bbuf = kzalloc(BUFLEN, GFP_KERNEL);
	p->wbuf = kzalloc(BUFLEN, GFP_KERNEL);
	if (!p->abuf || !p->bbuf || !p->wbuf)
		return -ENOMEM;
	p->amr = ibpost_reg_msgs(t->dev, p->abuf, BUFLEN);
	p->bmr = ibpost_reg_msgs(t->dev, p->bbuf, BUFLEN);
	p->wmr = ibpost_reg_write(p->b, p->wbuf, BUFLEN);
	if (IS_ERR(p->amr) || IS_ERR(p->bmr) || IS_ERR(p->wmr))
		return -ENOMEM;
	return 0;
}

/* One round on one pair: receives ahead, then WRITE, WRITE, SEND. */
static int tr_round(struct tr_dev *t, struct tr_pair *p)
{
	u64 raddr = ibpost_mr_remote_addr(p->wmr);
	u32 rkey = ibpost_mr_rkey(p->wmr);
	int ret, i;

	ret = ibpost_post_recv(p->b, t, p->bbuf, BUFLEN, p->bmr);
	if (ret)
		return ret;
	atomic64_inc(&t->posted);
	for (i = 0; i < 2; i++) {
		ret = ibpost_post_write(p->a, t, p->abuf, 512, p->amr,
					IB_SEND_SIGNALED, raddr + 512 * i, rkey);
		if (ret)
			return ret;
		atomic64_inc(&t->posted);
	}
	ret = ibpost_post_send(p->a, t, p->abuf, 256, p->amr,
			       IB_SEND_SIGNALED);
	if (!ret)
		atomic64_inc(&t->posted);
	return ret;
}

static int tr_thread(void *arg)
{
	struct tr_dev *t = arg;
	int i, ret = 0;

	/* Connecting takes long on iWARP: not in the add callback. */
	for (i = 0; i < PAIRS && !ret; i++)
		ret = tr_pair_init(t, &t->pair[i]);
	if (ret) {
		pr_err("%s: setup failed: %d\n", t->name, ret);
		/* A removal under way waits for the pairs' rdma_cm ids. */
		for (i = 0; i < PAIRS; i++) {
			tr_pair_free(&t->pair[i]);
			memset(&t->pair[i], 0, sizeof(t->pair[i]));
		}
	}
	WRITE_ONCE(t->setup, ret);
	if (ret)
		goto out_idle;
	while (!kthread_should_stop()) {
		for (i = 0; i < PAIRS; i++) {
			ret = tr_round(t, &t->pair[i]);
			if (ret == -ENODEV) {
				t->post_after = ret;
				goto out_idle;
			}
		}
		/* -ENOMEM: the queues are full; let completions catch up. */
		usleep_range(200, 400);
	}
	return 0;

out_idle:
	while (!kthread_should_stop())
		msleep(20);
	return 0;
}

static void tr_free(struct tr_dev *t)
{
	int i;

	if (t->thread) {
		kthread_stop(t->thread);
		put_task_struct(t->thread);
	}
	for (i = 0; i < PAIRS; i++)
		tr_pair_free(&t->pair[i]);
	ibpost_dev_put(t->dev);
	kfree(t);
}

static void tr_add(struct ibpost_dev *dev)
{
	struct ib_device *ibdev = ibpost_dev_ibdev(dev);
	struct tr_dev *t;

	if (!ibdev || strcmp(dev_name(&ibdev->dev), tr_ibdev))
		return;
	t = kzalloc(sizeof(*t), GFP_KERNEL);
	if (!t)
		return;
	strscpy(t->name, dev_name(&ibdev->dev), sizeof(t->name));
	t->setup = -EINPROGRESS;
	t->dev = ibpost_dev_get(t->name);
	if (IS_ERR(t->dev)) {
		kfree(t);
		return;
	}
	t->thread = kthread_run(tr_thread, t, "ibpost_traffic");
	if (IS_ERR(t->thread)) {
		t->thread = NULL;
		tr_free(t);
		return;
	}
	get_task_struct(t->thread);
	mutex_lock(&tr_lock);
	list_add_tail(&t->node, &tr_devs);
	mutex_unlock(&tr_lock);
}

static void tr_remove(struct ibpost_dev *dev)
{
	struct tr_dev *t;

	/* Only count: the thread keeps posting through the removal. */
	mutex_lock(&tr_lock);
	list_for_each_entry(t, &tr_devs, node)
		if (t->dev == dev)
			atomic_inc(&t->removes);
	mutex_unlock(&tr_lock);
}

static struct ibpost_client tr_client = {
	.name = "ibpost_traffic",
	.add = tr_add,
	.remove = tr_remove,
};

static int tr_show(struct seq_file *m, void *unused)
{
	struct tr_dev *t, *tmp;

	mutex_lock(&tr_lock);
	list_for_each_entry_safe(t, tmp, &tr_devs, node) {
		if (ibpost_dev_ibdev(t->dev)) {	/* still there */
			seq_printf(m, "%s live posted %lld setup %d\n", t->name,
				   atomic64_read(&t->posted),
				   READ_ONCE(t->setup));
			continue;
		}
		kthread_stop(t->thread);
		put_task_struct(t->thread);
		t->thread = NULL;
		if (!t->post_after && !t->setup)
			t->post_after = ibpost_post_send(t->pair[0].a, t,
							 t->pair[0].abuf, 8,
							 t->pair[0].amr, 0);
		seq_printf(m, "%s posted %lld returned %lld flushed %lld removes %d post_after %d\n",
			   t->name, atomic64_read(&t->posted),
			   atomic64_read(&t->returned),
			   atomic64_read(&t->flushed), atomic_read(&t->removes),
			   t->post_after);
		list_del(&t->node);
		tr_free(t);
	}
	mutex_unlock(&tr_lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(tr);

static int __init tr_init(void)
{
	tr_debugfs = debugfs_create_file("ibpost_traffic", 0400, NULL, NULL,
					 &tr_fops);
	return ibpost_register_client(&tr_client);
}

static void __exit tr_exit(void)
{
	struct tr_dev *t, *tmp;

	debugfs_remove(tr_debugfs);
	/* Stop the threads before the devices' remove callbacks run. */
	mutex_lock(&tr_lock);
	list_for_each_entry(t, &tr_devs, node) {
		kthread_stop(t->thread);
		put_task_struct(t->thread);
		t->thread = NULL;
	}
	mutex_unlock(&tr_lock);
	ibpost_unregister_client(&tr_client);
	list_for_each_entry_safe(t, tmp, &tr_devs, node) {
		list_del(&t->node);
		tr_free(t);
	}
}

module_init(tr_init);
module_exit(tr_exit);

MODULE_DESCRIPTION("ibpost test consumer keeping traffic up through device removal");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(IBPOST_NS);
