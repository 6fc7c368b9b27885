// SPDX-License-Identifier: GPL-2.0
/*
 * The MR table: which registered MR of a device holds an SGE, and the
 * counting of its uses by posted WRs, for the post path below the
 * registration calls (mr.c). A queue's hit (q->hit, see ring.h) is tried
 * before the device's table.
 *
 * The table: every MR is listed in registration order (dev->mrs) and
 * indexed twice, by the DMA addresses its local key reaches (an interval
 * tree, dev->mrs_by_addr) and, when it has a fast-registration MR, by
 * that MR's lkey (dev->mrs_by_key), so that an SGE outside the hit costs
 * a descent of a tree, not a walk of the device's MRs. Where two MRs hold
 * an SGE (the same memory registered twice, in two directions), the
 * older serves it: the tree yields every MR whose range holds the
 * address, and the lookup keeps the one registered first (mr->seq).
 *
 * Serialization: dev->mr_lock guards the list and both indexes; the post
 * path searches them under the queue's lock (ibpost_base.h orders the
 * two).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/interval_tree_generic.h>
#include "mr_table.h"
#include "qp_core.h"
#include "srq.h"

#define IBPOST_MR_ADDR_FIRST(mr)	((mr)->addr_first)
#define IBPOST_MR_ADDR_LAST(mr)		((mr)->addr_last)

INTERVAL_TREE_DEFINE(struct ibpost_mr, by_addr, u64, addr_subtree_last,
		     IBPOST_MR_ADDR_FIRST, IBPOST_MR_ADDR_LAST, static,
		     ibpost_mr_addr)

/*
 * The DMA addresses an SGE under @mr's local key may start at (see
 * ibpost_mr_covers()): a page MR's from its lowest segment to its
 * highest, a contiguous one's up to one past its end. Return: false for
 * an MR that holds no SGE that way.
 */
static bool ibpost_mr_addr_range(struct ibpost_mr *mr)
{
	if (mr->segs) {
		if (!mr->nsegs || mr->dma_hi <= mr->dma_lo)
			return false;
		mr->addr_first = mr->dma_lo;
		mr->addr_last = mr->dma_hi - 1;
		return true;
	}
	if (!mr->len)
		return false;
	mr->addr_first = mr->dma;
	mr->addr_last = mr->dma + mr->len;
	return true;
}

static void ibpost_mr_key_insert(struct ibpost_dev *dev, struct ibpost_mr *mr)
{
	struct rb_node **link = &dev->mrs_by_key.rb_node, *parent = NULL;

	while (*link) {
		parent = *link;
		if (mr->key < rb_entry(parent, struct ibpost_mr, by_key)->key)
			link = &parent->rb_left;
		else
			link = &parent->rb_right;
	}
	rb_link_node(&mr->by_key, parent, link);
	rb_insert_color(&mr->by_key, &dev->mrs_by_key);
}

static struct ibpost_mr *ibpost_mr_by_key(struct ibpost_dev *dev, u32 key)
{
	struct rb_node *n = dev->mrs_by_key.rb_node;

	while (n) {
		struct ibpost_mr *mr = rb_entry(n, struct ibpost_mr, by_key);

		if (key == mr->key)
			return mr;
		n = key < mr->key ? n->rb_left : n->rb_right;
	}
	return NULL;
}

/**
 * ibpost_mr_table_add - list and index a mapped MR on its device
 * @dev: the device, its mr_lock held
 * @mr: the MR, its DMA addresses and fast-registration MR final
 *
 * The MR is the newest: an SGE it shares with an older MR goes to the
 * older one.
 */
void ibpost_mr_table_add(struct ibpost_dev *dev, struct ibpost_mr *mr)
{
	lockdep_assert_held(&dev->mr_lock);
	mr->seq = ++dev->mr_seq;
	list_add_tail(&mr->node, &dev->mrs);
	if (ibpost_mr_addr_range(mr))
		ibpost_mr_addr_insert(mr, &dev->mrs_by_addr);
	if (mr->ibmr) {
		mr->key = mr->ibmr->lkey;
		ibpost_mr_key_insert(dev, mr);
	}
}

/**
 * ibpost_mr_table_del - unlist an MR (once or more)
 * @dev: the device, its mr_lock held
 * @mr: the MR: no lookup finds it any more
 */
void ibpost_mr_table_del(struct ibpost_dev *dev, struct ibpost_mr *mr)
{
	lockdep_assert_held(&dev->mr_lock);
	list_del_init(&mr->node);
	if (!RB_EMPTY_NODE(&mr->by_addr)) {
		ibpost_mr_addr_remove(mr, &dev->mrs_by_addr);
		RB_CLEAR_NODE(&mr->by_addr);
	}
	if (!RB_EMPTY_NODE(&mr->by_key)) {
		rb_erase(&mr->by_key, &dev->mrs_by_key);
		RB_CLEAR_NODE(&mr->by_key);
	}
}

/* Whether @mr may hold @sge now, for a WR that @forbid does not exclude. */
static bool ibpost_mr_serves(const struct ibpost_mr *mr,
			     const struct ib_sge *sge, u8 forbid)
{
	return !mr->revoked && !(mr->dma_flags & forbid) &&
	       ibpost_mr_covers(mr, sge);
}

/*
 * The live MR of @dev that holds @sge, with a user counted, or NULL; an MR
 * with a @forbid flag is passed over (mapped the other way: another MR
 * over the same memory may serve), and refused if none does. Of several,
 * the oldest. An SGE under an MR's own key (its fast-registration MR's
 * lkey) is held by that MR alone: no other has that key.
 * Only from __ibpost_mr_find(), under the queue's lock (asserted there).
 */
struct ibpost_mr *ibpost_mr_lookup(struct ibpost_dev *dev,
				   const struct ib_sge *sge, u8 forbid)
{
	struct ibpost_mr *mr, *found = NULL;
	u64 addr = sge->addr;

	spin_lock(&dev->mr_lock);
	for (mr = ibpost_mr_addr_iter_first(&dev->mrs_by_addr, addr, addr); mr;
	     mr = ibpost_mr_addr_iter_next(mr, addr, addr))
		if ((!found || mr->seq < found->seq) &&
		    ibpost_mr_serves(mr, sge, forbid))
			found = mr;
	if (!found) {
		mr = ibpost_mr_by_key(dev, sge->lkey);
		if (mr && ibpost_mr_serves(mr, sge, forbid))
			found = mr;
	}
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
 */
static bool ibpost_mr_get_live(struct ibpost_mr *mr)
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
 * @hit: set to whether the SGE's use is counted in q->hit_users
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
 * Return: the MR, or NULL.
 */
struct ibpost_mr *__ibpost_mr_find(struct ibpost_queue *q,
				   const struct ib_sge *sge, int op, bool *hit)
{
	struct ibpost_mr *mr = q->hit ? ibpost_use_mr(q->hit) : NULL;

	lockdep_assert_held(&q->lock);
	/* The hit, live again, or whichever MR holds @sge now. */
	if (!mr || !ibpost_mr_covers(mr, sge) || !ibpost_mr_get_live(mr))
		mr = ibpost_mr_lookup(q->dev, sge, ibpost_mr_forbids(op));
	*hit = mr && ibpost_mr_adopt(q, mr);
	return mr;
}

/**
 * __ibpost_mr_pin - count a use of an MR a post names itself
 * @q: the queue posted to, its lock held
 * @mr: the MR (the seed operations take it from the caller)
 * @hit: set to whether the use is counted in q->hit_users
 *
 * Counts the use, as __ibpost_mr_find() does, when @mr belongs to @q's
 * device and is not being deregistered, with the same ordering against
 * ibpost_dereg_mr(); @q's hit with users is ibpost_mr_pin()'s, inline.
 *
 * Return: @mr, or NULL.
 */
struct ibpost_mr *__ibpost_mr_pin(struct ibpost_queue *q, struct ibpost_mr *mr,
				  bool *hit)
{
	lockdep_assert_held(&q->lock);
	*hit = false;
	if (!mr || mr->dev != q->dev ||
	    (!ibpost_mr_get_live(mr) && !ibpost_mr_get_settled(mr)))
		return NULL;
	*hit = ibpost_mr_adopt(q, mr);
	return mr;
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
