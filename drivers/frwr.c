// SPDX-License-Identifier: GPL-2.0
/*
 * Fast registration per I/O, the way nvme-rdma and xprtrdma register a
 * request's pages: a pool of fast-registration MRs per QP (frwr_maps
 * entries of frwr_max_pages pages, allocated at QP creation), each mapped
 * over a consumer's sg list by ibpost_frwr_map() without a wait and
 * released by ibpost_frwr_unmap() without one.
 *
 * Map: the sg list is DMA-mapped in the direction its access implies, an
 * entry is taken from the pool (-EAGAIN when empty: never a sleep),
 * ib_map_mr_sg() lays the pages out (-EINVAL for a gap or an unaligned
 * middle entry, as it reports), the key is bumped, and the rkey and iova
 * are the consumer's at once. The REG_MR is pending: it goes on the wire
 * ahead of the first WR of the QP's next send post, in the same provider
 * call, each in a slot of its own (an internal WR, always signaled, never
 * shown) whose staged copy names the consumer's WR as its own. So a
 * refused REG_MR is a refusal of that WR (IBA 11.4.1.1): *bad_wr is the
 * consumer's WR, nothing from it on is queued, and the maps not queued
 * are pending again for the next post; REG_MRs the provider took before
 * refusing the consumer's WR are queued registrations. A post its checks
 * refuse at its first WR stages nothing.
 *
 * Unmap: a map whose REG_MR never left (pending) or whose key a received
 * SEND_WITH_INV retired (IB_WC_WITH_INVALIDATE, seen by the receive
 * completion before the consumer's callback) needs no invalidation: its
 * sg list is DMA-unmapped and the call returns IBPOST_FRWR_DONE. Else a
 * signaled LOCAL_INV is posted from a slot the send queue keeps in
 * reserve (one per entry; back when the ring's tail passes it), carrying the
 * consumer's context, which comes back once, as any WR's, when the
 * invalidation is over: with success after the sg list is DMA-unmapped;
 * or, when it failed or was flushed (the QP in ERR: the key may still
 * grant access, and the MR's state is unknown), only after a work item
 * deregistered the MR (which revokes the key), put a fresh one in its
 * place and DMA-unmapped the sg list, then flushed. Nothing the consumer
 * gets back can still be reached through the key.
 *
 * Locking: an entry's state, the pool's lists and counters are under the
 * QP's send queue lock, which the post loop holds when it stages pending
 * REG_MRs and the ring when it ends their slots.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/xarray.h>
#include "frwr.h"
#include "qp_core.h"
#include "ring_post.h"

#define IBPOST_FRWR_ACCESS (IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_WRITE | \
			    IB_ACCESS_REMOTE_ATOMIC)
/* Pages one map covers when the consumer asks for 0. */
#define IBPOST_FRWR_DEF_PAGES	256
/* Entries one QP's pool may have. */
#define IBPOST_FRWR_MAX_MAPS	4096

/**
 * ibpost_frwr_attr_check - check a QP's fast-registration attributes
 * @dev: the device
 * @maps: frwr_maps asked (0: no pool)
 * @max_pages: frwr_max_pages asked; set to what the pool will have
 * @type: the QP's type
 *
 * Return: 0; -EINVAL for a UD QP, too many entries or pages beyond the
 * device's fast-registration page list; -EOPNOTSUPP on a device without
 * the memory management extensions.
 */
int ibpost_frwr_attr_check(struct ibpost_dev *dev, u32 maps, u32 *max_pages,
			   enum ib_qp_type type)
{
	struct ib_device *ibdev = READ_ONCE(dev->ibdev);
	const struct ib_device_attr *da;

	if (!maps)
		return 0;
	if (!ibdev)
		return -ENODEV;
	da = &ibdev->attrs;
	if (type != IB_QPT_RC || maps > IBPOST_FRWR_MAX_MAPS) {
		pr_warn_ratelimited("qp_create: frwr_maps needs an RC QP, at most %u\n",
				    IBPOST_FRWR_MAX_MAPS);
		return -EINVAL;
	}
	if (!(da->device_cap_flags & IB_DEVICE_MEM_MGT_EXTENSIONS) ||
	    !da->max_fast_reg_page_list_len) {
		pr_warn_ratelimited("qp_create: %s has no fast registration (frwr_maps)\n",
				    dev->name);
		return -EOPNOTSUPP;
	}
	if (!*max_pages)
		*max_pages = min_t(u32, da->max_fast_reg_page_list_len,
				   IBPOST_FRWR_DEF_PAGES);
	/* A map's length is a u32. */
	if (*max_pages > da->max_fast_reg_page_list_len ||
	    *max_pages > U32_MAX / PAGE_SIZE) {
		pr_warn_ratelimited("qp_create: frwr_max_pages %u: %s maps at most %u pages\n",
				    *max_pages, dev->name,
				    da->max_fast_reg_page_list_len);
		return -EINVAL;
	}
	return 0;
}

static struct ibpost_frwr_pool *ibpost_frwr_pool_of(struct ibpost_frwr *ent)
{
	return &ent->qp->frwr;
}

/* The entry's sg list goes back to the CPU and the consumer; once. */
static void ibpost_frwr_dma_unmap(struct ibpost_frwr *ent)
{
	if (!ent->sg)
		return;
	ib_dma_unmap_sg(ent->qp->dev->ibdev, ent->sg, ent->nents, ent->dir);
	ent->sg = NULL;
}

/*
 * An unmapped entry whose key is dead (invalidated, never registered,
 * revoked) goes back to the pool, once no REG_MR of it is with the ring.
 */
static void ibpost_frwr_retire(struct ibpost_frwr *ent)
{
	struct ibpost_frwr_pool *pool = ibpost_frwr_pool_of(ent);

	lockdep_assert_held(&ent->qp->sq.lock);
	if (!ent->mr || pool->dead) {
		ent->state = IBPOST_FRWR_DEAD;
	} else if (ent->reg_out) {
		ent->state = IBPOST_FRWR_IDLE_WAIT;
	} else {
		ent->state = IBPOST_FRWR_FREE;
		list_add_tail(&ent->node, &pool->free);
	}
}

/* @ent's REG_MR no longer waits for a post (if it did). */
static void ibpost_frwr_unpend(struct ibpost_frwr *ent)
{
	if (!ent->pending)
		return;
	list_del_init(&ent->node);
	ibpost_frwr_pool_of(ent)->npending--;
	ent->pending = false;
}

/*
 * An unmapped @ent whose key never became valid (its REG_MR never left
 * or never ran) or a peer retired: its sg list goes back to the consumer
 * and the entry to the pool. Return: whether it was such.
 */
static bool ibpost_frwr_retire_unused(struct ibpost_frwr *ent)
{
	if (ent->posted && !ent->remote_inv)
		return false;
	ibpost_frwr_dma_unmap(ent);
	ibpost_frwr_retire(ent);
	return true;
}

/*
 * Have the work item revoke @ent's key, then release @slot, deferred,
 * which carries the unmap's context back flushed.
 */
static void ibpost_frwr_revoke(struct ibpost_frwr *ent,
			       struct ibpost_slot *slot)
{
	struct ibpost_frwr_pool *pool = ibpost_frwr_pool_of(ent);

	lockdep_assert_held(&ent->qp->sq.lock);
	ent->slot = slot;
	ent->state = IBPOST_FRWR_REVOKE;
	list_add_tail(&ent->node, &pool->revoke);
	if (!pool->dead && !ent->reg_out)
		queue_work(ibpost_wq, &pool->revoke_work);
}

/*
 * The REG_MR's slot is over (struct ibpost_sync's @end). One that never
 * reached the provider (synthetic) or that it failed did not run: the key
 * never was valid, and a map still held rides the next post again. A
 * flush ibpost made up for a WR the provider kept (RESET, teardown) says
 * nothing of it: the key may be valid.
 */
static int ibpost_frwr_reg_end(void *obj, struct ibpost_slot *slot,
			       enum ib_wc_status status)
{
	struct ibpost_frwr *ent = obj;
	struct ibpost_frwr_pool *pool = ibpost_frwr_pool_of(ent);

	ent->reg_out = false;
	if (status != IB_WC_SUCCESS && status != IB_WC_WR_FLUSH_ERR)
		pool->stats.reg_failed++;
	if (status != IB_WC_SUCCESS &&
	    (slot->synthetic || status != IB_WC_WR_FLUSH_ERR)) {
		ent->posted = false;
		if (ent->state == IBPOST_FRWR_MAPPED && !pool->dead) {
			ent->pending = true;
			list_add_tail(&ent->node, &pool->pending);
			pool->npending++;
		}
	}
	if (ent->state == IBPOST_FRWR_IDLE_WAIT)
		ibpost_frwr_retire(ent);
	else if (ent->state == IBPOST_FRWR_REVOKE && !pool->dead)
		queue_work(ibpost_wq, &pool->revoke_work);
	return IBPOST_SYNC_HIDE;
}

/* The provider never got the REG_MR: pending again, in map order. */
static void ibpost_frwr_reg_unclaimed(void *obj)
{
	struct ibpost_frwr *ent = obj;
	struct ibpost_frwr_pool *pool = ibpost_frwr_pool_of(ent);

	ent->reg_out = false;
	ent->posted = false;
	ent->pending = true;
	/* Unclaimed newest first: each goes before the ones after it. */
	list_add(&ent->node, &pool->pending);
	pool->npending++;
	pool->stats.regs--;
}

/*
 * The LOCAL_INV's slot, or a revoked entry's deferred one, is over: its
 * context goes back now, or its slot waits for the revocation.
 */
static int ibpost_frwr_inv_end(void *obj, struct ibpost_slot *slot,
			       enum ib_wc_status status)
{
	struct ibpost_frwr *ent = obj;
	struct ibpost_frwr_pool *pool = ibpost_frwr_pool_of(ent);

	/* Once the pool is released, no key of it is left to revoke. */
	if (ent->state == IBPOST_FRWR_INV && status != IB_WC_SUCCESS &&
	    !pool->released) {
		/* The key may still grant access: revoked before the context. */
		ibpost_frwr_revoke(ent, slot);
		return IBPOST_SYNC_DEFER;
	}
	ibpost_frwr_dma_unmap(ent);
	ibpost_frwr_retire(ent);
	return IBPOST_SYNC_DELIVER;
}

/*
 * The provider refused the LOCAL_INV: its unmap takes it back
 * (ibpost_frwr_post_inv()).
 */
static void ibpost_frwr_inv_unclaimed(void *obj)
{
	struct ibpost_frwr *ent = obj;

	ent->state = IBPOST_FRWR_MAPPED;
}

/*
 * Deregister each MR on the revoke list (which revokes its key), put a
 * fresh one in its place, DMA-unmap the sg list, then hand the unmap's
 * context back flushed. An entry whose REG_MR is still with the ring
 * waits for it (ibpost_frwr_reg_end() queues the work again).
 */
static void ibpost_frwr_revoke_work(struct work_struct *work)
{
	struct ibpost_qp *qp = container_of(work, struct ibpost_qp,
					    frwr.revoke_work);
	struct ibpost_frwr_pool *pool = &qp->frwr;
	struct ibpost_dev *dev = qp->dev;
	struct ibpost_queue *q = &qp->sq;
	struct ibpost_frwr *ent;
	struct ib_mr *old, *mr;
	unsigned long flags;

	for (;;) {
		spin_lock_irqsave(&q->lock, flags);
		ent = NULL;
		if (!pool->dead) {
			struct ibpost_frwr *e;

			list_for_each_entry(e, &pool->revoke, node) {
				if (!e->reg_out) {
					ent = e;
					break;
				}
			}
		}
		if (!ent) {
			spin_unlock_irqrestore(&q->lock, flags);
			return;
		}
		list_del_init(&ent->node);
		old = ent->mr;
		ent->mr = NULL;
		spin_unlock_irqrestore(&q->lock, flags);

		ibpost_hook_sleepable(IBPOST_HOOK_FRWR_REVOKE, qp);
		if (old) {
			xa_cmpxchg(&dev->frwr_keys, old->rkey >> 8, ent, NULL,
				   GFP_KERNEL);
			ib_dereg_mr(old);
		}
		mr = ibpost_dev_alloc_fr_mr(dev, pool->max_pages);
		if (IS_ERR(mr)) {
			pr_warn_ratelimited("qp %u: a revoked fast-registration MR could not be replaced (%ld): the pool has one entry less\n",
					    qp->rqp.qpn, PTR_ERR(mr));
			mr = NULL;
		} else if (xa_err(xa_store(&dev->frwr_keys, mr->rkey >> 8,
					   ent, GFP_KERNEL))) {
			ib_dereg_mr(mr);
			mr = NULL;
		}
		ibpost_frwr_dma_unmap(ent);

		spin_lock_irqsave(&q->lock, flags);
		ent->mr = mr;
		ent->state = IBPOST_FRWR_REVOKED;
		pool->stats.revoked++;
		ibpost_ring_release_deferred(q, ent->slot);
		spin_unlock_irqrestore(&q->lock, flags);
	}
}

/**
 * ibpost_frwr_pool_init - allocate a QP's fast-registration pool
 * @qp: the QP, its attributes checked (ibpost_frwr_attr_check()), its
 *      rings allocated
 *
 * Context: Process context.
 * Return: 0 or -ENOMEM (or the provider's error allocating an MR).
 */
int ibpost_frwr_pool_init(struct ibpost_qp *qp)
{
	struct ibpost_frwr_pool *pool = &qp->frwr;
	struct ibpost_dev *dev = qp->dev;
	u32 i;
	int ret;

	INIT_LIST_HEAD(&pool->free);
	INIT_LIST_HEAD(&pool->pending);
	INIT_LIST_HEAD(&pool->revoke);
	INIT_WORK(&pool->revoke_work, ibpost_frwr_revoke_work);
	if (!qp->attr.frwr_maps)
		return 0;
	pool->max_pages = qp->attr.frwr_max_pages;
	pool->ents = kcalloc(qp->attr.frwr_maps, sizeof(*pool->ents),
			     GFP_KERNEL);
	if (!pool->ents)
		return -ENOMEM;
	for (i = 0; i < qp->attr.frwr_maps; i++) {
		struct ibpost_frwr *ent = &pool->ents[i];
		struct ib_mr *mr;

		mr = ibpost_dev_alloc_fr_mr(dev, pool->max_pages);
		if (IS_ERR(mr)) {
			ret = PTR_ERR(mr);
			goto out_release;
		}
		ent->mr = mr;
		ent->qp = qp;
		ent->reg_sync.orphan = ent;
		ent->reg_sync.end = ibpost_frwr_reg_end;
		ent->reg_sync.unclaimed = ibpost_frwr_reg_unclaimed;
		ent->inv_sync.orphan = ent;
		ent->inv_sync.end = ibpost_frwr_inv_end;
		ent->inv_sync.unclaimed = ibpost_frwr_inv_unclaimed;
		ent->state = IBPOST_FRWR_FREE;
		/* Published once whole: a receive may look it up at once. */
		ret = xa_err(xa_store(&dev->frwr_keys, mr->rkey >> 8, ent,
				      GFP_KERNEL));
		if (ret) {
			ent->mr = NULL;
			ib_dereg_mr(mr);
			goto out_release;
		}
		list_add_tail(&ent->node, &pool->free);
		pool->n++;
	}
	return 0;

out_release:
	ibpost_frwr_pool_release(qp);
	ibpost_frwr_pool_free(qp);
	return ret;
}

/**
 * ibpost_frwr_pool_release - deregister a QP's pool at its teardown
 * @qp: the QP, its provider QP destroyed (no WR of it runs any more),
 *      before its rings' last flush
 *
 * Every MR is deregistered once, every sg list still mapped DMA-unmapped;
 * a map still held unmaps as IBPOST_FRWR_DONE from now on; the contexts
 * of unmaps in flight come back with the rings' flush.
 *
 * Context: Process context, qp->mutex held.
 */
void ibpost_frwr_pool_release(struct ibpost_qp *qp)
{
	struct ibpost_frwr_pool *pool = &qp->frwr;
	struct ibpost_queue *q = &qp->sq;
	unsigned long flags;
	u32 i;

	if (!pool->ents)
		return;
	spin_lock_irqsave(&q->lock, flags);
	pool->dead = true;
	spin_unlock_irqrestore(&q->lock, flags);
	cancel_work_sync(&pool->revoke_work);

	/* Every key dies first: no memory goes back while one may work. */
	for (i = 0; i < pool->n; i++) {
		struct ibpost_frwr *ent = &pool->ents[i];
		struct ib_mr *mr;

		spin_lock_irqsave(&q->lock, flags);
		mr = ent->mr;
		ent->mr = NULL;
		spin_unlock_irqrestore(&q->lock, flags);
		if (mr) {
			xa_cmpxchg(&qp->dev->frwr_keys, mr->rkey >> 8, ent, NULL,
				   GFP_KERNEL);
			ib_dereg_mr(mr);
		}
	}
	/* No receive completion's lookup holds an entry from here on. */
	synchronize_rcu();

	spin_lock_irqsave(&q->lock, flags);
	pool->released = true;
	for (i = 0; i < pool->n; i++) {
		struct ibpost_frwr *ent = &pool->ents[i];

		switch (ent->state) {
		case IBPOST_FRWR_MAPPED:
			ibpost_frwr_unpend(ent);
			ibpost_frwr_dma_unmap(ent);
			ent->state = IBPOST_FRWR_DEAD_MAPPED;
			break;
		case IBPOST_FRWR_REVOKE:
			list_del_init(&ent->node);
			ibpost_frwr_dma_unmap(ent);
			ent->state = IBPOST_FRWR_REVOKED;
			ibpost_ring_release_deferred(q, ent->slot);
			break;
		case IBPOST_FRWR_INV:
			/* Its carrier comes back with the flush (released). */
			ibpost_frwr_dma_unmap(ent);
			break;
		case IBPOST_FRWR_REVOKED:
		case IBPOST_FRWR_DEAD_MAPPED:
		case IBPOST_FRWR_DEAD:
			break;
		case IBPOST_FRWR_FREE:
			list_del_init(&ent->node);
			fallthrough;
		default:
			ent->state = IBPOST_FRWR_DEAD;
			break;
		}
	}
	spin_unlock_irqrestore(&q->lock, flags);
}

/**
 * ibpost_frwr_pool_free - free a QP's pool entries
 * @qp: the QP, its pool released (or never made)
 */
void ibpost_frwr_pool_free(struct ibpost_qp *qp)
{
	kfree(qp->frwr.ents);
	qp->frwr.ents = NULL;
	qp->frwr.n = 0;
}

/**
 * ibpost_frwr_quiesce - finish the revocations a flush started
 * @qp: the QP, on its way to RESET, its rings flushed
 *
 * So that the contexts of unmaps whose LOCAL_INV was flushed are back
 * (with the caller's return of the WRs ibpost flushes) before RESET.
 *
 * Context: Process context, qp->mutex held.
 */
void ibpost_frwr_quiesce(struct ibpost_qp *qp)
{
	if (qp->frwr.ents)
		flush_work(&qp->frwr.revoke_work);
}

/**
 * ibpost_frwr_revoking - whether an unmap's key is being revoked
 * @qp: the QP
 *
 * Return: whether an entry waits for the revocation work, whose context
 * then comes back flushed.
 */
bool ibpost_frwr_revoking(struct ibpost_qp *qp)
{
	unsigned long flags;
	bool ret;

	spin_lock_irqsave(&qp->sq.lock, flags);
	ret = qp->frwr.n && !list_empty(&qp->frwr.revoke);
	spin_unlock_irqrestore(&qp->sq.lock, flags);
	return ret;
}

/**
 * ibpost_frwr_stage - stage the pending REG_MRs ahead of a post's first WR
 * @p: the post call, q->lock held, nothing staged yet
 * @qp: the QP
 * @wr: the consumer's first WR, checked: each REG_MR's copy names it, so
 *      a refused REG_MR is a refusal of @wr
 * @used: slots in use when the post began
 * @k: REG_MRs to stage (ibpost_frwr_pending(), room checked)
 * @nuse: uses @wr's SGEs hold, recorded in the next slot's use array
 * @ndma: DMA ranges @wr writes, recorded in the next slot's DMA array
 *
 * Each REG_MR takes the next slot, so @wr's uses and DMA ranges move to
 * the slot it takes after them.
 */
void ibpost_frwr_stage(struct ibpost_ring_post *p, struct ibpost_qp *qp,
		       const struct ib_send_wr *wr, u32 used, u32 k, u8 nuse,
		       u8 ndma)
{
	struct ibpost_frwr_pool *pool = &qp->frwr;
	struct ibpost_queue *q = p->q;
	struct ibpost_ring_use **uses = ibpost_slot_uses(q, ibpost_slot_next(q));
	struct ibpost_ring_dma *dma = ibpost_slot_dma(q, ibpost_slot_next(q));

	lockdep_assert_held(&q->lock);
	while (k--) {
		struct ibpost_frwr *ent = list_first_entry(&pool->pending,
							   struct ibpost_frwr,
							   node);
		const struct ib_send_wr *whole;
		union ibpost_send_copy *stage;
		struct ibpost_slot *slot;

		ibpost_frwr_unpend(ent);
		ent->reg_out = true;
		ent->posted = true;
		pool->stats.regs++;
		slot = ibpost_ring_send_claim(q, &ent->reg.wr, &ent->reg_sync,
					      false, used, p->n,
					      ibpost_queue_room(q), 0, false);
		slot->nuse = 0;
		slot->nhit = 0;
		slot->ndma = 0;
		/*
		 * The whole ib_reg_wr is copied: passed as its first member,
		 * a FORTIFY_SOURCE kernel (Debian's) sees a read beyond it.
		 */
		whole = (const struct ib_send_wr *)&ent->reg;
		stage = ibpost_ring_stage_send(p, slot, whole,
					       sizeof(ent->reg));
		q->stage_wr[p->n - p->off] = wr;
		ibpost_ring_link_send(p, slot, stage, NULL);
		p->n++;
	}
	memcpy(ibpost_slot_uses(q, ibpost_slot_next(q)), uses,
	       nuse * sizeof(*uses));
	memcpy(ibpost_slot_dma(q, ibpost_slot_next(q)), dma,
	       ndma * sizeof(*dma));
}

/**
 * ibpost_frwr_remote_inv - a receive retired @rkey (IB_WC_WITH_INVALIDATE)
 * @dev: the device the receive completed on
 * @rkey: the key invalidated
 *
 * The map registered under @rkey needs no LOCAL_INV: its unmap returns
 * IBPOST_FRWR_DONE. Called by the receive completion before the
 * consumer's callback, with no lock held.
 *
 * Context: The receive CQ's completion context.
 */
void ibpost_frwr_remote_inv(struct ibpost_dev *dev, u32 rkey)
{
	struct ibpost_frwr *ent;
	unsigned long flags;

	rcu_read_lock();
	ent = xa_load(&dev->frwr_keys, rkey >> 8);
	if (ent) {
		struct ibpost_queue *q = &ent->qp->sq;

		spin_lock_irqsave(&q->lock, flags);
		if (ent->state == IBPOST_FRWR_MAPPED && ent->posted &&
		    ent->rkey == rkey && !ent->remote_inv) {
			ent->remote_inv = true;
			ent->qp->frwr.stats.remote_inv++;
		}
		spin_unlock_irqrestore(&q->lock, flags);
	}
	rcu_read_unlock();
}

/* The DMA direction a map's remote access implies. */
static enum dma_data_direction ibpost_frwr_dir(int access)
{
	if (access & IB_ACCESS_REMOTE_ATOMIC)
		return DMA_BIDIRECTIONAL;
	if (access & IB_ACCESS_REMOTE_WRITE)
		return access & IB_ACCESS_REMOTE_READ ? DMA_BIDIRECTIONAL :
							DMA_FROM_DEVICE;
	return DMA_TO_DEVICE;
}

/*
 * Whether the DMA entries of @sg lay out as one fast registration of at
 * most @max_pages PAGE_SIZE pages, by ib_sg_to_pages()'s rule: an entry
 * continues the one before it where that one ended, or starts a page,
 * and each but the last ends a page unless the next continues it. Checked
 * by ibpost itself, so that every provider refuses alike (siw's page
 * list takes whole entries, and would map more pages than asked).
 */
static int ibpost_frwr_layout(struct ibpost_qp *qp, struct scatterlist *sg,
			      int dma_nents, u32 max_pages)
{
	u64 last_end = 0, first;
	struct scatterlist *s;
	u32 pages = 0;
	int i;

	for_each_sg(sg, s, dma_nents, i) {
		u64 addr = sg_dma_address(s), end = addr + sg_dma_len(s);
		bool cont = i && addr == last_end;

		if (i && !cont && (!PAGE_ALIGNED(addr) ||
				   !PAGE_ALIGNED(last_end))) {
			pr_warn_ratelimited("frwr_map: qp %u: DMA entry %d leaves a gap or starts mid-page: not one registration\n",
					    qp->rqp.qpn, i);
			return -EINVAL;
		}
		first = cont ? ALIGN(addr, PAGE_SIZE) : addr & PAGE_MASK;
		if (end > first)
			pages += DIV_ROUND_UP(end - first, PAGE_SIZE);
		last_end = end;
	}
	if (pages > max_pages) {
		pr_warn_ratelimited("frwr_map: qp %u: %u pages: a map covers at most %u\n",
				    qp->rqp.qpn, pages, max_pages);
		return -EINVAL;
	}
	return 0;
}

/* A map's arguments, before anything is mapped or taken. */
static int ibpost_frwr_map_check(struct ibpost_qp *qp, struct scatterlist *sg,
				 int nents, int access,
				 struct ibpost_frwr_map *map)
{
	if (!qp || !sg || !map || nents <= 0)
		return -EINVAL;
	if (!qp->frwr.n) {
		pr_warn_ratelimited("frwr_map: qp %u has no fast-registration pool (frwr_maps)\n",
				    qp->rqp.qpn);
		return -EINVAL;
	}
	if ((access & ~IBPOST_FRWR_ACCESS) || !access) {
		pr_warn_ratelimited("frwr_map: access %#x: a non-empty set of REMOTE_READ, REMOTE_WRITE, REMOTE_ATOMIC\n",
				    access);
		return -EINVAL;
	}
	if ((u32)nents > qp->frwr.max_pages) {
		pr_warn_ratelimited("frwr_map: %d entries: qp %u maps at most %u pages\n",
				    nents, qp->rqp.qpn, qp->frwr.max_pages);
		return -EINVAL;
	}
	return 0;
}

/*
 * The device a map's DMA mapping is made for, under rcu_read_lock(): a
 * removal releases the pool (which waits for a grace period) before the
 * device goes. NULL, with *@err, when it is going, or the access asks
 * for atomics it has none of.
 */
static struct ib_device *ibpost_frwr_map_dev(struct ibpost_qp *qp, int access,
					     int *err)
{
	struct ib_device *ibdev = READ_ONCE(qp->dev->ibdev);

	*err = -ENODEV;
	if (!ibdev || READ_ONCE(qp->rqp.dead) ||
	    test_bit(IBPOST_DEV_REMOVING, &qp->dev->flags))
		return NULL;
	*err = -EOPNOTSUPP;
	if ((access & IB_ACCESS_REMOTE_ATOMIC) &&
	    ibdev->attrs.atomic_cap == IB_ATOMIC_NONE)
		return NULL;
	return ibdev;
}

/*
 * Lay the mapped @sg (@dma_nents) out in a free entry of @qp's pool under
 * a fresh key, pending, and fill @map; under the send queue's lock.
 */
static int ibpost_frwr_take(struct ibpost_qp *qp, struct scatterlist *sg,
			    int nents, int dma_nents, int access,
			    enum dma_data_direction dir,
			    struct ibpost_frwr_map *map)
{
	struct ibpost_frwr_pool *pool = &qp->frwr;
	struct ibpost_frwr *ent;
	int n;

	lockdep_assert_held(&qp->sq.lock);
	if (pool->dead)
		return -ENODEV;
	ent = list_first_entry_or_null(&pool->free, struct ibpost_frwr, node);
	if (!ent) {
		pool->stats.eagain++;
		return -EAGAIN;
	}
	/* ib_map_mr_sg() fills the MR's page list: no sleep, no WR. */
	n = ib_map_mr_sg(ent->mr, sg, dma_nents, NULL, PAGE_SIZE);
	if (n != dma_nents) {
		pr_warn_ratelimited("frwr_map: qp %u: %d of %d DMA entries fit one registration of %u pages\n",
				    qp->rqp.qpn, n, dma_nents, pool->max_pages);
		return n < 0 ? n : -EINVAL;
	}
	list_del_init(&ent->node);
	ib_update_fast_reg_key(ent->mr, ib_inc_rkey(ent->mr->rkey));
	ent->reg = (struct ib_reg_wr){
		.wr.opcode = IB_WR_REG_MR,
		.mr = ent->mr,
		.key = ent->mr->rkey,
		.access = access | (access & (IB_ACCESS_REMOTE_WRITE |
					      IB_ACCESS_REMOTE_ATOMIC) ?
				    IB_ACCESS_LOCAL_WRITE : 0),
	};
	ent->rkey = ent->mr->rkey;
	/* Test builds: a REG_MR the provider fails when it runs. */
	if (ibpost_hook(IBPOST_HOOK_FRWR_REG, ent))
		ent->reg.key ^= 1U << 8;
	ent->sg = sg;
	ent->nents = nents;
	ent->dir = dir;
	ent->state = IBPOST_FRWR_MAPPED;
	ent->posted = false;
	ent->remote_inv = false;
	ent->pending = true;
	list_add_tail(&ent->node, &pool->pending);
	pool->npending++;
	pool->stats.maps++;
	map->ent = ent;
	map->gen = ent->gen;
	map->rkey = ent->rkey;
	map->iova = ent->mr->iova;
	map->length = ent->mr->length;
	return 0;
}

/**
 * ibpost_frwr_map - map an sg list for remote access, without a wait
 * @qp: an RC QP created with frwr_maps
 * @sg: the sg list (pages from anywhere; not DMA-mapped by the caller):
 *      it and its memory are ibpost's until the unmap is over
 * @nents: its entries
 * @access: a non-empty set of IB_ACCESS_REMOTE_READ, _REMOTE_WRITE and
 *          _REMOTE_ATOMIC (ibpost adds the local write IBA requires)
 * @map: filled: the handle for ibpost_frwr_unmap(), the @map->rkey and
 *       @map->iova the peer uses for the first byte, and @map->length
 *
 * The sg list is DMA-mapped (read-only access: to the device; write only:
 * from it; else both ways) and laid out in a pool entry's MR with
 * PAGE_SIZE pages, under a fresh key. Its REG_MR goes on the wire ahead
 * of the first WR of the next send post on @qp that starts after this
 * call returns (any send API), in that post's provider call: should it be
 * refused, *bad_wr is that WR and the map rides the next post; the peer
 * may use the key once it learns it from a later WR of this send queue.
 * Maps wait in map order; one post carries up to its batch size less one.
 *
 * Context: Any context but hard IRQ; never sleeps (a completion callback
 * may map).
 * Return: 0; -EINVAL for a QP without a pool, no sg list or handle, more
 * entries or pages than frwr_max_pages, an entry that leaves a gap or an
 * unaligned middle page (as ib_map_mr_sg() reports), or bad access bits;
 * -EOPNOTSUPP for REMOTE_ATOMIC on a device without atomics; -EAGAIN when
 * every entry is in use (never a wait); -ENOMEM when the DMA mapping
 * failed; -ENODEV when the QP or device is gone.
 */
int ibpost_frwr_map(struct ibpost_qp *qp, struct scatterlist *sg, int nents,
		    int access, struct ibpost_frwr_map *map)
{
	enum dma_data_direction dir = ibpost_frwr_dir(access);
	struct ib_device *ibdev;
	unsigned long flags;
	int dma_nents, ret;

	ret = ibpost_frwr_map_check(qp, sg, nents, access, map);
	if (ret)
		return ret;
	rcu_read_lock();
	ibdev = ibpost_frwr_map_dev(qp, access, &ret);
	if (!ibdev)
		goto out;
	ret = -ENOMEM;
	dma_nents = ib_dma_map_sg(ibdev, sg, nents, dir);
	if (!dma_nents)
		goto out;
	ret = ibpost_frwr_layout(qp, sg, dma_nents, qp->frwr.max_pages);
	if (!ret) {
		spin_lock_irqsave(&qp->sq.lock, flags);
		ret = ibpost_frwr_take(qp, sg, nents, dma_nents, access, dir,
				       map);
		spin_unlock_irqrestore(&qp->sq.lock, flags);
	}
	if (ret)
		ib_dma_unmap_sg(ibdev, sg, nents, dir);
out:
	rcu_read_unlock();
	return ret;
}
EXPORT_SYMBOL_NS_GPL(ibpost_frwr_map, IBPOST_NS);

/* Whether @q has a reserve slot free for a carrier (lock held). */
static bool ibpost_frwr_room(const struct ibpost_queue *q)
{
	return q->reserved && q->head - q->tail < q->depth;
}

/*
 * Post @ent's LOCAL_INV, carrying its context, from the reserve; q->lock
 * held on entry (taken with @flags), released on return. Return: 0, or
 * the provider's refusal (the entry is MAPPED again,
 * ibpost_frwr_inv_unclaimed()).
 */
static int ibpost_frwr_post_inv(struct ibpost_qp *qp, struct ibpost_frwr *ent,
				unsigned long flags)
	__releases(&qp->sq.lock)
{
	struct ibpost_ring_post p = { .rqp = &qp->rqp, .q = &qp->sq,
				      .send = true, .flags = flags };
	struct ibpost_queue *q = p.q;
	struct ibpost_slot *slot;

	ibpost_ring_post_begin(&p, &ent->inv);
	p.synthetic = ibpost_ring_flushing(q);
	slot = ibpost_ring_send_claim(q, &ent->inv, &ent->inv_sync, false,
				      q->head - q->tail, 0,
				      ibpost_queue_room(q), 0, false);
	slot->reserve = true;
	q->reserved--;
	slot->nuse = 0;
	slot->nhit = 0;
	slot->ndma = 0;
	ibpost_ring_link_send(&p, slot,
			      ibpost_ring_stage_send(&p, slot, &ent->inv,
						     sizeof(ent->inv)),
			      NULL);
	p.n = 1;
	return ibpost_ring_post_end(&p, NULL);
}

/*
 * No LOCAL_INV can end @ent's key (the QP cannot post, or the provider
 * refused it): a reserve slot waits, deferred, while the work item revokes
 * it. q->lock held. Return: 0, or -EBUSY without room.
 */
static int ibpost_frwr_revoke_unposted(struct ibpost_queue *q,
				       struct ibpost_frwr *ent)
{
	struct ibpost_slot *slot;

	if (!ibpost_frwr_room(q))
		return -EBUSY;
	slot = ibpost_ring_claim_deferred(q, (void *)(uintptr_t)ent->inv.wr_id,
					  &ent->inv_sync);
	ibpost_frwr_revoke(ent, slot);
	return 0;
}

/**
 * ibpost_frwr_unmap - end the peer's access to a map, without a wait
 * @qp: the QP the map was made on
 * @map: the handle ibpost_frwr_map() filled; its @ent is cleared
 * @context: the context that comes back when a LOCAL_INV was needed (in
 *           ib_cqe mode a struct ib_cqe * with ->done)
 *
 * Nothing to invalidate (the REG_MR never left or never ran, or a
 * received SEND_WITH_INV retired the key, or the QP was torn down): the
 * sg list is DMA-unmapped and its memory the consumer's at return. Else a
 * signaled LOCAL_INV is posted behind everything already on the send
 * queue (so behind the WRs using the map), carrying @context, which comes
 * back exactly once through the QP's send completions: with success once
 * the key is invalidated; with an error or a flush once ibpost revoked it
 * by deregistering the MR (the QP in ERR, RESET or torn down), which may
 * come after completions of WRs posted later. Either way the sg list is
 * DMA-unmapped before: from then on the memory may be freed or read. An
 * unmap never waits: the send queue keeps a slot per entry for it, which
 * comes back once the ring's tail passes the unmap's completion.
 *
 * Context: Any context but hard IRQ; never sleeps.
 * Return: 0 (@context will come back), IBPOST_FRWR_DONE (it will not);
 * -EINVAL for a handle not of @qp's pool, already unmapped, or a context
 * that is not an ib_cqe in ib_cqe mode; -EBUSY (the handle still mapped)
 * when the reserve is held by completions of earlier unmaps the consumer
 * has not fetched yet (ibpost_get_send_comp()), or behind a WR still
 * outstanding at the ring's tail.
 */
int ibpost_frwr_unmap(struct ibpost_qp *qp, struct ibpost_frwr_map *map,
		      void *context)
{
	struct ibpost_frwr_pool *pool;
	struct ibpost_frwr *ent;
	struct ibpost_queue *q;
	unsigned long flags;
	int ret;

	if (!qp || !map)
		return -EINVAL;
	pool = &qp->frwr;
	q = &qp->sq;
	ent = map->ent;
	if (!ent || !pool->n || ent < pool->ents || ent >= pool->ents + pool->n ||
	    (q->cqe && !ibpost_context_is_cqe(context))) {
		pr_warn_ratelimited("frwr_unmap: qp %u: not a map of this QP's pool, already unmapped, or not an ib_cqe context\n",
				    qp->rqp.qpn);
		return -EINVAL;
	}
	spin_lock_irqsave(&q->lock, flags);
	if (ent->gen != map->gen || (ent->state != IBPOST_FRWR_MAPPED &&
				     ent->state != IBPOST_FRWR_DEAD_MAPPED)) {
		spin_unlock_irqrestore(&q->lock, flags);
		pr_warn_ratelimited("frwr_unmap: qp %u: a stale map handle (unmapped before)\n",
				    qp->rqp.qpn);
		return -EINVAL;
	}
	if (ent->state == IBPOST_FRWR_DEAD_MAPPED) {
		ent->state = IBPOST_FRWR_DEAD;
		goto out_done;
	}
	ibpost_frwr_unpend(ent);
	if (ibpost_frwr_retire_unused(ent))
		goto out_done;
	if (!ibpost_frwr_room(q)) {
		spin_unlock_irqrestore(&q->lock, flags);
		return -EBUSY;
	}
	ent->inv = (struct ib_send_wr){
		.opcode = IB_WR_LOCAL_INV,
		.send_flags = IB_SEND_SIGNALED,
		.ex.invalidate_rkey = ent->rkey,
	};
	/* wr_id and wr_cqe share their place: the context either way. */
	ent->inv.wr_id = (uintptr_t)context;
	ent->gen++;
	map->ent = NULL;
	pool->stats.invs++;
	/* No LOCAL_INV can reach the provider: revoked. */
	if (ibpost_state_check(qp, true)) {
		/* Room was checked above, under the same lock. */
		WARN_ON_ONCE(ibpost_frwr_revoke_unposted(q, ent));
		spin_unlock_irqrestore(&q->lock, flags);
		return 0;
	}
	ent->state = IBPOST_FRWR_INV;
	if (!ibpost_frwr_post_inv(qp, ent, flags))
		return 0;
	/* The provider refused it: the key is revoked instead. */
	spin_lock_irqsave(&q->lock, flags);
	ret = 0;
	if (ent->state == IBPOST_FRWR_DEAD_MAPPED) {
		/* Torn down meanwhile: its MR is gone, its list unmapped. */
		ent->state = IBPOST_FRWR_DEAD;
		pool->stats.invs--;
		pool->stats.done++;
		spin_unlock_irqrestore(&q->lock, flags);
		return IBPOST_FRWR_DONE;
	}
	if (ent->state == IBPOST_FRWR_MAPPED) {
		/* Its REG_MR may have ended meanwhile, pending it again. */
		ibpost_frwr_unpend(ent);
		if (ibpost_frwr_retire_unused(ent)) {
			pool->stats.invs--;
			pool->stats.done++;
			spin_unlock_irqrestore(&q->lock, flags);
			return IBPOST_FRWR_DONE;
		}
		ret = ibpost_frwr_revoke_unposted(q, ent);
	}
	if (ret) {
		/* No room left meanwhile: the map stays the consumer's. */
		ent->gen--;
		map->ent = ent;
		pool->stats.invs--;
	}
	spin_unlock_irqrestore(&q->lock, flags);
	return ret;

out_done:
	ent->gen++;
	map->ent = NULL;
	pool->stats.done++;
	spin_unlock_irqrestore(&q->lock, flags);
	return IBPOST_FRWR_DONE;
}
EXPORT_SYMBOL_NS_GPL(ibpost_frwr_unmap, IBPOST_NS);
