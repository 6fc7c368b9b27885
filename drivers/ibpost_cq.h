/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Freeing a CQ safely, for ibpost and for the benchmark's raw verbs side,
 * which must not post or complete through ibpost (so this header holds a
 * static inline only).
 */
#ifndef _IBPOST_CQ_H
#define _IBPOST_CQ_H

#include <linux/delay.h>
#include <linux/irq_poll.h>
#include <linux/rcupdate.h>
#include <rdma/ib_verbs.h>

/*
 * A CQ of ib_core's pool (cq->shared) is never freed by its users, so
 * nothing waits for its polls: its other users may keep them coming.
 */
static inline bool ibpost_cq_poll_scheduled(struct ib_cq *cq)
{
	return cq && !cq->shared && cq->poll_ctx == IB_POLL_SOFTIRQ &&
	       test_bit(IRQ_POLL_F_SCHED, &cq->iop.state);
}

/*
 * Whether @cq's own context may be running completions it polled: its
 * irq_poll is scheduled (cleared once the batch is delivered), or its work
 * item pending or running (work_busy(), a snapshot: the caller polls the
 * CQ again after it says idle). A DIRECT CQ has none.
 */
static inline bool ibpost_cq_poll_busy(struct ib_cq *cq)
{
	switch (cq->poll_ctx) {
	case IB_POLL_SOFTIRQ:
		return test_bit(IRQ_POLL_F_SCHED, &cq->iop.state);
	case IB_POLL_WORKQUEUE:
	case IB_POLL_UNBOUND_WORKQUEUE:
		return work_busy(&cq->work);
	default:
		return false;
	}
}

/* Whether @a or @b (NULL: none) is polled in softirq (irq_poll). */
static inline bool ibpost_cqs_softirq(struct ib_cq *a, struct ib_cq *b)
{
	return (a && !a->shared && a->poll_ctx == IB_POLL_SOFTIRQ) ||
	       (b && !b->shared && b->poll_ctx == IB_POLL_SOFTIRQ);
}

/*
 * Whether @work is @cq's work item (NULL: no CQ): the current task then
 * runs @cq's completions (IB_POLL_WORKQUEUE). Only the address is
 * compared, the CQ not read: a teardown may free it meanwhile, but not
 * while a thread runs its work item (ib_free_cq() waits for that). A CQ
 * polled otherwise has no work item there (its irq_poll shares the
 * place), so no thread runs one at that address.
 */
static inline bool ibpost_cq_runs_work(const struct ib_cq *cq,
				       const struct work_struct *work)
{
	return cq && work == &cq->work;
}

/*
 * ib_free_cq() of @a and @b (NULL: none), once their QP is gone. On an
 * IB_POLL_SOFTIRQ CQ, ib_core's ib_poll_handler() clears
 * IRQ_POLL_F_SCHED (irq_poll_complete) before it re-arms the CQ
 * (ib_req_notify_cq), so ib_free_cq()'s irq_poll_disable() can return
 * while a handler on another CPU still uses the CQ it then frees (a KASAN
 * use-after-free in rxe_req_notify_cq, seen on 6.12 with two CPUs, and an
 * Oops there on 6.1 in the benchmark's raw side). With the QP destroyed
 * nothing schedules the poll again but a running handler, so wait until
 * none is scheduled and every one that ran has returned: it runs with
 * bottom halves off, which synchronize_rcu() waits for. A QP's two CQs
 * share one grace period.
 *
 * Context: Process context; sleeps.
 * Return: the grace periods waited for (0 without an IB_POLL_SOFTIRQ CQ).
 */
static inline unsigned int ibpost_free_cqs(struct ib_cq *a, struct ib_cq *b)
{
	unsigned int gps = 0;

	if (ibpost_cqs_softirq(a, b)) {
		do {
			while (ibpost_cq_poll_scheduled(a) ||
			       ibpost_cq_poll_scheduled(b))
				usleep_range(100, 200);
			synchronize_rcu();
			gps++;
		} while (ibpost_cq_poll_scheduled(a) ||
			 ibpost_cq_poll_scheduled(b));
	}
	ib_free_cq(a);
	if (b)
		ib_free_cq(b);
	return gps;
}

static inline unsigned int ibpost_free_cq(struct ib_cq *cq)
{
	return ibpost_free_cqs(cq, NULL);
}

#endif /* _IBPOST_CQ_H */
