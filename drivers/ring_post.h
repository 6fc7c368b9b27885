/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The ring's submit side, inline in its posting client's loops (post.c):
 * one post call's state (struct ibpost_ring_post, in ring.h), a WR's slot
 * claimed under the signal policy, its copy staged for the provider (with
 * a client's prefix WR chained before it), and each batch handed to the
 * provider, or, in ERR, to the flush worker; then the post's counts,
 * trace events and unlock. The cold half (refusals, the flush worker's
 * batches, the test builds' SUBMIT hook) is in ring.c.
 *
 * The client holds q->lock (spin_lock_irqsave() into @p->flags) from its
 * first check to ibpost_ring_post_end(), which releases it; what it does
 * under the lock besides (its checks, the MR lookup under dev->mr_lock,
 * the fault site) nests inside q->lock, as ibpost_base.h orders.
 */
#ifndef _IBPOST_RING_POST_H
#define _IBPOST_RING_POST_H

#include "ring.h"
#include "ring_trace.h"

/*
 * Start @p for a post on @q (of @rqp; @send: its send queue): every field
 * read before it is written but those ibpost_ring_post_begin() and the
 * lock (@p->flags) set. Field by field: an initializer would clear the
 * whole structure first, padding included.
 */
static inline void ibpost_ring_post_init(struct ibpost_ring_post *p,
					 struct ibpost_ring_qp *rqp,
					 struct ibpost_queue *q, bool send)
{
	p->rqp = rqp;
	p->q = q;
	p->n = 0;
	p->off = 0;
	p->hooked = false;
	p->synthetic = false;
	p->send = send;
	p->whole = false;
	p->split = false;
	p->whole_from = 0;
	p->head = NULL;
	p->bad = NULL;
	p->rule = IBPOST_RULE_NONE;
	p->ret = 0;
}

/* ring.c: the cold half */
u32 __ibpost_ring_chain_len(const void *wr, bool send);
u32 ibpost_ring_provider_refused(struct ibpost_queue *q, u32 first, u32 m);
void ibpost_ring_submit_synthetic(struct ibpost_queue *q, u32 start, u32 n);
void ibpost_ring_submit_error(struct ibpost_ring_post *p, u32 m, u32 done,
			      int pret);
#ifdef IBPOST_TEST_HOOKS
int ibpost_ring_submit_hooked(struct ibpost_ring_post *p, u32 m, u32 *done);
#endif

/*
 * The same, 0 while the post events are off: no call then.
 * Forced inline: the checks group (see the head of post.c).
 */
static __always_inline u32 ibpost_ring_chain_len(const void *wr, bool send)
{
	if (!(send ? trace_ibpost_post_send_enabled() :
		     trace_ibpost_post_recv_enabled()))
		return 0;
	return __ibpost_ring_chain_len(wr, send);
}

/*
 * The slot of the staged batch's WR @i: a receive's from its copy (an
 * SRQ's slots are not at consecutive positions), a send's by position.
 */
static inline struct ibpost_slot *
ibpost_ring_post_slot(const struct ibpost_ring_post *p, u32 i)
{
	if (!p->send)
		return container_of(p->q->stage.recv[i].wr_cqe,
				    struct ibpost_slot, cqe);
	return &p->q->slots[(p->start + p->off + i) & p->q->mask];
}

/* The bytes @wr's SGEs hold. */
static inline u64 ibpost_sge_total(const struct ib_send_wr *wr)
{
	u64 total = 0;
	int i;

	for (i = 0; i < wr->num_sge; i++)
		total += wr->sg_list[i].length;
	return total;
}

/*
 * Hand the first @m copies of the stage to the provider. Return: 0 or the
 * provider's error, with *@done the WRs it queued.
 * Forced inline: the submission group (see the head of post.c).
 */
static __always_inline int
ibpost_ring_provider_post(struct ibpost_ring_post *p, u32 m, u32 *done)
{
	struct ibpost_queue *q = p->q;
	int ret;

	/*
	 * The provider's bad_wr into the queue (NULL between posts: a
	 * provider sets it only when it refuses, and the refusal's mapping
	 * clears it again), not into a local: one whose address the post
	 * took would cost it the stack protector's canary. Through the
	 * device's ops, as the verbs' inline posts do: they keep a local of
	 * their own for a NULL bad_wr, which GCC cannot rule out for a
	 * field's address under the kernel's -fno-delete-null-pointer-checks.
	 */
	if (p->send) {
		struct ib_qp *ibqp = p->rqp->ibqp;

		ret = ibqp->device->ops.post_send(ibqp, p->head,
						  &q->provider_bad.send);
	} else if (unlikely(p->rqp->ibsrq)) {
		struct ib_srq *ibsrq = p->rqp->ibsrq;

		ret = ibsrq->device->ops.post_srq_recv(ibsrq, q->stage.recv,
						       &q->provider_bad.recv);
	} else {
		struct ib_qp *ibqp = p->rqp->ibqp;

		ret = ibqp->device->ops.post_recv(ibqp, q->stage.recv,
						  &q->provider_bad.recv);
	}
	if (likely(!ret))
		*done = m;
	else
		*done = ibpost_ring_provider_refused(q, p->start + p->off, m);
	return ret;
}

#ifndef IBPOST_TEST_HOOKS
/* Forced inline: the submission group (see the head of post.c). */
static __always_inline int
ibpost_ring_submit_hooked(struct ibpost_ring_post *p, u32 m, u32 *done)
{
	return ibpost_ring_provider_post(p, m, done);
}
#endif

/*
 * The provider step, q->lock held: hand the batch staged since the last
 * one to the provider, or to the flush worker when the QP is in ERR. On a
 * refusal, the slots from the refused WR on are released, and @p says
 * which caller's WR and why (ibpost_ring_submit_error()).
 * Forced inline: the submission group (see the head of post.c).
 */
static __always_inline void ibpost_ring_submit(struct ibpost_ring_post *p)
{
	u32 m = p->n - p->off, done;
	int pret;

	lockdep_assert_held(&p->q->lock);
	if (!m)
		return;
	/*
	 * Read again for every batch: a completion may have moved the QP to
	 * ERR (or a UD QP's send queue to SQE) while an earlier batch was
	 * with the provider. From then on every batch is flushed by ibpost,
	 * as a later post would be; never the other way round.
	 */
	if (unlikely(ibpost_ring_state_flushing(READ_ONCE(p->rqp->state),
						p->send)))
		p->synthetic = true;
	if (unlikely(p->synthetic)) {
		ibpost_ring_submit_synthetic(p->q, p->start + p->off, m);
		p->off += m;
		return;
	}
	pret = ibpost_ring_submit_hooked(p, m, &done);
	if (unlikely(pret)) {
		/*
		 * On the queue's copy: the post call's own stays out of
		 * memory, and no local's address is taken.
		 */
		p->q->refusal = *p;
		ibpost_ring_submit_error(&p->q->refusal, m, done, pret);
		*p = p->q->refusal;
	} else {
		p->off += m;
	}
}

/*
 * After the loop staged the chain's WR @n - 1 (its next one: @next): a
 * full stage goes to the provider before the next WR is staged.
 * Forced inline: the submission group (see the head of post.c).
 */
static __always_inline void ibpost_ring_post_staged(struct ibpost_ring_post *p,
						    const void *next)
{
	if (next && p->n - p->off == p->q->stage_max)
		ibpost_ring_submit(p);
}

/*
 * A post call's start, q->lock held (taken into @p->flags): its chain's
 * first WR @wr, its first slot at the ring's head. The client then checks
 * the QP's state and sets @p->synthetic from ibpost_ring_state_flushing().
 * Forced inline: the submission group (see the head of post.c).
 */
static __always_inline void ibpost_ring_post_begin(struct ibpost_ring_post *p,
						   const void *wr)
	__must_hold(&p->q->lock)
{
	p->chain = ibpost_ring_chain_len(wr, p->send);
	p->start = p->q->head;
	p->refuse = -1;
}

/*
 * The post's trace events, q->lock held: so a post event precedes the
 * completion events of the WRs it queued, and the refused WR (the
 * caller's, not queued) may still be read.
 * Forced inline: the submission group (see the head of post.c).
 */
static __always_inline void
ibpost_ring_post_trace(const struct ibpost_ring_post *p, u32 posted)
	__must_hold(&p->q->lock)
{
	const struct ib_send_wr *bad;

	if (!p->send) {
		trace_ibpost_post_recv(p->q, p->start, p->chain, posted,
				       p->ret);
		if (trace_ibpost_post_recv_err_enabled() && p->ret)
			trace_ibpost_post_recv_err(p->q, posted, p->ret,
						   p->rule, 0);
		return;
	}
	trace_ibpost_post_send(p->q, p->start, p->chain, posted, p->ret);
	bad = p->bad;
	if (trace_ibpost_post_send_err_enabled() && p->ret)
		trace_ibpost_post_send_err(p->q, posted, p->ret, p->rule,
					   bad ? bad->opcode : 0);
}

/*
 * The tail of a post call, its loop having stopped at the caller's WR
 * @stop: hand the last batch to the provider (ibpost_ring_submit()),
 * count what was queued, trace the post, and release q->lock (taken by
 * the client). Return: 0 or why @p->bad was refused.
 * Forced inline: the submission group (see the head of post.c).
 */
static __always_inline int ibpost_ring_post_end(struct ibpost_ring_post *p,
						const void *stop)
	__releases(&p->q->lock)
{
	struct ibpost_queue *q = p->q;

	/* A check refused @stop, unless the provider refused a batch. */
	if (p->ret && !p->bad)
		p->bad = stop;
	ibpost_ring_submit(p);
	q->stats.posted += p->off;
	if (p->ret)
		ibpost_stats_refused(&q->stats, p->ret);
	ibpost_ring_post_trace(p, p->off);
	spin_unlock_irqrestore(&q->lock, p->flags);
	return p->ret;
}

/*
 * Stage the caller's send WR @wr, checked, in @slot, claimed, as the
 * batch's next copy: its @size bytes, carrying the ring's wr_cqe and
 * signal. Return: the copy, which the client may still adjust before
 * ibpost_ring_link_send() chains it.
 * Forced inline: the staging group (see the head of post.c).
 */
static __always_inline union ibpost_send_copy *
ibpost_ring_stage_send(struct ibpost_ring_post *p, struct ibpost_slot *slot,
		       const struct ib_send_wr *wr, size_t size)
{
	struct ibpost_queue *q = p->q;
	u32 i = p->n - p->off;
	union ibpost_send_copy *stage = &q->stage.send[i];
	struct ib_send_wr *copy = &stage->send;

	/*
	 * Into the union: @size may be that of an ib_rdma_wr etc. The two
	 * common sizes are copied with a constant size, in a few moves
	 * rather than a string copy, every byte included (an ib_reg_wr has
	 * the size of an ib_rdma_wr, its access where that has padding).
	 */
	if (size == sizeof(struct ib_rdma_wr))
		memcpy(stage, wr, sizeof(struct ib_rdma_wr));
	else if (size == sizeof(struct ib_send_wr))
		memcpy(stage, wr, sizeof(struct ib_send_wr));
	else
		memcpy(stage, wr, size);
	copy->wr_cqe = &slot->cqe;
	copy->next = NULL;
	if (slot->signaled)
		copy->send_flags |= IB_SEND_SIGNALED;
	/*
	 * No inline bytes: the same message without SGEs, which every
	 * provider takes (siw refuses an inline copy of nothing).
	 */
	if ((copy->send_flags & IB_SEND_INLINE) && !ibpost_sge_total(wr)) {
		copy->send_flags &= ~IB_SEND_INLINE;
		copy->num_sge = 0;
	}
	q->stage_wr[i] = wr;
	ibpost_slot_set_opcode(slot, wr->opcode);
	return stage;
}

/*
 * Chain the copy @stage, which ibpost_ring_stage_send() staged for @slot,
 * behind the batch's last, with the client's @prefix WR (or NULL) before
 * it: the slot is then prefixed (struct ibpost_ring_ops).
 * Forced inline: the staging group (see the head of post.c).
 */
static __always_inline void ibpost_ring_link_send(struct ibpost_ring_post *p,
						  struct ibpost_slot *slot,
						  union ibpost_send_copy *stage,
						  struct ib_send_wr *prefix)
{
	struct ibpost_queue *q = p->q;
	u32 i = p->n - p->off;
	struct ib_send_wr *copy = &stage->send;

	if (unlikely(prefix)) {
		q->stage_prefix[i] = prefix;
		prefix->next = copy;
		slot->prefixed = true;
		/*
		 * A prefixed WR is not plain: neither the run behind it nor
		 * the next is reclaimed at once.
		 */
		ibpost_ring_run_break(q);
	}
	/* @stage is the stage's @i-th: the one before it is the batch's last. */
	if (i)
		stage[-1].send.next = prefix ?: copy;
	else
		p->head = prefix ?: copy;
}

/* The same for the caller's receive WR @wr. */
static inline void __ibpost_ring_stage_recv(struct ibpost_queue *q, u32 i,
					    struct ibpost_slot *slot,
					    const struct ib_recv_wr *wr)
{
	struct ib_recv_wr *copy = &q->stage.recv[i];

	*copy = *wr;
	copy->wr_cqe = &slot->cqe;
	copy->next = NULL;
	q->stage_wr[i] = wr;
	if (i)
		q->stage.recv[i - 1].next = copy;
}

/* Forced inline: the staging group (see the head of post.c). */
static __always_inline void ibpost_ring_stage_recv(struct ibpost_ring_post *p,
						   struct ibpost_slot *slot,
						   const struct ib_recv_wr *wr)
{
	__ibpost_ring_stage_recv(p->q, p->n - p->off, slot, wr);
}

/*
 * Claim the slot of the checked send WR @wr, the post's @k-th (@used
 * slots were in use before the post): decide whether it is posted
 * signaled and keep the queue's count of unsignaled WRs, which a refusal
 * restores from the slot. Signaled: what the caller asks, ibpost's own
 * (@sync), what the client must have signaled (@force), every
 * signal_interval WRs, and the last free slot with more than half the
 * ring unsignaled behind the last signal (see post.c); the ring is the
 * @room slots the queue's reserve leaves (ibpost_queue_room()).
 * @nhit: the WR's SGEs counted in the queue's hit; @odd: it has uses or
 * DMA ranges of its own (not plain, see ibpost_slot_plain()). A signaled
 * slot takes the run of unsignaled WRs behind it (struct ibpost_slot's
 * @run), which its completion then reclaims at once.
 * Forced inline: the staging group (see the head of post.c).
 */
static __always_inline struct ibpost_slot *
ibpost_ring_send_claim(struct ibpost_queue *q, const struct ib_send_wr *wr,
		       struct ibpost_sync *sync, bool force, u32 used, u32 k,
		       u32 room, u8 nhit, bool odd)
{
	bool user_sig = wr->send_flags & IB_SEND_SIGNALED;
	/* Read once: the slot's stores below could alias it. */
	u32 since = q->since_signal;
	struct ibpost_slot *slot;
	bool sig;

	sig = user_sig || sync || force || since + 1 >= q->signal_interval ||
	      (used + k + 1 == room && since >= room / 2);
	if (sig && !user_sig && !sync) {
		q->stats.forced_signals++;
		trace_ibpost_forced_signal(q, used + k);
	}
	slot = ibpost_slot_claim(q, (void *)(uintptr_t)wr->wr_id, sig,
				 user_sig);
	slot->since_before = since;
	slot->nhit = nhit;
	q->since_signal = sig ? 0 : since + 1;
	slot->sync = sync;
	if (sig) {
		slot->run.hits = q->run_hits;
		slot->run.gen = q->run_gen;
		q->run_hits = 0;
	} else if (likely(!odd)) {
		q->run_hits += nhit;
	} else {
		q->run_hits |= IBPOST_RUN_BROKEN;
	}
	return slot;
}

#endif /* _IBPOST_RING_POST_H */
