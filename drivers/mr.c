// SPDX-License-Identifier: GPL-2.0
/*
 * Memory registration: the kernel analogue of rdma_reg_msgs/read/write.
 *
 * Operation: an MR of this file DMA-maps a physically contiguous kernel
 * buffer (kmalloc or pages; a vmalloc or stack buffer is refused with
 * -EINVAL: mr_pages.c registers those page by page) and is used locally
 * through the PD's local DMA lkey. Every MR is listed, mapped and
 * released here (ibpost_mr_new(), ibpost_mr_add()), whatever its kind. Remote
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
 * Serialization: dev->mr_lock guards the device's MR list and its index
 * (mr_table.c), which the post path searches to bounds-check raw SGEs.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/slab.h>
#include <linux/mm.h>
#include "mr.h"
#include "mr_table.h"
#include "post.h"
#include "drain.h"
#include "ibpost_trace.h"

static void ibpost_mr_release_work(struct work_struct *work);

static unsigned int sync_timeout_ms = 30000;
module_param(sync_timeout_ms, uint, 0644);
MODULE_PARM_DESC(sync_timeout_ms,
		 "How long a memory registration or invalidation waits for its WR before ibpost moves the QP to ERR to get it back, in ms (default 30000)");

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

/* The provider side of a remotely accessible MR. */
static int ibpost_mr_alloc_remote(struct ibpost_mr *mr, const char *caller)
{
	u32 npages = DIV_ROUND_UP(offset_in_page(mr->buf) + mr->len, PAGE_SIZE);
	int ret;

	lockdep_assert_held(&mr->dev->qp_lock);
	mr->ibmr = ibpost_dev_alloc_fr_mr(mr->dev, npages);
	if (IS_ERR(mr->ibmr)) {
		ret = PTR_ERR(mr->ibmr);
		mr->ibmr = NULL;
		return ret;
	}
	/* ib_alloc_mr() credits the PD's owner (ibpost): name the consumer. */
	WRITE_ONCE(mr->ibmr->res.kern_name, caller ?: KBUILD_MODNAME);
	ret = ib_map_mr_sg(mr->ibmr, &mr->sg, 1, NULL, PAGE_SIZE);
	if (ret != 1) {
		ib_dereg_mr(mr->ibmr);
		mr->ibmr = NULL;
		return ret < 0 ? ret : -EINVAL;
	}
	/* A fresh key each registration: an old rkey never works again. */
	ib_update_fast_reg_key(mr->ibmr, ib_inc_rkey(mr->ibmr->rkey));
	/* What the peer is told, kept past the ib_mr (see struct ibpost_mr). */
	mr->rkey = mr->ibmr->rkey;
	mr->iova = mr->ibmr->iova;
	return 0;
}

/**
 * ibpost_mr_new - an MR of @dev, not mapped nor listed yet
 * @dev: the device
 * @access: IB_ACCESS_* it will grant
 *
 * Return: the MR (local use: mapped in both directions and synced by
 * ibpost, until its registration says otherwise), or NULL.
 */
struct ibpost_mr *ibpost_mr_new(struct ibpost_dev *dev, int access)
{
	struct ibpost_mr *mr = kzalloc(sizeof(*mr), GFP_KERNEL);

	if (!mr)
		return NULL;
	mr->dev = dev;
	mr->access = access;
	mr->revoked = true;
	mr->dma_flags = IBPOST_MR_SYNC;
	mr->dma_dir = DMA_BIDIRECTIONAL;
	INIT_LIST_HEAD(&mr->node);
	INIT_WORK(&mr->release_work, ibpost_mr_release_work);
	atomic_set(&mr->use.users, 0);
	return mr;
}

/*
 * Whether syncing @mr's mapping does anything: not where the provider's
 * DMA is virtual (rxe, siw), nor where the DMA API says no address of it
 * needs one (coherent, no bounce buffer). The post path then skips the
 * syncs (but to trace them).
 */
static bool ibpost_mr_needs_sync(const struct ibpost_mr *mr)
{
	struct ib_device *ibdev = mr->dev->ibdev;
	u32 i;

	if (ib_uses_virt_dma(ibdev))
		return false;
	if (!mr->segs)
		return dma_need_sync(ibdev->dma_device, mr->dma);
	for (i = 0; i < mr->nsegs; i++)
		if (dma_need_sync(ibdev->dma_device, mr->segs[i].dma))
			return true;
	return false;
}

/* DMA-map @mr's memory, as its kind says (dev->qp_lock held). */
static int ibpost_mr_map(struct ibpost_mr *mr)
{
	struct ib_device *ibdev = mr->dev->ibdev;
	int ret = 0;

	switch (mr->map) {
	case IBPOST_MR_MAP_ONE:
		if (!ib_dma_map_sg(ibdev, &mr->sg, 1, mr->dma_dir))
			return -ENOMEM;
		mr->dma = sg_dma_address(&mr->sg);
		break;
	case IBPOST_MR_MAP_SGT:
		ret = ib_dma_map_sgtable_attrs(ibdev, mr->sgt, mr->dma_dir, 0);
		if (ret)
			return ret;
		ret = ibpost_mr_sgt_segs(mr);
		if (ret)
			ib_dma_unmap_sgtable_attrs(ibdev, mr->sgt, mr->dma_dir, 0);
		break;
	default:
		return 0;
	}
	if (!ret && ibpost_mr_needs_sync(mr))
		mr->dma_flags |= IBPOST_MR_NEED_SYNC;
	return ret;
}

/*
 * Undo ibpost_mr_map(). The device's writes of every WR were handed to
 * the CPU when the WR ended, and the CPU may have written the memory
 * since: the unmap copies nothing back (a bounce buffer would overwrite
 * those writes). A peer's writes through an rkey passed through no WR of
 * this side: such an MR is handed back to the CPU by its unmap.
 */
static void ibpost_mr_unmap(struct ibpost_mr *mr)
{
	struct ib_device *ibdev = mr->dev->ibdev;
	unsigned long attrs = mr->access & IB_ACCESS_REMOTE_WRITE ?
			      0 : DMA_ATTR_SKIP_CPU_SYNC;

	if (mr->map == IBPOST_MR_MAP_ONE)
		ib_dma_unmap_sg_attrs(ibdev, &mr->sg, 1, mr->dma_dir, attrs);
	else if (mr->map == IBPOST_MR_MAP_SGT)
		ib_dma_unmap_sgtable_attrs(ibdev, mr->sgt, mr->dma_dir, attrs);
}

/* Free an MR no post can reach and no device holds. */
static void ibpost_mr_free(struct ibpost_mr *mr)
{
	ibpost_mr_free_segs(mr);
	kfree(mr);
}

/**
 * ibpost_mr_add - DMA-map @mr and list it on its device, revoked
 * @mr: from ibpost_mr_new(), its memory described
 * @caller: the module credited for a remote registration
 *
 * The device check and the listing happen under dev->qp_lock, which
 * device removal holds while it releases the device's MRs: removal either
 * came first (-ENODEV) or will find this MR and release it. On failure
 * @mr is freed.
 *
 * Return: 0, -ENODEV, -ENOMEM or the mapping's error.
 */
int ibpost_mr_add(struct ibpost_mr *mr, const char *caller)
{
	struct ibpost_dev *dev = mr->dev;
	int ret;

	ibpost_hook(IBPOST_HOOK_REG_CHECKED, mr);
	mutex_lock(&dev->qp_lock);
	if (test_bit(IBPOST_DEV_REMOVING, &dev->flags) || !dev->ibdev) {
		ret = -ENODEV;
		goto out_unlock;
	}
	mr->lkey = dev->pd->local_dma_lkey;
	ret = ibpost_mr_map(mr);
	if (ret)
		goto out_unlock;
	if (mr->access & (IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_WRITE)) {
		ret = ibpost_mr_alloc_remote(mr, caller);
		if (ret)
			goto out_unmap;
	}
	kref_get(&dev->ref);
	ibpost_mr_table_add(dev, mr);
	mutex_unlock(&dev->qp_lock);
	return 0;

out_unmap:
	ibpost_mr_unmap(mr);
out_unlock:
	mutex_unlock(&dev->qp_lock);
	ibpost_mr_free(mr);
	return ret;
}

/* Allocate, DMA-map and list an MR of a contiguous buffer on @dev. */
static struct ibpost_mr *ibpost_mr_alloc(struct ibpost_dev *dev, void *buf,
					 size_t len, int access,
					 const char *caller)
{
	struct ibpost_mr *mr;
	int ret;

	if (!ibpost_buf_ok(buf, len))
		return ERR_PTR(-EINVAL);
	mr = ibpost_mr_new(dev, access);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	mr->buf = buf;
	mr->len = len;
	sg_init_one(&mr->sg, buf, len);
	ret = ibpost_mr_add(mr, caller);
	return ret ? ERR_PTR(ret) : mr;
}

/* Let posts use a listed MR. */
void ibpost_mr_unrevoke(struct ibpost_mr *mr)
{
	spin_lock_bh(&mr->dev->mr_lock);
	WRITE_ONCE(mr->revoked, false);
	spin_unlock_bh(&mr->dev->mr_lock);
}

/* Release the provider resources once, while the device is alive. */
static void ibpost_mr_release(struct ibpost_mr *mr)
{
	lockdep_assert_held(&mr->dev->qp_lock);
	if (mr->dead)
		return;
	if (mr->ibmr)
		ib_dereg_mr(mr->ibmr);
	mr->ibmr = NULL;
	ibpost_mr_unmap(mr);
	mr->dead = true;
}

/*
 * The end of an MR no post can reach any more: release what device
 * removal did not, unlist and free it.
 */
static void ibpost_mr_destroy(struct ibpost_mr *mr)
{
	struct ibpost_dev *dev = mr->dev;

	mutex_lock(&dev->qp_lock);
	/* Unlisted first: the table never holds a released MR. */
	ibpost_mr_table_del(dev, mr);
	ibpost_mr_release(mr);
	mutex_unlock(&dev->qp_lock);
	ibpost_mr_free(mr);
	ibpost_dev_put(dev);
}

/**
 * ibpost_reg_msgs - register a kernel buffer for local access
 * @dev: the device
 * @buf: a physically contiguous buffer (kmalloc, alloc_pages); vmalloc
 *       and stack buffers are refused: ibpost_reg_vmalloc() registers a
 *       vmalloc buffer page by page
 * @len: its length in bytes
 *
 * The buffer can then be the local side of any post (send, receive, the
 * local buffer of an RDMA READ or WRITE) on a QP of @dev. It grants no
 * remote access. It is mapped in both directions; ibpost syncs it around
 * every WR that uses it.
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
	mr = ibpost_mr_alloc(dev, buf, len, IB_ACCESS_LOCAL_WRITE, NULL);
	if (IS_ERR(mr))
		return mr;
	ibpost_mr_unrevoke(mr);
	trace_ibpost_mr_reg(mr, 0, 0, 0);
	return mr;
}
EXPORT_SYMBOL_NS_GPL(ibpost_reg_msgs, IBPOST_NS);

/* Wait up to @timeout for an internal WR, polling a DIRECT CQ meanwhile. */
static bool ibpost_sync_wait_for(struct ibpost_qp *qp,
				 struct ibpost_sync *sync,
				 unsigned long timeout)
{
	unsigned long deadline = jiffies + timeout;

	if (qp->attr.poll_ctx != IB_POLL_DIRECT)
		return wait_for_completion_timeout(&sync->done, timeout);
	/* Nobody else polls a DIRECT CQ: poll it while waiting. */
	for (;;) {
		ibpost_qp_poll_direct(qp, &qp->sq);
		if (completion_done(&sync->done))
			return true;
		if (time_after(jiffies, deadline))
			return false;
		wait_for_completion_timeout(&sync->done, 1);
	}
}

/*
 * Move @qp to ERR, so that the provider flushes what it holds. Never
 * waits for qp->mutex: its holder may be a teardown (which moves the QP
 * to ERR itself) waiting for the very callback that runs this.
 */
static void ibpost_qp_to_err(struct ibpost_qp *qp)
{
	struct ib_qp_attr qa = { .qp_state = IB_QPS_ERR };
	bool nested = ibpost_qp_polled_by_current(qp);

	if (!nested && !mutex_trylock(&qp->mutex))
		return;
	if (qp->rqp.ibqp && !ib_modify_qp(qp->rqp.ibqp, &qa, IB_QP_STATE))
		ibpost_set_state(qp, IB_QPS_ERR);
	if (!nested)
		mutex_unlock(&qp->mutex);
}

/*
 * Whether a (de)registration through @qp would wait for itself, said once
 * in the log: it is refused with -EWOULDBLOCK. From a callback of @qp run
 * by one of its CQs' work items or by ibpost's flush worker, the WR's
 * completion may need that very thread. A DIRECT QP's poller polls it
 * while it waits (ibpost_sync_wait_for()).
 */
static bool ibpost_mr_cannot_wait(struct ibpost_qp *qp)
{
	if (!ibpost_qp_in_callback(qp, false))
		return false;
	pr_warn_ratelimited("qp %u: a memory (de)registration through a QP cannot wait in that QP's own completion callbacks; defer it\n",
			    qp->rqp.qpn);
	return true;
}

static void ibpost_mr_release_work(struct work_struct *work)
{
	ibpost_mr_destroy(container_of(work, struct ibpost_mr, release_work));
}

/* From a completion: release @mr, whose waiter gave up, in a worker. */
static void ibpost_mr_release_orphan(void *orphan)
{
	struct ibpost_mr *mr = orphan;

	queue_work(ibpost_wq, &mr->release_work);
}

/*
 * Post one internal WR concerning @mr on @qp's send queue and wait for its
 * completion. The WR references @mr, so this returns only once the
 * provider is done with it, or hands @mr over to the WR: when it does not
 * complete in sync_timeout_ms (a stalled send queue), the QP is moved to
 * ERR and the flush awaited for drain_timeout_ms more; should even that
 * not come, *@orphaned is set and the WR's completion releases @mr later.
 * The caller keeps @qp alive.
 */
static int ibpost_post_sync(struct ibpost_qp *qp, struct ib_send_wr *wr,
			    struct ibpost_mr *mr, bool *orphaned)
{
	struct ibpost_sync *sync;
	int ret;
	unsigned long flags;

	*orphaned = false;
	if (ibpost_mr_cannot_wait(qp))
		return -EWOULDBLOCK;
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
	if (ibpost_sync_wait_for(qp, sync,
				 msecs_to_jiffies(READ_ONCE(sync_timeout_ms)))) {
		ret = sync->status == IB_WC_SUCCESS ? 0 : -EIO;
		goto out_put;
	}
	pr_warn_ratelimited("qp %u: a memory registration WR did not complete in %u ms; moving the QP to ERR\n",
			    qp->rqp.qpn, READ_ONCE(sync_timeout_ms));
	ibpost_qp_to_err(qp);
	ret = -ETIMEDOUT;
	if (ibpost_sync_wait_for(qp, sync,
				 msecs_to_jiffies(ibpost_drain_timeout_ms())))
		goto out_put;
	/* Still queued: whoever completes the WR releases the MR. */
	spin_lock_irqsave(&qp->sq.lock, flags);
	if (!completion_done(&sync->done)) {
		sync->orphan = mr;
		sync->orphan_release = ibpost_mr_release_orphan;
		*orphaned = true;
	}
	spin_unlock_irqrestore(&qp->sq.lock, flags);
	if (*orphaned)
		pr_warn_ratelimited("qp %u: the WR is still not flushed; its MR is released when it is\n",
				    qp->rqp.qpn);
out_put:
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
 * registration failed), -ETIMEDOUT (the REG_MR did not complete within
 * sync_timeout_ms: the QP was moved to ERR; keep the buffer allocated
 * until the QP is destroyed, the WR may still complete until then),
 * -EWOULDBLOCK (called from the work item of @qp's own send CQ).
 */
struct ibpost_mr *__ibpost_reg_remote(struct ibpost_qp *qp, void *buf,
				      size_t len, int access,
				      const char *caller)
{
	struct ib_reg_wr reg = {};
	struct ibpost_dev *dev;
	struct ibpost_mr *mr;
	bool orphaned;
	int ret;

	might_sleep();
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
	mr = ibpost_mr_alloc(dev, buf, len, access, caller);
	if (IS_ERR(mr))
		return mr;

	reg.wr.opcode = IB_WR_REG_MR;
	reg.wr.send_flags = IB_SEND_SIGNALED;
	reg.access = access;
	/* Read under the lock: device removal may release it meanwhile. */
	mutex_lock(&dev->qp_lock);
	if (mr->dead) {
		mutex_unlock(&dev->qp_lock);
		ret = -ENODEV;
		goto out_destroy;
	}
	reg.mr = mr->ibmr;
	reg.key = mr->ibmr->rkey;
	mutex_unlock(&dev->qp_lock);
	ret = ibpost_post_sync(qp, &reg.wr, mr, &orphaned);
	ibpost_hook(IBPOST_HOOK_REG_POSTED, mr);
	/* Its WR's completion frees it: its REG_MR's events tell the rest. */
	if (orphaned)
		return ERR_PTR(ret);
	if (ret)
		goto out_destroy;

	/* Invalidated through @qp at dereg, unless @qp is torn down first. */
	mutex_lock(&dev->qp_lock);
	if (mr->dead || READ_ONCE(qp->rqp.dead)) {
		mutex_unlock(&dev->qp_lock);
		ret = -ENODEV;
		goto out_destroy;
	}
	mr->qp = qp;
	mutex_unlock(&dev->qp_lock);
	ibpost_mr_unrevoke(mr);
	trace_ibpost_mr_reg(mr, qp->rqp.qpn, reg.key, 0);
	return mr;

out_destroy:
	trace_ibpost_mr_reg(mr, qp->rqp.qpn, reg.key, ret);
	ibpost_mr_destroy(mr);
	return ERR_PTR(ret);
}
EXPORT_SYMBOL_NS_GPL(__ibpost_reg_remote, IBPOST_NS);

/* Whether an MR's rkey is invalidated through @qp: it is connected. */
static bool ibpost_mr_qp_up(struct ibpost_qp *qp)
{
	return !READ_ONCE(qp->rqp.dead) && READ_ONCE(qp->rqp.state) == IB_QPS_RTS;
}

/*
 * Revoke @rkey, @mr's, through @qp, the QP it was registered on, if up.
 * Return: 0, -EWOULDBLOCK (cannot wait here, nothing done), or 1 when the
 * MR now belongs to the WR (released at its completion).
 */
static int ibpost_mr_invalidate(struct ibpost_mr *mr, struct ibpost_qp *qp,
				u32 rkey)
{
	struct ib_send_wr inv = {
		.opcode = IB_WR_LOCAL_INV,
		.send_flags = IB_SEND_SIGNALED,
		.ex.invalidate_rkey = rkey,
	};
	bool orphaned;
	int ret;

	if (!ibpost_mr_qp_up(qp))
		return 0;
	ret = ibpost_post_sync(qp, &inv, mr, &orphaned);
	/* Orphaned, @mr is its WR's: the LOCAL_INV's events tell the rest. */
	if (!orphaned)
		trace_ibpost_mr_invalidate(mr, qp->rqp.qpn, rkey, ret);
	if (ret == -EWOULDBLOCK)
		return ret;
	if (ret)
		pr_debug("dereg_mr: local invalidate failed: %d\n", ret);
	return orphaned;
}

/**
 * ibpost_dereg_mr - revoke and release a registration
 * @mr: the MR, or NULL
 *
 * A remotely accessible MR is first invalidated (IB_WR_LOCAL_INV on the
 * QP it was registered through, while that QP is connected) and then
 * deregistered, so a later access with the old rkey fails. Works on an MR
 * whose device or QP is gone, and from a completion callback that may
 * sleep (IB_POLL_WORKQUEUE, IB_POLL_DIRECT), also while its QP is being
 * destroyed or its device removed; except that a remotely accessible MR
 * cannot be invalidated from a callback running in the work item of its
 * own QP's send CQ (IB_POLL_WORKQUEUE), which would wait for itself:
 * -EWOULDBLOCK there, to be retried elsewhere (a work item of the
 * consumer's). An invalidation that does not complete within
 * sync_timeout_ms moves the QP to ERR; should even its flush not come
 * within drain_timeout_ms, -ETIMEDOUT: the MR is released, and its rkey
 * revoked, when the WR completes (at the latest when the QP is destroyed
 * or the device removed); @mr must not be used again, and the buffer
 * stays allocated until then.
 *
 * Context: Process context; may sleep.
 * Return: 0; -EBUSY while a posted WR still references @mr (nothing is
 * released; retry after its completion); -EWOULDBLOCK as above (nothing
 * is released); -ETIMEDOUT as above.
 */
int ibpost_dereg_mr(struct ibpost_mr *mr)
{
	struct ibpost_qp *qp = NULL, *via;
	struct ibpost_dev *dev;
	u32 rkey = 0, qpn = 0;
	int ret;

	might_sleep();
	if (IS_ERR_OR_NULL(mr))
		return 0;
	dev = mr->dev;
	mutex_lock(&dev->qp_lock);
	/* The QP its rkey is invalidated through: fixed under dev->qp_lock. */
	via = mr->ibmr && !mr->dead ? mr->qp : NULL;
	/*
	 * Decided before the revocation, which a post meanwhile would take
	 * for a dereg done (-EBUSY still first: it revokes nothing for long).
	 * A QP that comes up only after this check still gets the late
	 * -EWOULDBLOCK below.
	 */
	if (via && ibpost_mr_qp_up(via) && !atomic_read(&mr->use.users) &&
	    ibpost_mr_cannot_wait(via)) {
		qpn = via->rqp.qpn;
		rkey = mr->ibmr->rkey;
		mutex_unlock(&dev->qp_lock);
		trace_ibpost_mr_dereg(mr, qpn, rkey, -EWOULDBLOCK);
		return -EWOULDBLOCK;
	}
	spin_lock_bh(&dev->mr_lock);
	WRITE_ONCE(mr->revoked, true);
	/* Revoke before reading the users: pairs with ibpost_mr_find(). */
	smp_mb();
	if (atomic_read(&mr->use.users)) {
		ibpost_hook(IBPOST_HOOK_DEREG_BUSY, mr);
		WRITE_ONCE(mr->revoked, false);
		spin_unlock_bh(&dev->mr_lock);
		mutex_unlock(&dev->qp_lock);
		pr_debug("dereg_mr: posted WRs still use the MR (%d users)\n",
			 atomic_read(&mr->use.users));
		trace_ibpost_mr_dereg(mr, 0, 0, -EBUSY);
		return -EBUSY;
	}
	spin_unlock_bh(&dev->mr_lock);
	/*
	 * Revoked, but still listed: device removal releases it if it comes
	 * first. No new post can use it, and no queue keeps it as its hit.
	 */
	ibpost_mr_forget_hits(dev, mr);
	if (via) {
		qp = via;
		refcount_inc(&qp->ref);
		rkey = mr->ibmr->rkey;
	}
	mutex_unlock(&dev->qp_lock);

	ibpost_hook(IBPOST_HOOK_DEREG_REVOKED, mr);
	if (qp) {
		qpn = qp->rqp.qpn;
		ret = ibpost_mr_invalidate(mr, qp, rkey);
		ibpost_qp_put(qp);
		if (ret == -EWOULDBLOCK) {
			ibpost_mr_unrevoke(mr);
			trace_ibpost_mr_dereg(mr, qpn, rkey, ret);
			return ret;
		}
		if (ret)	/* the WR's completion releases it */
			return -ETIMEDOUT;
	}
	trace_ibpost_mr_dereg(mr, qpn, rkey, 0);
	ibpost_mr_destroy(mr);
	return 0;
}
EXPORT_SYMBOL_NS_GPL(ibpost_dereg_mr, IBPOST_NS);

/**
 * ibpost_mr_remote_addr - the address a peer uses to reach the buffer
 * @mr: an MR from ibpost_reg_read() or ibpost_reg_write()
 *
 * The value registered, the same for the MR's whole life: also while and
 * after its device is removed (the peer's accesses then fail), until
 * ibpost_dereg_mr() frees @mr.
 *
 * Context: Any context; takes no lock.
 * Return: the remote address of the buffer's first byte; 0 for an MR
 * without remote access.
 */
u64 ibpost_mr_remote_addr(const struct ibpost_mr *mr)
{
	return mr->iova;
}
EXPORT_SYMBOL_NS_GPL(ibpost_mr_remote_addr, IBPOST_NS);

/**
 * ibpost_mr_rkey - the key a peer uses to reach the buffer
 * @mr: an MR from ibpost_reg_read() or ibpost_reg_write()
 *
 * The key registered, the same for the MR's whole life: also while and
 * after its device is removed (the key is then revoked), until
 * ibpost_dereg_mr() frees @mr.
 *
 * Context: Any context; takes no lock.
 * Return: the rkey; 0 for an MR without remote access.
 */
u32 ibpost_mr_rkey(const struct ibpost_mr *mr)
{
	return mr->rkey;
}
EXPORT_SYMBOL_NS_GPL(ibpost_mr_rkey, IBPOST_NS);

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
	return __ibpost_mr_sge(mr, addr, length, sge);
}
EXPORT_SYMBOL_NS_GPL(ibpost_mr_sge, IBPOST_NS);

/*
 * Device removal, after the QPs are gone: release every MR's provider
 * resources, those being registered or deregistered included (they are
 * listed until released).
 */
void ibpost_dev_release_mrs(struct ibpost_dev *dev)
{
	struct ibpost_mr *mr;

	lockdep_assert_held(&dev->qp_lock);
	/* A consumer's sync that saw no removal is over (mr_pages.c). */
	synchronize_rcu();
	spin_lock_bh(&dev->mr_lock);
	while ((mr = list_first_entry_or_null(&dev->mrs, struct ibpost_mr,
					      node))) {
		spin_unlock_bh(&dev->mr_lock);
		/* Under dev->qp_lock: no one else lists or unlists. */
		ibpost_mr_table_del(dev, mr);
		ibpost_mr_release(mr);
		spin_lock_bh(&dev->mr_lock);
	}
	spin_unlock_bh(&dev->mr_lock);
}
