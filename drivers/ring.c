// SPDX-License-Identifier: GPL-2.0
/*
 * The ring: a work queue's slots from claim to release, and each
 * context back exactly once; and the cold half of its submit side (a
 * refusal's mapping, the busy iWARP retry, batches for the flush worker),
 * whose hot half is inline in ring_post.h.
 *
 * Every posted WR owns one slot of its queue's ring, in posting order. The
 * provider returns a slot through wc->wr_cqe. A send WR posted without
 * IB_SEND_SIGNALED produces no completion when it succeeds: its slot is
 * reclaimed when a later signaled WR of the same queue completes (send
 * queues complete in order; on iWARP, not by a flush: see
 * ibpost_send_done_before()). A context is handed back when the caller
 * asked for a success completion, or whenever the WR did not succeed;
 * ibpost's own forced signals are never shown.
 *
 * With a consumer callback, the slot is released before the callback runs.
 * Without one, the completion is parked in its slot (IBPOST_SLOT_DONE)
 * until ibpost_get_*_comp() takes it, so a consumer that stops reading
 * completions eventually sees -ENOMEM from posts rather than lost
 * contexts.
 *
 * The ring reads its QP through struct ibpost_ring_qp only, and the
 * memory a slot's SGEs reference through its struct ibpost_ring_use,
 * whose count it releases. What it calls above itself, through pointers
 * its clients set: the READ sinks' struct ibpost_ring_ops (sink.c) and a
 * sync WR's orphan release (mr.c).
 *
 * Serialization: queue->lock, which every completion handler takes as
 * the post path does, with interrupts disabled (spin_lock_irqsave()),
 * whatever context it runs in (the CQ's softirq or work item, a DIRECT
 * poll, a consumer's get_comp call): one discipline, with no test of the
 * context; unlike spin_unlock_bh() in a task, the unlock runs no pending
 * softirq. Callbacks run with it released.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/kmemleak.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <rdma/ibpost.h>
#include "ring_post.h"
#include "dma_sync.h"

static void ibpost_send_done(struct ib_cq *cq, struct ib_wc *wc);
static void ibpost_sq_reclaim_done0(struct ib_cq *cq, struct ib_wc *wc);
static void ibpost_sq_reclaim_done1(struct ib_cq *cq, struct ib_wc *wc);

/*
 * A queue of @rqp, owned by @qp (handed to @done_fn, the consumer's
 * callback, or NULL to park completions), before its ring is allocated.
 */
void ibpost_queue_init(struct ibpost_queue *q, struct ibpost_qp *qp,
		       struct ibpost_ring_qp *rqp, bool is_send,
		       void (*done_fn)(struct ibpost_qp *qp, void *context,
				       const struct ib_wc *wc))
{
	spin_lock_init(&q->lock);
	q->qp = qp;
	q->rqp = rqp;
	q->is_send = is_send;
	INIT_LIST_HEAD(&q->done);
	init_waitqueue_head(&q->wait);
	q->done_fn = done_fn;
}

/*
 * What never changes in a slot of @q's ring, set once, not per post; and
 * a send queue's reclaim marker entries (ibpost_ring_reclaim_retired()).
 */
void ibpost_queue_slots_init(struct ibpost_queue *q)
{
	u32 i;

	for (i = 0; i <= q->mask; i++) {
		q->slots[i].cqe.done = q->is_send ? ibpost_send_done :
						    ibpost_recv_done;
		q->slots[i].queue = q;
	}
	if (q->is_send) {
		q->reclaim_cqe[0].done = ibpost_sq_reclaim_done0;
		q->reclaim_cqe[1].done = ibpost_sq_reclaim_done1;
	}
}

/*
 * The queues' arrays, zeroed, in about their byte size. kvzalloc() would
 * take an array above KMALLOC_MAX_CACHE_SIZE from the page allocator in a
 * power of two of pages (kmalloc_large() rounds with get_order()): 51,200
 * bytes cost 64 KiB. So an array of up to a page comes from the slab, a
 * larger one of up to a costly order is split from its power of two
 * (alloc_pages_exact() gives the tail pages back), and a still larger one,
 * or one whose contiguous pages are not at hand, is vmalloc()'d.
 * Return: the array, or NULL. Free it with ibpost_free_exact().
 */
void *ibpost_zalloc_exact(size_t size)
{
	void *p = NULL;

	if (size <= PAGE_SIZE)
		return kzalloc(size, GFP_KERNEL);
	if (get_order(size) <= PAGE_ALLOC_COSTLY_ORDER)
		p = alloc_pages_exact(size, GFP_KERNEL | __GFP_ZERO |
				      __GFP_NORETRY | __GFP_NOWARN);
	/*
	 * kmemleak scans slab and vmalloc memory, not pages: without this,
	 * a context the consumer keeps only in a posted WR would be
	 * reported as leaked.
	 */
	if (p)
		kmemleak_alloc(p, size, 1, GFP_KERNEL);
	return p ?: vzalloc(size);
}

/* Free what ibpost_zalloc_exact(@size) returned; @p may be NULL. */
void ibpost_free_exact(void *p, size_t size)
{
	if (!p)
		return;
	if (is_vmalloc_addr(p)) {
		vfree(p);
	} else if (size <= PAGE_SIZE) {
		kfree(p);
	} else {
		kmemleak_free(p);
		free_pages_exact(p, size);
	}
}

/* WRs one provider call takes at most: the size of a queue's stage. */
#define IBPOST_STAGE_WRS	32

/* Bytes of @q's slot ring, of its use arrays, and of its stage. */
static size_t ibpost_queue_slots_size(const struct ibpost_queue *q)
{
	return array_size(q->mask + 1, sizeof(*q->slots));
}

static size_t ibpost_queue_parked_size(const struct ibpost_queue *q)
{
	return ibpost_queue_calls_back(q) ?
	       0 : array_size(q->mask + 1, sizeof(*q->parked));
}

static size_t ibpost_queue_uses_size(const struct ibpost_queue *q)
{
	return array3_size(q->mask + 1, q->max_sge, sizeof(*q->use_array));
}

static size_t ibpost_queue_dma_size(const struct ibpost_queue *q)
{
	return array3_size(q->mask + 1, q->max_sge, sizeof(*q->dma_array));
}

/* Bytes of one WR copy in @q's stage. */
static size_t ibpost_stage_wr_size(const struct ibpost_queue *q)
{
	return q->is_send ? sizeof(*q->stage.send) : sizeof(*q->stage.recv);
}

/*
 * The stage: the WR copies, the caller's WR of each, their prefixes and
 * the spare use array, all used only under the queue's lock by one post
 * call.
 */
static size_t ibpost_queue_stage_size(const struct ibpost_queue *q)
{
	return (ibpost_stage_wr_size(q) + sizeof(*q->stage_wr) +
		sizeof(*q->stage_prefix)) * q->stage_max +
	       (sizeof(*q->spare_uses) + sizeof(*q->spare_dma)) * q->max_sge;
}

/**
 * ibpost_ring_free - free what ibpost_ring_alloc() allocated
 * @q: the queue; its arrays may be NULL (a failed or no allocation)
 */
void ibpost_ring_free(struct ibpost_queue *q)
{
	ibpost_free_exact(q->slots, ibpost_queue_slots_size(q));
	ibpost_free_exact(q->use_array, ibpost_queue_uses_size(q));
	ibpost_free_exact(q->dma_array, ibpost_queue_dma_size(q));
	ibpost_free_exact(q->parked, ibpost_queue_parked_size(q));
	ibpost_free_exact(q->stage.send, ibpost_queue_stage_size(q));
	kvfree(q->free_idx);
	q->free_idx = NULL;
	q->slots = NULL;
	q->use_array = NULL;
	q->dma_array = NULL;
	q->parked = NULL;
	q->stage.send = NULL;
}

/* Carve the stage's arrays (see above) from @buf. */
static void ibpost_queue_stage_init(struct ibpost_queue *q, void *buf)
{
	q->stage.send = buf;
	q->stage_wr = buf + ibpost_stage_wr_size(q) * q->stage_max;
	q->stage_prefix = (struct ib_send_wr **)(q->stage_wr + q->stage_max);
	q->spare_uses = (struct ibpost_ring_use **)(q->stage_prefix +
						    q->stage_max);
	q->spare_dma = (struct ibpost_ring_dma *)(q->spare_uses + q->max_sge);
}

/**
 * ibpost_ring_alloc - allocate a queue's ring and stage
 * @q: the queue, initialised (ibpost_queue_init())
 * @depth: the WRs it may hold at once (the provider's grant, less what
 *         ibpost keeps), 1 to 2^30
 * @max_sge: the SGEs a WR may have (0 counts as 1)
 *
 * The slot array has a power-of-two size (at least @depth), so that
 * position & mask stays consistent when the free-running u32 positions
 * wrap after 2^32 WRs; its bytes are allocated without a second rounding
 * (ibpost_zalloc_exact()).
 *
 * Context: Process context; may sleep.
 * Return: 0, -EINVAL for a depth out of range, or -ENOMEM (nothing is
 * left allocated).
 */
int ibpost_ring_alloc(struct ibpost_queue *q, u32 depth, u32 max_sge)
{
	void *stage;

	if (!depth || depth > 1U << 30)
		return -EINVAL;
	/* Any order: with a callback only (a parked slot is neither free nor in use). */
	if (q->any_order && !ibpost_queue_calls_back(q))
		return -EINVAL;
	q->mask = roundup_pow_of_two(depth) - 1;
	q->max_sge = max_t(u32, max_sge, 1);
	/* No post queues more than @depth WRs: no larger stage is needed. */
	q->stage_max = min_t(u32, depth, IBPOST_STAGE_WRS);
	q->slots = ibpost_zalloc_exact(ibpost_queue_slots_size(q));
	q->use_array = ibpost_zalloc_exact(ibpost_queue_uses_size(q));
	q->dma_array = ibpost_zalloc_exact(ibpost_queue_dma_size(q));
	if (!ibpost_queue_calls_back(q))
		q->parked = ibpost_zalloc_exact(ibpost_queue_parked_size(q));
	stage = ibpost_zalloc_exact(ibpost_queue_stage_size(q));
	if (stage)
		ibpost_queue_stage_init(q, stage);
	if (q->any_order)
		q->free_idx = kvmalloc_array(q->mask + 1, sizeof(*q->free_idx),
					     GFP_KERNEL);
	if (!q->slots || !q->use_array || !q->dma_array ||
	    (!ibpost_queue_calls_back(q) && !q->parked) ||
	    !stage || (q->any_order && !q->free_idx)) {
		ibpost_ring_free(q);
		return -ENOMEM;
	}
	ibpost_queue_slots_init(q);
	if (q->any_order) {
		u32 i;

		for (i = 0; i <= q->mask; i++)
			q->free_idx[i] = i;
		q->free_head = 0;
		q->free_tail = q->mask + 1;
	}
	q->depth = depth;
	return 0;
}

/* Drop the users counted in @n entries of @uses. */
void ibpost_ring_uses_drop(struct ibpost_ring_use **uses, unsigned int n)
{
	while (n--)
		atomic_dec(&uses[n]->users);
}

/* @n SGEs counted in @q's hit are over; the last drops the queue's user. */
void ibpost_ring_hit_put(struct ibpost_queue *q, unsigned int n)
{
	lockdep_assert_held(&q->lock);
	if (!n || WARN_ON_ONCE(n > q->hit_users))
		return;
	q->hit_users -= n;
	if (!q->hit_users)
		atomic_dec(&q->hit->users);
}

/* ibpost_ring_uses_put() but for its common case, done inline. */
void __ibpost_ring_uses_put(struct ibpost_queue *q,
			    struct ibpost_ring_use **uses,
			    unsigned int nuse, unsigned int nhit)
{
	ibpost_ring_uses_drop(uses, nuse);
	ibpost_ring_hit_put(q, nhit);
}

/*
 * One SGE counted in @q's hit leaves it for a holder of its own (a dirty
 * READ sink): the hit's use, with a user counted for that holder.
 */
struct ibpost_ring_use *ibpost_ring_hit_pin(struct ibpost_queue *q)
{
	struct ibpost_ring_use *use = q->hit;

	lockdep_assert_held(&q->lock);
	/* Counted before the hit's user can drop: never 0 between. */
	atomic_inc(&use->users);
	ibpost_ring_hit_put(q, 1);
	return use;
}

/* The slow case of ibpost_slot_release(): uses of its own. */
static void __ibpost_slot_release(struct ibpost_queue *q,
				  struct ibpost_slot *slot)
{
	__ibpost_ring_uses_put(q, ibpost_slot_uses(q, slot), slot->nuse,
			       slot->nhit);
}

/*
 * The memory @slot's WR wrote (or would have: a flush, a refusal) goes
 * back to the CPU, before its uses are released and its context handed
 * back.
 */
static void ibpost_slot_sync_cpu(struct ibpost_queue *q,
				 struct ibpost_slot *slot)
{
	const struct ibpost_ring_dma *d = ibpost_slot_dma(q, slot);
	unsigned int i;

	for (i = 0; i < slot->ndma; i++)
		ibpost_dma_sync_cpu(q->dma_dev, d[i].addr, d[i].len, d[i].dir);
	slot->ndma = 0;
}

/*
 * The WR of @slot is over, or was not queued: its buffers may go, synced
 * for the CPU first. The slot's use array is found only when its common
 * case is not met.
 * Forced inline, as ibpost_slot_finish() below.
 */
static __always_inline void ibpost_slot_release(struct ibpost_queue *q,
						struct ibpost_slot *slot)
{
	if (unlikely(slot->ndma))
		ibpost_slot_sync_cpu(q, slot);
	if (!ibpost_ring_uses_put_hit(q, slot->nuse, slot->nhit))
		__ibpost_slot_release(q, slot);
	slot->nuse = 0;
	slot->nhit = 0;
}

/*
 * The internal WR of @slot was not queued: a waiter's reference goes; a
 * client's object hears of it, and its reserve slot goes back.
 */
static void ibpost_slot_sync_unclaim(struct ibpost_queue *q,
				     struct ibpost_slot *slot)
{
	struct ibpost_sync *sync = slot->sync;

	slot->sync = NULL;
	if (!sync->end) {
		ibpost_sync_put(sync);
		return;
	}
	/* The newest claim: the slot leaves the ring's use at once. */
	if (slot->reserve) {
		slot->reserve = false;
		q->reserved++;
	}
	if (sync->unclaimed)
		sync->unclaimed(sync->orphan);
}

/*
 * Undo the newest claims (a post the provider refused). The signal
 * interval counts on from the last WR really queued.
 */
void ibpost_slot_unclaim(struct ibpost_queue *q, u32 count)
{
	lockdep_assert_held(&q->lock);
	ibpost_ring_run_break(q);
	while (count--) {
		struct ibpost_slot *slot;

		/*
		 * Any order: the newest claims are the FIFO's last, still
		 * before its head (nothing is freed while a post holds
		 * q->lock).
		 */
		q->head--;
		if (q->free_idx)
			slot = &q->slots[q->free_idx[--q->free_head & q->mask]];
		else
			slot = &q->slots[q->head & q->mask];
		ibpost_slot_release(q, slot);
		if (slot->sync)
			ibpost_slot_sync_unclaim(q, slot);
		slot->state = IBPOST_SLOT_FREE;
		q->since_signal = slot->since_before;
	}
}

/**
 * ibpost_ring_claim_deferred - a reserve slot for a client's context
 * @q: a QP's send queue, its lock held, with a reserve slot free
 *     (@q->reserved, and a slot: the caller checked)
 * @context: the consumer's context (an unmap's, frwr.c)
 * @sync: the client's sync for the slot (with @end)
 *
 * A slot that never reaches the provider and is not flushed yet: its
 * client releases it (ibpost_ring_release_deferred()) once its context
 * may go back, flushed.
 *
 * Context: Any context but hard IRQ; q->lock held.
 * Return: the slot.
 */
struct ibpost_slot *ibpost_ring_claim_deferred(struct ibpost_queue *q,
					       void *context,
					       struct ibpost_sync *sync)
{
	struct ibpost_slot *slot;

	lockdep_assert_held(&q->lock);
	/* Outside the signal policy, inside the run being claimed. */
	ibpost_ring_run_break(q);
	slot = ibpost_slot_claim(q, context, true, true);
	slot->since_before = q->since_signal;
	slot->nuse = 0;
	slot->nhit = 0;
	slot->ndma = 0;
	slot->sync = sync;
	slot->reserve = true;
	q->reserved--;
	slot->synthetic = true;
	slot->deferred = true;
	ibpost_slot_set_opcode(slot, IB_WR_LOCAL_INV);
	return slot;
}

/**
 * ibpost_ring_release_deferred - let a deferred slot's context go back
 * @q: the send queue, its lock held
 * @slot: a slot its client deferred (struct ibpost_sync's @end, or
 *        ibpost_ring_claim_deferred())
 *
 * The flush worker (a DIRECT queue's next poll, a teardown's flush)
 * completes it with IB_WC_WR_FLUSH_ERR, its sync's @end told again.
 *
 * Context: Any context but hard IRQ; q->lock held.
 */
void ibpost_ring_release_deferred(struct ibpost_queue *q,
				  struct ibpost_slot *slot)
{
	lockdep_assert_held(&q->lock);
	if (WARN_ON_ONCE(!slot->deferred))
		return;
	slot->deferred = false;
	WRITE_ONCE(q->nr_synthetic, q->nr_synthetic + 1);
	queue_work(ibpost_wq, &q->rqp->flush_work);
}

/* Count a post call's refusal by its errno. */
void ibpost_stats_refused(struct ibpost_stats *st, int err)
{
	switch (err) {
	case -EINVAL:
		st->refused.einval++;
		break;
	case -ENOMEM:
		st->refused.enomem++;
		break;
	case -ENOTCONN:
		st->refused.enotconn++;
		break;
	case -ENODEV:
		st->refused.enodev++;
		break;
	default:
		st->refused.other++;
		break;
	}
}

void ibpost_sync_put(struct ibpost_sync *sync)
{
	if (refcount_dec_and_test(&sync->ref))
		kfree(sync);
}

/*
 * Move the tail past the slots freed; in locals, not stored per step. An
 * any-order ring has no tail (ibpost_queue_release()).
 */
static void ibpost_queue_advance(struct ibpost_queue *q)
{
	const struct ibpost_slot *slots = q->slots;
	u32 tail = q->tail, head = q->head, mask = q->mask;

	if (q->free_idx)
		return;

	while (tail != head && slots[tail & mask].state == IBPOST_SLOT_FREE) {
		/* A carrier's slot leaves the ring's use: its reserve back. */
		if (unlikely(slots[tail & mask].reserve)) {
			q->slots[tail & mask].reserve = false;
			q->reserved++;
		}
		tail++;
	}
	q->tail = tail;
}

/*
 * @slot, just freed (or parked), is back for a claim: at the free FIFO's
 * tail of an any-order ring (which parks nothing), or behind the tail
 * once the slots before it are too. The common case without a call: the
 * slot freed is the tail's (no carrier's reserve to give back), and the
 * next one is not free. Constants where the caller knows them: @freed,
 * @slot is free and was no carrier's; @send, @q is a send queue (never
 * any-order).
 */
static __always_inline void __ibpost_queue_release(struct ibpost_queue *q,
						   const struct ibpost_slot *slot,
						   const bool freed,
						   const bool send)
{
	u32 tail = q->tail;

	if (!send && unlikely(q->free_idx)) {
		q->free_idx[q->free_tail++ & q->mask] = slot - q->slots;
		return;
	}
	if (likely(slot->pos == tail &&
		   (freed || (slot->state == IBPOST_SLOT_FREE &&
			      !slot->reserve)))) {
		q->tail = ++tail;
		if (tail == q->head ||
		    q->slots[tail & q->mask].state != IBPOST_SLOT_FREE)
			return;
	}
	ibpost_queue_advance(q);
}

static __always_inline void ibpost_queue_release(struct ibpost_queue *q,
						 const struct ibpost_slot *slot)
{
	__ibpost_queue_release(q, slot, false, false);
}

/* @slot's entry in @q's parked completions. */
static struct ibpost_parked *ibpost_slot_parked(const struct ibpost_queue *q,
						const struct ibpost_slot *slot)
{
	return &q->parked[slot - q->slots];
}

/* Keep @wc for ibpost_get_*_comp() (ibpost_slot_comp()). */
static void ibpost_slot_keep_wc(struct ibpost_queue *q,
				struct ibpost_slot *slot,
				const struct ib_wc *wc)
{
	struct ibpost_parked *pk = ibpost_slot_parked(q, slot);

	slot->wc_status = wc->status;
	pk->opcode = wc->opcode;
	pk->byte_len = wc->byte_len;
	if (wc->wc_flags & IB_WC_WITH_IMM)
		pk->ex = be32_to_cpu(wc->ex.imm_data);
	else if (wc->wc_flags & IB_WC_WITH_INVALIDATE)
		pk->ex = wc->ex.invalidate_rkey;
	else
		pk->ex = 0;
	pk->vendor_err = wc->vendor_err;
	pk->src_qp = wc->src_qp;
	pk->slid = wc->slid;
	pk->pkey_index = wc->pkey_index;
	pk->wc_flags = wc->wc_flags;
	pk->sl = wc->sl;
	pk->dlid_path_bits = wc->dlid_path_bits;
	pk->network_hdr_type = wc->network_hdr_type;
}

static void ibpost_slot_comp(const struct ibpost_queue *q,
			     const struct ibpost_slot *slot,
			     struct ibpost_comp *comp)
{
	const struct ibpost_parked *pk = ibpost_slot_parked(q, slot);

	comp->context = slot->context;
	comp->status = slot->wc_status;
	comp->opcode = pk->opcode;
	comp->byte_len = pk->byte_len;
	comp->wc_flags = pk->wc_flags;
	comp->imm_data = pk->wc_flags & IB_WC_WITH_IMM ? pk->ex : 0;
	comp->invalidate_rkey = pk->wc_flags & IB_WC_WITH_INVALIDATE ?
				pk->ex : 0;
	comp->vendor_err = pk->vendor_err;
	comp->src_qp = pk->src_qp;
	comp->slid = pk->slid;
	comp->pkey_index = pk->pkey_index;
	comp->sl = pk->sl;
	comp->dlid_path_bits = pk->dlid_path_bits;
	comp->network_hdr_type = pk->network_hdr_type;
}

/*
 * ibpost's own WR (a registration or invalidation) is over: wake its
 * waiter. Return: NULL, or, when its waiter gave up, @slot's sync, whose
 * orphan the caller releases and then drops the slot's reference to.
 * Out of line: inlined, this rare case adds 46 bytes to ibpost_send_done()
 * and 43 to ibpost_recv_done() (6.12 bench build).
 */
static noinline struct ibpost_sync *
ibpost_slot_sync_done(struct ibpost_slot *slot, enum ib_wc_status status)
{
	struct ibpost_sync *sync = slot->sync;
	bool orphaned = sync->orphan;

	slot->sync = NULL;
	sync->status = status;
	complete(&sync->done);
	if (orphaned)
		return sync;
	ibpost_sync_put(sync);
	return NULL;
}

/*
 * ibpost_slot_sync_end()'s answer: an enum ibpost_sync_end in the low
 * bits, a sync orphaned by its waiter (or NULL) in the rest. One value,
 * not an out-parameter: a local whose address the completion handlers
 * took would cost them the stack protector's canary.
 */
#define IBPOST_SYNC_END_MASK	3UL
static_assert(!(IBPOST_SYNC_DEFER & ~IBPOST_SYNC_END_MASK) &&
	      __alignof__(struct ibpost_sync) > IBPOST_SYNC_END_MASK);

/*
 * The internal WR of @slot is over with @status: wake its waiter (its
 * sync, orphaned, returned for the caller to release), or tell the
 * client's object (struct ibpost_sync's @end). Return: enum
 * ibpost_sync_end: the slot's context hidden (always, but for a carrier),
 * delivered, or deferred (the slot stays, struct ibpost_sync); with the
 * orphan (IBPOST_SYNC_END_MASK).
 */
static noinline unsigned long ibpost_slot_sync_end(struct ibpost_slot *slot,
						   enum ib_wc_status status)
{
	struct ibpost_sync *sync = slot->sync;
	int ret;

	if (!sync->end)
		return (unsigned long)ibpost_slot_sync_done(slot, status) |
		       IBPOST_SYNC_HIDE;
	ret = sync->end(sync->orphan, slot, status);
	if (ret == IBPOST_SYNC_DEFER) {
		slot->synthetic = true;
		slot->deferred = true;
	} else {
		slot->sync = NULL;
	}
	return ret;
}

/*
 * The receive queue of the QP that took a shared receive queue's WR whose
 * completion came on @cq: the CQ's context, the QP's own receive CQ (an
 * SRQ's QP has no shared CQs); none for the SRQ's own flushes (no CQ).
 * Not wc->qp: a QP's teardown reaps its last completions after the
 * provider QP is freed (qp.c).
 */
static struct ibpost_queue *ibpost_ring_cq_queue(const struct ib_cq *cq)
{
	return cq ? cq->cq_context : NULL;
}

/*
 * Log a failed completion of @q, which came on @cq (NULL: q->cq, NULL
 * once freed: a QP kept on shared CQs (qp.c) may log later). A shared
 * receive queue's names the SRQ (its restrack id) and the QP that took
 * the WR.
 */
static void ibpost_log_wc(struct ibpost_queue *q, struct ib_cq *cq,
			  const struct ib_wc *wc)
{
	struct ibpost_queue *taker;

	if (wc->status == IB_WC_SUCCESS || wc->status == IB_WC_WR_FLUSH_ERR)
		return;
	cq = cq ?: READ_ONCE(q->cq);
	taker = q->qp ? NULL : ibpost_ring_cq_queue(cq);
	if (taker) {
		ibdev_err_ratelimited(cq->device,
				      "ibpost: srq %u, qp %u: recv completion failed: %s (%d), vendor_err %#x\n",
				      q->rqp->qpn, taker->rqp->qpn,
				      ib_wc_status_msg(wc->status), wc->status,
				      wc->vendor_err);
		return;
	}
	ibdev_err_ratelimited(cq ? cq->device : NULL,
			      "ibpost: qp %u: %s completion failed: %s (%d), vendor_err %#x\n",
			      q->rqp->qpn, q->is_send ? "send" : "recv",
			      ib_wc_status_msg(wc->status), wc->status,
			      wc->vendor_err);
}

/*
 * Move the QP @rqp to the state a WR of its send (@send) or receive
 * queue that the provider failed leaves it in. IBA (10.8.3): a send error
 * moves a UD QP to SQE, where its send queue flushes and its receive
 * queue works on; any other error moves a QP to ERR. Under the queue's
 * lock: an SQE is written under the send queue's lock only, which every
 * send post holds while it reads the state; and never over an ERR that
 * the receive queue's completion wrote meanwhile (one cmpxchg()).
 */
static void ibpost_state_failed(struct ibpost_ring_qp *rqp, bool send)
{
	enum ib_qp_state old;

	if (!send || !rqp->ud) {
		WRITE_ONCE(rqp->state, IB_QPS_ERR);
		return;
	}
	old = READ_ONCE(rqp->state);
	while (old != IB_QPS_ERR && old != IB_QPS_SQE &&
	       !try_cmpxchg(&rqp->state, &old, IB_QPS_SQE))
		;
}

/*
 * A shared receive queue's WR failed (not flushed) on the QP @rqp that
 * took it: the provider moved that QP to ERR, so its later posts are
 * flushed (ibpost_state_failed()), unless it was moved to RESET since,
 * whose ring holds none of the SRQ's WRs. Under the SRQ's lock, not the
 * QP's: one cmpxchg() against a state change.
 */
static void ibpost_srq_wr_failed(struct ibpost_ring_qp *rqp,
				 const struct ib_wc *wc)
{
	enum ib_qp_state old = READ_ONCE(rqp->state);

	if (wc->status == IB_WC_WR_FLUSH_ERR)
		return;
	while (old != IB_QPS_ERR && old != IB_QPS_RESET &&
	       !try_cmpxchg(&rqp->state, &old, IB_QPS_ERR))
		;
}

/*
 * @slot's WR did not succeed (@wc): what that changes besides the
 * context's return, before the slot's MR uses are released. A success,
 * the common case, tests its status once, before calling this. The error
 * is logged under q->lock (rate-limited, as the stale warning is).
 */
static void ibpost_slot_failed(struct ibpost_queue *q,
			       struct ib_cq *cq,
			       struct ibpost_slot *slot,
			       const struct ib_wc *wc)
	__must_hold(&q->lock)
{
	/* A shared receive queue's: the taking QP's queue (none: a flush). */
	struct ibpost_queue *taker = q->qp ? NULL : ibpost_ring_cq_queue(cq);

	ibpost_ring_run_break(q);
	/* Its sink's key outlives a READ that did not succeed (sink.c). */
	if (slot->prefixed && q->ops)
		q->ops->slot_failed(q, slot, false);
	if (wc->status == IB_WC_WR_FLUSH_ERR)
		q->stats.flushed++;
	else
		q->stats.failed++;
	/*
	 * A WR the provider failed moves the QP to ERR (IBA): later posts are
	 * flushed. ibpost's own flushes (synthetic WRs, a RESET) say nothing
	 * new about the QP and must not undo a later state change.
	 */
	if (!slot->synthetic && READ_ONCE(q->rqp->ibqp))
		ibpost_state_failed(q->rqp, q->is_send);
	else if (taker)
		ibpost_srq_wr_failed(taker->rqp, wc);
	ibpost_log_wc(q, cq, wc);
}

/*
 * Hand @context back with @wc, which came on @cq, to @q's callback.
 * @wc->wr_cqe is the entry of ibpost's slot: the consumer sees its own
 * ib_cqe there (ib_cqe mode) or NULL, never ibpost's. A shared receive
 * queue (no q->qp) names the QP that took the WR, found from @cq. Forced
 * inline with
 * ibpost_slot_finish().
 */
static __always_inline void ibpost_ring_deliver(struct ibpost_queue *q,
						struct ib_cq *cq,
						void *context,
						struct ib_wc *wc)
{
	struct ibpost_qp *qp = q->qp;

	if (q->cqe) {
		wc->wr_cqe = context;
		wc->wr_cqe->done(cq, wc);
		return;
	}
	wc->wr_cqe = NULL;
	if (unlikely(!qp)) {
		struct ibpost_queue *taker = ibpost_ring_cq_queue(cq);

		qp = taker ? taker->qp : NULL;
	}
	q->done_fn(qp, context, wc);
}

/*
 * Return @slot's context with @wc, or silently free it when @deliver is
 * false; the caller has emitted the completion's trace event. q->lock is
 * held on entry, taken with @flags, and released on return. Forced inline
 * in the completion handlers, one frame: left to GCC (with
 * ibpost_slot_release() too), it is a call of its own from both (6.12
 * bench build).
 */
static __always_inline void ibpost_slot_finish(struct ibpost_queue *q,
					       struct ib_cq *cq,
					       struct ibpost_slot *slot,
					       struct ib_wc *wc,
					       bool deliver,
					       unsigned long flags)
	__releases(&q->lock)
{
	void *context = slot->context;
	struct ibpost_sync *orphaned = NULL;
	bool wake = false;

	lockdep_assert_held(&q->lock);
	if (likely(wc->status == IB_WC_SUCCESS))
		q->stats.completed++;
	else
		ibpost_slot_failed(q, cq, slot, wc);
	ibpost_slot_release(q, slot);
	if (unlikely(slot->sync)) {
		/* Internal WR: wake its waiter, never show it; or a client's. */
		unsigned long end = ibpost_slot_sync_end(slot, wc->status);

		orphaned = (struct ibpost_sync *)(end & ~IBPOST_SYNC_END_MASK);
		switch (end & IBPOST_SYNC_END_MASK) {
		case IBPOST_SYNC_HIDE:
			deliver = false;
			break;
		case IBPOST_SYNC_DEFER:
			/*
			 * Taken until its client releases it; the slots
			 * reclaimed before it leave the ring's use.
			 */
			ibpost_ring_run_break(q);
			ibpost_queue_advance(q);
			spin_unlock_irqrestore(&q->lock, flags);
			return;
		}
	}
	if (deliver && !ibpost_queue_calls_back(q)) {
		ibpost_slot_keep_wc(q, slot, wc);
		slot->state = IBPOST_SLOT_DONE;
		list_add_tail(&slot->done_node, &q->done);
		wake = true;
	} else {
		slot->state = IBPOST_SLOT_FREE;
	}
	ibpost_queue_release(q, slot);
	spin_unlock_irqrestore(&q->lock, flags);

	/* Its waiter gave up: released now that the WR is over. */
	if (unlikely(orphaned)) {
		orphaned->orphan_release(orphaned->orphan);
		ibpost_sync_put(orphaned);
	}
	if (wake)
		wake_up(&q->wait);
	else if (deliver)
		ibpost_ring_deliver(q, cq, context, wc);
}

/*
 * struct ibpost_slot's @bits with the fields named in @... set, the others
 * 0: a constant.
 */
#define IBPOST_SLOT_BITS(...) (((struct ibpost_slot){ __VA_ARGS__ }).bits)

/*
 * Whether @slot is in a completion's common case, by one test of its
 * bits: posted and given to the provider, signaled and to be shown, no
 * prefix, carrier's reserve or deferral (its uses and DMA ranges are
 * released as any slot's).
 */
static __always_inline bool ibpost_slot_common(const struct ibpost_slot *slot)
{
	const u64 mask = IBPOST_SLOT_BITS(.state = U8_MAX, .signaled = 1,
					  .user_signaled = 1, .synthetic = 1,
					  .prefixed = 1, .reserve = 1,
					  .deferred = 1);
	const u64 common = IBPOST_SLOT_BITS(.state = IBPOST_SLOT_POSTED,
					    .signaled = 1, .user_signaled = 1);

	return (slot->bits & mask) == common;
}

/*
 * Whether the completion @wc of @slot takes the common path: the slot's
 * bits (above), no internal WR, a success, no sink watching the send
 * queue's successes, and a queue that hands its completions to a
 * callback.
 */
static __always_inline bool ibpost_comp_common(const struct ibpost_queue *q,
					       const struct ibpost_slot *slot,
					       const struct ib_wc *wc)
	__must_hold(&q->lock)
{
	return ibpost_slot_common(slot) && !slot->sync &&
	       wc->status == IB_WC_SUCCESS && !q->watch_success &&
	       ibpost_queue_calls_back(q);
}

/*
 * ibpost_slot_finish() for a completion in the common case (above),
 * with nothing else tested: @slot's uses are released, the slot is
 * freed, the tail moves and its context goes to the callback. The
 * caller has emitted the completion's trace event; q->lock, taken with
 * @flags, is released on return. @send: @q is a send queue.
 */
static __always_inline void
ibpost_slot_finish_common(struct ibpost_queue *q, struct ib_cq *cq,
			  struct ibpost_slot *slot, struct ib_wc *wc,
			  unsigned long flags, const bool send)
	__releases(&q->lock)
{
	const u64 own = IBPOST_SLOT_BITS(.nuse = U8_MAX, .ndma = U8_MAX);
	void *context = slot->context;
	unsigned int nhit = slot->nhit;

	q->stats.completed++;
	ibpost_queue_count_comp_common(q);
	/*
	 * Its SGEs all in the hit, which keeps other users; or the last of
	 * them, the queue going idle (between posts, at every signaled
	 * completion): they drop the hit's user, still without a call.
	 */
	if (likely(!(slot->bits & own) && nhit < q->hit_users)) {
		q->hit_users -= nhit;
		slot->nhit = 0;
	} else if (!(slot->bits & own) && nhit == q->hit_users) {
		q->hit_users = 0;
		slot->nhit = 0;
		if (nhit)
			atomic_dec(&q->hit->users);
	} else {
		ibpost_slot_release(q, slot);
	}
	slot->state = IBPOST_SLOT_FREE;
	__ibpost_queue_release(q, slot, true, send);
	spin_unlock_irqrestore(&q->lock, flags);
	ibpost_ring_deliver(q, cq, context, wc);
}

/* A stale completion (below), named. Return: true. */
static noinline bool ibpost_slot_stale_log(struct ibpost_queue *q,
					   struct ib_cq *cq,
					   const struct ib_wc *wc)
{
	/* @cq, not q->cq: a QP kept on shared CQs has freed its own. */
	ibdev_warn_ratelimited(cq->device,
			       "ibpost: qp %u: %s completion (%s (%d), vendor_err %#x) for a WR no longer with the provider, ignored\n",
			       q->rqp->qpn, q->is_send ? "send" : "recv",
			       ib_wc_status_msg(wc->status), wc->status,
			       wc->vendor_err);
	return true;
}

/*
 * A completion for @slot while it holds no WR with the provider (one the
 * provider completes twice, or after ibpost reclaimed or flushed it) would
 * hand a context back again and, on a send queue, reclaim WRs of the ring
 * still queued: it is dropped and named. (A stale completion for a slot
 * already reused by a later WR cannot be told apart from that WR's own.)
 * A send slot reclaimed with its run (ibpost_send_reclaim_before()) keeps
 * its state: it is told by its position, behind the tail (@send: @q is a
 * send queue, whose slots are claimed in ring order).
 */
static __always_inline bool ibpost_slot_stale(struct ibpost_queue *q,
					      const struct ibpost_slot *slot,
					      struct ib_cq *cq,
					      const struct ib_wc *wc,
					      const bool send)
	__must_hold(&q->lock)
{
	if (likely(slot->state == IBPOST_SLOT_POSTED && !slot->synthetic &&
		   (!send || slot->pos - q->tail < q->head - q->tail)))
		return false;
	return ibpost_slot_stale_log(q, cq, wc);
}

/*
 * Whether the completion @wc of a send WR says that the unsignaled WRs
 * posted before it are done. Send queues complete in order: IBA flushes
 * the outstanding WRs, each with its own completion, so once a later one
 * completes, whatever status it has, those before it that are still
 * posted succeeded. Not a flush on iWARP: siw completes a WR posted while
 * it is still flushing its send queue after a connection loss (its state
 * already ERROR) at once, ahead of the earlier WRs' flushes. Those WRs
 * then come back with their own flushes, or, having succeeded before,
 * are reclaimed at RESET or destroy, as ibpost_ring_reclaim_retired() says.
 */
static bool ibpost_send_done_before(struct ibpost_queue *q,
				    const struct ib_wc *wc)
{
	return likely(wc->status != IB_WC_WR_FLUSH_ERR) ||
	       !q->rqp->iwarp;
}

/*
 * Whether the send slot @s holds a plain unsignaled WR: posted, its SGEs
 * all in the queue's hit, no DMA range to sync, no prefix, carrier or
 * parked completion; reclaimed as such, it leaves nothing to do but its
 * hit count.
 */
static __always_inline bool ibpost_slot_plain(const struct ibpost_slot *s)
{
	return s->state == IBPOST_SLOT_POSTED && !s->signaled &&
	       !s->synthetic && !s->prefixed && !s->reserve && !s->deferred &&
	       !s->nuse && !s->ndma;
}

/*
 * Reclaim without a word the slots of the unsignaled WRs posted before
 * @slot, whose completion says they succeeded (above), slot by slot: the
 * case ibpost_send_reclaim_before() below does not take at once. A
 * synthetic WR never reached the provider: the flush worker returns it.
 * (On iWARP a READ may complete after later WRs; it is always signaled
 * there, so it is never among the slots reclaimed here.)
 *
 * The common run first: plain slots (ibpost_slot_plain()) from the tail
 * on are freed in one pass, their hit counts released together and the
 * tail moved past them at once; from the first other slot on, each slot
 * is released on its own and ibpost_queue_advance() moves the tail.
 */
static noinline void
ibpost_send_reclaim_before_slots(struct ibpost_queue *q,
				 const struct ibpost_slot *slot)
	__must_hold(&q->lock)
{
	u32 pos = q->tail, end = slot->pos, head = q->head, hits = 0;

	/*
	 * A posted signaled slot's position lies in [tail, head); the
	 * common path does not test it (ibpost_send_done()), so it is
	 * asserted here, where a slot behind the tail would free WRs still
	 * queued.
	 */
	if (WARN_ON_ONCE(end - pos >= head - pos))
		return;
	if (likely(!trace_ibpost_send_reclaim_enabled())) {
		struct ibpost_slot *slots = q->slots;
		u32 mask = q->mask, idx = pos & mask, i;
		/* One count for both bounds: the loop tests nothing else. */
		u32 n = min(end - pos, head - pos);

		for (i = 0; i < n; i++, idx = (idx + 1) & mask) {
			struct ibpost_slot *s = &slots[idx];

			if (!ibpost_slot_plain(s))
				break;
			hits += s->nhit;
			s->nhit = 0;
			s->state = IBPOST_SLOT_FREE;
		}
		pos += i;
		q->stats.completed += i;
		q->tail = pos;
		if (hits)
			ibpost_ring_uses_put(q, NULL, 0, hits);
	}
	for (; pos != end && pos != head; pos++) {
		struct ibpost_slot *s = &q->slots[pos & q->mask];

		if (s->state == IBPOST_SLOT_POSTED && !s->signaled &&
		    !s->synthetic) {
			trace_ibpost_send_reclaim(q, s, slot->pos);
			ibpost_slot_release(q, s);
			s->state = IBPOST_SLOT_FREE;
			q->stats.completed++;
		}
	}
}

/*
 * The same, in the common case at once: @slot is signaled, the tail is
 * where its run (struct ibpost_slot's @run) begins, every WR of the run
 * was plain when claimed, and nothing has freed, flushed or marked a
 * slot otherwise since the previous signaled claim (the run is not
 * broken and its generation is current: ibpost_ring_run_break()). Then
 * the run is exactly the slots from the tail to @slot, all plain and
 * posted: the tail moves to @slot and the run's hit counts go, without a
 * look at its slots, which keep their state behind the tail (a late
 * completion of one is told stale by its position, ibpost_slot_stale())
 * until they are claimed again. A few instructions per run, whatever
 * its length; else slot by slot (above).
 * Out of line: the benchmark's instruction profile counts a stage by its
 * functions (scripts/pcprof/report.py), and inlined, the reclaim counted
 * as the completion's.
 */
static noinline void
ibpost_send_reclaim_before(struct ibpost_queue *q,
			   const struct ibpost_slot *slot)
	__must_hold(&q->lock)
{
	u32 run = slot->since_before, hits = slot->run.hits;

	if (likely(slot->signaled && q->tail == slot->pos - run &&
		   slot->run.gen == q->run_gen &&
		   !(hits & IBPOST_RUN_BROKEN) &&
		   !trace_ibpost_send_reclaim_enabled())) {
		q->tail = slot->pos;
		q->stats.completed += run;
		if (hits)
			ibpost_ring_uses_put(q, NULL, 0, hits);
		ibpost_queue_count_run_reclaim(q);
		return;
	}
	ibpost_send_reclaim_before_slots(q, slot);
}

/* The completion of a send WR, but its common case (below). */
static noinline void ibpost_send_done_slow(struct ibpost_queue *q,
					   struct ib_cq *cq,
					   struct ibpost_slot *slot,
					   struct ib_wc *wc,
					   unsigned long flags)
	__releases(&q->lock)
{
	bool deliver;

	if (unlikely(ibpost_slot_stale(q, slot, cq, wc, true))) {
		spin_unlock_irqrestore(&q->lock, flags);
		return;
	}
	if (q->tail != slot->pos && ibpost_send_done_before(q, wc))
		ibpost_send_reclaim_before(q, slot);
	if (unlikely(q->watch_success) && wc->status == IB_WC_SUCCESS)
		q->ops->send_succeeded(q, slot->pos);
	deliver = slot->user_signaled || wc->status != IB_WC_SUCCESS;
	trace_ibpost_send_comp(q, slot, wc, deliver && !slot->sync);
	ibpost_slot_finish(q, cq, slot, wc, deliver, flags);
}

static void ibpost_send_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct ibpost_slot *slot =
		container_of(wc->wr_cqe, struct ibpost_slot, cqe);
	struct ibpost_queue *q = slot->queue;
	unsigned long flags;

	spin_lock_irqsave(&q->lock, flags);
	/*
	 * Not stale: a posted slot that is signaled lies in [tail, head)
	 * (only unsignaled ones stay posted behind the tail, reclaimed
	 * with their run; whatever else frees slots frees it too, or bumps
	 * the run generation: ibpost_send_reclaim_before() then takes the
	 * slot-by-slot path, which asserts it). The WRs before it are
	 * reclaimed first.
	 */
	if (likely(ibpost_comp_common(q, slot, wc))) {
		if (slot->pos != q->tail)
			ibpost_send_reclaim_before(q, slot);
		trace_ibpost_send_comp(q, slot, wc, true);
		ibpost_slot_finish_common(q, cq, slot, wc, flags, true);
		return;
	}
	ibpost_send_done_slow(q, cq, slot, wc, flags);
}

/* The completion of a receive WR, but its common case (below). */
static noinline void ibpost_recv_done_slow(struct ibpost_queue *q,
					   struct ib_cq *cq,
					   struct ibpost_slot *slot,
					   struct ib_wc *wc,
					   unsigned long flags)
	__releases(&q->lock)
{
	if (unlikely(ibpost_slot_stale(q, slot, cq, wc, false))) {
		spin_unlock_irqrestore(&q->lock, flags);
		return;
	}
	trace_ibpost_recv_comp(q, slot, wc, true);
	ibpost_slot_finish(q, cq, slot, wc, true, flags);
}

void ibpost_recv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct ibpost_slot *slot =
		container_of(wc->wr_cqe, struct ibpost_slot, cqe);
	struct ibpost_queue *q = slot->queue;
	unsigned long flags;

	/*
	 * A peer's SEND_WITH_INV retired a key: its registration's owner
	 * hears of it before the consumer's callback may unmap it. No
	 * queue lock held.
	 */
	if (unlikely(wc->wc_flags & IB_WC_WITH_INVALIDATE) &&
	    wc->status == IB_WC_SUCCESS && q->key_retired)
		q->key_retired(q->dev, wc->ex.invalidate_rkey);
	spin_lock_irqsave(&q->lock, flags);
	if (likely(ibpost_comp_common(q, slot, wc))) {
		trace_ibpost_recv_comp(q, slot, wc, true);
		ibpost_slot_finish_common(q, cq, slot, wc, flags, false);
		return;
	}
	ibpost_recv_done_slow(q, cq, slot, wc, flags);
}

/*
 * Reclaim the send slot @s, still posted, as succeeded if it was
 * unsignaled and reached the provider: a marker posted behind it (at
 * @end) came back, so the provider is done with it, and a WR it flushed
 * would have come back on its own before. Return: whether it was.
 */
static bool ibpost_slot_reclaim_drained(struct ibpost_queue *q,
					struct ibpost_slot *s, u32 end)
{
	if (s->signaled || s->synthetic)
		return false;
	trace_ibpost_send_reclaim_drained(q, s, end);
	ibpost_slot_release(q, s);
	s->state = IBPOST_SLOT_FREE;
	q->stats.completed++;
	return true;
}

/**
 * ibpost_ring_reclaim_retired - free the slots of sends that succeeded before ERR
 * @q: the send queue of a QP ibpost knows to be in ERR, from its flush
 *     worker
 *
 * An unsignaled send WR that the provider retired before the QP went to
 * ERR gets no completion, and the WRs posted in ERR, flushed by ibpost
 * itself, reclaim nothing: its slot would stay taken until RESET, and a
 * QP in ERR, which takes WRs and flushes each, would run out of slots.
 * So a send marker is posted behind it, in the ring's order (under the
 * queue's lock); when it comes back, every earlier WR the provider
 * flushed has come back too, and those still posted succeeded
 * (ibpost_sq_reclaim_done()). One marker at a time, and only while the
 * provider's queue and CQ keep the entry the drain marker needs: fewer
 * WRs with it than the depth. Never while a drain is on its way
 * (@q->rqp->dead, @q->reclaim_blocked), which reclaims them itself and
 * after whose marker a RESET could discard this one unanswered. RC only:
 * ibpost may see ERR (an error completion) before the provider's QP is
 * in it, so the marker may really run: a zero-length WRITE does no harm,
 * where a UD marker, a SEND to the QP itself, could take one of the
 * consumer's receives. Not on iWARP: siw completes a WR posted while it
 * is still flushing its queue (after a connection loss) at once, ahead
 * of the earlier WRs' flushes, and those would be taken as succeeded.
 *
 * Context: Process context (the flush worker).
 * Return: nothing.
 */
void ibpost_ring_reclaim_retired(struct ibpost_queue *q)
{
	struct ib_rdma_wr wr = {
		.wr.opcode = IB_WR_RDMA_WRITE,
		.wr.send_flags = IB_SEND_SIGNALED,
	};
	const struct ibpost_ring_qp *rqp = q->rqp;
	unsigned long flags;
	u32 pos, posted = 0;
	bool held = false;

	spin_lock_irqsave(&q->lock, flags);
	if (q->reclaim_posted || q->reclaim_blocked || rqp->dead ||
	    READ_ONCE(rqp->state) != IB_QPS_ERR || rqp->ud || rqp->iwarp)
		goto out;
	for (pos = q->tail; pos != q->head; pos++) {
		const struct ibpost_slot *s = &q->slots[pos & q->mask];

		if (s->state != IBPOST_SLOT_POSTED || s->synthetic)
			continue;
		posted++;
		held |= !s->signaled;
	}
	if (!held || posted >= q->depth)
		goto out;
	q->reclaim_end = q->head;
	q->reclaim_posted = true;
	wr.wr.wr_cqe = &q->reclaim_cqe[q->reclaim_gen];
	if (ib_post_send(rqp->ibqp, &wr.wr, NULL))
		q->reclaim_posted = false;
out:
	spin_unlock_irqrestore(&q->lock, flags);
}

/*
 * A move to RESET drains the QP: no reclaim marker from now until
 * ibpost_ring_reclaim_unblock(), after which the provider's QP is in
 * RESET (or the move failed). Return: whether this call blocked it (a
 * RESET nested in a callback of the drain's own polling finds it
 * blocked, and leaves it so).
 */
bool ibpost_ring_reclaim_block(struct ibpost_queue *q)
{
	bool mine;
	unsigned long flags;

	spin_lock_irqsave(&q->lock, flags);
	mine = !q->reclaim_blocked;
	q->reclaim_blocked = true;
	spin_unlock_irqrestore(&q->lock, flags);
	return mine;
}

/*
 * After a move to RESET (@reset) or a failed one, ending the block of
 * @mine (ibpost_ring_reclaim_block()). A reclaim marker RESET found with
 * the provider was discarded, or its completion waits in the CQ (until
 * the next drain's marker at the latest): the next marker is posted on
 * the other completion entry, and that one's completion is ignored.
 */
void ibpost_ring_reclaim_unblock(struct ibpost_queue *q, bool mine,
				 bool reset)
{
	unsigned long flags;

	spin_lock_irqsave(&q->lock, flags);
	if (reset && q->reclaim_posted) {
		q->reclaim_posted = false;
		q->reclaim_gen ^= 1;
	}
	if (mine)
		q->reclaim_blocked = false;
	spin_unlock_irqrestore(&q->lock, flags);
}

/**
 * ibpost_sq_reclaim_done - the reclaim marker came back
 * @q: the send queue
 * @wc: its completion, on one of @q->reclaim_cqe
 *
 * The unsignaled send WRs before the marker that reached the provider and
 * are still posted succeeded (flushed or run, the marker comes after
 * them): no completion comes for them. Their slots (and MR uses) are
 * released, the tail moves on, and another marker may be posted. The
 * completion of a marker a RESET found with the provider (posted on the
 * entry that is no longer @q->reclaim_gen's) reclaims nothing.
 *
 * Context: The send CQ's completion context.
 */
static void ibpost_sq_reclaim_done(struct ibpost_queue *q, struct ib_wc *wc)
{
	unsigned long flags;
	u32 pos;

	ibpost_log_wc(q, NULL, wc);
	spin_lock_irqsave(&q->lock, flags);
	/* A marker a RESET found with the provider: the ring moved on. */
	if (wc->wr_cqe != &q->reclaim_cqe[q->reclaim_gen]) {
		spin_unlock_irqrestore(&q->lock, flags);
		return;
	}
	ibpost_ring_run_break(q);
	for (pos = q->tail; (s32)(q->reclaim_end - pos) > 0; pos++) {
		struct ibpost_slot *s = &q->slots[pos & q->mask];

		if (s->state == IBPOST_SLOT_POSTED)
			ibpost_slot_reclaim_drained(q, s, q->reclaim_end);
	}
	ibpost_queue_advance(q);
	q->reclaim_posted = false;
	spin_unlock_irqrestore(&q->lock, flags);
	wake_up_all(&q->wait);
}

/*
 * The two reclaim markers' handlers: the queue from the entry itself, as a
 * CQ shared with other QPs (ib_core's pool) has no cq_context.
 */
static void ibpost_sq_reclaim_done0(struct ib_cq *cq, struct ib_wc *wc)
{
	ibpost_sq_reclaim_done(container_of(wc->wr_cqe, struct ibpost_queue,
					    reclaim_cqe[0]), wc);
}

static void ibpost_sq_reclaim_done1(struct ib_cq *cq, struct ib_wc *wc)
{
	ibpost_sq_reclaim_done(container_of(wc->wr_cqe, struct ibpost_queue,
					    reclaim_cqe[1]), wc);
}

/*
 * Return as flushed every WR of @q still posted that @flush selects, up
 * to @budget of them, and silently reclaim the unsignaled send WRs
 * @reclaim selects (known to have succeeded). Held on entry and on
 * return (taken with *@flags, as by the completion handlers), q->lock is
 * dropped around each context returned; the caller has disabled bottom
 * halves for a SOFTIRQ queue (ibpost_queue_bh_off()).
 * Return: the WRs flushed.
 */
static u32 ibpost_queue_walk(struct ibpost_queue *q,
			     bool (*flush)(const struct ibpost_slot *s),
			     bool reclaim, u32 budget, unsigned long *flags)
	__must_hold(&q->lock)
{
	struct ib_wc wc = {
		.status = IB_WC_WR_FLUSH_ERR,
		.opcode = q->is_send ? IB_WC_SEND : IB_WC_RECV,
	};
	/* Only what was posted when the walk began: a callback may repost. */
	u32 pos, end = q->head, n = 0;

	lockdep_assert_held(&q->lock);
	ibpost_ring_run_break(q);
	/* Any order: every index once, the ring's size of positions. */
	pos = q->free_idx ? end - q->mask - 1 : q->tail;
	for (; n < budget && (s32)(end - pos) > 0; pos++) {
		struct ibpost_slot *s = &q->slots[pos & q->mask];

		/* A deferred slot waits for its client (a carrier's). */
		if (s->state != IBPOST_SLOT_POSTED || s->deferred)
			continue;
		/* Any order: the slot's own position says when it was posted. */
		if (q->free_idx && (s32)(end - s->pos) <= 0)
			continue;
		/* A synthetic WR never reached the provider: always a flush. */
		if (reclaim && q->is_send && ibpost_slot_reclaim_drained(q, s,
									 end))
			continue;
		if (!flush(s))
			continue;
		if (s->synthetic)
			WRITE_ONCE(q->nr_synthetic, q->nr_synthetic - 1);
		wc.wr_cqe = &s->cqe;
		/*
		 * The QP, as in a provider's completion; NULL only once the
		 * provider's QP is destroyed (teardown), as
		 * ibpost_qp_ibqp() then says.
		 */
		wc.qp = READ_ONCE(q->rqp->ibqp);
		if (q->is_send)
			trace_ibpost_send_flush(q, s, !s->sync);
		else
			trace_ibpost_recv_flush(q, s, true);
		ibpost_slot_finish(q, READ_ONCE(q->cq), s, &wc, true, *flags);
		n++;
		spin_lock_irqsave(&q->lock, *flags);
		/*
		 * The ring moved: rescan from the tail. An any-order ring's
		 * slots stay where they are: each index is seen once, in one
		 * pass over the ring, not one per WR flushed.
		 */
		if (!q->free_idx)
			pos = q->tail - 1;
	}
	return n;
}

/*
 * Callbacks of a SOFTIRQ queue run with bottom halves disabled, as in
 * the CQ's softirq, also where ibpost runs them from a task (flushes in
 * ERR, RESET, teardown). Return: whether this call disabled them, for
 * ibpost_queue_bh_on().
 */
static bool ibpost_queue_bh_off(const struct ibpost_queue *q)
{
	if (q->rqp->poll_ctx != IB_POLL_SOFTIRQ)
		return false;
	local_bh_disable();
	return true;
}

static void ibpost_queue_bh_on(bool bh)
{
	if (bh)
		local_bh_enable();
}

static bool ibpost_slot_any(const struct ibpost_slot *s)
{
	return true;
}

static bool ibpost_slot_synthetic(const struct ibpost_slot *s)
{
	return s->synthetic;
}

/*
 * After the provider's QP is destroyed, or moved to RESET: return every
 * context it did not. @drained says the drain marker completed, so on
 * IB and RoCE unsignaled send WRs still posted succeeded before it;
 * otherwise, and always on iWARP (siw completes a WR posted while it
 * flushes ahead of the earlier WRs' flushes, so the marker's return says
 * nothing of them), their fate is unknown and they are reported flushed.
 * @drop_done (destroy only) also forgets the completions nobody fetched;
 * after a device removal they stay for ibpost_get_*_comp(). Callbacks run,
 * under qp->mutex at teardown and RESET; the caller holds no lock a
 * callback may take (dev->qp_lock: a callback's ibpost_dereg_mr()).
 */
void ibpost_queue_flush(struct ibpost_queue *q, bool drained, bool drop_done)
{
	unsigned long flags;
	bool bh;

	bh = ibpost_queue_bh_off(q);
	spin_lock_irqsave(&q->lock, flags);
	ibpost_queue_walk(q, ibpost_slot_any,
			  drained && !q->rqp->iwarp, U32_MAX,
			  &flags);
	/* Completions nobody fetched go away with the QP. */
	while (drop_done && !list_empty(&q->done)) {
		struct ibpost_slot *s = list_first_entry(&q->done,
							 struct ibpost_slot,
							 done_node);
		list_del(&s->done_node);
		s->state = IBPOST_SLOT_FREE;
	}
	ibpost_queue_advance(q);
	spin_unlock_irqrestore(&q->lock, flags);
	ibpost_queue_bh_on(bh);
	wake_up_all(&q->wait);
}

/**
 * ibpost_queue_finish_synthetic - flush the WRs kept from the provider in ERR
 * @q: the queue
 * @budget: at most this many
 *
 * From the flush worker, and for a DIRECT queue with a callback from its
 * consumer's polling or ibpost's own waits (ibpost_queue_direct_cb()).
 * A SOFTIRQ consumer's callbacks run with bottom halves disabled, as they
 * would from its CQ.
 *
 * Context: Process context, no queue lock held.
 * Return: the WRs returned.
 */
u32 ibpost_queue_finish_synthetic(struct ibpost_queue *q, u32 budget)
{
	bool bh = ibpost_queue_bh_off(q);
	unsigned long flags;
	u32 n;

	spin_lock_irqsave(&q->lock, flags);
	n = ibpost_queue_walk(q, ibpost_slot_synthetic, false, budget, &flags);
	spin_unlock_irqrestore(&q->lock, flags);
	ibpost_queue_bh_on(bh);
	return n;
}

/* The oldest completion parked in @q into @comp, if any; its slot freed. */
bool ibpost_queue_take_done(struct ibpost_queue *q, struct ibpost_comp *comp)
{
	struct ibpost_slot *slot;
	unsigned long flags;

	spin_lock_irqsave(&q->lock, flags);
	slot = list_first_entry_or_null(&q->done, struct ibpost_slot,
					done_node);
	if (slot) {
		list_del(&slot->done_node);
		ibpost_slot_comp(q, slot, comp);
		slot->state = IBPOST_SLOT_FREE;
		ibpost_queue_advance(q);
	}
	spin_unlock_irqrestore(&q->lock, flags);
	return slot;
}

/* The submit side's cold half (see ring_post.h). */

/*
 * How many WRs a chain holds, for the post tracepoints. Counted under the
 * queue lock, before the provider sees the chain: once it has, the queued
 * prefix may complete and the consumer free it.
 */
u32 __ibpost_ring_chain_len(const void *wr, bool send)
{
	u32 n = 0;

	for (; wr; n++)
		wr = send ? (const void *)((const struct ib_send_wr *)wr)->next :
			    (const void *)((const struct ib_recv_wr *)wr)->next;
	return n;
}

/* Which staged copy, of @m of @size bytes from @stage, @bad is; else @m. */
static u32 ibpost_ring_stage_index(const void *stage, size_t size, u32 m,
				   const void *bad)
{
	uintptr_t off = (uintptr_t)bad - (uintptr_t)stage;

	if (!bad || bad < stage || off >= size * m || off % size)
		return m;
	return off / size;
}

/*
 * Where in the batch of @m on the send queue @q, whose first WR's slot is
 * at ring position @first, the provider's refused WR @bad is, as a count
 * of WRs it queued. A refused prefix took nothing, and its WR was not
 * queued either. A WR refused after its prefix was taken (a READ behind
 * its sink's REG_MR) is the client's to hear of: the prefix is queued.
 */
static u32 ibpost_ring_send_refused(struct ibpost_queue *q, u32 first,
				    const struct ib_send_wr *bad, u32 m)
{
	struct ibpost_slot *slot;
	u32 i;

	for (i = 0; i < m; i++)
		if (q->slots[(first + i) & q->mask].prefixed &&
		    q->stage_prefix[i] == bad)
			return i;
	i = ibpost_ring_stage_index(q->stage.send, sizeof(*q->stage.send), m,
				    bad);
	if (i == m) {
		/*
		 * No WR of the batch named (a provider bug): taken as
		 * nothing queued, but any prefix may have been taken, and
		 * its client hears of each as such.
		 */
		pr_warn_ratelimited("post_send: the provider refused a chain naming none of its WRs as bad_wr; taken as nothing queued\n");
		for (i = 0; i < m && q->ops; i++) {
			slot = &q->slots[(first + i) & q->mask];
			if (slot->prefixed) {
				q->ops->slot_failed(q, slot, true);
				q->refused_taken = true;
			}
		}
		return 0;
	}
	slot = &q->slots[(first + i) & q->mask];
	if (slot->prefixed && q->ops) {
		q->ops->slot_failed(q, slot, true);
		q->refused_taken = true;
	}
	return i;
}

/*
 * The provider refused the staged batch of @m on @q (a send queue's first
 * WR's slot at ring position @first) at its WR q->provider_bad, which is
 * cleared for the next post (ibpost_ring_provider_post()). Scalars, not
 * the post: the post's stays out of memory. Return: the WRs it queued
 * before that one.
 */
u32 ibpost_ring_provider_refused(struct ibpost_queue *q, u32 first, u32 m)
{
	u32 done;

	if (q->is_send) {
		done = ibpost_ring_send_refused(q, first, q->provider_bad.send,
						m);
		q->provider_bad.send = NULL;
	} else {
		done = ibpost_ring_stage_index(q->stage.recv,
					       sizeof(*q->stage.recv), m,
					       q->provider_bad.recv);
		q->provider_bad.recv = NULL;
	}
	/* No bad_wr, or none of ours: nothing was queued. */
	return done < m ? done : 0;
}

#ifdef IBPOST_TEST_HOOKS
/*
 * Test builds: a hook, asked at a post's first batch, may make "the
 * provider" refuse the post's chain from WR k on, to exercise the
 * rollback below deterministically, in whichever batch k falls.
 */
int ibpost_ring_submit_hooked(struct ibpost_ring_post *p, u32 m, u32 *done)
{
	struct ibpost_queue *q = p->q;
	struct ibpost_slot *slot;
	int ret = 0;
	bool reg;
	u32 k;

	/* Once per post: not again when iWARP's busy provider is retried. */
	if (!p->hooked) {
		p->hooked = true;
		p->refuse = ibpost_hook(IBPOST_HOOK_SUBMIT, q) - 1;
	}
	if (p->refuse < 0 || (u32)p->refuse < p->off ||
	    (u32)p->refuse - p->off >= m)
		return ibpost_ring_provider_post(p, m, done);
	k = p->refuse - p->off;
	/*
	 * A prefix (an iWARP READ's sink REG_MR) goes first in the chain:
	 * "the provider" takes it and refuses its WR, as a provider posting
	 * one WR after another would.
	 */
	slot = ibpost_ring_post_slot(p, k);
	reg = q->is_send && slot->prefixed;
	if (reg)
		q->stage_prefix[k]->next = NULL;
	else if (k && q->is_send)
		q->stage.send[k - 1].send.next = NULL;
	else if (k)
		q->stage.recv[k - 1].next = NULL;
	if (k || reg)
		ret = ibpost_ring_provider_post(p, k + reg, done);
	if (ret)
		return ret;
	/* As a refusal at the provider's WR k: a taken REG_MR held. */
	*done = q->is_send ?
		ibpost_ring_send_refused(q, p->start + p->off,
					 &q->stage.send[k].send, m) : k;
	return -EIO;
}
#endif

/*
 * Slots [@start, @start + @n) go to the flush worker, not the provider:
 * it completes them with IB_WC_WR_FLUSH_ERR outside the post call (a
 * DIRECT queue with a callback: its consumer's next poll does).
 */
void ibpost_ring_submit_synthetic(struct ibpost_queue *q, u32 start, u32 n)
{
	u32 i;

	ibpost_ring_run_break(q);
	for (i = 0; i < n; i++)
		q->slots[(start + i) & q->mask].synthetic = true;
	WRITE_ONCE(q->nr_synthetic, q->nr_synthetic + n);
	queue_work(ibpost_wq, &q->rqp->flush_work);
}

/*
 * siw refuses a whole post call with -ENOTCONN, in RTS too, while a state
 * change of its own holds the QP's state lock (the down_read_trylock() in
 * siw_post_send()): such a refusal of the call's first WR is tried again
 * for up to this many times 5 us before it is taken for a connection that
 * is ending.
 */
#define IBPOST_RING_IWARP_BUSY_TRIES	20

/*
 * The provider refused the staged batch of @m from its WR @done on, with
 * @pret: release the slots from it on, and have *bad_wr name the caller's
 * WR.
 */
static void ibpost_ring_submit_refused(struct ibpost_ring_post *p, u32 m,
				       u32 done, int pret)
{
	struct ibpost_queue *q = p->q;

	p->bad = q->stage_wr[done];
	ibpost_slot_unclaim(q, m - done);
	pr_debug("%s: the provider refused WR %u of %u: %d\n",
		 q->is_send ? "post_send" : "post_recv", p->off + done, p->n,
		 pret);
	p->off += done;
	p->n = p->off;
	p->ret = pret;
	p->rule = IBPOST_RULE_PROVIDER;
}

/*
 * The provider refused the staged batch of @m with @pret, after queuing
 * @done of it (ibpost_ring_submit()): retry a busy iWARP provider, flush the
 * rest of an ending iWARP connection, or release the slots from the
 * refused WR on, @p saying which caller's WR and why.
 */
void ibpost_ring_submit_error(struct ibpost_ring_post *p, u32 m,
			      u32 done, int pret)
{
	const struct ibpost_ring_qp *rqp = p->rqp;
	struct ibpost_queue *q = p->q;
	bool taken = q->refused_taken;
	int i;

	q->provider_errors++;
	q->refused_taken = false;

	/*
	 * iWARP: the provider's state lock was busy (above)? Only a refusal
	 * that took nothing is tried again: one that took a prefix (its
	 * client told, the prefix gone from the slot) is not a busy lock.
	 */
	for (i = 0; i < IBPOST_RING_IWARP_BUSY_TRIES && pret == -ENOTCONN &&
	     !done && !taken && rqp->iwarp && rqp->state == IB_QPS_RTS;
	     i++) {
		udelay(5);
		pret = ibpost_ring_submit_hooked(p, m, &done);
		if (!pret) {
			p->off += m;
			return;
		}
		taken = q->refused_taken;
		q->refused_taken = false;
	}
	/*
	 * iWARP: a provider leaving RTS (siw: CLOSING, TERMINATE) refuses
	 * posts with -ENOTCONN before its QP is in ERR, where IBA has them
	 * accepted and flushed. ibpost saw RTS, so the connection is ending:
	 * the rest of the chain is flushed by ibpost, as in ERR.
	 */
	if (pret == -ENOTCONN && rqp->iwarp &&
	    (rqp->state == IB_QPS_RTS || rqp->state == IB_QPS_ERR)) {
		ibpost_ring_submit_synthetic(q, p->start + p->off + done,
					     m - done);
		p->synthetic = true;
		p->off += m;
		return;
	}
	/*
	 * One operation whose first WRs the provider took: its context must
	 * still come back once, after them. The rest is flushed by ibpost.
	 * A refusal at or before its first WR is an ordinary one.
	 */
	if (p->whole && p->off + done > p->whole_from) {
		pr_warn_ratelimited("qp %u: the provider refused WR %u of an operation of %u (%d): the rest of it is flushed\n",
				    rqp->qpn, p->off + done, p->n, pret);
		ibpost_ring_submit_synthetic(q, p->start + p->off + done,
					     m - done);
		p->synthetic = true;
		p->split = true;
		p->off += m;
		return;
	}
	ibpost_ring_submit_refused(p, m, done, pret);
}
