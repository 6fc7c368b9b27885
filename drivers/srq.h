/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared receive queues (srq.c): a ring of the ring layer posted to the
 * provider's SRQ, whose WRs any attached QP may take; beside the QP
 * layer, which attaches QPs to them (qp.c) and reaps an attached QP's
 * receive completions at its teardown.
 */
#ifndef _IBPOST_SRQ_H
#define _IBPOST_SRQ_H

#include <linux/completion.h>
#include <linux/mutex.h>
#include <linux/refcount.h>
#include <linux/workqueue.h>
#include <rdma/ibpost.h>
#include "dev.h"

/**
 * struct ibpost_srq - a shared receive queue and its accounting
 * @ref: the consumer's reference and the event work's; the last
 *       ibpost_srq_put() frees it
 * @mutex: serializes the provider SRQ's teardown (destroy, device
 *         removal) and ibpost_srq_arm(); never held around a callback
 * @flushed: completed once the teardown's flushes are over
 * @dev: the device (holds a reference)
 * @rqp: what the ring knows: rqp.ibsrq the provider's SRQ (NULL once
 *       torn down), rqp.dead set with it under @rq's lock
 * @rq: the ring of receive WRs; @rq.qp is NULL: each completion names
 *      the QP that took the WR
 * @attr: the attributes, with the capacities the provider granted
 * @node: entry in dev->srqs, under dev->qp_lock, until destroyed
 * @nr_qps: QPs attached (created with it, not yet destroyed), under
 *          dev->qp_lock
 * @dying: a destroy is under way: no QP attaches; under dev->qp_lock
 * @removal_seen: device removal has torn it down; under dev->qp_lock
 * @events: IB_EVENT_* bits the provider reported, not yet told
 * @event_work: tells the consumer's event callback, with a reference
 * @events_off: destroyed: @event_work no longer calls the consumer
 */
struct ibpost_srq {
	refcount_t ref;
	struct mutex mutex;	/* see the kernel-doc above */
	struct completion flushed;
	struct ibpost_dev *dev;
	struct ibpost_ring_qp rqp;
	struct ibpost_queue rq;
	struct ibpost_srq_attr attr;
	struct list_head node;
	unsigned int nr_qps;
	bool dying;
	bool removal_seen;
	unsigned long events;
	struct work_struct event_work;
	bool events_off;
};

/* srq.c */
int ibpost_srq_attach(struct ibpost_dev *dev, struct ibpost_srq *srq,
		      enum ib_poll_context poll_ctx);
void ibpost_srq_detach(struct ibpost_srq *srq);
void ibpost_dev_teardown_srqs(struct ibpost_dev *dev);

/* post.c */
int ibpost_post_srq_recv_mrs(struct ibpost_srq *srq,
			     const struct ib_recv_wr *wr,
			     const struct ib_recv_wr **bad_wr,
			     struct ibpost_mr **mrs);

#endif /* _IBPOST_SRQ_H */
