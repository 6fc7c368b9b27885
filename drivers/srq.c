// SPDX-License-Identifier: GPL-2.0
/*
 * Shared receive queues.
 *
 * An SRQ is a receive ring of the ring layer (struct ibpost_queue) whose
 * WRs go to the provider's SRQ (ib_post_srq_recv()) rather than a QP's
 * receive queue. Posting keeps IBA 11.4.1.1 as a QP's receive chain does
 * (post.c). Any attached QP may take a WR: its completion arrives on that
 * QP's receive CQ, finds its slot in the SRQ's ring through wc->wr_cqe,
 * and comes back through the SRQ's callback (or the context's ib_cqe)
 * with the taking QP (ring.c). Slots complete out of ring order: the
 * ring claims free slots wherever they are (any_order), so a WR one QP
 * holds long, or the provider loses, holds its own slot only.
 *
 * Every context comes back once: a WR a QP took completes on that QP's
 * CQ, whose last completions the QP's teardown reaps after the provider
 * QP is destroyed (qp.c: no receive drain marker can be posted to an SRQ
 * QP, so its receive CQ is polled until empty instead); the WRs still in
 * the SRQ when it is destroyed, or its device removed, are returned
 * flushed by ibpost (IB_WC_WR_FLUSH_ERR, no QP). An SRQ with QPs attached
 * is not destroyed (-EBUSY); device removal tears the SRQs down after
 * every QP of the device.
 *
 * Locking: the SRQ's mutex serializes its teardown and arming; its ring
 * lock is the post path's and the completion handler's, as for a QP's
 * queue; attach counts and the device's list are under dev->qp_lock.
 * Callbacks never run under dev->qp_lock or the ring lock.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include "srq.h"
#include "qp_core.h"

/*
 * The tasks running an SRQ's teardown flush, whichever SRQ: a callback of
 * one may not destroy or arm an SRQ (its own flush, or another's, which
 * may be waiting for this one's: a task that destroys A from B's flush
 * while another destroys B from A's).
 */
struct ibpost_srq_flusher {
	struct task_struct *task;
	struct list_head node;
};

static DEFINE_SPINLOCK(ibpost_srq_flushers_lock);
static LIST_HEAD(ibpost_srq_flushers);

static bool ibpost_srq_in_flush(void)
{
	struct ibpost_srq_flusher *f;
	bool found = false;

	spin_lock(&ibpost_srq_flushers_lock);
	list_for_each_entry(f, &ibpost_srq_flushers, node)
		if (f->task == current)
			found = true;
	spin_unlock(&ibpost_srq_flushers_lock);
	return found;
}

static void ibpost_srq_put(struct ibpost_srq *srq)
{
	if (!refcount_dec_and_test(&srq->ref))
		return;
	ibpost_ring_free(&srq->rq);
	ibpost_dev_put(srq->dev);
	kfree(srq);
}

/* The provider's event handler of an SRQ: any context, no lock taken. */
static void ibpost_srq_event(struct ib_event *event, void *context)
{
	struct ibpost_srq *srq = context;

	if (event->event >= BITS_PER_LONG)
		return;
	set_bit(event->event, &srq->events);
	if (!refcount_inc_not_zero(&srq->ref))
		return;
	if (!queue_work(ibpost_event_wq, &srq->event_work))
		refcount_dec(&srq->ref);	/* queued already: not the last */
}

/* Tell the consumer, in process context, once per event type pending. */
static void ibpost_srq_event_work(struct work_struct *work)
{
	struct ibpost_srq *srq = container_of(work, struct ibpost_srq,
					      event_work);
	unsigned long events = xchg(&srq->events, 0);
	unsigned int e;

	for_each_set_bit(e, &events, BITS_PER_LONG)
		if (srq->attr.event && !READ_ONCE(srq->events_off))
			srq->attr.event(srq, (enum ib_event_type)e);
	ibpost_srq_put(srq);
}

static int ibpost_srq_attr_check(struct ibpost_dev *dev,
				 const struct ibpost_srq_attr *attr)
{
	if (!dev || !attr)
		return -EINVAL;
	if (!attr->max_wr || attr->max_wr > 1U << 30 ||
	    attr->max_sge > U8_MAX || attr->poll_ctx > IB_POLL_DIRECT) {
		pr_warn_ratelimited("srq_create: max_wr must be 1..2^30, max_sge at most %u, poll_ctx valid\n",
				    U8_MAX);
		return -EINVAL;
	}
	if (!attr->ib_cqe == !attr->recv_done) {
		pr_warn_ratelimited("srq_create: contexts come back through recv_done or, in ib_cqe mode, their cqe->done: exactly one\n");
		return -EINVAL;
	}
	return 0;
}

static struct ibpost_srq *ibpost_srq_alloc(struct ibpost_dev *dev,
					   const struct ibpost_srq_attr *attr)
{
	struct ibpost_srq *srq = kzalloc(sizeof(*srq), GFP_KERNEL);

	if (!srq)
		return NULL;
	refcount_set(&srq->ref, 1);
	mutex_init(&srq->mutex);
	srq->attr = *attr;
	srq->attr.max_sge = max_t(u32, attr->max_sge, 1);
	INIT_LIST_HEAD(&srq->node);
	INIT_WORK(&srq->event_work, ibpost_srq_event_work);
	init_completion(&srq->flushed);
	srq->rqp.state = IB_QPS_RTS;	/* an SRQ has no state: always takes */
	srq->rqp.poll_ctx = attr->poll_ctx;
	/*
	 * rqp.iwarp stays false: it concerns a QP's send queue and its
	 * connection (a refusal retried, WRs flushed by a worker), which an
	 * SRQ has neither of.
	 */
	ibpost_queue_init(&srq->rq, NULL, &srq->rqp, false, attr->recv_done);
	srq->rq.cqe = attr->ib_cqe;
	srq->rq.any_order = true;
	srq->rq.dev = dev;
	srq->rq.dma_dev = dev->ibdev;
	srq->dev = dev;
	return srq;
}

/* The provider's SRQ and the ring over what it granted; qp_lock held. */
static int ibpost_srq_create_provider(struct ibpost_srq *srq,
				      struct ibpost_dev *dev)
{
	const struct ib_device_attr *da = &dev->ibdev->attrs;
	struct ib_srq_init_attr init = {};
	struct ib_srq *ibsrq;
	int ret;

	lockdep_assert_held(&dev->qp_lock);
	if (!da->max_srq) {
		pr_warn_ratelimited("srq_create: %s has no shared receive queues\n",
				    dev->name);
		return -EOPNOTSUPP;
	}
	if (srq->attr.max_wr > da->max_srq_wr ||
	    srq->attr.max_sge > da->max_srq_sge) {
		pr_warn_ratelimited("srq_create: %s grants at most %d WRs of %d SGEs\n",
				    dev->name, da->max_srq_wr, da->max_srq_sge);
		return -EINVAL;
	}
	/* First: once the provider's SRQ exists, an event may come. */
	ret = ibpost_ring_alloc(&srq->rq, srq->attr.max_wr, srq->attr.max_sge);
	if (ret)
		return ret;
	srq->rq.signal_interval = 1;
	/* A received SEND_WITH_INV may retire any pool's key (frwr.c). */
	srq->rq.key_retired = ibpost_frwr_remote_inv;
	init.event_handler = ibpost_srq_event;
	init.srq_context = srq;
	init.srq_type = IB_SRQT_BASIC;
	init.attr.max_wr = srq->attr.max_wr;
	init.attr.max_sge = srq->attr.max_sge;
	/* A provider may grant more: the ring takes what was asked. */
	ibsrq = ib_create_srq(dev->pd, &init);
	if (IS_ERR(ibsrq))
		return PTR_ERR(ibsrq);
	srq->rqp.ibsrq = ibsrq;
	srq->rqp.qpn = ibsrq->res.id;
	srq->rq.dev_id = dev->ibdev->index;
	return 0;
}

/**
 * ibpost_srq_create - create a shared receive queue on a device
 * @dev: the device (a reference is taken for the SRQ's lifetime)
 * @attr: what is wanted; see struct ibpost_srq_attr
 *
 * The SRQ takes receives at once (ibpost_post_srq_recv_list()); QPs
 * created with it in their attributes take their receives from it.
 *
 * Context: Process context; may sleep.
 * Return: the SRQ, or an ERR_PTR: -EINVAL for a bad @attr or beyond the
 * device's SRQ limits, -EOPNOTSUPP when the device has no SRQs, -ENODEV
 * when it is being removed, -ENOMEM, or the provider's error.
 */
struct ibpost_srq *ibpost_srq_create(struct ibpost_dev *dev,
				     const struct ibpost_srq_attr *attr)
{
	struct ibpost_srq *srq;
	int ret;

	might_sleep();
	ret = ibpost_srq_attr_check(dev, attr);
	if (ret)
		return ERR_PTR(ret);
	srq = ibpost_srq_alloc(dev, attr);
	if (!srq)
		return ERR_PTR(-ENOMEM);
	mutex_lock(&dev->qp_lock);
	if (test_bit(IBPOST_DEV_REMOVING, &dev->flags)) {
		ret = -ENODEV;
		goto out_unlock;
	}
	ret = ibpost_srq_create_provider(srq, dev);
	if (ret)
		goto out_unlock;
	kref_get(&dev->ref);
	list_add_tail(&srq->node, &dev->srqs);
	mutex_unlock(&dev->qp_lock);
	return srq;

out_unlock:
	mutex_unlock(&dev->qp_lock);
	ibpost_ring_free(&srq->rq);
	kfree(srq);
	return ERR_PTR(ret);
}
EXPORT_SYMBOL_NS_GPL(ibpost_srq_create, IBPOST_NS);

/*
 * Tear the provider's SRQ down, once (destroy or device removal): no post
 * reaches it after this, and every WR it still held comes back flushed
 * through the SRQ's callback, with no QP, before this returns (in the
 * call that tore it down; a second one waits for that). Its attached QPs'
 * provider objects are gone already, their receive CQs reaped (qp.c). The
 * flush runs without srq->mutex: its callbacks may take a QP's mutex (a
 * DIRECT poll), under which another callback may arm the SRQ.
 */
static void ibpost_srq_teardown(struct ibpost_srq *srq)
{
	struct ibpost_srq_flusher flusher;
	struct ib_srq *ibsrq;
	unsigned long flags;

	mutex_lock(&srq->mutex);
	ibsrq = srq->rqp.ibsrq;
	if (ibsrq) {
		spin_lock_irqsave(&srq->rq.lock, flags);
		srq->rqp.dead = true;
		WRITE_ONCE(srq->rqp.ibsrq, NULL);
		spin_unlock_irqrestore(&srq->rq.lock, flags);
		ib_destroy_srq(ibsrq);
	}
	mutex_unlock(&srq->mutex);
	if (!ibsrq) {
		wait_for_completion(&srq->flushed);
		return;
	}
	flusher.task = current;
	spin_lock(&ibpost_srq_flushers_lock);
	list_add(&flusher.node, &ibpost_srq_flushers);
	spin_unlock(&ibpost_srq_flushers_lock);
	ibpost_queue_flush(&srq->rq, false, true);
	spin_lock(&ibpost_srq_flushers_lock);
	list_del(&flusher.node);
	spin_unlock(&ibpost_srq_flushers_lock);
	complete_all(&srq->flushed);
}

/**
 * ibpost_srq_destroy - destroy a shared receive queue
 * @srq: the SRQ, or NULL
 *
 * Every context still posted comes back flushed (IB_WC_WR_FLUSH_ERR,
 * through the SRQ's callback with no QP) before this returns. Works on an
 * SRQ whose device has been removed (its contexts came back then).
 *
 * Context: Process context; may sleep. Not from an SRQ's flush callbacks.
 * Return: 0; -EBUSY while QPs created with it are not destroyed (nothing
 * is changed); -EWOULDBLOCK from a callback of an SRQ's teardown flush
 * or a bottom half.
 */
int ibpost_srq_destroy(struct ibpost_srq *srq)
{
	struct ibpost_dev *dev;

	if (IS_ERR_OR_NULL(srq))
		return 0;
	if (ibpost_cannot_sleep() || ibpost_srq_in_flush()) {
		pr_warn_ratelimited("srq_destroy: from a bottom half or an SRQ's flush callback: refused\n");
		return -EWOULDBLOCK;
	}
	dev = srq->dev;
	mutex_lock(&dev->qp_lock);
	if (srq->nr_qps) {
		mutex_unlock(&dev->qp_lock);
		pr_warn_ratelimited("srq_destroy: %u QPs still take receives from it: destroy them first\n",
				    srq->nr_qps);
		return -EBUSY;
	}
	srq->dying = true;
	mutex_unlock(&dev->qp_lock);
	/*
	 * Torn down (no post, no SGE counted) before it leaves the device's
	 * list: until then an MR's revocation clears its hit
	 * (ibpost_mr_forget_hits()).
	 */
	ibpost_srq_teardown(srq);
	mutex_lock(&dev->qp_lock);
	list_del_init(&srq->node);
	mutex_unlock(&dev->qp_lock);
	/* From the event callback itself only the calls stop. */
	WRITE_ONCE(srq->events_off, true);
	if (current_work() != &srq->event_work &&
	    cancel_work_sync(&srq->event_work))
		refcount_dec(&srq->ref);
	mutex_lock(&dev->qp_lock);
	ibpost_stats_add(&dev->retired[1], &srq->rq.stats);
	mutex_unlock(&dev->qp_lock);
	ibpost_srq_put(srq);
	return 0;
}
EXPORT_SYMBOL_NS_GPL(ibpost_srq_destroy, IBPOST_NS);

/**
 * ibpost_srq_arm - arm the SRQ's limit event
 * @srq: the SRQ
 * @limit: IB_EVENT_SRQ_LIMIT_REACHED is reported (once, to attr.event)
 *         when fewer than this many WRs remain posted; 0 disarms
 *
 * As IBA's SRQ limit: the event disarms it, a consumer that wants the
 * next one arms it again (after reposting).
 *
 * Context: Process context; may sleep. Not from a bottom half or an SRQ's
 * flush callbacks (-EWOULDBLOCK).
 * Return: 0, -EINVAL for a limit not below the SRQ's max_wr, -ENODEV
 * when the SRQ is torn down, -EWOULDBLOCK (above), or the provider's
 * error.
 */
int ibpost_srq_arm(struct ibpost_srq *srq, u32 limit)
{
	struct ib_srq_attr sa = { .srq_limit = limit };
	int ret = -ENODEV;

	if (!srq || limit >= srq->attr.max_wr)
		return -EINVAL;
	if (ibpost_cannot_sleep() || ibpost_srq_in_flush())
		return -EWOULDBLOCK;
	mutex_lock(&srq->mutex);
	if (srq->rqp.ibsrq)
		ret = ib_modify_srq(srq->rqp.ibsrq, &sa, IB_SRQ_LIMIT);
	mutex_unlock(&srq->mutex);
	return ret;
}
EXPORT_SYMBOL_NS_GPL(ibpost_srq_arm, IBPOST_NS);

/**
 * ibpost_srq_priv - the consumer's pointer given at creation
 * @srq: the SRQ
 *
 * Context: Any context.
 * Return: attr.priv, or NULL for a NULL @srq.
 */
void *ibpost_srq_priv(struct ibpost_srq *srq)
{
	return srq ? srq->attr.priv : NULL;
}
EXPORT_SYMBOL_NS_GPL(ibpost_srq_priv, IBPOST_NS);

/**
 * ibpost_srq_get_attr - the SRQ's attributes
 * @srq: the SRQ
 * @attr: filled in (max_wr and max_sge as the ring takes them: those
 *        asked, which the provider granted)
 *
 * Context: Any context.
 * Return: nothing.
 */
void ibpost_srq_get_attr(struct ibpost_srq *srq, struct ibpost_srq_attr *attr)
{
	if (srq && attr)
		*attr = srq->attr;
}
EXPORT_SYMBOL_NS_GPL(ibpost_srq_get_attr, IBPOST_NS);

/*
 * A QP of @dev being created with @srq (dev->qp_lock held): attach it, or
 * refuse an SRQ of another device (hence another PD: ibpost has one per
 * device), being destroyed or torn down, or of another completion
 * context.
 */
int ibpost_srq_attach(struct ibpost_dev *dev, struct ibpost_srq *srq,
		      enum ib_poll_context poll_ctx)
{
	lockdep_assert_held(&dev->qp_lock);
	if (srq->dev != dev || srq->dying || !srq->rqp.ibsrq) {
		pr_warn_ratelimited("qp_create: the SRQ is of another device (and PD), or destroyed\n");
		return -EINVAL;
	}
	if (srq->attr.poll_ctx != poll_ctx) {
		pr_warn_ratelimited("qp_create: the SRQ's completions run in another context than the QP's (poll_ctx %d, %d)\n",
				    srq->attr.poll_ctx, poll_ctx);
		return -EINVAL;
	}
	srq->nr_qps++;
	return 0;
}

/* A QP created with @srq is destroyed (or its creation failed). */
void ibpost_srq_detach(struct ibpost_srq *srq)
{
	lockdep_assert_held(&srq->dev->qp_lock);
	srq->nr_qps--;
}

/*
 * Device removal, after every QP of @dev is torn down (removal.c): tear
 * every SRQ down, returning what it held. The ibpost_srq shells stay until
 * ibpost_srq_destroy(). Called and returns with dev->qp_lock held, which
 * is dropped around each teardown (its callbacks may deregister MRs).
 */
void ibpost_dev_teardown_srqs(struct ibpost_dev *dev)
	__must_hold(&dev->qp_lock)
{
	struct ibpost_srq *srq;

	lockdep_assert_held(&dev->qp_lock);
	for (;;) {
		bool found = false;

		list_for_each_entry(srq, &dev->srqs, node) {
			if (!srq->removal_seen) {
				found = true;
				break;
			}
		}
		if (!found)
			return;
		srq->removal_seen = true;
		refcount_inc(&srq->ref);
		mutex_unlock(&dev->qp_lock);
		ibpost_srq_teardown(srq);
		ibpost_srq_put(srq);
		mutex_lock(&dev->qp_lock);
	}
}
