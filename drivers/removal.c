// SPDX-License-Identifier: GPL-2.0
/*
 * A device removal's teardown of the QPs its consumers left behind.
 *
 * Each QP is torn down as ibpost_qp_destroy() would (qp.c): moved to ERR,
 * drained, the provider's QP destroyed, its CQs freed, every context the
 * provider did not return flushed. Freeing an IB_POLL_SOFTIRQ CQ waits
 * for an RCU grace period (ibpost_free_cqs()), so on an IB or RoCE device
 * the removal tears its softirq QPs down first, in two halves: every
 * such provider QP first (ibpost_qp_teardown_start()), then one wait for
 * the CQs of all of them, then the CQs freed and the contexts returned.
 * Removing a device with many softirq QPs costs one grace period, not
 * one per QP. The other QPs follow, one whole teardown each, as a destroy
 * would: their callbacks may block, on a softirq QP's flushed context
 * too, which is back by then.
 *
 * An iWARP device's QPs are torn down one whole teardown at a time (its
 * softirq QPs first all the same): siw
 * on 6.1 keeps a destroyed QP on its device list while its connection
 * holds a reference, and walks that list when its netdev goes down; QPs
 * destroyed back to back have shown that use-after-free
 * (Documentation/providers.rst).
 *
 * A destroy that reaches a QP between the halves claims its CQs under
 * dev->qp_lock (the removal's wait no longer reads them) and waits for
 * their polls itself. Teardown runs without dev->qp_lock, so that
 * completion callbacks may deregister MRs meanwhile.
 */
#include <linux/delay.h>
#include "ibpost_cq.h"
#include "qp.h"
#include "mr.h"
#include "srq.h"

/*
 * The first QP of @dev that removal has not torn down yet; with
 * @softirq, the first whose CQs are polled in softirq.
 */
static struct ibpost_qp *ibpost_dev_next_unseen(struct ibpost_dev *dev,
						bool softirq)
{
	struct ibpost_qp *qp;

	lockdep_assert_held(&dev->qp_lock);
	list_for_each_entry(qp, &dev->qps, node)
		if (!qp->removal_seen &&
		    (!softirq || qp->attr.poll_ctx == IB_POLL_SOFTIRQ))
			return qp;
	return NULL;
}

/*
 * Whether a poll of a CQ of @left (QPs whose CQs a removal left) that no
 * teardown has claimed is scheduled.
 */
static bool ibpost_removal_cqs_scheduled(struct ibpost_dev *dev,
					 struct list_head *left)
{
	struct ibpost_qp *qp;
	bool sched = false;

	mutex_lock(&dev->qp_lock);
	list_for_each_entry(qp, left, removal_node)
		if (!qp->cqs_claimed &&
		    (ibpost_cq_poll_scheduled(qp->sq.cq) ||
		     ibpost_cq_poll_scheduled(qp->rq.cq)))
			sched = true;
	mutex_unlock(&dev->qp_lock);
	return sched;
}

/*
 * Wait until no poll of the CQs of @left is scheduled or running, once
 * for all of them (ibpost_free_cqs() says why), and mark them quiet. The
 * CQs a teardown claimed meanwhile are not read: that teardown waits for
 * its own.
 */
static void ibpost_removal_quiesce_cqs(struct ibpost_dev *dev,
				       struct list_head *left)
{
	struct ibpost_qp *qp;
	bool softirq = false;

	mutex_lock(&dev->qp_lock);
	list_for_each_entry(qp, left, removal_node)
		if (!qp->cqs_claimed &&
		    ibpost_cqs_softirq(qp->sq.cq, qp->rq.cq))
			softirq = true;
	mutex_unlock(&dev->qp_lock);
	if (softirq) {
		do {
			while (ibpost_removal_cqs_scheduled(dev, left))
				usleep_range(100, 200);
			synchronize_rcu();
			atomic_long_inc(&ibpost_cq_grace_periods);
		} while (ibpost_removal_cqs_scheduled(dev, left));
	}
	mutex_lock(&dev->qp_lock);
	list_for_each_entry(qp, left, removal_node)
		qp->cqs_quiet = true;
	mutex_unlock(&dev->qp_lock);
}

/*
 * The second half of the teardown of the QPs of @left: their CQs freed
 * after one wait for all, their contexts returned; @left is emptied and
 * the removal's references dropped.
 */
static void ibpost_removal_free_cqs(struct ibpost_dev *dev,
				    struct list_head *left)
{
	struct ibpost_qp *qp, *tmp;

	ibpost_hook_sleepable(IBPOST_HOOK_REMOVAL_CQS, dev);
	ibpost_removal_quiesce_cqs(dev, left);
	list_for_each_entry_safe(qp, tmp, left, removal_node) {
		list_del(&qp->removal_node);
		ibpost_qp_teardown(qp, true);
		ibpost_qp_put(qp);
	}
}

/**
 * ibpost_dev_teardown_qps - tear down every QP of a device being removed
 * @dev: the device, REMOVING and off the device list
 *
 * The ibpost_qp shells stay until ibpost_qp_destroy(). A QP a destroy is
 * tearing down is still listed: its teardown is waited for.
 *
 * Context: Process context; sleeps. Returns with dev->qp_lock held, the
 * device's QP list empty of QPs with provider objects, and its SRQs torn
 * down.
 */
void ibpost_dev_teardown_qps(struct ibpost_dev *dev)
{
	/*
	 * Only softirq CQs wait for a grace period, and only softirq
	 * callbacks cannot block. The softirq QPs go first (in two halves
	 * but on iWARP): a DIRECT or WORKQUEUE callback, run later by its
	 * own QP's whole teardown, may wait for a softirq QP's flushed
	 * context, which is back by then.
	 */
	bool halves = !ibpost_dev_iwarp(dev);
	bool softirq = true;
	struct ibpost_qp *qp;
	LIST_HEAD(left);

	for (;;) {
		mutex_lock(&dev->qp_lock);
		qp = ibpost_dev_next_unseen(dev, softirq);
		if (!qp) {
			if (!list_empty(&left)) {
				mutex_unlock(&dev->qp_lock);
				ibpost_removal_free_cqs(dev, &left);
				continue;
			}
			if (!softirq)
				break;
			/* The others, one whole teardown each. */
			softirq = false;
			mutex_unlock(&dev->qp_lock);
			continue;
		}
		qp->removal_seen = true;
		refcount_inc(&qp->ref);
		mutex_unlock(&dev->qp_lock);
		if (!softirq || !halves) {
			ibpost_qp_teardown(qp, true);
			ibpost_qp_put(qp);
		} else if (ibpost_qp_teardown_start(qp)) {
			list_add_tail(&qp->removal_node, &left);
		} else {
			ibpost_qp_put(qp);
		}
	}
	/* Their QPs torn down: the SRQs, and what they still hold. */
	ibpost_dev_teardown_srqs(dev);
}
