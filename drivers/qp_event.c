// SPDX-License-Identifier: GPL-2.0
/*
 * A QP's asynchronous events (the provider's struct ib_event).
 *
 * The provider may call the QP's event handler in any context, its own
 * locks held. The handler only records the event and queues the QP's
 * event work, which holds a reference on the QP; the work, in process
 * context: on a fatal, request or access error moves the QP to ERR (the
 * provider has stopped it; ERR makes it flush what it holds, and ibpost
 * flushes later posts itself), so that every outstanding context comes
 * back (not a QP the consumer has moved to RESET since: the event was
 * its old life's); passes COMM_EST to rdma_cm for a QP on a cm_id
 * (rdma_notify(), as a ULP's handler would); both under qp->mutex and
 * only while the provider QP exists. Then it tells the consumer's event
 * callback, once per event type pending, in ascending order of type,
 * until the QP is destroyed: ibpost_qp_destroy() cancels the work after
 * the teardown (no event comes later) and waits for a running one, so
 * that no callback comes after it returns; a destroy from the event
 * callback itself only stops the calls that would follow.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bitops.h>
#include "qp_event.h"
#include "cm.h"
#include "ibpost_trace.h"

#define IBPOST_QP_ERR_EVENTS	(BIT(IB_EVENT_QP_FATAL) | \
				 BIT(IB_EVENT_QP_REQ_ERR) | \
				 BIT(IB_EVENT_QP_ACCESS_ERR))

/* The provider's event handler of an ibpost QP (ib_qp_init_attr). */
void ibpost_qp_event(struct ib_event *event, void *context)
{
	struct ibpost_qp *qp = context;

	if (event->event >= BITS_PER_LONG)
		return;
	set_bit(event->event, &qp->events);
	/* The work's reference; none once the QP is being freed. */
	if (!refcount_inc_not_zero(&qp->ref))
		return;
	if (!queue_work(ibpost_event_wq, &qp->event_work))
		refcount_dec(&qp->ref);	/* queued already: not the last */
}

/*
 * No event work runs for @qp after this returns, and none calls its
 * consumer again (a destroy, or a creation that failed after the provider
 * QP existed). From the event work itself (the consumer destroys its QP
 * from its event callback) only the calls are stopped.
 */
void ibpost_qp_events_stop(struct ibpost_qp *qp)
{
	WRITE_ONCE(qp->events_off, true);
	if (current_work() == &qp->event_work)
		return;
	/* Pending: its reference, never the last (the caller holds one). */
	if (cancel_work_sync(&qp->event_work))
		refcount_dec(&qp->ref);
}

/* The QP's event work: what the events above ask, then the consumer. */
void ibpost_qp_event_work(struct work_struct *work)
{
	struct ibpost_qp *qp = container_of(work, struct ibpost_qp,
					    event_work);
	struct ib_qp_attr qa = { .qp_state = IB_QPS_ERR };
	unsigned long events = xchg(&qp->events, 0);
	unsigned int e;

	/* Only what ibpost acts on waits for the QP (a RESET may hold it). */
	if (events & (IBPOST_QP_ERR_EVENTS | BIT(IB_EVENT_COMM_EST))) {
		/*
		 * A subclass of its own: a callback under another QP's mutex
		 * may destroy this QP, waiting for this work, which runs no
		 * callback under the mutex it takes.
		 */
		mutex_lock_nested(&qp->mutex, IBPOST_QP_EVENT_SUBCLASS);
		if (qp->rqp.ibqp && (events & IBPOST_QP_ERR_EVENTS) &&
		    READ_ONCE(qp->rqp.state) != IB_QPS_RESET) {
			/* Stopped by the provider: ERR even if it says no. */
			ib_modify_qp(qp->rqp.ibqp, &qa, IB_QP_STATE);
			ibpost_set_state(qp, IB_QPS_ERR);
		}
		if (qp->rqp.ibqp && (events & BIT(IB_EVENT_COMM_EST)))
			ibpost_cm_notify(qp, IB_EVENT_COMM_EST);
		mutex_unlock(&qp->mutex);
	}
	for_each_set_bit(e, &events, BITS_PER_LONG) {
		pr_debug("qp %u: event %s\n", qp->rqp.qpn,
			 ib_event_msg((enum ib_event_type)e));
		if (qp->attr.event && !READ_ONCE(qp->events_off))
			qp->attr.event(qp, (enum ib_event_type)e);
	}
	ibpost_qp_put(qp);
}
