// SPDX-License-Identifier: GPL-2.0
/*
 * Completions as the consumer takes them: polling a CQ (a DIRECT QP's on
 * its consumer's calls), waiting for a parked completion
 * (ibpost_get_*_comp()), the flush worker that returns WRs posted in ERR,
 * and the release of parked completions at destroy. The bookkeeping
 * behind them, each context back exactly once, is the ring's (ring.c).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/sched/signal.h>
#include "qp_core.h"

/*
 * Poll a CQ and run its completions, up to @budget (-1: until empty), one
 * completion per ib_poll_cq(). Unlike ib_process_cq_direct(), no batch
 * waits anywhere: a callback may poll the same CQ again (a DIRECT
 * consumer deregistering an MR from its completion callback waits for the
 * invalidation that way) and completions still run in queue order, which
 * the send queue's reclaim relies on. Return: completions run.
 */
int ibpost_cq_poll(struct ib_cq *cq, int budget)
{
	struct ib_wc wc;
	int done = 0;

	while ((budget < 0 || done < budget) && ib_poll_cq(cq, 1, &wc) > 0) {
		if (wc.wr_cqe)
			wc.wr_cqe->done(cq, &wc);
		else
			WARN_ON_ONCE(wc.status == IB_WC_SUCCESS);
		done++;
	}
	return done;
}

/*
 * Take @qp's DIRECT polling for the current task, under qp->mutex so that
 * the CQs cannot be freed meanwhile; nested from a callback of that very
 * poll, without taking it again. With @wait false a busy QP is not waited
 * for. Return: whether the current task may poll (and must call
 * ibpost_poll_end() with @nested).
 */
static bool ibpost_poll_begin(struct ibpost_qp *qp, bool wait, bool *nested)
{
	*nested = ibpost_qp_polled_by_current(qp);
	if (*nested)
		return true;
	if (wait)
		ibpost_qp_lock(qp);
	else if (!mutex_trylock(&qp->mutex))
		return false;
	ibpost_qp_poller_take(qp);
	return true;
}

static void ibpost_poll_end(struct ibpost_qp *qp, bool nested)
{
	if (nested)
		return;
	/* Not nested: no task polled @qp while this one took its mutex. */
	ibpost_qp_poller_give(qp, NULL);
	mutex_unlock(&qp->mutex);
}

/*
 * A DIRECT poll's share of the WRs posted in ERR: up to @budget of @q's,
 * which the flush worker leaves to it when @q has a callback (and may
 * have parked already when not). One unlocked read when there are none.
 */
static u32 ibpost_poll_synthetic(struct ibpost_queue *q, u32 budget)
{
	if (likely(!READ_ONCE(q->nr_synthetic)))
		return 0;
	return ibpost_queue_finish_synthetic(q, budget);
}

/*
 * Poll a DIRECT queue's CQ on the consumer's behalf (see above), waiting
 * for the QP when another task polls it, and return its WRs flushed in
 * ERR. Return: whether anything completed.
 */
bool ibpost_qp_poll_direct(struct ibpost_qp *qp, struct ibpost_queue *q)
{
	bool nested;
	int n = 0;

	ibpost_poll_begin(qp, true, &nested);
	if (qp->rqp.ibqp && q->cq) {
		n = ibpost_cq_poll(q->cq, -1);
		n += ibpost_poll_synthetic(q, U32_MAX);
	}
	ibpost_poll_end(qp, nested);
	return n > 0;
}

/**
 * ibpost_poll - busy-poll a DIRECT QP's completion queues once
 * @qp: a QP created with IB_POLL_DIRECT
 * @budget: at most this many completion entries, send and receive together
 *
 * For consumers that trade a CPU for latency, as NVMe-oF's polling queues
 * do: each completion entry found is processed at once, exactly as the
 * QP's other paths would (its send_done/recv_done callback runs, or its
 * context is queued for ibpost_get_send_comp()/ibpost_get_recv_comp()),
 * the send queue's first; then the WRs posted while the QP was in ERR,
 * which ibpost flushes itself (each counts as an entry): a DIRECT QP's
 * callbacks run only from its consumer's calls (this one, and ibpost's
 * waits inside registration, RESET and destroy), never from a work item.
 * Nothing waits: when another thread is polling the QP, or ibpost's own
 * teardown, RESET or drain holds it, the call returns 0 at once. A
 * consumer spins on this call; on a software provider it lets the
 * provider's pending work run between calls (a bottom half:
 * local_bh_disable(); local_bh_enable(); a thread: cond_resched()).
 * Callbacks may post, may call ibpost_poll() on the same QP again and may
 * move it to another state (ibpost_qp_modify(), RESET included); they may
 * not destroy it (ibpost_qp_destroy() refuses, with a warning).
 *
 * The count is of completion entries, ibpost's own included (a forced
 * signal that reclaims unsignaled WRs, a registration's WR): the contexts
 * delivered, not this count, tell the consumer what completed.
 *
 * Context: Process context.
 * Return: the number of completion entries processed (0 when none was
 * ready or the QP is busy, a removal's teardown under way included),
 * -ENODEV when the QP's device is gone (its contexts came back by the
 * removal's flush), or -EINVAL when @qp is not
 * IB_POLL_DIRECT or @budget is not positive.
 */
int ibpost_poll(struct ibpost_qp *qp, int budget)
{
	bool nested;
	int n;

	might_sleep();
	if (qp->attr.poll_ctx != IB_POLL_DIRECT || budget <= 0)
		return -EINVAL;
	/* Never wait: a teardown may be flushing into our callback. */
	if (!ibpost_poll_begin(qp, false, &nested))
		return 0;
	if (qp->cqs_left) {
		/* A removal's teardown is half done: the flush is to come. */
		n = 0;
	} else if (!qp->rqp.ibqp || !qp->sq.cq || !qp->rq.cq) {
		n = -ENODEV;
	} else {
		n = ibpost_cq_poll(qp->sq.cq, budget);
		if (n < budget)
			n += ibpost_cq_poll(qp->rq.cq, budget - n);
		if (n < budget)
			n += ibpost_poll_synthetic(&qp->sq, budget - n);
		if (n < budget)
			n += ibpost_poll_synthetic(&qp->rq, budget - n);
	}
	ibpost_poll_end(qp, nested);
	return n;
}
EXPORT_SYMBOL_NS_GPL(ibpost_poll, IBPOST_NS);

/*
 * Complete the WRs posted while the QP was in ERR, outside any post call;
 * not a DIRECT queue's with a callback, which its consumer's own polling
 * returns (ibpost_queue_direct_cb()): no kworker runs such a callback.
 */
void ibpost_flush_work(struct work_struct *work)
{
	struct ibpost_qp *qp = container_of(work, struct ibpost_qp,
					    rqp.flush_work);

	if (!ibpost_queue_direct_cb(&qp->sq))
		ibpost_queue_finish_synthetic(&qp->sq, U32_MAX);
	if (!ibpost_queue_direct_cb(&qp->rq))
		ibpost_queue_finish_synthetic(&qp->rq, U32_MAX);
	ibpost_ring_reclaim_retired(&qp->sq);
}

/*
 * At destroy, after the teardown: hand every completion still parked in
 * @q to the QP's release callback, in completion order, one at a time
 * with no lock held.
 */
void ibpost_queue_release_done(struct ibpost_queue *q)
{
	struct ibpost_qp *qp = q->qp;
	struct ibpost_comp comp;

	might_sleep();
	while (ibpost_queue_take_done(q, &comp))
		qp->attr.release(qp, q->is_send, &comp);
}

static int ibpost_get_comp(struct ibpost_queue *q, struct ibpost_comp *comp,
			   long timeout)
{
	bool direct = q->rqp->poll_ctx == IB_POLL_DIRECT;
	unsigned long deadline = jiffies + max(timeout, 0L);
	long ret, wait;

	if (ibpost_queue_calls_back(q))
		return -EINVAL;
	for (;;) {
		if (ibpost_queue_take_done(q, comp))
			return 1;
		if (direct && ibpost_qp_poll_direct(q->qp, q))
			continue;
		if (time_after_eq(jiffies, deadline))
			return 0;
		/* Nobody else polls a DIRECT CQ: look again every tick. */
		wait = direct ? 1 : (long)(deadline - jiffies);
		ret = wait_event_interruptible_timeout(q->wait,
						       !list_empty(&q->done),
						       wait);
		if (ret < 0)
			return ret;
	}
}

/**
 * ibpost_get_send_comp - wait for the next returned send context
 * @qp: a QP created without a send_done callback
 * @comp: filled with the completion
 * @timeout_jiffies: how long to wait; 0 only checks
 *
 * Like librdmacm's rdma_get_send_comp(): contexts come back in completion
 * order, one per call.
 *
 * Context: Process context; sleeps interruptibly unless @timeout_jiffies
 * is 0.
 * Return: 1 with @comp filled, 0 on timeout, -ERESTARTSYS when a signal
 * arrived, -EINVAL when @qp has a send_done callback or is in ib_cqe mode.
 */
int ibpost_get_send_comp(struct ibpost_qp *qp, struct ibpost_comp *comp,
			 long timeout_jiffies)
{
	return ibpost_get_comp(&qp->sq, comp, timeout_jiffies);
}
EXPORT_SYMBOL_NS_GPL(ibpost_get_send_comp, IBPOST_NS);

/**
 * ibpost_get_recv_comp - wait for the next returned receive context
 * @qp: a QP created without a recv_done callback
 * @comp: filled with the completion
 * @timeout_jiffies: how long to wait; 0 only checks
 *
 * Like librdmacm's rdma_get_recv_comp().
 *
 * Context: Process context; sleeps interruptibly unless @timeout_jiffies
 * is 0.
 * Return: 1 with @comp filled, 0 on timeout, -ERESTARTSYS when a signal
 * arrived, -EINVAL when @qp has a recv_done callback, is in ib_cqe mode or
 * takes its receives from an SRQ.
 */
int ibpost_get_recv_comp(struct ibpost_qp *qp, struct ibpost_comp *comp,
			 long timeout_jiffies)
{
	/* Its receives complete through the SRQ's callback. */
	if (qp->attr.srq)
		return -EINVAL;
	return ibpost_get_comp(&qp->rq, comp, timeout_jiffies);
}
EXPORT_SYMBOL_NS_GPL(ibpost_get_recv_comp, IBPOST_NS);
