// SPDX-License-Identifier: GPL-2.0
/*
 * RDMA READ and WRITE of an sg list, the way nvmet, svcrdma and ksmbd
 * move a request's data: through ib_core's rdma_rw API, which picks the
 * WRs (SGE lists within the QP's max_write_sge/max_read_sge, or, where
 * the transport needs it, an iWARP READ, fast registrations from the QP's
 * MR pool, max_rdma_ctxs of them), maps the sg list for the device and
 * unmaps it for the CPU. ibpost keeps its own guarantees around it:
 *
 * One operation, one context. Every WR of the operation takes a slot of
 * the send queue (the room is checked for all of them, and an optional
 * SEND behind a WRITE, before anything is built), each an internal WR
 * that is always signaled and never shown; the last one (the SEND when
 * there is one) carries the consumer's context. The context comes back
 * once, when every WR of the operation is over and ib_core's context is
 * destroyed (the sg list unmapped, the MRs back in the pool): on success
 * when asked (a READ always: its completion hands the data to the CPU),
 * on failure always.
 *
 * Errors before the provider: every check is made, under the send
 * queue's lock, before rdma_rw_ctx_wrs() changes an MR's key; a refused
 * operation queues nothing and gives no context. Should the provider
 * refuse the operation's first WR, nothing is queued either: the
 * operation's MRs (their keys already bumped) are replaced, and the error
 * is returned. Should it refuse a later one, the operation is never split:
 * ibpost flushes the rest (the ring's @whole rule) and it counts as
 * queued, its context coming back flushed.
 *
 * MRs in an unknown state: a failed or flushed operation that registered
 * memory may leave an MR valid (its key granting access: an iWARP READ's
 * sink is remotely writable) or in a state its next REG_MR fails on. Such
 * an operation's carrier is deferred while a work item deregisters those
 * MRs and puts fresh ones in their place; only then is ib_core's context
 * destroyed and the context handed back, flushed.
 *
 * Lifetime: ib_core's context reads the provider's QP when it is set up
 * and destroyed; a post holds @rw.sem for read from the setup on, the
 * teardown takes it for write, then destroys every context still alive
 * before the provider's QP goes (their MRs are deregistered with it), and
 * hands their carriers back after.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/slab.h>
#include <rdma/rw.h>
#include "rwop.h"
#include "dev.h"
#include "frwr.h"
#include "post.h"
#include "qp_core.h"
#include "ring_post.h"

/* Operations one QP may have set up for registration at once. */
#define IBPOST_RW_MAX_OPS	4096
/* Pages one of ib_core's rdma_rw MRs covers (rw.c, no integrity). */
#define IBPOST_RW_MR_PAGES	256

/**
 * struct ibpost_rwop - one READ or WRITE of an sg list
 * @sync: each of its slots': @sync.end is ibpost_rwop_end()
 * @ctx: ib_core's context
 * @ibqp: the provider's QP it was set up on
 * @qp: the QP
 * @sg: the consumer's sg list, or @sg_copy
 * @sg_cnt: its entries
 * @sg_copy: a copy of the list from its first byte moved, or NULL
 * @dir: DMA_TO_DEVICE (WRITE) or DMA_FROM_DEVICE (READ)
 * @carrier: the slot carrying the context: its last WR, or the SEND
 * @node: on the QP's live list
 * @revoke_node: on the QP's revoke list
 * @slots: the slots it took, its SEND's included
 * @slots_out: its other slots not over yet
 * @has_mr: its WRs register memory
 * @built: rdma_rw_ctx_wrs() ran: the MRs' keys are bumped
 * @failed: a WR of it did not succeed
 * @carrier_over: the carrier's WR is over (its slot deferred, if not
 *                delivered)
 * @destroyed: ib_core's context is destroyed
 *
 * All but the set-up fields change under the send queue's lock.
 */
struct ibpost_rwop {
	struct ibpost_sync sync;
	struct rdma_rw_ctx ctx;
	struct ib_qp *ibqp;
	struct ibpost_qp *qp;
	struct scatterlist *sg;
	u32 sg_cnt;
	struct scatterlist *sg_copy;
	enum dma_data_direction dir;
	struct ibpost_slot *carrier;
	struct list_head node;
	struct list_head revoke_node;
	u32 slots;
	u32 slots_out;
	bool has_mr;
	bool built;
	bool failed;
	bool carrier_over;
	bool destroyed;
};

/* Free the operation, its context destroyed. */
static void ibpost_rwop_free(struct ibpost_rwop *op)
{
	kvfree(op->sg_copy);
	kfree(op);
}

/* Destroy ib_core's context, once (q->lock held, the QP's provider up). */
static void ibpost_rwop_destroy(struct ibpost_rwop *op)
{
	if (op->destroyed)
		return;
	op->destroyed = true;
	rdma_rw_ctx_destroy(&op->ctx, op->ibqp, op->qp->port, op->sg,
			    op->sg_cnt, op->dir);
}

/*
 * Whether the operation's MRs must be replaced before its context goes
 * back: it registered memory, and a WR of it failed or was flushed.
 */
static bool ibpost_rwop_dirty(const struct ibpost_rwop *op)
{
	return op->failed && op->has_mr && op->built && !op->destroyed;
}

/* Have the work item replace the MRs, then release the carrier. */
static void ibpost_rwop_revoke(struct ibpost_rwop *op)
{
	struct ibpost_rw *rw = &op->qp->rw;

	list_add_tail(&op->revoke_node, &rw->revoke);
	/* Torn down: the teardown revokes it (ibpost_rw_quiesce()). */
	if (!rw->dead)
		queue_work(ibpost_wq, &rw->revoke_work);
}

/*
 * Each of the operation's slots is over (struct ibpost_sync's @end),
 * under the send queue's lock: internal ones are hidden; the carrier is
 * delivered once ib_core's context is destroyed, after the other slots
 * are over (send queues complete in order, but siw completes a WR it
 * flushes at its post ahead of earlier ones it flushes later) and any MR
 * left in an unknown state is replaced.
 */
static int ibpost_rwop_end(void *obj, struct ibpost_slot *slot,
			   enum ib_wc_status status)
{
	struct ibpost_rwop *op = obj;

	if (status != IB_WC_SUCCESS)
		op->failed = true;
	if (slot != op->carrier) {
		/* The carrier waits for this one: let it go now. */
		if (!--op->slots_out && op->carrier_over) {
			if (ibpost_rwop_dirty(op))
				ibpost_rwop_revoke(op);
			else
				ibpost_ring_release_deferred(&op->qp->sq,
							     op->carrier);
		}
		return IBPOST_SYNC_HIDE;
	}
	if (!op->carrier_over) {
		op->carrier_over = true;
		if (op->slots_out)
			return IBPOST_SYNC_DEFER;
		if (ibpost_rwop_dirty(op)) {
			ibpost_rwop_revoke(op);
			return IBPOST_SYNC_DEFER;
		}
	}
	ibpost_rwop_destroy(op);
	list_del(&op->node);
	ibpost_rwop_free(op);
	return IBPOST_SYNC_DELIVER;
}

/*
 * ib_core's pool of the QP no longer has @n of its MRs (deregistered, no
 * replacement): its count of MRs in use forgets them, so that the QP's
 * destroy finds the pool balanced.
 */
static void ibpost_rwop_forget_mrs(struct ib_qp *ibqp, u32 n)
{
	unsigned long flags;

	spin_lock_irqsave(&ibqp->mr_lock, flags);
	ibqp->mrs_used -= n;
	spin_unlock_irqrestore(&ibqp->mr_lock, flags);
}

/*
 * Deregister the operation's MRs, whose state is unknown (which revokes
 * their keys at once), and put fresh ones in their place, for ib_core's
 * context to return to the QP's pool. One that cannot be allocated leaves
 * the context's list (the last entry, replaced already, takes its place)
 * and the pool, one MR smaller, said once. Return: the MRs deregistered;
 * *@lost: those given up.
 */
static u32 ibpost_rwop_replace_mrs(struct ibpost_rwop *op, u32 *lost)
{
	struct ib_device *ibdev = op->ibqp->device;
	u32 pages = min_t(u32, ibdev->attrs.max_fast_reg_page_list_len,
			  IBPOST_RW_MR_PAGES);
	u32 i, n = op->ctx.nr_ops;

	might_sleep();
	*lost = 0;
	for (i = n; i--;) {
		struct ib_mr *mr;
		int ret = ib_dereg_mr(op->ctx.reg[i].mr);

		if (ret)
			pr_warn_ratelimited("qp %u: an rdma_rw MR left in an unknown state could not be deregistered (%d)\n",
					    op->qp->rqp.qpn, ret);
		mr = ibpost_hook(IBPOST_HOOK_RW_REPLACE, op->qp) ?
		     ERR_PTR(-ENOMEM) :
		     ib_alloc_mr(op->ibqp->pd, IB_MR_TYPE_MEM_REG, pages);
		if (!IS_ERR(mr)) {
			op->ctx.reg[i].mr = mr;
			continue;
		}
		pr_warn_ratelimited("qp %u: an rdma_rw MR left in an unknown state was deregistered but not replaced (%ld): its pool has one MR less\n",
				    op->qp->rqp.qpn, PTR_ERR(mr));
		op->ctx.reg[i].mr = op->ctx.reg[--op->ctx.nr_ops].mr;
		(*lost)++;
	}
	if (*lost)
		ibpost_rwop_forget_mrs(op->ibqp, *lost);
	return n;
}

/*
 * Revoke the keys of the first failed operation on the revoke list
 * (replacing its MRs), destroy its context, then let its carrier come
 * back, flushed. Return: false when there was none.
 */
static bool ibpost_rw_revoke_one(struct ibpost_qp *qp)
{
	struct ibpost_rw *rw = &qp->rw;
	struct ibpost_queue *q = &qp->sq;
	struct ibpost_rwop *op;
	unsigned long flags;
	u32 n, lost;

	spin_lock_irqsave(&q->lock, flags);
	op = list_first_entry_or_null(&rw->revoke, struct ibpost_rwop,
				      revoke_node);
	if (op)
		list_del_init(&op->revoke_node);
	spin_unlock_irqrestore(&q->lock, flags);
	if (!op)
		return false;

	n = ibpost_rwop_replace_mrs(op, &lost);

	spin_lock_irqsave(&q->lock, flags);
	rw->stats.revoked += n;
	rw->stats.lost += lost;
	ibpost_rwop_destroy(op);
	ibpost_ring_release_deferred(q, op->carrier);
	spin_unlock_irqrestore(&q->lock, flags);
	return true;
}

/* The revoke list's work item, until the teardown takes it over. */
static void ibpost_rw_revoke_work(struct work_struct *work)
{
	struct ibpost_qp *qp = container_of(work, struct ibpost_qp,
					    rw.revoke_work);

	while (!READ_ONCE(qp->rw.dead) && ibpost_rw_revoke_one(qp))
		;
}

/**
 * ibpost_rw_init - set up a QP's operations' state (empty)
 * @qp: the QP, being allocated
 */
void ibpost_rw_init(struct ibpost_qp *qp)
{
	init_rwsem(&qp->rw.sem);
	INIT_LIST_HEAD(&qp->rw.live);
	INIT_LIST_HEAD(&qp->rw.revoke);
	INIT_WORK(&qp->rw.revoke_work, ibpost_rw_revoke_work);
}

/**
 * ibpost_rw_attr_check - check a QP's rw_ops
 * @attr: the attributes asked
 *
 * Return: 0, or -EINVAL for rw_ops on a QP other than RC, or too many.
 */
int ibpost_rw_attr_check(const struct ibpost_qp_attr *attr)
{
	if (!attr->rw_ops)
		return 0;
	if (attr->qp_type != IB_QPT_RC) {
		pr_warn_ratelimited("qp_create: rw_ops: RDMA READ and WRITE need an RC QP\n");
		return -EINVAL;
	}
	if (attr->rw_ops > IBPOST_RW_MAX_OPS) {
		pr_warn_ratelimited("qp_create: rw_ops %u exceeds %u\n",
				    attr->rw_ops, IBPOST_RW_MAX_OPS);
		return -EINVAL;
	}
	return 0;
}

/**
 * ibpost_rw_flush - finish the MR replacements a flush started
 * @qp: the QP, on its way to RESET, its rings flushed
 *
 * Context: Process context, qp->mutex held.
 */
void ibpost_rw_flush(struct ibpost_qp *qp)
{
	flush_work(&qp->rw.revoke_work);
}

/**
 * ibpost_rw_revoking - whether failed operations wait for their MRs
 * @qp: the QP
 *
 * Return: true while an operation's context waits for the work item.
 */
bool ibpost_rw_revoking(struct ibpost_qp *qp)
{
	unsigned long flags;
	bool ret;

	spin_lock_irqsave(&qp->sq.lock, flags);
	ret = !list_empty(&qp->rw.revoke);
	spin_unlock_irqrestore(&qp->sq.lock, flags);
	return ret;
}

/**
 * ibpost_rw_quiesce - end every operation's use of the QP before it goes
 * @qp: the QP being torn down (dead: no post sets one up any more),
 *      drained or not, its provider's QP still there
 *
 * No operation is set up after this (the write side of @rw.sem waits for
 * the posts inside). The failed operations whose MRs were to be replaced
 * have their keys revoked here (their carriers then come back with the
 * rings' flush); every live operation's ib_core context is
 * destroyed now, since it reads the provider's QP: its MRs go back to the
 * QP's pool, whose MRs the QP's destroy deregisters, and its sg list is
 * unmapped. The QP was moved to ERR first, where IBA has no WR of it move
 * data, drained or not.
 *
 * Context: Process context, qp->mutex held.
 */
void ibpost_rw_quiesce(struct ibpost_qp *qp)
{
	struct ibpost_rw *rw = &qp->rw;
	struct ibpost_rwop *op;
	unsigned long flags;

	down_write(&rw->sem);
	spin_lock_irqsave(&qp->sq.lock, flags);
	WRITE_ONCE(rw->dead, true);
	spin_unlock_irqrestore(&qp->sq.lock, flags);
	up_write(&rw->sem);
	/* The work item stops; what it left is revoked here. */
	flush_work(&rw->revoke_work);
	while (ibpost_rw_revoke_one(qp))
		;

	/*
	 * A failed operation that joined the list since was still with the
	 * provider: the drain failed. Its MRs go with the QP's destroy, and
	 * its context after it (ibpost_rw_release()).
	 */
	spin_lock_irqsave(&qp->sq.lock, flags);
	list_for_each_entry(op, &rw->live, node)
		ibpost_rwop_destroy(op);
	spin_unlock_irqrestore(&qp->sq.lock, flags);
}

/**
 * ibpost_rw_release - let go the contexts a failed drain left waiting
 * @qp: the QP, its provider's QP destroyed after ibpost_rw_quiesce()
 *
 * Context: Process context, qp->mutex held.
 */
void ibpost_rw_release(struct ibpost_qp *qp)
{
	struct ibpost_rwop *op, *tmp;
	unsigned long flags;

	spin_lock_irqsave(&qp->sq.lock, flags);
	list_for_each_entry_safe(op, tmp, &qp->rw.revoke, revoke_node) {
		list_del_init(&op->revoke_node);
		ibpost_ring_release_deferred(&qp->sq, op->carrier);
	}
	spin_unlock_irqrestore(&qp->sq.lock, flags);
}

/* The size of an rdma_rw WR's structure, to copy. */
static size_t ibpost_rwop_wr_size(const struct ib_send_wr *wr)
{
	switch (wr->opcode) {
	case IB_WR_REG_MR:
		return sizeof(struct ib_reg_wr);
	case IB_WR_LOCAL_INV:
		return sizeof(struct ib_send_wr);
	default:
		return sizeof(struct ib_rdma_wr);
	}
}

/*
 * Claim and stage the slot of the operation's WR @wr, the post's next,
 * with @used slots in use before the post.
 */
static struct ibpost_slot *ibpost_rwop_stage(struct ibpost_ring_post *p,
					     struct ibpost_rwop *op,
					     const struct ib_send_wr *wr,
					     u32 used)
{
	struct ibpost_slot *slot;

	slot = ibpost_ring_send_claim(p->q, wr, &op->sync, false, used, p->n,
				      ibpost_queue_room(p->q), 0, false);
	slot->nuse = 0;
	slot->nhit = 0;
	slot->ndma = 0;
	ibpost_ring_link_send(p, slot,
			      ibpost_ring_stage_send(p, slot, wr,
						     ibpost_rwop_wr_size(wr)),
			      NULL);
	p->n++;
	return slot;
}

/* The carrier's slot carries the consumer's @context (@flags: asked). */
static void ibpost_rwop_carry(struct ibpost_rwop *op, struct ibpost_slot *slot,
			      void *context, int flags)
{
	slot->context = context;
	/* A READ is always reported: its completion hands the data over. */
	slot->user_signaled = (flags & IB_SEND_SIGNALED) ||
			      op->dir == DMA_FROM_DEVICE;
	op->carrier = slot;
}

/*
 * Stage the operation's WRs (none but the carrier in ERR, where nothing
 * reaches the provider and no key changes) and the prepared @send (or
 * NULL), each staged batch handed on as it fills; @used slots were in
 * use before the post.
 */
static void ibpost_rwop_stage_all(struct ibpost_ring_post *p,
				  struct ibpost_rwop *op, u32 used,
				  struct ib_send_wr *send,
				  const struct ibpost_send_prep *prep,
				  void *context, int flags)
{
	struct ibpost_qp *qp = op->qp;
	const struct ib_send_wr *wr, *next;
	struct ibpost_slot *slot;
	struct ib_rdma_wr flushed = {
		.wr.opcode = op->dir == DMA_TO_DEVICE ? IB_WR_RDMA_WRITE :
							IB_WR_RDMA_READ,
	};

	if (p->synthetic) {
		wr = send ? NULL : &flushed.wr;
	} else {
		wr = rdma_rw_ctx_wrs(&op->ctx, op->ibqp, qp->port, NULL, NULL);
		op->built = true;
		/* Before any is posted: a refusal may come at the first. */
		for (next = wr; next; next = next->next)
			if (next->opcode == IB_WR_REG_MR ||
			    next->opcode == IB_WR_LOCAL_INV)
				op->has_mr = true;
	}
	for (; wr && !p->ret; wr = next) {
		/* Read before the provider may have it. */
		next = wr->next;
		slot = ibpost_rwop_stage(p, op, wr, used);
		if (!next && !send)
			ibpost_rwop_carry(op, slot, context, flags);
		ibpost_ring_post_staged(p, next ?: send);
	}
	if (!send)
		return;
	/* The provider refused a first batch without it: not staged. */
	if (p->ret) {
		ibpost_send_unprepare(p, prep);
		return;
	}
	slot = ibpost_ring_send_claim(p->q, send, &op->sync, false, used,
				      p->n, ibpost_queue_room(p->q), 0, false);
	ibpost_rwop_carry(op, slot, context, flags);
	ibpost_send_stage(p, qp, slot, send, prep);
	p->n++;
}

/*
 * The operation's post, under the send queue's lock: the QP's state, a
 * READ's initiator depth, the SEND, the room for all of its @n WRs and
 * the fast registrations pending; then those, its WRs, built now
 * (rdma_rw_ctx_wrs(), which bumps the MRs' keys), and the SEND. Return:
 * 0 (queued whole), or why nothing of it was queued.
 */
static int ibpost_rwop_queue(struct ibpost_qp *qp, struct ibpost_rwop *op,
			     u32 n, const struct ib_send_wr *send,
			     void *context, int flags)
{
	struct ibpost_ring_post p = { .rqp = &qp->rqp, .q = &qp->sq,
				      .send = true, .whole = true };
	struct ibpost_queue *q = p.q;
	struct ibpost_send_prep prep = {};
	struct ib_send_wr carrier;
	u32 slots, used, k;
	int ret;

	spin_lock_irqsave(&q->lock, p.flags);
	ibpost_post_send_begin(&p, qp);
	if (p.ret)
		goto out;
	used = q->head - q->tail;
	slots = p.synthetic ? 1 : n + !!send;
	/* Fast registrations pending go ahead, as in any send post (frwr.c). */
	k = p.synthetic ? 0 : ibpost_frwr_pending(&qp->frwr, q);
	if (op->dir == DMA_FROM_DEVICE && !READ_ONCE(qp->ord) &&
	    qp->rqp.state != IB_QPS_ERR) {
		pr_warn_ratelimited("rw_post: a READ on qp %u, whose initiator depth (max_rd_atomic, the connection's ORD) is 0\n",
				    qp->rqp.qpn);
		p.rule = IBPOST_RULE_NO_ORD;
		p.ret = -EINVAL;
		goto out;
	}
	if (send && ibpost_send_prepare(&p, qp, send, &prep))
		goto out;
	if (used + k + slots > ibpost_queue_room(q)) {
		if (send)
			ibpost_send_unprepare(&p, &prep);
		trace_ibpost_slots_exhausted(q, q->head - q->tail);
		p.rule = IBPOST_RULE_NO_SLOT;
		p.ret = -ENOMEM;
		goto out;
	}
	if (send) {
		/* The SEND's own wr_id and signal give way to the op's. */
		carrier = *send;
		carrier.wr_id = (uintptr_t)context;
		carrier.send_flags &= ~IB_SEND_SIGNALED;
		carrier.next = NULL;
	}
	op->slots = slots;
	op->slots_out = slots - 1;
	list_add_tail(&op->node, &qp->rw.live);
	if (k)
		ibpost_frwr_stage(&p, qp, send, used, k, 0, 0);
	p.whole_from = p.n;
	ibpost_rwop_stage_all(&p, op, used, send ? &carrier : NULL, &prep,
			      context, flags);
	p.chain = p.n;
	qp->rw.stats.ops++;
	qp->rw.stats.wrs += slots;
	qp->rw.stats.last_wrs = slots;
	qp->rw.stats.mr_ops += op->has_mr;
out:
	ret = ibpost_post_send_end(&p, qp, send);
	if (!ret && p.split) {
		spin_lock_irqsave(&q->lock, p.flags);
		qp->rw.stats.split++;
		spin_unlock_irqrestore(&q->lock, p.flags);
	}
	return ret;
}

/*
 * Hand ib_core a copy of the list that starts at its byte @sg_offset: siw
 * lays out a registration from each entry's start, whatever offset
 * ib_map_mr_sg() is given (siw_map_mr_sg() builds its page list from the
 * entries, the offset only moving the MR's iova), so an iWARP READ with
 * an offset would land that many bytes early. Return: 0, -EINVAL for an
 * offset beyond the list, -ENOMEM.
 */
static int ibpost_rwop_skip(struct ibpost_rwop *op, struct scatterlist *sg,
			    u32 sg_cnt, u32 sg_offset)
{
	struct scatterlist *s, *d;
	u32 i, n;

	for_each_sg(sg, s, sg_cnt, i) {
		if (sg_offset < s->length)
			break;
		sg_offset -= s->length;
	}
	if (i == sg_cnt) {
		pr_warn_ratelimited("rw_post: qp %u: sg_offset beyond the sg list\n",
				    op->qp->rqp.qpn);
		return -EINVAL;
	}
	n = sg_cnt - i;
	op->sg_copy = kvmalloc_array(n, sizeof(*op->sg_copy), GFP_KERNEL);
	if (!op->sg_copy)
		return -ENOMEM;
	sg_init_table(op->sg_copy, n);
	for_each_sg(op->sg_copy, d, n, i) {
		sg_set_page(d, sg_page(s), s->length - sg_offset,
			    s->offset + sg_offset);
		sg_offset = 0;
		s = sg_next(s);
	}
	op->sg = op->sg_copy;
	op->sg_cnt = n;
	return 0;
}

/*
 * The checks that need no lock: the QP, the arguments, the SEND's shape
 * (its WR is checked in full at the post, as any consumer WR).
 */
static int ibpost_rw_check(struct ibpost_qp *qp, void *context,
			   struct scatterlist *sg, u32 sg_cnt,
			   enum dma_data_direction dir, int flags,
			   const struct ib_send_wr *send)
{
	if (!qp || !qp->attr.rw_ops) {
		pr_warn_ratelimited("rw_post: the QP was created without rw_ops\n");
		return -EINVAL;
	}
	if (!sg || !sg_cnt ||
	    (dir != DMA_TO_DEVICE && dir != DMA_FROM_DEVICE) ||
	    (flags & ~IB_SEND_SIGNALED)) {
		pr_warn_ratelimited("rw_post: qp %u: an sg list, DMA_TO_DEVICE (WRITE) or DMA_FROM_DEVICE (READ), and no flag but IB_SEND_SIGNALED\n",
				    qp->rqp.qpn);
		return -EINVAL;
	}
	if (send && (dir != DMA_TO_DEVICE || send->next ||
		     (send->opcode != IB_WR_SEND &&
		      send->opcode != IB_WR_SEND_WITH_IMM &&
		      send->opcode != IB_WR_SEND_WITH_INV))) {
		pr_warn_ratelimited("rw_post: qp %u: one SEND, SEND_WITH_IMM or SEND_WITH_INV may follow a WRITE (a READ's completion may come after it)\n",
				    qp->rqp.qpn);
		return -EINVAL;
	}
	if (qp->sq.cqe && !ibpost_context_is_cqe(context)) {
		pr_warn_ratelimited("rw_post: ib_cqe mode: the context is NULL or has no done callback\n");
		return -EINVAL;
	}
	if (ibpost_cannot_sleep()) {
		pr_warn_ratelimited("rw_post: qp %u: called where it cannot sleep (ib_core allocates the operation's context)\n",
				    qp->rqp.qpn);
		return -EWOULDBLOCK;
	}
	return 0;
}

/**
 * ibpost_rw_post - RDMA READ or WRITE of an sg list, one context for all of it
 * @qp: an RC QP created with rw_ops
 * @context: the operation's context (ib_cqe mode: its struct ib_cqe *)
 * @sg: the local sg list (pages from anywhere, vmalloc memory through its
 *      pages; not DMA-mapped by the caller): it and its memory are
 *      ibpost's until @context comes back, or the call fails (an
 *      unsignaled WRITE that succeeds: until a later signaled WR of the
 *      QP completes, as for any unsignaled WR)
 * @sg_cnt: its entries
 * @sg_offset: bytes of the list skipped at its start (ibpost then maps a
 *             copy of its entries from that byte on; the list itself is
 *             never changed)
 * @remote_addr: the peer's address of the first byte
 * @rkey: the peer's key
 * @dir: DMA_TO_DEVICE: WRITE the list to the peer; DMA_FROM_DEVICE: READ
 *       the peer's bytes into the list
 * @flags: IB_SEND_SIGNALED: a success completion is wanted (a READ's
 *         always comes: it hands the data to the CPU); no other flag
 * @send: NULL, or one SEND, SEND_WITH_IMM or SEND_WITH_INV posted behind
 *        a WRITE in the same call (the peer sees the data when it sees
 *        the SEND), checked as any send WR (its SGEs in live MRs of the
 *        device, or inline); its wr_id and IB_SEND_SIGNALED are ignored:
 *        the operation has one context
 *
 * ib_core's rdma_rw_ctx_init() maps the list and builds the WRs: lists of
 * SGEs within the QP's max_send_sge (a READ's within the device's
 * max_sge_rd too), or fast registrations from the QP's pool where the
 * transport needs them (an iWARP READ: REG_MR and READ_WITH_INV per 256
 * pages). Every WR takes a slot of the send queue, checked for all of
 * them before any is posted; none is shown. @context comes back once,
 * with the SEND's completion, or the last WR's, when every WR of the
 * operation is over and the list is unmapped; on failure it comes back
 * always, with the status of the WR that carries it (a WR that failed
 * flushes the ones behind it, IBA; the failure itself is logged), after
 * any MR left in an unknown state was replaced. Should the provider
 * refuse a WR after the operation's first, the rest is flushed by ibpost:
 * the call returns 0 and @context comes back flushed. Fast registrations
 * pending on the QP (ibpost_frwr_map()) go ahead of the operation's WRs.
 *
 * Context: Process context, may sleep: ib_core allocates the operation's
 * context. A WORKQUEUE or DIRECT QP's callback may call it; a SOFTIRQ
 * QP's cannot (-EWOULDBLOCK): such a consumer moves it to a work item.
 * Return: 0; -EINVAL for a QP without rw_ops, no list, a @dir or @flags
 * not above, a @send behind a READ or not one SEND, a @send that fails a
 * post's checks, an @sg_offset beyond the list, a READ on a QP with no
 * initiator depth, a context that
 * is no ib_cqe in ib_cqe mode, or a list ib_core cannot lay out;
 * -ENOMEM when the send queue lacks the slots of the operation's WRs, or
 * memory; -EAGAIN when the QP's MR pool is empty (at most rw_ops
 * operations that register); -ENOTCONN or -ENODEV as any post;
 * -EWOULDBLOCK where it cannot sleep; the provider's error when it
 * refused the first WR. Nothing is queued and no context comes back on
 * any of them.
 */
int ibpost_rw_post(struct ibpost_qp *qp, void *context, struct scatterlist *sg,
		   u32 sg_cnt, u32 sg_offset, u64 remote_addr, u32 rkey,
		   enum dma_data_direction dir, int flags,
		   const struct ib_send_wr *send)
{
	struct ibpost_rwop *op;
	unsigned long lflags;
	u32 n = 0, lost = 0;
	int ret;

	ret = ibpost_rw_check(qp, context, sg, sg_cnt, dir, flags, send);
	if (ret)
		return ret;
	op = kzalloc(sizeof(*op), GFP_KERNEL);
	if (!op)
		return -ENOMEM;
	op->sync.end = ibpost_rwop_end;
	op->sync.orphan = op;
	op->qp = qp;
	op->sg = sg;
	op->sg_cnt = sg_cnt;
	op->dir = dir;
	INIT_LIST_HEAD(&op->node);
	INIT_LIST_HEAD(&op->revoke_node);

	if (sg_offset) {
		ret = ibpost_rwop_skip(op, sg, sg_cnt, sg_offset);
		if (ret)
			goto out_free;
	}

	down_read(&qp->rw.sem);
	op->ibqp = READ_ONCE(qp->rqp.ibqp);
	/* Not connected: refused as any post, before ib_core sets up. */
	ret = op->ibqp && !qp->rw.dead ? ibpost_state_check(qp, true) :
					 -ENODEV;
	if (ret)
		goto out_unlock;
	ret = rdma_rw_ctx_init(&op->ctx, op->ibqp, qp->port, op->sg,
			       op->sg_cnt, 0, remote_addr, rkey, dir);
	if (ret < 0)
		goto out_unlock;
	ret = ibpost_rwop_queue(qp, op, ret, send, context, flags);
	if (!ret) {
		/* @op may be over and freed already. */
		up_read(&qp->rw.sem);
		return 0;
	}
	/* Nothing queued: keys bumped at the build mean fresh MRs. */
	if (op->built && op->has_mr)
		n = ibpost_rwop_replace_mrs(op, &lost);
	spin_lock_irqsave(&qp->sq.lock, lflags);
	qp->rw.stats.revoked += n;
	qp->rw.stats.lost += lost;
	if (op->slots) {
		qp->rw.stats.ops--;
		qp->rw.stats.wrs -= op->slots;
		qp->rw.stats.mr_ops -= op->has_mr;
	}
	list_del_init(&op->node);
	ibpost_rwop_destroy(op);
	spin_unlock_irqrestore(&qp->sq.lock, lflags);
out_unlock:
	up_read(&qp->rw.sem);
out_free:
	ibpost_rwop_free(op);
	return ret;
}
EXPORT_SYMBOL_NS_GPL(ibpost_rw_post, IBPOST_NS);
