// SPDX-License-Identifier: GPL-2.0
/*
 * The MR table: which registered MR of a device holds an SGE, and the
 * counting of its uses by posted WRs, for the post path below the
 * registration calls (mr.c). A queue's hit (q->hit, see ring.h) is tried
 * before the device's table.
 *
 * The table: every MR is listed in registration order (dev->mrs) and
 * indexed by the DMA addresses its SGEs may start at (an interval tree,
 * dev->mrs_by_addr: a contiguous MR's one range, a page MR's segments
 * each), so that an SGE outside the hit costs a descent of the tree, not
 * a walk of the device's MRs. An SGE under the key of an MR's own
 * fast-registration MR is found there too: that MR maps the buffer at
 * its DMA address (ibpost_mr_alloc_remote()). Where several MRs hold an
 * SGE (the same memory registered twice, whole and in parts, or in two
 * directions), the older serves it: the tree yields every range that
 * holds the address, and the lookup keeps the MR registered first
 * (mr->seq).
 *
 * Serialization: dev->mr_lock guards the list and the tree; the post path
 * searches them under the queue's lock (ibpost_base.h orders the two).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/interval_tree_generic.h>
#include "mr_table.h"
#include "qp_core.h"
#include "srq.h"

/*
 * Ranges (un)indexed per hold of dev->mr_lock: a page MR of a large
 * vmalloc buffer has one per page where DMA addresses are kernel ones.
 */
#define IBPOST_MR_RANGES_PER_LOCK	256

#define IBPOST_MR_RANGE_FIRST(r)	((r)->first)
#define IBPOST_MR_RANGE_LAST(r)		((r)->last)

INTERVAL_TREE_DEFINE(struct ibpost_mr_range, node, u64, subtree_last,
		     IBPOST_MR_RANGE_FIRST, IBPOST_MR_RANGE_LAST, static,
		     ibpost_mr_range)

static void ibpost_mr_range_add(struct ibpost_dev *dev,
				struct ibpost_mr_range *r, struct ibpost_mr *mr,
				u64 first, u64 last)
{
	r->mr = mr;
	r->first = first;
	r->last = last;
	ibpost_mr_range_insert(r, &dev->mrs_by_addr);
}

/*
 * Let go of dev->mr_lock between batches of @i ranges (un)indexed, the MR
 * revoked or its device's QPs gone: no post uses it meanwhile.
 */
static void ibpost_mr_table_breathe(struct ibpost_dev *dev, u32 i)
{
	if (i % IBPOST_MR_RANGES_PER_LOCK)
		return;
	spin_unlock_bh(&dev->mr_lock);
	cond_resched();
	spin_lock_bh(&dev->mr_lock);
}

/**
 * ibpost_mr_table_add - list and index a mapped MR on its device
 * @dev: the device, its qp_lock held (every change of the table holds it)
 * @mr: the MR, revoked, its DMA addresses and fast-registration MR final
 *
 * The MR is the newest: an SGE it shares with an older MR goes to the
 * older one. A page MR's segment ends where the MR's highest address
 * does (ibpost_mr_covers_segs()); a contiguous MR's range one past its
 * end, where an SGE of length 0 may start (ibpost_mr_covers()). A page
 * MR's segments go in by batches (ibpost_mr_table_breathe()).
 *
 * Context: Process context; takes dev->mr_lock.
 */
void ibpost_mr_table_add(struct ibpost_dev *dev, struct ibpost_mr *mr)
{
	u32 i;

	lockdep_assert_held(&dev->qp_lock);
	/* Its own key's SGEs are found by the same addresses. */
	WARN_ON_ONCE(mr->ibmr && (mr->segs || mr->ibmr->iova != mr->dma));
	WARN_ON_ONCE(!mr->revoked);
	spin_lock_bh(&dev->mr_lock);
	mr->seq = ++dev->mr_seq;
	list_add_tail(&mr->node, &dev->mrs);
	if (!mr->segs)
		ibpost_mr_range_add(dev, &mr->range, mr, mr->dma,
				    mr->dma + mr->len);
	for (i = 0; mr->segs && i < mr->nsegs; i++) {
		struct ibpost_mr_seg *seg = &mr->segs[i];

		ibpost_mr_range_add(dev, &seg->range, mr, seg->dma,
				    min(seg->dma + seg->len, mr->dma_hi - 1));
		ibpost_mr_table_breathe(dev, i + 1);
	}
	spin_unlock_bh(&dev->mr_lock);
}

/**
 * ibpost_mr_table_del - unlist an MR (once or more)
 * @dev: the device, its qp_lock held
 * @mr: the MR, revoked or its device's QPs gone: no lookup finds it any
 *      more
 *
 * Context: Process context; takes dev->mr_lock.
 */
void ibpost_mr_table_del(struct ibpost_dev *dev, struct ibpost_mr *mr)
{
	u32 i;

	lockdep_assert_held(&dev->qp_lock);
	spin_lock_bh(&dev->mr_lock);
	if (!list_empty(&mr->node)) {
		list_del_init(&mr->node);
		if (!mr->segs)
			ibpost_mr_range_remove(&mr->range, &dev->mrs_by_addr);
		for (i = 0; mr->segs && i < mr->nsegs; i++) {
			ibpost_mr_range_remove(&mr->segs[i].range,
					       &dev->mrs_by_addr);
			ibpost_mr_table_breathe(dev, i + 1);
		}
	}
	spin_unlock_bh(&dev->mr_lock);
}

/*
 * Whether @r's MR may hold @sge now, for a WR that @forbid does not
 * exclude, @sge starting in @r: a page MR's segment by itself, under
 * the MR's local key.
 */
static bool ibpost_mr_range_serves(const struct ibpost_mr_range *r,
				   const struct ib_sge *sge, u8 forbid)
{
	const struct ibpost_mr *mr = r->mr;

	if (mr->revoked || (mr->dma_flags & forbid))
		return false;
	if (r == &mr->range)
		return ibpost_mr_covers(mr, sge);
	return sge->lkey == mr->lkey &&
	       ibpost_mr_seg_covers(container_of(r, struct ibpost_mr_seg,
						 range), sge);
}

/*
 * The live MR of @dev that holds @sge, with a user counted, or NULL; an MR
 * with a @forbid flag is passed over (mapped the other way: another MR
 * over the same memory may serve), and refused if none does. Of several,
 * the oldest.
 * Only from __ibpost_mr_find(), under the queue's lock (asserted there).
 */
struct ibpost_mr *ibpost_mr_lookup(struct ibpost_dev *dev,
				   const struct ib_sge *sge, u8 forbid)
{
	struct ibpost_mr *found = NULL;
	struct ibpost_mr_range *r;
	u64 addr = sge->addr;

	spin_lock(&dev->mr_lock);
	for (r = ibpost_mr_range_iter_first(&dev->mrs_by_addr, addr, addr); r;
	     r = ibpost_mr_range_iter_next(r, addr, addr))
		if ((!found || r->mr->seq < found->seq) &&
		    ibpost_mr_range_serves(r, sge, forbid))
			found = r->mr;
	if (found)
		atomic_inc(&found->use.users);
	spin_unlock(&dev->mr_lock);
	return found;
}

/*
 * Count a user on @mr unless ibpost_dereg_mr() revoked it: the user is
 * counted before the revocation is read, each side's store ordered before
 * its load by a full barrier, so either dereg sees the user (-EBUSY) or
 * this sees the revocation. Return: whether the user was counted.
 * Inline: out of line, a queue gone idle between posts paid a call more
 * for its hit at every post (__ibpost_mr_find()).
 */
static inline bool ibpost_mr_get_live(struct ibpost_mr *mr)
{
	atomic_inc(&mr->use.users);
	/* Count the user before reading the revocation: dereg pairs. */
	smp_mb__after_atomic();
	if (likely(!READ_ONCE(mr->revoked)))
		return true;
	atomic_dec(&mr->use.users);
	return false;
}

/*
 * ibpost_mr_get_live() for an MR it found revoked: a dereg that finds
 * users (-EBUSY) takes the revocation back before it drops the device's
 * MR lock, so under that lock @mr is either back, and its user counted,
 * or revoked for good (ibpost_mr_lookup() sees an SGE's MR the same way).
 */
static bool ibpost_mr_get_settled(struct ibpost_mr *mr)
{
	bool live;

	spin_lock(&mr->dev->mr_lock);
	live = !mr->revoked;
	if (live)
		atomic_inc(&mr->use.users);
	spin_unlock(&mr->dev->mr_lock);
	return live;
}

/*
 * A queue's hit (q->hit, see ring.h) is tried first: consumers post from
 * few buffers, and the hit costs no device lock. ibpost_dereg_mr() sees
 * the user the queue holds for the SGEs in its hit (-EBUSY) as it would
 * see each WR's.
 */

/*
 * @mr, with a user counted for the SGE at hand, becomes @q's hit when the
 * hit has no SGE outstanding and no post has DMA work on @mr; the user is
 * then the queue's. Return: whether it did (the SGE counts in the hit).
 */
static bool ibpost_mr_adopt(struct ibpost_queue *q, struct ibpost_mr *mr)
{
	if (q->hit_users || (mr->dma_flags & IBPOST_MR_DMA_WORK))
		return false;
	ibpost_ring_hit_adopt(q, &mr->use);
	return true;
}

/**
 * __ibpost_mr_find - the live MR of @q's device that holds @sge
 * @q: the queue posted to, its lock held
 * @sge: the SGE
 * @op: its WR's opcode, or IBPOST_OP_RECV
 *
 * The SGE's use is counted in q->hit_users when the hit had no users (it
 * adopts the MR found, see ibpost_mr_adopt()); else the MR returned has a
 * user counted for it.
 * As ibpost_mr_lookup(), trying @q's hit first (see above); the case of
 * an SGE in a hit with users is ibpost_mr_find()'s, inline. A hit that
 * dereg revoked is looked up again under the device's lock, where it is
 * gone or, the dereg having failed, back. Dereg clears every queue's hit
 * under that queue's lock before freeing the MR.
 *
 * Return: the MR, or 0, with IBPOST_MR_HIT set when the use is counted
 * in the hit.
 */
unsigned long __ibpost_mr_find(struct ibpost_queue *q,
			       const struct ib_sge *sge, int op)
{
	struct ibpost_mr *mr = q->hit ? ibpost_use_mr(q->hit) : NULL;

	lockdep_assert_held(&q->lock);
	/* The hit, live again, or whichever MR holds @sge now. */
	if (!mr || !ibpost_mr_covers(mr, sge) || !ibpost_mr_get_live(mr))
		mr = ibpost_mr_lookup(q->dev, sge, ibpost_mr_forbids(op));
	if (mr && ibpost_mr_adopt(q, mr))
		return (unsigned long)mr | IBPOST_MR_HIT;
	return (unsigned long)mr;
}

/**
 * __ibpost_mr_pin - count a use of an MR a post names itself
 * @q: the queue posted to, its lock held
 * @mr: the MR (the seed operations take it from the caller)
 *
 * Counts the use, as __ibpost_mr_find() does, when @mr belongs to @q's
 * device and is not being deregistered, with the same ordering against
 * ibpost_dereg_mr(); @q's hit with users is ibpost_mr_pin()'s, inline.
 *
 * Return: @mr, or 0, with IBPOST_MR_HIT set as __ibpost_mr_find() sets it.
 */
unsigned long __ibpost_mr_pin(struct ibpost_queue *q, struct ibpost_mr *mr)
{
	lockdep_assert_held(&q->lock);
	if (!mr || mr->dev != q->dev ||
	    (!ibpost_mr_get_live(mr) && !ibpost_mr_get_settled(mr)))
		return 0;
	if (ibpost_mr_adopt(q, mr))
		return (unsigned long)mr | IBPOST_MR_HIT;
	return (unsigned long)mr;
}

/*
 * @mr is revoked with no user: @q holds none of it, so it may forget it.
 * A queue with SGEs in its hit holds a user of it (see above).
 */
static void ibpost_mr_forget_hit(struct ibpost_queue *q,
				 struct ibpost_mr *mr)
{
	unsigned long flags;

	spin_lock_irqsave(&q->lock, flags);
	if (q->hit == &mr->use && !WARN_ON_ONCE(q->hit_users))
		q->hit = NULL;
	spin_unlock_irqrestore(&q->lock, flags);
}

/* @mr is revoked: no queue may keep it as its hit. */
void ibpost_mr_forget_hits(struct ibpost_dev *dev, struct ibpost_mr *mr)
	__must_hold(&dev->qp_lock)
{
	struct ibpost_srq *srq;
	struct ibpost_qp *qp;

	lockdep_assert_held(&dev->qp_lock);
	list_for_each_entry(qp, &dev->qps, node) {
		ibpost_mr_forget_hit(&qp->sq, mr);
		ibpost_mr_forget_hit(&qp->rq, mr);
	}
	list_for_each_entry(srq, &dev->srqs, node)
		ibpost_mr_forget_hit(&srq->rq, mr);
}

/*
 * A QP is going away: MRs registered through it can no longer use it.
 * ibpost_dereg_mr() reads mr->qp under dev->qp_lock, held here too.
 */
void ibpost_mrs_forget_qp(struct ibpost_qp *qp)
{
	struct ibpost_dev *dev = qp->dev;
	struct ibpost_mr *mr;

	lockdep_assert_held(&dev->qp_lock);
	spin_lock_bh(&dev->mr_lock);
	list_for_each_entry(mr, &dev->mrs, node)
		if (mr->qp == qp)
			mr->qp = NULL;
	spin_unlock_bh(&dev->mr_lock);
}
