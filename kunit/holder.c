// SPDX-License-Identifier: GPL-2.0
/*
 * ibpost_holder: a test consumer for the device add/remove scenarios run
 * by the test guest's init script.
 *
 * As an ibpost_client it makes, on every device it is told about, a
 * connected RC pair with receives posted on one side, and keeps them: a
 * loopback connection on InfiniBand and RoCE, rdma_cm to the address of
 * the device's netdev on iWARP (the helper module ibpost_test_cm). Its
 * remove callback deliberately leaves the QPs alone, so that ibpost's own
 * removal path has to flush them. At module exit it reports, for every
 * device that went away meanwhile, how many receive contexts came back
 * and what a post on the dead QP returned:
 *
 *   ibpost_holder: <ibdev> removed: posted N returned N flushed N post -19
 *
 * It also registers a buffer for remote write on one QP and RDMA-writes a
 * message into it from the other, so that the guest can find the holder
 * credited for its QPs, CQs and MR in "rdma resource show", and a post
 * and its completion in the ibpost trace events.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/slab.h>
#include <linux/completion.h>
#include <rdma/ibpost.h>
#include "lib/cm_connect.h"

#define HOLDER_RECVS 16
#define HOLDER_MSG "ibpost_holder was here"

struct holder_entry {
	struct list_head node;
	struct ibpost_dev *dev;
	struct ibpost_qp *a, *b;
	struct ibpost_test_cm *cm;	/* iWARP: the pair's rdma_cm ids */
	char name[IB_DEVICE_NAME_MAX];
	bool removed;
	atomic_t returned, flushed;
	int posted;
	struct ibpost_mr *mr;
	char target[64], msg[sizeof(HOLDER_MSG)];
	struct completion written;
	enum ib_wc_status write_status;
};

static LIST_HEAD(holder_entries);
static DEFINE_MUTEX(holder_lock);

static void holder_recv_done(struct ibpost_qp *qp, void *context,
			     const struct ib_wc *wc)
{
	struct holder_entry *e = ibpost_qp_priv(qp);

	atomic_inc(&e->returned);
	if (wc->status == IB_WC_WR_FLUSH_ERR)
		atomic_inc(&e->flushed);
}

static void holder_send_done(struct ibpost_qp *qp, void *context,
			     const struct ib_wc *wc)
{
	struct holder_entry *e = context;

	e->write_status = wc->status;
	complete(&e->written);
}

/* RDMA-write HOLDER_MSG from a into a buffer registered on b. */
static int holder_write(struct holder_entry *e)
{
	int ret;

	e->mr = ibpost_reg_write(e->b, e->target, sizeof(e->target));
	if (IS_ERR(e->mr)) {
		ret = PTR_ERR(e->mr);
		e->mr = NULL;
		return ret;
	}
	strscpy(e->msg, HOLDER_MSG, sizeof(e->msg));
	ret = ibpost_post_write(e->a, e, e->msg, sizeof(e->msg), NULL,
				IB_SEND_INLINE | IB_SEND_SIGNALED,
				ibpost_mr_remote_addr(e->mr),
				ibpost_mr_rkey(e->mr));
	if (ret)
		return ret;
	if (!wait_for_completion_timeout(&e->written, 30 * HZ))
		return -ETIMEDOUT;
	if (e->write_status != IB_WC_SUCCESS)
		return -EIO;
	return strcmp(e->target, HOLDER_MSG) ? -EBADMSG : 0;
}

/* The MR and the QPs, then the pair's rdma_cm ids (iWARP), then @e. */
static void holder_free(struct holder_entry *e)
{
	ibpost_dereg_mr(e->mr);
	ibpost_qp_destroy(e->b);
	ibpost_qp_destroy(e->a);
	ibpost_test_cm_free(e->cm);
	kfree(e);
}

static void holder_add(struct ibpost_dev *dev)
{
	struct ibpost_qp_attr attr = {
		.qp_type = IB_QPT_RC,
		.max_send_wr = 8, .max_recv_wr = HOLDER_RECVS,
		.max_send_sge = 1, .max_recv_sge = 1,
		.max_inline_data = 64,
		.send_done = holder_send_done,
		.recv_done = holder_recv_done,
	};
	struct ib_recv_wr wr[HOLDER_RECVS] = {};
	struct holder_entry *e;
	int i, ret;

	e = kzalloc(sizeof(*e), GFP_KERNEL);
	if (!e)
		return;
	attr.priv = e;
	init_completion(&e->written);
	strscpy(e->name, dev_name(&ibpost_dev_ibdev(dev)->dev),
		sizeof(e->name));
	ret = ibpost_test_connect_pair(dev, &attr, &attr, &e->a, &e->b,
				       &e->cm);
	if (ret) {
		pr_err("%s: connect failed: %d\n", e->name, ret);
		goto out_destroy;
	}
	for (i = 0; i < HOLDER_RECVS; i++) {
		wr[i].wr_id = i;
		wr[i].next = i + 1 < HOLDER_RECVS ? &wr[i + 1] : NULL;
	}
	ret = ibpost_post_recv_list(e->a, wr, NULL);
	if (ret) {
		pr_err("%s: post_recv failed: %d\n", e->name, ret);
		goto out_destroy;
	}
	e->posted = HOLDER_RECVS;
	ret = holder_write(e);
	if (ret) {
		pr_err("%s: RDMA write failed: %d\n", e->name, ret);
		goto out_destroy;
	}
	e->dev = ibpost_dev_get(e->name);
	mutex_lock(&holder_lock);
	list_add_tail(&e->node, &holder_entries);
	mutex_unlock(&holder_lock);
	pr_info("%s: holding a connected RC pair with %d receives posted, write ok\n",
		e->name, e->posted);
	return;

out_destroy:
	holder_free(e);
}

static void holder_remove(struct ibpost_dev *dev)
{
	struct holder_entry *e;

	/* Leave the QPs to ibpost's removal path on purpose. */
	mutex_lock(&holder_lock);
	list_for_each_entry(e, &holder_entries, node)
		if (e->dev == dev)
			e->removed = true;
	mutex_unlock(&holder_lock);
}

static struct ibpost_client holder_client = {
	.name = "ibpost_holder",
	.add = holder_add,
	.remove = holder_remove,
};

static int __init holder_init(void)
{
	return ibpost_register_client(&holder_client);
}

static void __exit holder_exit(void)
{
	struct ib_recv_wr wr = { .wr_id = 99 };
	struct holder_entry *e, *tmp;
	int ret;

	ibpost_unregister_client(&holder_client);
	list_for_each_entry_safe(e, tmp, &holder_entries, node) {
		if (e->removed && !ibpost_dev_ibdev(e->dev)) {
			ret = ibpost_post_recv_list(e->a, &wr, NULL);
			pr_info("%s removed: posted %d returned %d flushed %d post %d\n",
				e->name, e->posted, atomic_read(&e->returned),
				atomic_read(&e->flushed), ret);
		}
		ibpost_dev_put(e->dev);
		list_del(&e->node);
		holder_free(e);
	}
}

module_init(holder_init);
module_exit(holder_exit);

MODULE_DESCRIPTION("ibpost test consumer for device add/remove scenarios");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(IBPOST_NS);
MODULE_IMPORT_NS(IBPOST_TEST_NS);
