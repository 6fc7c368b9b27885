// SPDX-License-Identifier: GPL-2.0
/*
 * The white-box suites' accessors, built only into test builds (a
 * kernel with CONFIG_KUNIT): the suites read (and in a few places set)
 * ibpost's insides here, through ibpost_test_access.h, rather than
 * through the structures of the layers' headers. The hook itself is
 * hook.c's.
 */
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/workqueue.h>
#include "ibpost_test_access.h"
#include "qp.h"
#include "mr_table.h"
#include "ring_post.h"
#include "srq.h"

/* The suites' view of ibpost's insides (ibpost_test_access.h). */

static struct ibpost_queue *ibpost_test_q(struct ibpost_qp *qp, bool send)
{
	return send ? &qp->sq : &qp->rq;
}

/**
 * ibpost_test_queue_get - snapshot a work queue's positions and counters
 * @qp: the QP
 * @send: its send queue, else its receive queue
 * @tq: filled under the queue's lock, consistent with itself
 *
 * For ibpost's own KUnit suites only; exists in test builds only.
 *
 * Context: Any context.
 * Return: nothing.
 */
void ibpost_test_queue_get(struct ibpost_qp *qp, bool send,
			   struct ibpost_test_queue *tq)
{
	struct ibpost_queue *q = ibpost_test_q(qp, send);
	struct ibpost_stats st;
	unsigned long flags;

	spin_lock_irqsave(&q->lock, flags);
	tq->head = q->head;
	tq->tail = q->tail;
	tq->since_signal = q->since_signal;
	tq->provider_errors = q->provider_errors;
	tq->posts_one = q->test_posts[0];
	tq->posts_chain = q->test_posts[1];
	tq->run_reclaims = q->test_run_reclaims;
	tq->comp_common = q->test_comp_common;
	st = q->stats;
	spin_unlock_irqrestore(&q->lock, flags);
	tq->mask = q->mask;
	tq->depth = q->depth;
	tq->signal_interval = q->signal_interval;
	tq->stage = q->stage_max;
	tq->sinks = send && READ_ONCE(qp->sinks.ring);
	tq->posted = st.posted;
	tq->completed = st.completed;
	tq->flushed = st.flushed;
	tq->failed = st.failed;
	tq->forced_signals = st.forced_signals;
	tq->refused_einval = st.refused.einval;
	tq->refused_enomem = st.refused.enomem;
	tq->refused_enotconn = st.refused.enotconn;
	tq->refused_enodev = st.refused.enodev;
	tq->refused_other = st.refused.other;
}
EXPORT_SYMBOL_NS_GPL(ibpost_test_queue_get, IBPOST_NS);

/**
 * ibpost_test_srq_comp_common - completions an SRQ's handler took on its
 *                               common path
 * @srq: the SRQ
 *
 * For ibpost's own KUnit suites only; exists in test builds only.
 *
 * Context: Any context.
 * Return: the count, read under the SRQ's queue lock.
 */
u32 ibpost_test_srq_comp_common(struct ibpost_srq *srq)
{
	unsigned long flags;
	u32 n;

	spin_lock_irqsave(&srq->rq.lock, flags);
	n = srq->rq.test_comp_common;
	spin_unlock_irqrestore(&srq->rq.lock, flags);
	return n;
}
EXPORT_SYMBOL_NS_GPL(ibpost_test_srq_comp_common, IBPOST_NS);

void ibpost_test_frwr_get(struct ibpost_qp *qp, struct ibpost_test_frwr *tf)
{
	struct ibpost_frwr_pool *pool = &qp->frwr;
	struct ibpost_frwr *ent;
	unsigned long flags;

	memset(tf, 0, sizeof(*tf));
	spin_lock_irqsave(&qp->sq.lock, flags);
	tf->n = pool->n;
	if (pool->n) {
		list_for_each_entry(ent, &pool->free, node)
			tf->free++;
		list_for_each_entry(ent, &pool->revoke, node)
			tf->revoking++;
	}
	tf->pending = pool->npending;
	tf->reserved = qp->sq.reserved;
	tf->maps = pool->stats.maps;
	tf->eagain = pool->stats.eagain;
	tf->regs = pool->stats.regs;
	tf->invs = pool->stats.invs;
	tf->done = pool->stats.done;
	tf->remote_inv = pool->stats.remote_inv;
	tf->revoked = pool->stats.revoked;
	tf->reg_failed = pool->stats.reg_failed;
	spin_unlock_irqrestore(&qp->sq.lock, flags);
}
EXPORT_SYMBOL_NS_GPL(ibpost_test_frwr_get, IBPOST_NS);

void ibpost_test_rw_get(struct ibpost_qp *qp, struct ibpost_test_rw *tr)
{
	struct ibpost_rw *rw = &qp->rw;
	struct list_head *pos;
	unsigned long flags;

	memset(tr, 0, sizeof(*tr));
	spin_lock_irqsave(&qp->sq.lock, flags);
	list_for_each(pos, &rw->live)
		tr->live++;
	list_for_each(pos, &rw->revoke)
		tr->revoking++;
	if (qp->rqp.ibqp)
		tr->mrs_used = READ_ONCE(qp->rqp.ibqp->mrs_used);
	tr->last_wrs = rw->stats.last_wrs;
	tr->ops = rw->stats.ops;
	tr->wrs = rw->stats.wrs;
	tr->mr_ops = rw->stats.mr_ops;
	tr->split = rw->stats.split;
	tr->revoked = rw->stats.revoked;
	tr->lost = rw->stats.lost;
	spin_unlock_irqrestore(&qp->sq.lock, flags);
}
EXPORT_SYMBOL_NS_GPL(ibpost_test_rw_get, IBPOST_NS);

/**
 * ibpost_test_queue_set_pos - move an empty work queue's ring positions
 * @qp: the QP
 * @send: its send queue, else its receive queue
 * @pos: the new head and tail (e.g. just short of the u32 wrap)
 *
 * For ibpost's own KUnit suites only; exists in test builds only.
 *
 * Context: Any context.
 * Return: 0, or -EBUSY when a slot of the queue is in use.
 */
int ibpost_test_queue_set_pos(struct ibpost_qp *qp, bool send, u32 pos)
{
	struct ibpost_queue *q = ibpost_test_q(qp, send);
	unsigned long flags;
	int ret = -EBUSY;

	spin_lock_irqsave(&q->lock, flags);
	if (q->head == q->tail) {
		q->head = pos;
		q->tail = pos;
		ret = 0;
	}
	spin_unlock_irqrestore(&q->lock, flags);
	return ret;
}
EXPORT_SYMBOL_NS_GPL(ibpost_test_queue_set_pos, IBPOST_NS);

/**
 * ibpost_test_replay_comp - hand ibpost a completion again, as a provider may
 * @qp: the QP
 * @send: for a slot of its send queue, else of its receive queue
 * @pos: the slot's position (its index is @pos & mask)
 * @status: the completion's status
 *
 * Runs the slot's completion handler on a work completion naming the
 * slot, as its CQ's poller would: a provider completing a WR twice, or
 * after ibpost took the slot back. For ibpost's own KUnit suites only;
 * exists in test builds only.
 *
 * Context: Process context; the handler runs with bottom halves disabled.
 * Return: nothing.
 */
void ibpost_test_replay_comp(struct ibpost_qp *qp, bool send, u32 pos,
			     enum ib_wc_status status)
{
	struct ibpost_queue *q = ibpost_test_q(qp, send);
	struct ib_wc wc = {
		.status = status,
		.opcode = send ? IB_WC_RDMA_WRITE : IB_WC_RECV,
		.qp = qp->rqp.ibqp,
	};

	wc.wr_cqe = &q->slots[pos & q->mask].cqe;
	local_bh_disable();
	wc.wr_cqe->done(q->cq, &wc);
	local_bh_enable();
}
EXPORT_SYMBOL_NS_GPL(ibpost_test_replay_comp, IBPOST_NS);

/*
 * The sink registration of the READ in @pos of @q, and its one SGE (the
 * sink's own), under q->lock.
 */
static void ibpost_test_sink_get(struct ibpost_queue *q, u32 pos,
				 struct ibpost_test_slot *ts)
	__must_hold(&q->lock)
{
	struct ibpost_sink *sink = &q->qp->sinks.ring[pos & q->mask];

	ts->invalidate_rkey = sink->inv_key;
	/* A dirty sink's MR is being replaced by the sinks' work, unlocked. */
	if (sink->dirty || !sink->mr)
		return;
	ts->sge_addr = sink->sge.addr;
	ts->sge_lkey = sink->sge.lkey;
	ts->sink_lkey = sink->mr->lkey;
	ts->sink_rkey = sink->mr->rkey;
	ts->sink_access = sink->reg.access;
	ts->sink_iova = sink->mr->iova;
	ts->sink_length = sink->mr->length;
}

/**
 * ibpost_test_send_slot - what ibpost handed the provider for a send slot
 * @qp: the QP
 * @pos: the slot's position (its index is @pos & mask); the slot's WR is
 *       the last one posted there, whether or not it has completed
 * @ts: filled from the slot, and from its READ sink on iWARP
 *
 * For ibpost's own KUnit suites only; exists in test builds only.
 *
 * Context: Any context.
 * Return: nothing.
 */
void ibpost_test_send_slot(struct ibpost_qp *qp, u32 pos,
			   struct ibpost_test_slot *ts)
{
	struct ibpost_queue *q = &qp->sq;
	struct ibpost_slot *slot;
	unsigned long flags;

	memset(ts, 0, sizeof(*ts));
	spin_lock_irqsave(&q->lock, flags);
	slot = &q->slots[pos & q->mask];
	ts->signaled = slot->signaled;
	ts->user_signaled = slot->user_signaled;
	ts->sink = slot->prefixed;
	ts->opcode = slot->opcode;
	/*
	 * Only a sink READ's SGE is ibpost's: any other WR's sg_list is the
	 * poster's, gone once its post returned.
	 */
	if (slot->prefixed && qp->sinks.ring)
		ibpost_test_sink_get(q, pos, ts);
	spin_unlock_irqrestore(&q->lock, flags);
}
EXPORT_SYMBOL_NS_GPL(ibpost_test_send_slot, IBPOST_NS);

/**
 * ibpost_test_mr_users - the users counted on an MR
 * @mr: the MR
 *
 * For ibpost's own KUnit suites only; exists in test builds only.
 *
 * Context: Any context.
 * Return: the MR's users: one for each SGE of a WR not yet completed
 * that uses @mr outside a queue's hit, one for each queue whose hit @mr
 * is with SGEs outstanding (see mr.c), one for each dirty READ sink
 * pinning it; 0 exactly when no posted WR uses @mr.
 */
int ibpost_test_mr_users(struct ibpost_mr *mr)
{
	return atomic_read(&mr->use.users);
}
EXPORT_SYMBOL_NS_GPL(ibpost_test_mr_users, IBPOST_NS);

/**
 * ibpost_test_mr_lock_contended - whether a thread waits for an MR's lock
 * @mr: the MR
 *
 * Whether another thread spins on the MR lock of @mr's device, which the
 * caller holds: at IBPOST_HOOK_DEREG_BUSY, a post that found the MR
 * revoked and waits there for the dereg's decision. For ibpost's own
 * KUnit suites only; exists in test builds only.
 *
 * Context: Any context.
 * Return: spin_is_contended() of the lock.
 */
bool ibpost_test_mr_lock_contended(struct ibpost_mr *mr)
{
	return spin_is_contended(&mr->dev->mr_lock);
}
EXPORT_SYMBOL_NS_GPL(ibpost_test_mr_lock_contended, IBPOST_NS);

/**
 * ibpost_test_dev_iwarp - whether ibpost found a device to be iWARP
 * @dev: the device, present or already removed
 *
 * For ibpost's own KUnit suites only; exists in test builds only.
 *
 * Context: Any context.
 * Return: rdma_protocol_iwarp() of the device's first port at its add.
 */
bool ibpost_test_dev_iwarp(struct ibpost_dev *dev)
{
	return ibpost_dev_iwarp(dev);
}
EXPORT_SYMBOL_NS_GPL(ibpost_test_dev_iwarp, IBPOST_NS);

/**
 * ibpost_test_qp_dev - the device a QP was created on
 * @qp: the QP
 *
 * For ibpost's own KUnit suites only; exists in test builds only.
 *
 * Context: Any context.
 * Return: the device, valid while @qp is (no reference is taken).
 */
struct ibpost_dev *ibpost_test_qp_dev(struct ibpost_qp *qp)
{
	return qp->dev;
}
EXPORT_SYMBOL_NS_GPL(ibpost_test_qp_dev, IBPOST_NS);

/**
 * ibpost_test_qp_tracked_state - the QP state as ibpost last set or saw it
 * @qp: the QP
 *
 * For ibpost's own KUnit suites only; exists in test builds only. An
 * iWARP provider need not report its QPs' state (siw in 6.1 does not).
 *
 * Context: Any context.
 * Return: ibpost's view of the state.
 */
enum ib_qp_state ibpost_test_qp_tracked_state(struct ibpost_qp *qp)
{
	return READ_ONCE(qp->rqp.state);
}
EXPORT_SYMBOL_NS_GPL(ibpost_test_qp_tracked_state, IBPOST_NS);

/**
 * ibpost_test_qp_failed - have ibpost see @qp in ERR, as a failed WR would
 * @qp: the QP
 *
 * For ibpost's own KUnit suites only; exists in test builds only. What
 * the completion side does when the provider fails a WR (ring.c), without
 * a WR or the provider: a hook can make it happen in the middle of a post.
 *
 * Context: Any context, also under a queue's lock (at a test hook).
 */
void ibpost_test_qp_failed(struct ibpost_qp *qp)
{
	WRITE_ONCE(qp->rqp.state, IB_QPS_ERR);
}
EXPORT_SYMBOL_NS_GPL(ibpost_test_qp_failed, IBPOST_NS);

/**
 * ibpost_test_set_state_from - move ibpost's view of @qp from @from to @to
 * @qp: the QP
 * @from: the state it must still be in
 * @to: the state then recorded
 *
 * For ibpost's own KUnit suites only; exists in test builds only. What
 * rdma_cm's ESTABLISHED does to an iWARP QP (INIT to RTS), on any QP.
 *
 * Context: Process context.
 */
void ibpost_test_set_state_from(struct ibpost_qp *qp, enum ib_qp_state from,
				enum ib_qp_state to)
{
	ibpost_set_state_from(qp, from, to);
}
EXPORT_SYMBOL_NS_GPL(ibpost_test_set_state_from, IBPOST_NS);

/**
 * ibpost_test_qp_cm_res - the restrack id of a QP's rdma_cm id
 * @qp: a QP made by ibpost_qp_create_cm()
 * @res_id: set to the restrack id ibpost recorded for the cm_id
 *
 * For ibpost's own KUnit suites only; exists in test builds only.
 *
 * Context: Any context.
 * Return: whether ibpost tracks the cm_id by that id (else @res_id is
 * left as it was).
 */
bool ibpost_test_qp_cm_res(struct ibpost_qp *qp, u32 *res_id)
{
	if (!qp->cm_tracked)
		return false;
	*res_id = qp->cm_res_id;
	return true;
}
EXPORT_SYMBOL_NS_GPL(ibpost_test_qp_cm_res, IBPOST_NS);

/**
 * ibpost_test_qp_cancel_flush - cancel a QP's pending flush worker
 * @qp: the QP
 *
 * For ibpost's own KUnit suites only; exists in test builds only: makes
 * the window in which WRs posted in ERR wait for their flush as wide as
 * the test wants (the QP's teardown still flushes them).
 *
 * Context: Any context; does not wait for a running worker.
 * Return: whether the worker was pending.
 */
bool ibpost_test_qp_cancel_flush(struct ibpost_qp *qp)
{
	return cancel_work(&qp->rqp.flush_work);
}
EXPORT_SYMBOL_NS_GPL(ibpost_test_qp_cancel_flush, IBPOST_NS);

/**
 * ibpost_test_qp_lock - hold a QP as its teardown, RESET or poller does
 * @qp: the QP
 *
 * For ibpost's own KUnit suites only; exists in test builds only.
 * Release with ibpost_test_qp_unlock().
 *
 * Context: Process context; may sleep.
 * Return: nothing.
 */
void ibpost_test_qp_lock(struct ibpost_qp *qp)
{
	ibpost_qp_lock(qp);
}
EXPORT_SYMBOL_NS_GPL(ibpost_test_qp_lock, IBPOST_NS);

/**
 * ibpost_test_qp_unlock - release a QP held by ibpost_test_qp_lock()
 * @qp: the QP
 *
 * For ibpost's own KUnit suites only; exists in test builds only.
 *
 * Context: Process context, by the task that took it.
 * Return: nothing.
 */
void ibpost_test_qp_unlock(struct ibpost_qp *qp)
{
	mutex_unlock(&qp->mutex);
}
EXPORT_SYMBOL_NS_GPL(ibpost_test_qp_unlock, IBPOST_NS);

/**
 * ibpost_test_ring_init - a ring on a stand-in QP and CQ, with no device
 * @q: the queue, zeroed
 * @owner: handed to @done_fn as its QP
 * @rqp: what the ring knows of its QP, filled by the caller
 * @send: a send queue
 * @done_fn: the consumer's callback, or NULL to park completions
 * @cq: the CQ its completions name, with cq_context @q
 * @slots: @size slots, zeroed
 * @uses: @size use pointers (one SGE per WR), zeroed
 * @size: a power of two; @size - 1 slots usable
 * @pos: the ring positions' start (a free-running u32)
 *
 * Without @done_fn, q->parked is allocated here (NULL when that failed);
 * the caller frees it with kfree().
 *
 * For ibpost's own KUnit suites only (the ring suite); exists in test
 * builds only.
 *
 * Context: Process context.
 * Return: nothing.
 */
void ibpost_test_ring_init(struct ibpost_queue *q, struct ibpost_qp *owner,
			   struct ibpost_ring_qp *rqp, bool send,
			   void (*done_fn)(struct ibpost_qp *qp, void *context,
					   const struct ib_wc *wc),
			   struct ib_cq *cq, struct ibpost_slot *slots,
			   struct ibpost_ring_use **uses, u32 size, u32 pos)
{
	ibpost_queue_init(q, owner, rqp, send, done_fn);
	q->cq = cq;
	q->slots = slots;
	q->use_array = uses;
	/* Parked completions: freed by the caller (kfree()). */
	if (!done_fn)
		q->parked = kcalloc(size, sizeof(*q->parked), GFP_KERNEL);
	q->mask = size - 1;
	q->depth = size - 1;
	q->max_sge = 1;
	q->head = pos;
	q->tail = pos;
	ibpost_queue_slots_init(q);
}
EXPORT_SYMBOL_NS_GPL(ibpost_test_ring_init, IBPOST_NS);

/**
 * ibpost_test_ring_flush - return every WR of a ring as flushed
 * @q: a queue of ibpost_test_ring_init()
 *
 * ibpost_queue_flush() as a teardown that found no drain marker runs it.
 * For ibpost's own KUnit suites only; exists in test builds only.
 *
 * Context: Process context, no queue lock held.
 * Return: nothing.
 */
void ibpost_test_ring_flush(struct ibpost_queue *q)
{
	ibpost_queue_flush(q, false, false);
}
EXPORT_SYMBOL_NS_GPL(ibpost_test_ring_flush, IBPOST_NS);

/**
 * ibpost_test_ring_unclaim - undo a ring's newest claims
 * @q: a queue of ibpost_test_ring_init()
 * @count: how many
 *
 * What a post the provider refused does to its claims. For ibpost's own
 * KUnit suites only; exists in test builds only.
 *
 * Context: Any context but hard IRQ, no queue lock held.
 * Return: nothing.
 */
void ibpost_test_ring_unclaim(struct ibpost_queue *q, u32 count)
{
	unsigned long flags;

	spin_lock_irqsave(&q->lock, flags);
	ibpost_slot_unclaim(q, count);
	spin_unlock_irqrestore(&q->lock, flags);
}
EXPORT_SYMBOL_NS_GPL(ibpost_test_ring_unclaim, IBPOST_NS);

/**
 * ibpost_test_ring_stage - give a ring of ibpost_test_ring_init() a stage
 * @q: the queue (send or receive)
 * @copies: @max WR copies, zeroed (a receive queue's are as many
 *          struct ib_recv_wr in the same bytes)
 * @wrs: @max caller's WR pointers
 * @prefix: @max prefix WR pointers
 * @max: WRs per provider call at most
 * @interval: the signal interval, at most the ring's depth
 *
 * For ibpost's own KUnit suites only; exists in test builds only.
 *
 * Context: Process context, before the ring is used.
 * Return: nothing.
 */
void ibpost_test_ring_stage(struct ibpost_queue *q,
			    union ibpost_send_copy *copies, const void **wrs,
			    struct ib_send_wr **prefix, u32 max, u32 interval)
{
	q->stage.send = copies;
	q->stage_wr = wrs;
	q->stage_prefix = prefix;
	q->stage_max = max;
	q->signal_interval = interval;
}
EXPORT_SYMBOL_NS_GPL(ibpost_test_ring_stage, IBPOST_NS);

/**
 * ibpost_test_ring_post_send - post a chain through the ring's submit side
 * @q: a send queue of ibpost_test_ring_init() and ibpost_test_ring_stage()
 * @wr: the chain: each WR's wr_id is its context; its SGEs are not looked
 *      at (no MR is counted)
 * @prefix: for each WR of the chain, a prefix WR to chain before it, or
 *          NULL; or NULL for none
 * @bad_wr: set to the first WR not queued, or NULL
 *
 * The ring's part of a post call as post.c runs it (begin, claim under
 * the signal policy, stage, link, batches, end) with no check of the
 * client's, for the ring suite's provider stand-in. For ibpost's own
 * KUnit suites only; exists in test builds only.
 *
 * Context: Any context but hard IRQ.
 * Return: 0; -ENOMEM when the ring is full; or the provider's error.
 */
int ibpost_test_ring_post_send(struct ibpost_queue *q,
			       const struct ib_send_wr *wr,
			       struct ib_send_wr **prefix,
			       const struct ib_send_wr **bad_wr)
{
	struct ibpost_ring_post p = { .rqp = q->rqp, .q = q,
				      .send = q->is_send };
	const struct ib_send_wr *cur, *next;
	u32 used;

	spin_lock_irqsave(&q->lock, p.flags);
	ibpost_ring_post_begin(&p, wr);
	p.synthetic = ibpost_ring_flushing(q);
	used = q->head - q->tail;
	for (cur = wr; cur && !p.ret; cur = next) {
		struct ibpost_slot *slot;

		if (used + p.n >= q->depth) {
			p.ret = -ENOMEM;
			p.rule = IBPOST_RULE_NO_SLOT;
			break;
		}
		slot = ibpost_ring_send_claim(q, cur, NULL, false, used, p.n,
					      ibpost_queue_room(q), 0, false);
		ibpost_ring_link_send(&p, slot,
				      ibpost_ring_stage_send(&p, slot, cur,
							     sizeof(*cur)),
				      prefix ? prefix[p.n] : NULL);
		next = cur->next;
		p.n++;
		ibpost_ring_post_staged(&p, next);
	}
	ibpost_ring_post_end(&p, cur);
	if (bad_wr)
		*bad_wr = p.ret ? p.bad : NULL;
	return p.ret;
}
EXPORT_SYMBOL_NS_GPL(ibpost_test_ring_post_send, IBPOST_NS);

/**
 * ibpost_test_ring_post_recv - post a receive chain through the ring
 * @q: a receive queue of ibpost_test_ring_init() and
 *     ibpost_test_ring_stage()
 * @wr: the chain: each WR's wr_id is its context; its SGEs are not looked
 *      at (no MR is counted)
 * @bad_wr: set to the first WR not queued, or NULL
 *
 * The ring's part of a receive post as post.c runs it, with no check of
 * the client's, for the ring suite's provider stand-in. For ibpost's own
 * KUnit suites only; exists in test builds only.
 *
 * Context: Any context but hard IRQ.
 * Return: 0; -ENOMEM when the ring is full; or the provider's error.
 */
int ibpost_test_ring_post_recv(struct ibpost_queue *q,
			       const struct ib_recv_wr *wr,
			       const struct ib_recv_wr **bad_wr)
{
	struct ibpost_ring_post p = { .rqp = q->rqp, .q = q,
				      .send = q->is_send };
	const struct ib_recv_wr *cur, *next;
	u32 used;

	spin_lock_irqsave(&q->lock, p.flags);
	ibpost_ring_post_begin(&p, wr);
	p.synthetic = ibpost_ring_flushing(q);
	used = q->head - q->tail;
	for (cur = wr; cur && !p.ret; cur = next) {
		struct ibpost_slot *slot;

		if (used + p.n >= q->depth) {
			p.ret = -ENOMEM;
			p.rule = IBPOST_RULE_NO_SLOT;
			break;
		}
		slot = ibpost_slot_claim(q, (void *)(uintptr_t)cur->wr_id,
					 true, true);
		slot->sync = NULL;
		ibpost_ring_stage_recv(&p, slot, cur);
		next = cur->next;
		p.n++;
		ibpost_ring_post_staged(&p, next);
	}
	ibpost_ring_post_end(&p, cur);
	if (bad_wr)
		*bad_wr = p.ret ? p.bad : NULL;
	return p.ret;
}
EXPORT_SYMBOL_NS_GPL(ibpost_test_ring_post_recv, IBPOST_NS);

/**
 * ibpost_test_ring_finish_synthetic - complete a ring's WRs posted in ERR
 * @q: a queue of ibpost_test_ring_init()
 *
 * What the QP's flush worker does for its queues. For ibpost's own KUnit
 * suites only; exists in test builds only.
 *
 * Context: Process context, no queue lock held.
 * Return: how many it completed.
 */
u32 ibpost_test_ring_finish_synthetic(struct ibpost_queue *q)
{
	return ibpost_queue_finish_synthetic(q, U32_MAX);
}
EXPORT_SYMBOL_NS_GPL(ibpost_test_ring_finish_synthetic, IBPOST_NS);

/**
 * ibpost_test_ring_take - take the oldest completion a ring parked
 * @q: a queue of ibpost_test_ring_init() without a callback
 * @comp: filled with it
 *
 * For ibpost's own KUnit suites only; exists in test builds only.
 *
 * Context: Any context but hard IRQ.
 * Return: whether there was one.
 */
bool ibpost_test_ring_take(struct ibpost_queue *q, struct ibpost_comp *comp)
{
	return ibpost_queue_take_done(q, comp);
}
EXPORT_SYMBOL_NS_GPL(ibpost_test_ring_take, IBPOST_NS);

/**
 * ibpost_test_cq_grace_periods - RCU grace periods waited for by CQ frees
 *
 * For ibpost's own KUnit suites only; exists in test builds only.
 *
 * Context: Any context.
 * Return: how many grace periods ibpost has waited for, since it was
 * loaded, before freeing IB_POLL_SOFTIRQ CQs.
 */
unsigned long ibpost_test_cq_grace_periods(void)
{
	return atomic_long_read(&ibpost_cq_grace_periods);
}
EXPORT_SYMBOL_NS_GPL(ibpost_test_cq_grace_periods, IBPOST_NS);
