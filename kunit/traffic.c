// SPDX-License-Identifier: GPL-2.0
/*
 * ibpost_traffic: a test consumer that keeps WRs in flight on a device
 * while it is removed, for the guest's removal-cycle scenario.
 *
 * As an ibpost_client it starts, on every device named by the parameter
 * ibdev (rxe1 unless told), a thread that connects three RC pairs with
 * registered buffers (loopback on InfiniBand and RoCE, rdma_cm to the
 * device's own address on iWARP: the helper module ibpost_test_cm) and then posts chains of
 * signaled RDMA WRITEs and SENDs without pause, TR_AHEAD receives more
 * posted on each pair than its SENDs take, so that WRs are always in
 * flight. Every WR has a context of its own, marked outstanding from its
 * post to its completion. Its remove callback only counts, and notes how
 * many contexts were outstanding: the thread keeps posting through the
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
 *   inflight I missing M dups D
 *
 * (on one line) where I contexts were outstanding when the removal began,
 * M posted contexts never came back and D completions named a context
 * that was not outstanding (a second return, or one never posted): every
 * posted context came back exactly once when M and D are 0 and P == R.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <rdma/ibpost.h>
#include "lib/cm_connect.h"

#define PAIRS	3
#define BUFLEN	4096
#define TR_AHEAD	4	/* receives posted beyond those SENDs will take */
#define TR_WRS		1024	/* contexts: more than the pairs' queues hold */

static char *tr_ibdev = "rxe1";
module_param_named(ibdev, tr_ibdev, charp, 0444);
MODULE_PARM_DESC(ibdev, "the device to keep traffic on (default rxe1)");

struct tr_pair {
	struct ibpost_qp *a, *b;
	struct ibpost_test_cm *cm;	/* iWARP: the pair's rdma_cm ids */
	void *abuf, *bbuf, *wbuf;
	struct ibpost_mr *amr, *bmr, *wmr;
	int ahead;	/* receives posted on b less SENDs posted on a */
};

/* A WR's context: outstanding (1) from its post to its completion. */
struct tr_wr {
	atomic_t out;
};

struct tr_dev {
	struct list_head node;
	struct ibpost_dev *dev;
	char name[IB_DEVICE_NAME_MAX];
	struct tr_pair pair[PAIRS];
	struct task_struct *thread;
	atomic64_t posted, returned, flushed;
	atomic_t removes;
	atomic_t dups;	/* completions of a context not outstanding */
	int inflight;	/* contexts outstanding when the removal began */
	int setup;	/* -EINPROGRESS, then 0 or the pairs' error */
	int post_after;
	unsigned int next;	/* the thread's next context to try */
	struct tr_wr wr[TR_WRS];
};

static LIST_HEAD(tr_devs);
static DEFINE_MUTEX(tr_lock);
static struct dentry *tr_debugfs;

static void tr_done(struct ibpost_qp *qp, void *context,
		    const struct ib_wc *wc)
{
	struct tr_dev *t = ibpost_qp_priv(qp);
	struct tr_wr *w = context;

	/* Each posted context returns once, and only a posted one. */
	if (w < t->wr || w >= t->wr + TR_WRS ||
	    atomic_cmpxchg(&w->out, 1, 0) != 1)
		atomic_inc(&t->dups);
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

/* The contexts outstanding now. */
static int tr_outstanding(struct tr_dev *t)
{
	int i, n = 0;

	for (i = 0; i < TR_WRS; i++)
		n += atomic_read(&t->wr[i].out);
	return n;
}

enum tr_op { TR_RECV, TR_WRITE, TR_SEND };

/*
 * Post one WR of @op on @p under a free context, outstanding until its
 * completion (only this thread posts). @off: a WRITE's window offset.
 */
static int tr_post(struct tr_dev *t, struct tr_pair *p, enum tr_op op,
		   u32 off)
{
	struct tr_wr *w = NULL;
	int i, ret;

	for (i = 0; i < TR_WRS && !w; i++) {
		w = &t->wr[t->next++ % TR_WRS];
		if (atomic_read(&w->out))
			w = NULL;
	}
	if (!w)		/* every context out: let completions catch up */
		return -ENOMEM;
	/* Fully ordered: marked before the provider can complete it. */
	atomic_xchg(&w->out, 1);
	if (op == TR_RECV)
		ret = ibpost_post_recv(p->b, w, p->bbuf, BUFLEN, p->bmr);
	else if (op == TR_WRITE)
		ret = ibpost_post_write(p->a, w, p->abuf, 512, p->amr,
					IB_SEND_SIGNALED,
					ibpost_mr_remote_addr(p->wmr) + off,
					ibpost_mr_rkey(p->wmr));
	else
		ret = ibpost_post_send(p->a, w, p->abuf, 256, p->amr,
				       IB_SEND_SIGNALED);
	if (ret)	/* nothing queued: no completion comes for it */
		atomic_set(&w->out, 0);
	else
		atomic64_inc(&t->posted);
	return ret;
}

/*
 * One round on one pair: a receive while fewer than TR_AHEAD + 1 wait on
 * b, then WRITE, WRITE, and a SEND that takes one of them, keeping
 * TR_AHEAD receives in flight however far the SENDs have got.
 */
static int tr_round(struct tr_dev *t, struct tr_pair *p)
{
	int ret, i;

	if (p->ahead <= TR_AHEAD) {
		ret = tr_post(t, p, TR_RECV, 0);
		if (ret)
			return ret;
		p->ahead++;
	}
	for (i = 0; i < 2; i++) {
		ret = tr_post(t, p, TR_WRITE, 512 * i);
		if (ret)
			return ret;
	}
	if (p->ahead <= TR_AHEAD)
		return 0;
	ret = tr_post(t, p, TR_SEND, 0);
	if (!ret)
		p->ahead--;
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
	list_for_each_entry(t, &tr_devs, node) {
		if (t->dev != dev)
			continue;
		atomic_inc(&t->removes);
		t->inflight = tr_outstanding(t);
	}
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
		/* The device is gone: every context has come back. */
		seq_printf(m, "%s posted %lld returned %lld flushed %lld removes %d post_after %d inflight %d missing %d dups %d\n",
			   t->name, atomic64_read(&t->posted),
			   atomic64_read(&t->returned),
			   atomic64_read(&t->flushed), atomic_read(&t->removes),
			   t->post_after, t->inflight, tr_outstanding(t),
			   atomic_read(&t->dups));
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
MODULE_IMPORT_NS(IBPOST_TEST_NS);
