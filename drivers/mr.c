// SPDX-License-Identifier: GPL-2.0
/*
 * Memory registration: the kernel analogue of rdma_reg_msgs/read/write.
 *
 * Operation: every ibpost MR DMA-maps a physically contiguous kernel
 * buffer (kmalloc or pages; a vmalloc or stack buffer is refused with
 * -EINVAL) and is used locally through the PD's local DMA lkey. Remote
 * access is granted only by ibpost_reg_read()/ibpost_reg_write(): a
 * fast-registration MR scoped to exactly that buffer with only that
 * access, registered by an IB_WR_REG_MR posted on the consumer's QP, its
 * key bumped with ib_inc_rkey() each time. ibpost_dereg_mr() invalidates
 * the rkey with IB_WR_LOCAL_INV before releasing anything, and refuses
 * with -EBUSY while a posted WR still references the MR.
 *
 * Removal: a device going away releases the provider objects of its MRs
 * (after its QPs are flushed); ibpost_dereg_mr() then only frees.
 *
 * Serialization: dev->mr_lock guards the device's MR list, which the post
 * path searches to bounds-check raw SGEs.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/slab.h>
#include <linux/mm.h>
#include "ibpost_internal.h"

#define IBPOST_SYNC_TIMEOUT	(30 * HZ)

static bool ibpost_buf_ok(void *buf, size_t len)
{
	if (!buf || !len || len > U32_MAX)
		return false;
	if (is_vmalloc_addr(buf) || !virt_addr_valid(buf) ||
	    !virt_addr_valid((char *)buf + len - 1)) {
		pr_warn_ratelimited("reg: buffer %p is not physically contiguous (vmalloc or stack): refused\n",
				    buf);
		return false;
	}
	return true;
}

static struct ibpost_mr *ibpost_mr_alloc(struct ibpost_dev *dev, void *buf,
					 size_t len)
{
	struct ibpost_mr *mr;

	if (!ibpost_buf_ok(buf, len))
		return ERR_PTR(-EINVAL);
	if (test_bit(IBPOST_DEV_REMOVING, &dev->flags))
		return ERR_PTR(-ENODEV);
	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	mr->dev = dev;
	mr->buf = buf;
	mr->len = len;
	mr->lkey = dev->pd->local_dma_lkey;
	INIT_LIST_HEAD(&mr->node);
	atomic_set(&mr->users, 0);
	sg_init_one(&mr->sg, buf, len);
	if (!ib_dma_map_sg(dev->ibdev, &mr->sg, 1, DMA_BIDIRECTIONAL)) {
		kfree(mr);
		return ERR_PTR(-ENOMEM);
	}
	mr->dma = sg_dma_address(&mr->sg);
	return mr;
}

static void ibpost_mr_publish(struct ibpost_mr *mr)
{
	struct ibpost_dev *dev = mr->dev;

	kref_get(&dev->ref);
	spin_lock_bh(&dev->mr_lock);
	list_add_tail(&mr->node, &dev->mrs);
	spin_unlock_bh(&dev->mr_lock);
}

/* Release the provider resources; under no lock, the MR off dev->mrs. */
static void ibpost_mr_release(struct ibpost_mr *mr)
{
	if (mr->dead)
		return;
	if (mr->ibmr)
		ib_dereg_mr(mr->ibmr);
	mr->ibmr = NULL;
	ib_dma_unmap_sg(mr->dev->ibdev, &mr->sg, 1, DMA_BIDIRECTIONAL);
	mr->dead = true;
}

/**
 * ibpost_reg_msgs - register a kernel buffer for local access
 * @dev: the device
 * @buf: a physically contiguous buffer (kmalloc, alloc_pages); vmalloc
 *       and stack buffers are refused
 * @len: its length in bytes
 *
 * The buffer can then be the local side of any post (send, receive, the
 * local buffer of an RDMA READ or WRITE). It grants no remote access.
 *
 * Context: Process context; may sleep.
 * Return: the MR, or ERR_PTR(-EINVAL) for a bad buffer, -ENODEV when the
 * device is being removed, -ENOMEM.
 */
struct ibpost_mr *ibpost_reg_msgs(struct ibpost_dev *dev, void *buf,
				  size_t len)
{
	struct ibpost_mr *mr;

	if (!dev)
		return ERR_PTR(-EINVAL);
	mr = ibpost_mr_alloc(dev, buf, len);
	if (IS_ERR(mr))
		return mr;
	mr->access = IB_ACCESS_LOCAL_WRITE;
	ibpost_mr_publish(mr);
	return mr;
}
EXPORT_SYMBOL_NS_GPL(ibpost_reg_msgs, IBPOST);

/* Post one internal WR on @qp's send queue and wait for its completion. */
static int ibpost_post_sync(struct ibpost_qp *qp, struct ib_send_wr *wr)
{
	struct ibpost_sync *sync;
	unsigned long done;
	int ret;

	sync = kzalloc(sizeof(*sync), GFP_KERNEL);
	if (!sync)
		return -ENOMEM;
	init_completion(&sync->done);
	refcount_set(&sync->ref, 2);	/* ours and the slot's */
	ret = ibpost_post_send_mrs(qp, wr, NULL, NULL, sync);
	if (ret) {
		kfree(sync);
		return ret;
	}
	if (qp->attr.poll_ctx == IB_POLL_DIRECT) {
		unsigned long deadline = jiffies + IBPOST_SYNC_TIMEOUT;

		/* Nobody else polls a DIRECT CQ: poll it while waiting. */
		while (!(done = wait_for_completion_timeout(&sync->done, 1)) &&
		       time_before(jiffies, deadline)) {
			mutex_lock(&qp->dev->qp_lock);
			if (qp->ibqp)
				ib_process_cq_direct(qp->sq.cq, -1);
			mutex_unlock(&qp->dev->qp_lock);
		}
	} else {
		done = wait_for_completion_timeout(&sync->done,
						   IBPOST_SYNC_TIMEOUT);
	}
	if (!done)
		ret = -ETIMEDOUT;
	else if (sync->status != IB_WC_SUCCESS)
		ret = -EIO;
	ibpost_sync_put(sync);
	return ret;
}

/**
 * __ibpost_reg_remote - register a kernel buffer a peer may access
 * @qp: the connected RC QP the peer accesses it through (the registration
 *      WR is posted on it)
 * @buf: a physically contiguous buffer (kmalloc, alloc_pages); vmalloc
 *       and stack buffers are refused
 * @len: its length in bytes
 * @access: IB_ACCESS_LOCAL_WRITE with exactly one of IB_ACCESS_REMOTE_READ
 *          and IB_ACCESS_REMOTE_WRITE
 * @caller: the module credited in ``rdma resource show mr``
 *
 * Grants that access to exactly [@buf, @buf + @len) and nothing else; the
 * peer uses ibpost_mr_remote_addr() and ibpost_mr_rkey(). Consumers call
 * it through ibpost_reg_read() and ibpost_reg_write().
 *
 * Context: Process context; sleeps until the registration completes.
 * Return: the MR, or an ERR_PTR: -EINVAL (bad buffer or access, not an RC
 * QP), -ENOTCONN (QP not in RTS), -ENODEV, -ENOMEM, -EIO (the
 * registration failed), -ETIMEDOUT.
 */
struct ibpost_mr *__ibpost_reg_remote(struct ibpost_qp *qp, void *buf,
				      size_t len, int access,
				      const char *caller)
{
	struct ib_reg_wr reg = {};
	struct ibpost_dev *dev;
	struct ibpost_mr *mr;
	u32 npages;
	int ret;

	if (!qp)
		return ERR_PTR(-EINVAL);
	if (access != (IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ) &&
	    access != (IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE)) {
		pr_warn_ratelimited("reg_remote: access must be local write plus remote read or remote write\n");
		return ERR_PTR(-EINVAL);
	}
	if (qp->attr.qp_type != IB_QPT_RC) {
		pr_warn_ratelimited("reg_read/reg_write: remote access needs an RC QP\n");
		return ERR_PTR(-EINVAL);
	}
	dev = qp->dev;
	mr = ibpost_mr_alloc(dev, buf, len);
	if (IS_ERR(mr))
		return mr;
	mr->access = access;

	npages = DIV_ROUND_UP(offset_in_page(buf) + len, PAGE_SIZE);
	mr->ibmr = ib_alloc_mr(dev->pd, IB_MR_TYPE_MEM_REG, npages);
	if (IS_ERR(mr->ibmr)) {
		ret = PTR_ERR(mr->ibmr);
		mr->ibmr = NULL;
		goto out_unmap;
	}
	/* ib_alloc_mr() credits the PD's owner (ibpost): name the consumer. */
	WRITE_ONCE(mr->ibmr->res.kern_name, caller ?: KBUILD_MODNAME);
	ret = ib_map_mr_sg(mr->ibmr, &mr->sg, 1, NULL, PAGE_SIZE);
	if (ret != 1) {
		ret = ret < 0 ? ret : -EINVAL;
		goto out_dereg;
	}
	/* A fresh key each registration: an old rkey never works again. */
	ib_update_fast_reg_key(mr->ibmr, ib_inc_rkey(mr->ibmr->rkey));

	reg.wr.opcode = IB_WR_REG_MR;
	reg.wr.send_flags = IB_SEND_SIGNALED;
	reg.mr = mr->ibmr;
	reg.key = mr->ibmr->rkey;
	reg.access = access;
	ret = ibpost_post_sync(qp, &reg.wr);
	if (ret)
		goto out_dereg;
	mr->qp = qp;
	ibpost_mr_publish(mr);
	return mr;

out_dereg:
	ib_dereg_mr(mr->ibmr);
out_unmap:
	ib_dma_unmap_sg(dev->ibdev, &mr->sg, 1, DMA_BIDIRECTIONAL);
	kfree(mr);
	return ERR_PTR(ret);
}
EXPORT_SYMBOL_NS_GPL(__ibpost_reg_remote, IBPOST);

/* The symbols behind the header's macros, for callers taking addresses. */
struct ibpost_mr *(ibpost_reg_read)(struct ibpost_qp *qp, void *buf,
				    size_t len)
{
	return ibpost_reg_read(qp, buf, len);
}
EXPORT_SYMBOL_NS_GPL(ibpost_reg_read, IBPOST);

struct ibpost_mr *(ibpost_reg_write)(struct ibpost_qp *qp, void *buf,
				     size_t len)
{
	return ibpost_reg_write(qp, buf, len);
}
EXPORT_SYMBOL_NS_GPL(ibpost_reg_write, IBPOST);

static bool ibpost_mr_covers(const struct ibpost_mr *mr,
			     const struct ib_sge *sge)
{
	u64 base;

	if (sge->lkey == mr->lkey)
		base = mr->dma;
	else if (mr->ibmr && sge->lkey == mr->ibmr->lkey)
		base = mr->ibmr->iova;
	else
		return false;
	return sge->addr >= base && sge->addr - base <= mr->len &&
	       sge->length <= mr->len - (sge->addr - base);
}

/*
 * The live MR of @dev that holds @sge, with a user counted, or NULL.
 * Called from the post path with a queue lock held.
 */
struct ibpost_mr *ibpost_mr_lookup(struct ibpost_dev *dev,
				   const struct ib_sge *sge)
{
	struct ibpost_mr *mr, *found = NULL;

	spin_lock(&dev->mr_lock);
	list_for_each_entry(mr, &dev->mrs, node) {
		if (ibpost_mr_covers(mr, sge)) {
			atomic_inc(&mr->users);
			found = mr;
			break;
		}
	}
	spin_unlock(&dev->mr_lock);
	return found;
}

/*
 * As ibpost_mr_lookup(), trying @q's last hit first: consumers post from
 * few buffers, and the hit costs no device lock. The hit is pinned like a
 * lookup (a user counted) and then checked against ibpost_dereg_mr()'s
 * revocation, each side's store ordered before its load by a full
 * barrier: either dereg sees the user (and fails with -EBUSY), or the post
 * sees the revocation (and looks the MR up again under the device's lock,
 * where it is gone or, the dereg having failed, back). Dereg clears every
 * queue's hit under that queue's lock before freeing the MR. @q->lock held.
 */
struct ibpost_mr *ibpost_mr_find(struct ibpost_queue *q,
				 const struct ib_sge *sge)
{
	struct ibpost_mr *mr = q->mr_hit;

	if (mr && ibpost_mr_covers(mr, sge)) {
		atomic_inc(&mr->users);
		/* Count the user before reading the revocation: dereg pairs. */
		smp_mb__after_atomic();
		if (likely(!READ_ONCE(mr->revoked)))
			return mr;
		atomic_dec(&mr->users);
	}
	mr = ibpost_mr_lookup(q->qp->dev, sge);
	q->mr_hit = mr;
	return mr;
}

/* @mr is off @dev's list: no queue may keep it as its last hit. */
static void ibpost_mr_forget_hits(struct ibpost_dev *dev,
				  struct ibpost_mr *mr)
	__must_hold(&dev->qp_lock)
{
	struct ibpost_qp *qp;

	list_for_each_entry(qp, &dev->qps, node) {
		spin_lock_bh(&qp->sq.lock);
		if (qp->sq.mr_hit == mr)
			qp->sq.mr_hit = NULL;
		spin_unlock_bh(&qp->sq.lock);
		spin_lock_bh(&qp->rq.lock);
		if (qp->rq.mr_hit == mr)
			qp->rq.mr_hit = NULL;
		spin_unlock_bh(&qp->rq.lock);
	}
}

/* Revoke @mr's rkey through the QP it was registered on, if still up. */
static void ibpost_mr_invalidate(struct ibpost_mr *mr)
{
	struct ib_send_wr inv = {
		.opcode = IB_WR_LOCAL_INV,
		.send_flags = IB_SEND_SIGNALED,
	};
	struct ibpost_qp *qp = mr->qp;
	int ret;

	if (!mr->ibmr || !qp || qp->dead || qp->state != IB_QPS_RTS)
		return;
	inv.ex.invalidate_rkey = mr->ibmr->rkey;
	ret = ibpost_post_sync(qp, &inv);
	if (ret)
		pr_debug("dereg_mr: local invalidate failed: %d\n", ret);
}

/**
 * ibpost_dereg_mr - revoke and release a registration
 * @mr: the MR, or NULL
 *
 * A remotely accessible MR is first invalidated (IB_WR_LOCAL_INV on the
 * QP it was registered through, while that QP is connected) and then
 * deregistered, so a later access with the old rkey fails.
 *
 * Context: Process context; may sleep.
 * Return: 0; -EBUSY while a posted WR still references @mr (nothing is
 * released; retry after its completion).
 */
int ibpost_dereg_mr(struct ibpost_mr *mr)
{
	struct ibpost_dev *dev;

	if (IS_ERR_OR_NULL(mr))
		return 0;
	dev = mr->dev;
	mutex_lock(&dev->qp_lock);
	spin_lock_bh(&dev->mr_lock);
	WRITE_ONCE(mr->revoked, true);
	/* Revoke before reading the users: pairs with ibpost_mr_find(). */
	smp_mb();
	if (atomic_read(&mr->users)) {
		WRITE_ONCE(mr->revoked, false);
		spin_unlock_bh(&dev->mr_lock);
		mutex_unlock(&dev->qp_lock);
		pr_debug("dereg_mr: %d posted SGEs still use the MR\n",
			 atomic_read(&mr->users));
		return -EBUSY;
	}
	/* Off the list and every queue's hit: no new post can use it. */
	list_del_init(&mr->node);
	spin_unlock_bh(&dev->mr_lock);
	ibpost_mr_forget_hits(dev, mr);
	mutex_unlock(&dev->qp_lock);

	ibpost_mr_invalidate(mr);

	/* Device removal releases under qp_lock too: never both. */
	mutex_lock(&dev->qp_lock);
	ibpost_mr_release(mr);
	mutex_unlock(&dev->qp_lock);
	kfree(mr);
	ibpost_dev_put(dev);
	return 0;
}
EXPORT_SYMBOL_NS_GPL(ibpost_dereg_mr, IBPOST);

/**
 * ibpost_mr_remote_addr - the address a peer uses to reach the buffer
 * @mr: an MR from ibpost_reg_read() or ibpost_reg_write()
 *
 * Context: Any context.
 * Return: the remote address of the buffer's first byte; 0 for an MR
 * without remote access.
 */
u64 ibpost_mr_remote_addr(const struct ibpost_mr *mr)
{
	return mr->ibmr ? mr->ibmr->iova : 0;
}
EXPORT_SYMBOL_NS_GPL(ibpost_mr_remote_addr, IBPOST);

/**
 * ibpost_mr_rkey - the key a peer uses to reach the buffer
 * @mr: an MR from ibpost_reg_read() or ibpost_reg_write()
 *
 * Context: Any context.
 * Return: the rkey; 0 for an MR without remote access.
 */
u32 ibpost_mr_rkey(const struct ibpost_mr *mr)
{
	return mr->ibmr ? mr->ibmr->rkey : 0;
}
EXPORT_SYMBOL_NS_GPL(ibpost_mr_rkey, IBPOST);

/**
 * ibpost_mr_sge - describe part of a registered buffer as an SGE
 * @mr: the MR
 * @addr: a kernel virtual address inside @mr's buffer
 * @length: bytes from @addr, all inside the buffer
 * @sge: filled with the DMA address, length and lkey, for the WRs of
 *       ibpost_post_send_list() and ibpost_post_recv_list()
 *
 * Context: Any context.
 * Return: 0, or -EINVAL when [@addr, @addr + @length) is not inside @mr.
 */
int ibpost_mr_sge(const struct ibpost_mr *mr, const void *addr, u32 length,
		  struct ib_sge *sge)
{
	const char *p = addr, *b = mr->buf;

	if (p < b || p > b + mr->len || length > (b + mr->len) - p)
		return -EINVAL;
	sge->addr = mr->dma + (p - b);
	sge->length = length;
	sge->lkey = mr->lkey;
	return 0;
}
EXPORT_SYMBOL_NS_GPL(ibpost_mr_sge, IBPOST);

void ibpost_mr_put_users(struct ibpost_mr **mrs, unsigned int n)
{
	while (n--)
		atomic_dec(&mrs[n]->users);
}

/* A QP is going away: MRs registered through it can no longer use it. */
void ibpost_mrs_forget_qp(struct ibpost_qp *qp)
{
	struct ibpost_dev *dev = qp->dev;
	struct ibpost_mr *mr;

	spin_lock_bh(&dev->mr_lock);
	list_for_each_entry(mr, &dev->mrs, node)
		if (mr->qp == qp)
			mr->qp = NULL;
	spin_unlock_bh(&dev->mr_lock);
}

/*
 * Device removal, after the QPs are gone, under dev->qp_lock: release
 * every MR's provider resources.
 */
void ibpost_dev_release_mrs(struct ibpost_dev *dev)
{
	struct ibpost_mr *mr;

	spin_lock_bh(&dev->mr_lock);
	while ((mr = list_first_entry_or_null(&dev->mrs, struct ibpost_mr,
					      node))) {
		list_del_init(&mr->node);
		spin_unlock_bh(&dev->mr_lock);
		ibpost_mr_release(mr);
		spin_lock_bh(&dev->mr_lock);
	}
	spin_unlock_bh(&dev->mr_lock);
}
